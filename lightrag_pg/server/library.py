"""Library calls a route needs that this build of lightrag_pg may not have yet."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import LightRAGError
from ..rag import LightRAG


class NotAvailable(LightRAGError):
    """The route needs a LightRAG method this installation does not provide (HTTP 501)."""


def library_call(rag: LightRAG, name: str) -> Callable[..., Any]:
    """``rag.<name>``, or :class:`NotAvailable` naming the missing method."""
    method = getattr(rag, name, None)
    if not callable(method):
        raise NotAvailable(f"not implemented: this route needs LightRAG.{name}, which this version lacks")
    return method
