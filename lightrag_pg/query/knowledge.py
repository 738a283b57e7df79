"""A readable answer made of the retrieved knowledge, for when no LLM is configured."""

from __future__ import annotations

from ..types import GRAPH_FIELD_SEP
from .context import QueryContext

NO_LLM_LINE = "No LLM is configured: showing the knowledge retrieved for this question."
BYPASS_WITHOUT_LLM = (
    "No LLM is configured: bypass mode sends the question straight to the LLM, so there is no answer.\n"
)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.replace(GRAPH_FIELD_SEP, " ").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def format_knowledge(ctx: QueryContext, *, max_items: int = 10) -> str:
    """Entities, relations and source excerpts with references, as plain text."""
    lines = [NO_LLM_LINE, ""]
    if ctx.entities:
        lines.append("Entities:")
        for e in ctx.entities[:max_items]:
            lines.append(f"  - {e.name} ({e.entity_type}): {_clip(e.description, 160)}")
        lines.append("")
    if ctx.relations:
        lines.append("Relations:")
        for r in ctx.relations[:max_items]:
            lines.append(f"  - {r.src} <-> {r.tgt} [{r.keywords}]: {_clip(r.description, 160)}")
        lines.append("")
    if ctx.chunks:
        lines.append("Sources:")
        excerpts = list(zip(ctx.chunks, ctx.chunk_reference_ids, strict=True))
        for chunk, ref_id in excerpts[: max(3, max_items // 2)]:
            label = f"[{ref_id}] " if ref_id else ""
            lines.append(f"  - {label}{_clip(chunk.content, 240)}")
        lines.append("")
    if ctx.references:
        lines.append("References:")
        for ref in ctx.references:
            lines.append(f"  [{ref['reference_id']}] {ref['file_path']}")
    return "\n".join(lines).rstrip() + "\n"
