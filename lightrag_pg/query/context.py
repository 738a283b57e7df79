"""Building the LLM context under the token budget (upstream stages 2 and 4).

Pipeline order, as upstream: search, then cut entities and relations to their
token budgets (in SQL, by :meth:`~lightrag_pg.store.retrieval.RetrievalStore.context`;
:func:`~lightrag_pg.query.ranking.truncate_kg` is the reference rule), then pick and
fetch chunks for the *kept* entities/relations, merge chunks, then
:func:`build_context`, which takes the entities and relations as given (they are
cut once) and cuts only the chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..jsonline import json_line
from ..llm.tokenizer import TokenEncoder, count_tokens
from ..store.rows import ChunkRow, EntityRow, RelationRow
from ..types import GRAPH_FIELD_SEP, UNKNOWN_SOURCE
from .answer_prompts import (
    DEFAULT_RESPONSE_TYPE,
    KG_QUERY_CONTEXT,
    NAIVE_QUERY_CONTEXT,
    NAIVE_RAG_RESPONSE,
    RAG_RESPONSE,
    render_system_prompt,
)
from .param import QueryParam
from .ranking import chunk_data_row, generate_references

BUFFER_TOKENS = 200
"""Upstream's reserve for the reference list and safety margin."""


@dataclass(frozen=True, slots=True)
class ContextTokens:
    """Token accounting of one context (all counts from the query tokenizer).

    ``chunks`` counts the kept chunks' lines as rendered (reference id and
    content), so ``chunks <= chunk_budget``; ``total`` is the exact count of the final
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
    """The context handed to the LLM, and what went into it.

    :attr:`text` and :attr:`system_prompt` are rendered on first use: a data query
    (``aquery_data``) needs only the rows and the token counts."""

    entities: list[EntityRow]
    relations: list[RelationRow]
    chunks: list[ChunkRow]
    chunk_reference_ids: list[str]
    references: list[dict[str, str]]
    tokens: ContextTokens
    mode: str
    template: str = field(repr=False)
    param: QueryParam = field(repr=False)
    found_entities: int = 0
    found_relations: int = 0
    merged_chunks: int = 0
    _text: str | None = field(default=None, init=False, repr=False)

    @property
    def is_empty(self) -> bool:
        """True when nothing was retrieved; the caller answers with the fail response."""
        return not (self.entities or self.relations or self.chunks)

    @property
    def text(self) -> str:
        """The context: entity and relation lines, chunk lines with their reference ids,
        the reference list."""
        if self._text is None:
            self._text = _context_text(
                self.mode == "naive",
                [e.context_line() for e in self.entities],
                [r.context_line() for r in self.relations],
                self.chunks,
                self.references,
                self.chunk_reference_ids,
            )
        return self._text

    @property
    def system_prompt(self) -> str:
        """The final system prompt: the template filled with :attr:`text`."""
        return _system_prompt(self.template, self.text, self.param)


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
    context + KG context + query + 200)``, the system prompt rendered as upstream
    charges it (:func:`_budget_system_prompt`); ``chunks`` (already merged and, if
    enabled, reranked) are cut to ``chunk_top_k`` and then to that budget by
    upstream's two-stage rule (:func:`_cut_chunks`), which passes over a chunk whose
    citation (its file's line in the reference list) could not fit the budget even with
    that chunk alone. In ``naive`` mode entities and relations are ignored. As a final
    guard, chunks (then relations, then entities) are dropped from the end until system
    prompt plus query fit ``max_total_tokens``; each reference line is charged to the
    first chunk citing its file, so dropping that chunk frees it, and a long file path
    costs its own chunks, never the rest of the context. ``found_*`` and
    ``merged_chunks`` are the counts before any cut, for the processing info (default:
    the lengths of the lists given).

    Every count is exact, but only short texts are tokenized per query: a context
    line's tokens are the stored ``context_tokens`` (or its own count), and a whole
    text's count is that of its skeleton plus the sum of its lines
    (:class:`_Counts`).
    """
    naive = param.mode == "naive"
    if naive:
        entities, relations = [], []
    template = system_prompt_template or (NAIVE_RAG_RESPONSE if naive else RAG_RESPONSE)
    counts = _Counts(tokenizer, template, param, naive)
    kept_entities, kept_relations = list(entities), list(relations)
    entity_tokens = counts.rows(kept_entities)
    relation_tokens = counts.rows(kept_relations)
    kg_tokens = 0 if naive else counts.kg_context(entity_tokens, relation_tokens)
    sys_tokens = counts.text(_budget_system_prompt(template, param, naive))
    query_tokens = counts.text(query)
    budget = param.max_total_tokens - (sys_tokens + kg_tokens + query_tokens + BUFFER_TOKENS)
    kept_chunks, content_tokens = _cut_chunks(list(chunks)[: param.chunk_top_k], budget, counts)

    while True:
        references, ref_ids = generate_references(kept_chunks)
        chunk_tokens = [t + counts.reference_delta(r) for t, r in zip(content_tokens, ref_ids, strict=True)]
        total = counts.system_prompt(entity_tokens, relation_tokens, chunk_tokens, references) + query_tokens
        if total <= param.max_total_tokens or not (kept_chunks or kept_relations or kept_entities):
            break
        charged = [t + c for t, c in zip(chunk_tokens, counts.citations(references, ref_ids), strict=True)]
        _shed(
            total - param.max_total_tokens,
            (kept_chunks, charged),
            (kept_relations, relation_tokens),
            (kept_entities, entity_tokens),
        )
        del content_tokens[len(kept_chunks) :]

    tokens = ContextTokens(
        system_prompt=sys_tokens,
        entities=sum(entity_tokens),
        relations=sum(relation_tokens),
        kg_context=kg_tokens,
        query=query_tokens,
        buffer=BUFFER_TOKENS,
        chunk_budget=budget,
        chunks=sum(chunk_tokens),
        total=total,
    )
    return QueryContext(
        entities=kept_entities,
        relations=kept_relations,
        chunks=kept_chunks,
        chunk_reference_ids=ref_ids,
        references=references,
        tokens=tokens,
        mode=param.mode,
        template=template,
        param=param,
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
        {"reference_id": ref, **chunk_data_row(c)}
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


PLACEHOLDER_LINE = "{}"
"""Stands in for a section's lines when a skeleton is counted: like every context line,
it is a JSON object, so it meets the text around it the way the lines do."""


class _Counts:
    """Exact token counts of one query's context, tokenizing only short texts.

    A context line is a JSON object: it ends with ``}``, and the pre-tokenizers
    of the supported encodings split the text right before a line and right
    after the newline that ends it. So the tokens of a text made of fixed parts
    and lines are the tokens of its *skeleton* (each non-empty section reduced
    to :data:`PLACEHOLDER_LINE`) minus the placeholders' tokens plus each line's
    tokens with its newline, which is the stored ``context_tokens``. Skeletons and
    reference-id prefixes repeat from query to query, so the tokenizer's cache
    answers them.
    """

    def __init__(self, tokenizer: TokenEncoder, template: str, param: QueryParam, naive: bool) -> None:
        self.tokenizer = tokenizer
        self.template = template
        self.param = param
        self.naive = naive
        self.placeholder = self.line(PLACEHOLDER_LINE)
        self._reference_deltas: dict[str, int] = {}
        self._citations: dict[tuple[str, str], int] = {}

    def text(self, text: str) -> int:
        """The tokens of ``text``."""
        return count_tokens(self.tokenizer, text)

    def line(self, line: str) -> int:
        """The tokens of one context line followed by its newline."""
        return self.text(line + "\n")

    def rows(self, rows: Sequence[EntityRow | RelationRow]) -> list[int]:
        """Each row's stored line count, or its line's own count when it has none."""
        return [
            self.line(row.context_line()) if row.context_tokens is None else row.context_tokens
            for row in rows
        ]

    def content_line(self, chunk: ChunkRow) -> int:
        """Tokens of the ``{"content": ...}`` line upstream first measures a chunk by."""
        return self.line(json_line({"content": chunk.content}))

    def reference_delta(self, reference_id: str) -> int:
        """What a reference id adds to a chunk's content line in the rendered context
        (counted once per id: chunks of one file share theirs)."""
        delta = self._reference_deltas.get(reference_id)
        if delta is None:
            delta = self.line(json_line({"reference_id": reference_id, "content": ""})) - self.line(
                json_line({"content": ""})
            )
            self._reference_deltas[reference_id] = delta
        return delta

    def citation(self, reference_id: str, file_path: str) -> int:
        """Tokens of a file's line in the reference list, with its newline (counted once
        per query: a long path is tokenized once)."""
        key = (reference_id, file_path)
        tokens = self._citations.get(key)
        if tokens is None:
            tokens = self.line(_reference_line(reference_id, file_path))
            self._citations[key] = tokens
        return tokens

    def citations(self, references: Sequence[dict[str, str]], ref_ids: Sequence[str]) -> list[int]:
        """Per chunk, the tokens of the reference lines it brings: each file's line is
        charged to the first chunk citing it, 0 to the others."""
        paths = {ref["reference_id"]: ref["file_path"] for ref in references}
        charged: list[int] = []
        for ref_id in ref_ids:
            path = paths.pop(ref_id, None)
            charged.append(0 if path is None else self.citation(ref_id, path))
        return charged

    def kg_context(self, entity_tokens: Sequence[int], relation_tokens: Sequence[int]) -> int:
        """Tokens of the KG context with these lines and no chunks (upstream's KG share)."""
        entities, relations = _placeholder(entity_tokens), _placeholder(relation_tokens)
        skeleton = _render(False, entities, relations, "", "")
        return self._filled(skeleton, entity_tokens, relation_tokens)

    def system_prompt(
        self,
        entity_tokens: Sequence[int],
        relation_tokens: Sequence[int],
        chunk_tokens: Sequence[int],
        references: Sequence[dict[str, str]],
    ) -> int:
        """Tokens of the final system prompt holding these lines and ``references``."""
        if not (entity_tokens or relation_tokens or chunk_tokens):
            return self.text(_system_prompt(self.template, "", self.param))
        context = _render(
            self.naive,
            _placeholder(entity_tokens),
            _placeholder(relation_tokens),
            _placeholder(chunk_tokens),
            _reference_list(references),
        )
        skeleton = _system_prompt(self.template, context, self.param)
        return self._filled(skeleton, entity_tokens, relation_tokens, chunk_tokens)

    def _filled(self, skeleton: str, *sections: Sequence[int]) -> int:
        filled = sum(1 for lines in sections if lines)
        return self.text(skeleton) - filled * self.placeholder + sum(sum(lines) for lines in sections)


def _placeholder(lines: Sequence[int]) -> str:
    return PLACEHOLDER_LINE if lines else ""


def _cut_chunks(chunks: Sequence[ChunkRow], budget: int, counts: _Counts) -> tuple[list[ChunkRow], list[int]]:
    """Upstream's two-stage chunk cut, with each kept chunk's content-line tokens.

    First the longest prefix whose ``{"content": ...}`` lines fit ``budget``, passing
    over a chunk that fits but whose citation (its file's line in the reference list, when
    no kept chunk cites that file yet) is longer than the whole reserve upstream keeps for
    the reference list (:data:`BUFFER_TOKENS`) and does not fit ``budget`` with the chunk's
    content line: such a chunk could never be kept, and its citation would push everything
    else out (only a citation of more UTF-8 bytes than that is tokenized to know). Then,
    as the reference ids depend on which chunks are kept, the prefix shrinks until its
    lines as rendered (``{"reference_id", "content"}``) fit.
    """
    kept: list[ChunkRow] = []
    tokens: list[int] = []
    cited: set[str] = set()
    used = 0
    for chunk in chunks if budget > 0 else ():
        line = counts.content_line(chunk)
        if used + line > budget:
            break
        if _citable(chunk) and chunk.file_path not in cited:
            citation = _reference_line(str(len(cited) + 1), chunk.file_path)
            size = len(citation.encode("utf-8")) + 1  # no more tokens than UTF-8 bytes
            if min(size, line + size - budget) > BUFFER_TOKENS:
                tokens_cited = counts.citation(str(len(cited) + 1), chunk.file_path)
                if tokens_cited > BUFFER_TOKENS and line + tokens_cited > budget:
                    continue
        used += line
        tokens.append(line)
        kept.append(chunk)
        if _citable(chunk):
            cited.add(chunk.file_path)
    while kept:
        _, ref_ids = generate_references(kept)
        if sum(tokens) + sum(counts.reference_delta(r) for r in ref_ids) <= budget:
            break
        kept.pop()
        tokens.pop()
    return kept, tokens


def _system_prompt(template: str, context: str, param: QueryParam) -> str:
    return render_system_prompt(
        template,
        context=context,
        response_type=param.response_type,
        user_prompt=param.user_prompt,
    )


def _budget_system_prompt(template: str, param: QueryParam, naive: bool) -> str:
    """The empty system prompt the chunk budget charges, as upstream 1.5.7 renders it: the
    KG prompt with the bare user prompt ("" when there is none), the naive one as sent."""
    if naive:
        return _system_prompt(template, "", param)
    return template.format(
        response_type=param.response_type or DEFAULT_RESPONSE_TYPE,
        user_prompt=param.user_prompt or "",
        context_data="",
        content_data="",
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


def _citable(chunk: ChunkRow) -> bool:
    """Whether the chunk's file is cited in the reference list (as generate_references numbers)."""
    return bool(chunk.file_path) and chunk.file_path != UNKNOWN_SOURCE


def _reference_line(reference_id: str, file_path: str) -> str:
    return f"[{reference_id}] {file_path}"


def _reference_list(references: Sequence[dict[str, str]]) -> str:
    return "\n".join(_reference_line(ref["reference_id"], ref["file_path"]) for ref in references)


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
    chunk_lines = (
        json_line({"reference_id": ref, "content": c.content}) for c, ref in zip(chunks, ref_ids, strict=True)
    )
    return _render(
        naive,
        "\n".join(entity_lines),
        "\n".join(relation_lines),
        "\n".join(chunk_lines),
        _reference_list(references),
    )


def _shed(excess: int, *sections: tuple[list[Any], list[int]]) -> None:
    """Drop items from the end of the sections, in order, until ``excess`` tokens are freed."""
    freed = 0
    for items, tokens in sections:
        while items and freed < excess:
            items.pop()
            freed += max(tokens.pop(), 1)


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
