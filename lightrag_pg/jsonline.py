"""The one-line JSON objects of a query context, encoded the one way every layer shares.

Entities, relations and chunks enter an LLM context as one JSON object per line, in
upstream LightRAG's form: ``json.dumps(fields, ensure_ascii=False)`` of a flat object
of strings. Their token counts are stored and summed, so the text must be exactly
that. :func:`json_line` gives it without building an encoder per line: the C string
encoder ``json.dumps`` uses, with its default separators, joined once (a chunk's
content is long).
"""

from __future__ import annotations

from collections.abc import Mapping
from json.encoder import encode_basestring

__all__ = ["json_line"]


def json_line(fields: Mapping[str, str]) -> str:
    """``json.dumps(fields, ensure_ascii=False)`` of a flat object of strings (non-ASCII
    kept, control characters escaped)."""
    parts: list[str] = []
    for key, value in fields.items():
        parts += (", " if parts else "{", encode_basestring(key), ": ", encode_basestring(value))
    parts.append("}" if parts else "{}")
    return "".join(parts)
