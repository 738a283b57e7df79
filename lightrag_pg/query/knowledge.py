"""A readable answer made of the retrieved knowledge, for when no LLM is configured."""

from __future__ import annotations

from ..sentences import sentence_ends
from ..types import GRAPH_FIELD_SEP
from .context import QueryContext

NO_LLM_LINE = "No LLM is configured: showing the knowledge retrieved for this question."
BYPASS_WITHOUT_LLM = (
    "No LLM is configured: bypass mode sends the question straight to the LLM, so there is no answer.\n"
)


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to at most ``limit`` characters plus an ellipsis: after the
    last whole sentence that fits, unless that leaves less than a third, then after a word."""
    text = " ".join(text.replace(GRAPH_FIELD_SEP, " ").split())
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    ends = [end for end, _ in sentence_ends(head)]
    if ends and ends[-1] >= limit // 3:
        return head[: ends[-1]] + " …"
    words = head[:limit].rsplit(" ", 1)[0] if " " in head[:limit] else head[: limit - 1]
    return words.rstrip() + "…"


def format_knowledge(ctx: QueryContext, *, max_items: int = 10) -> str:
    """Entities, relations and source excerpts with references, as plain text."""
    lines = [NO_LLM_LINE, ""]
    if ctx.entities:
        lines.append("Entities:")
        for e in ctx.entities[:max_items]:
            lines.append(f"  - {e.name} ({e.entity_type}): {clip(e.description, 160)}")
        lines.append("")
    if ctx.relations:
        lines.append("Relations:")
        for r in ctx.relations[:max_items]:
            lines.append(f"  - {r.src} <-> {r.tgt} [{r.keywords}]: {clip(r.description, 160)}")
        lines.append("")
    if ctx.chunks:
        lines.append("Sources:")
        excerpts = list(zip(ctx.chunks, ctx.chunk_reference_ids, strict=True))
        for chunk, ref_id in excerpts[: max(3, max_items // 2)]:
            label = f"[{ref_id}] " if ref_id else ""
            lines.append(f"  - {label}{clip(chunk.content, 400)}")
        lines.append("")
    if ctx.references:
        lines.append("References:")
        for ref in ctx.references:
            lines.append(f"  [{ref['reference_id']}] {ref['file_path']}")
    return "\n".join(lines).rstrip() + "\n"
