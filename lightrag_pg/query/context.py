"""Building the LLM context under the token budget (upstream stages 2 and 4).

Pipeline order, as upstream: search, then cut entities and relations to their
token budgets (in SQL, by :meth:`~lightrag_pg.store.retrieval.RetrievalStore.context`;
:func:`~lightrag_pg.query.ranking.truncate_kg` is the reference rule), then pick and
fetch chunks for the *kept* entities/relations, merge chunks, then
:func:`build_context`, which takes the entities and relations as given (they are
cut once) and cuts only the chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..llm.tokenizer import TokenEncoder, count_tokens
from ..store.rows import ChunkRow, EntityRow, RelationRow
from ..types import GRAPH_FIELD_SEP, UNKNOWN_SOURCE
from .answer_prompts import (
    KG_QUERY_CONTEXT,
    NAIVE_QUERY_CONTEXT,
    NAIVE_RAG_RESPONSE,
    RAG_RESPONSE,
    render_system_prompt,
)
from .param import QueryParam
from .ranking import (
    chunk_budget_row,
    entity_row,
    generate_references,
    json_line,
    relation_row,
)

BUFFER_TOKENS = 200
"""Upstream's reserve for the reference list and safety margin."""


@dataclass(frozen=True, slots=True)
class ContextTokens:
    """Token accounting of one context (all counts from the query tokenizer).

    ``chunks`` counts the kept chunks in the form the chunk budget measures them
    (content, file path and id, as upstream truncates merged chunks), so
    ``chunks <= chunk_budget``; ``total`` is the exact count of the final
    system prompt plus the query.
    """

    system_prompt: int
    entities: int
    relations: int
    kg_context: int
    query: int
    buffer: int
    chunk_budget: int
    chunks: int
    total: int


@dataclass(slots=True)
class QueryContext:
    """The context handed to the LLM, and what went into it."""

    entities: list[EntityRow]
    relations: list[RelationRow]
    chunks: list[ChunkRow]
    chunk_reference_ids: list[str]
    references: list[dict[str, str]]
    text: str
    system_prompt: str
    tokens: ContextTokens
    mode: str
    found_entities: int = 0
    found_relations: int = 0
    merged_chunks: int = 0

    @property
    def is_empty(self) -> bool:
        """True when nothing was retrieved; the caller answers with the fail response."""
        return not (self.entities or self.relations or self.chunks)


def build_context(
    entities: Sequence[EntityRow],
    relations: Sequence[RelationRow],
    chunks: Sequence[ChunkRow],
    *,
    tokenizer: TokenEncoder,
    param: QueryParam,
    query: str,
    system_prompt_template: str | None = None,
    found_entities: int | None = None,
    found_relations: int | None = None,
    merged_chunks: int | None = None,
) -> QueryContext:
    """Assemble the context text and the final system prompt within budget.

    Entities and relations arrive already cut to their own budgets; the chunk
    budget is upstream's ``max_total_tokens - (system prompt with empty
    context + KG context + query + 200)``; ``chunks`` (already merged and, if
    enabled, reranked) are cut to ``chunk_top_k`` and then to that budget.
    In ``naive`` mode entities and relations are ignored. As a final guard,
    chunks (then relations, then entities) are dropped from the end until
    system prompt plus query fit ``max_total_tokens``. ``found_*`` and
    ``merged_chunks`` are the counts before any cut, for the processing info
    (default: the lengths of the lists given).
    """
    naive = param.mode == "naive"
    if naive:
        entities, relations = [], []
    template = system_prompt_template or (NAIVE_RAG_RESPONSE if naive else RAG_RESPONSE)
    kept_entities, kept_relations = list(entities), list(relations)
    count = _counter(tokenizer)

    entity_lines = [json_line(entity_row(e)) for e in kept_entities]
    relation_lines = [json_line(relation_row(r)) for r in kept_relations]
    kg_tokens = (
        0 if naive else count(_render(False, "\n".join(entity_lines), "\n".join(relation_lines), "", ""))
    )
    sys_tokens = count(_system_prompt(template, "", param))
    query_tokens = count(query)
    budget = param.max_total_tokens - (sys_tokens + kg_tokens + query_tokens + BUFFER_TOKENS)
    chunk_tokens = _fitting_counts(list(chunks)[: param.chunk_top_k], budget, count)
    kept_chunks = list(chunks)[: len(chunk_tokens)]

    while True:
        references, ref_ids = generate_references(kept_chunks)
        text = _context_text(naive, entity_lines, relation_lines, kept_chunks, references, ref_ids)
        system_prompt = _system_prompt(template, text, param)
        total = count(system_prompt) + query_tokens
        if total <= param.max_total_tokens or not (kept_chunks or kept_relations or kept_entities):
            break
        kept_chunks, kept_relations, kept_entities = _shed(
            total - param.max_total_tokens, kept_chunks, kept_relations, kept_entities, count
        )
        entity_lines, relation_lines = (
            entity_lines[: len(kept_entities)],
            relation_lines[: len(kept_relations)],
        )

    tokens = ContextTokens(
        system_prompt=sys_tokens,
        entities=sum(count(line) for line in entity_lines),
        relations=sum(count(line) for line in relation_lines),
        kg_context=kg_tokens,
        query=query_tokens,
        buffer=BUFFER_TOKENS,
        chunk_budget=budget,
        chunks=sum(chunk_tokens[: len(kept_chunks)]),
        total=total,
    )
    return QueryContext(
        entities=kept_entities,
        relations=kept_relations,
        chunks=kept_chunks,
        chunk_reference_ids=ref_ids,
        references=references,
        text=text,
        system_prompt=system_prompt,
        tokens=tokens,
        mode=param.mode,
        found_entities=len(entities) if found_entities is None else found_entities,
        found_relations=len(relations) if found_relations is None else found_relations,
        merged_chunks=len(chunks) if merged_chunks is None else merged_chunks,
    )


def render_data(
    context: QueryContext, *, hl_keywords: Sequence[str] = (), ll_keywords: Sequence[str] = ()
) -> dict[str, Any]:
    """The structured result of ``aquery_data``, in upstream's shape."""
    naive = context.mode == "naive"
    if context.is_empty:
        return failure_data(context.mode, "Query returned empty dataset.", hl_keywords, ll_keywords)
    chunks = [
        {"reference_id": ref, **chunk_budget_row(c)}
        for c, ref in zip(context.chunks, context.chunk_reference_ids, strict=True)
    ]
    if naive:
        info = {"total_chunks_found": context.merged_chunks, "final_chunks_count": len(chunks)}
    else:
        info = {
            "total_entities_found": context.found_entities,
            "total_relations_found": context.found_relations,
            "entities_after_truncation": len(context.entities),
            "relations_after_truncation": len(context.relations),
            "merged_chunks_count": context.merged_chunks,
            "final_chunks_count": len(chunks),
        }
    return {
        "status": "success",
        "message": "Query processed successfully",
        "data": {
            "entities": [_entity_data(e) for e in context.entities],
            "relationships": [_relation_data(r) for r in context.relations],
            "chunks": chunks,
            "references": [dict(ref) for ref in context.references],
        },
        "metadata": {
            "query_mode": context.mode,
            "keywords": {"high_level": list(hl_keywords), "low_level": list(ll_keywords)},
            "processing_info": info,
        },
    }


def failure_data(
    mode: str, message: str, hl_keywords: Sequence[str] = (), ll_keywords: Sequence[str] = ()
) -> dict[str, Any]:
    """An ``aquery_data`` result with ``status: "failure"`` and empty data."""
    return {
        "status": "failure",
        "message": message,
        "data": {"entities": [], "relationships": [], "chunks": [], "references": []},
        "metadata": {
            "query_mode": mode,
            "keywords": {"high_level": list(hl_keywords), "low_level": list(ll_keywords)},
        },
    }


def _counter(tokenizer: TokenEncoder) -> Callable[[str], int]:
    return lambda text: count_tokens(tokenizer, text)


def _system_prompt(template: str, context: str, param: QueryParam) -> str:
    return render_system_prompt(
        template,
        context=context,
        response_type=param.response_type,
        user_prompt=param.user_prompt,
    )


def _render(naive: bool, entities: str, relations: str, chunks: str, refs: str) -> str:
    if naive:
        return NAIVE_QUERY_CONTEXT.format(text_chunks_str=chunks, reference_list_str=refs)
    return KG_QUERY_CONTEXT.format(
        entities_str=entities,
        relations_str=relations,
        text_chunks_str=chunks,
        reference_list_str=refs,
    )


def _chunk_rows(chunks: Sequence[ChunkRow], ref_ids: Sequence[str]) -> list[dict[str, str]]:
    return [{"reference_id": ref, "content": c.content} for c, ref in zip(chunks, ref_ids, strict=True)]


def _fitting_counts(chunks: Sequence[ChunkRow], budget: int, count: Callable[[str], int]) -> list[int]:
    """Token counts of the longest prefix of ``chunks`` (measured as upstream measures a merged
    chunk) that fits ``budget``, one per kept chunk; like :func:`.ranking.truncate_by_tokens`."""
    counts: list[int] = []
    used = 0
    for chunk in chunks if budget > 0 else ():
        tokens = count(json_line(chunk_budget_row(chunk)))
        used += tokens
        if used > budget:
            break
        counts.append(tokens)
    return counts


def _context_text(
    naive: bool,
    entity_lines: Sequence[str],
    relation_lines: Sequence[str],
    chunks: Sequence[ChunkRow],
    references: Sequence[dict[str, str]],
    ref_ids: Sequence[str],
) -> str:
    if not (entity_lines or relation_lines or chunks):
        return ""
    return _render(
        naive,
        "\n".join(entity_lines),
        "\n".join(relation_lines),
        "\n".join(json_line(row) for row in _chunk_rows(chunks, ref_ids)),
        "\n".join(f"[{ref['reference_id']}] {ref['file_path']}" for ref in references),
    )


def _shed(
    excess: int,
    chunks: list[ChunkRow],
    relations: list[RelationRow],
    entities: list[EntityRow],
    count: Callable[[str], int],
) -> tuple[list[ChunkRow], list[RelationRow], list[EntityRow]]:
    """Drop items from the end (chunks, then relations, then entities) worth ``excess`` tokens."""
    freed = 0
    sections: list[tuple[list[Any], Any]] = [
        (chunks, lambda c: json_line({"reference_id": "", "content": c.content})),
        (relations, lambda r: json_line(relation_row(r))),
        (entities, lambda e: json_line(entity_row(e))),
    ]
    for items, render in sections:
        while items and freed < excess:
            freed += max(count(render(items.pop())), 1)
    return chunks, relations, entities


def _entity_data(entity: EntityRow) -> dict[str, Any]:
    return {
        "entity_name": entity.name,
        "entity_type": entity.entity_type or "UNKNOWN",
        "description": entity.description,
        "rank": entity.degree,
        "source_id": GRAPH_FIELD_SEP.join(entity.source_ids),
        "file_path": GRAPH_FIELD_SEP.join(entity.file_paths) or UNKNOWN_SOURCE,
        "created_at": _timestamp(entity.created_at),
    }


def _relation_data(relation: RelationRow) -> dict[str, Any]:
    return {
        "src_id": relation.src,
        "tgt_id": relation.tgt,
        "description": relation.description,
        "keywords": relation.keywords,
        "weight": relation.weight,
        "rank": relation.degree,
        "source_id": GRAPH_FIELD_SEP.join(relation.source_ids),
        "file_path": GRAPH_FIELD_SEP.join(relation.file_paths) or UNKNOWN_SOURCE,
        "created_at": _timestamp(relation.created_at),
    }


def _timestamp(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""
