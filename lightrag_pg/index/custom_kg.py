"""Inserting a knowledge graph given by the caller (upstream's ``ainsert_custom_kg``).

The payload is ``{"chunks": [...], "entities": [...], "relationships": [...]}``:

* a chunk: ``content``, ``source_id`` (the key entities and relations cite it
  by), optional ``file_path`` and ``chunk_order_index``;
* an entity: ``entity_name``, ``entity_type``, ``description``, ``source_id``
  (one or more chunk keys joined by ``<SEP>``), optional ``file_path``;
* a relationship: ``src_id``, ``tgt_id``, ``description``, ``keywords``,
  ``weight`` (default 1.0), ``source_id``, optional ``file_path``.

The chunks become one processed document (``full_doc_id``, by default
``doc-`` plus the MD5 of the payload), so :meth:`LightRAG.adelete_by_doc_id`
removes the whole graph again. Entities and relations are fragments of that
document's chunks and merge with what the workspace holds by the insert's
rules. A ``source_id`` naming no chunk of the payload, or a relationship
endpoint that is neither an entity of the payload nor one of the workspace,
is an error raised before anything is written. Everything (document,
chunks, vectors, rows, fragments, links) is written in one transaction,
after the summaries and embeddings are computed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ..errors import GraphItemExists, InvalidInput
from ..llm.tokenizer import Tokenizer
from ..store.rows import ChunkRow, DocumentRow, EntityRow, RelationRow
from ..store.uow import Stores, session
from ..types import GRAPH_FIELD_SEP, UNKNOWN_SOURCE, ExtractedEntity, ExtractedRelation
from .graph_edit import Edit, GraphEditor, entity_name
from .intake import clean_file_path, md5_id
from .merge import build_entity, build_relation, document_fragments, group_by_name, group_by_pair


def _text(item: Mapping[str, Any], key: str, where: str, *, required: bool = True, default: str = "") -> str:
    value = item.get(key, default)
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidInput(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value.strip()


def _path(item: Mapping[str, Any], where: str) -> str:
    """An item's optional ``file_path`` ("" when absent), bounded as an insert's."""
    return clean_file_path(_text(item, "file_path", where, required=False), f"{where}: file_path")


def _list(payload: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    items = payload.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise InvalidInput(f"custom_kg[{key!r}] must be a list of objects")
    return items


class CustomGraph:
    """A validated custom knowledge graph, ready to plan as one edit."""

    def __init__(self, payload: Mapping[str, Any], full_doc_id: str | None, tokenizer: Tokenizer) -> None:
        if not isinstance(payload, Mapping):
            raise InvalidInput("custom_kg must be a mapping with chunks, entities and relationships")
        unknown = sorted(set(payload) - {"chunks", "entities", "relationships"})
        if unknown:
            raise InvalidInput(f"custom_kg: unknown keys {', '.join(unknown)}")
        chunks, entities, relations = (_list(payload, k) for k in ("chunks", "entities", "relationships"))
        if not chunks:
            raise InvalidInput("custom_kg has no chunks: entities and relationships must cite one")
        self.doc_id = full_doc_id or md5_id("doc-", json.dumps(payload, sort_keys=True, default=str))
        self.chunk_ids: dict[str, str] = {}
        self.chunks: list[ChunkRow] = []
        for i, c in enumerate(chunks):
            where = f"chunks[{i}]"
            key, content = _text(c, "source_id", where), _text(c, "content", where)
            if key in self.chunk_ids:
                raise InvalidInput(f"{where}: source_id {key!r} is used by two chunks")
            order = c.get("chunk_order_index", i)
            if not isinstance(order, int) or isinstance(order, bool):
                raise InvalidInput(f"{where}: chunk_order_index must be an integer")
            row = ChunkRow(
                id=md5_id("chunk-", self.doc_id, str(order), content),
                doc_id=self.doc_id,
                chunk_order_index=order,
                tokens=tokenizer.count(content),
                content=content,
                file_path=_path(c, where) or UNKNOWN_SOURCE,
            )
            self.chunk_ids[key] = row.id
            self.chunks.append(row)
        self.content = "\n\n".join(c.content for c in self.chunks)
        self.file_path = self.chunks[0].file_path
        self.entities = [e for i, item in enumerate(entities) for e in self._entity(i, item)]
        self.relations = [r for i, item in enumerate(relations) for r in self._relation(i, item)]

    def _sources(self, item: Mapping[str, Any], where: str) -> list[str]:
        keys = [k.strip() for k in _text(item, "source_id", where).split(GRAPH_FIELD_SEP) if k.strip()]
        dangling = [k for k in keys if k not in self.chunk_ids]
        if dangling:
            raise InvalidInput(
                f"{where}: source_id {', '.join(map(repr, dangling))} names no chunk of custom_kg['chunks']"
            )
        return [self.chunk_ids[k] for k in keys]

    def _entity(self, i: int, item: Mapping[str, Any]) -> list[ExtractedEntity]:
        where = f"entities[{i}]"
        name = entity_name(item.get("entity_name"), f"{where}: entity_name")
        entity_type = _text(item, "entity_type", where, required=False, default="UNKNOWN") or "UNKNOWN"
        description = _text(item, "description", where)
        path = _path(item, where) or None
        return [
            ExtractedEntity(name, entity_type, description, chunk, path or self._path(chunk))
            for chunk in self._sources(item, where)
        ]

    def _relation(self, i: int, item: Mapping[str, Any]) -> list[ExtractedRelation]:
        where = f"relationships[{i}]"
        src = entity_name(item.get("src_id"), f"{where}: src_id")
        tgt = entity_name(item.get("tgt_id"), f"{where}: tgt_id")
        if src == tgt:
            raise InvalidInput(f"{where}: a relationship needs two distinct entities, got {src!r} twice")
        weight = item.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise InvalidInput(f"{where}: weight must be a finite number, got {weight!r}")
        description = _text(item, "description", where)
        keywords = _text(item, "keywords", where, required=False)
        path = _path(item, where) or None
        return [
            ExtractedRelation(
                src, tgt, keywords, description, float(weight), chunk, path or self._path(chunk)
            )
            for chunk in self._sources(item, where)
        ]

    def _path(self, chunk_id: str) -> str:
        return next(c.file_path for c in self.chunks if c.id == chunk_id)


async def plan_custom_graph(editor: GraphEditor, graph: CustomGraph) -> Edit:
    """The one transaction inserting ``graph``; raises before writing on dangling endpoints."""
    e_new, r_new = document_fragments(graph.doc_id, graph.entities, graph.relations)
    declared = {e.name for e in graph.entities}
    by_name, by_pair = group_by_name(e_new), group_by_pair(r_new)
    names, pairs = sorted(by_name), sorted(by_pair)
    async with session(editor.pool) as s:
        if await s.docs.get([graph.doc_id]):
            raise GraphItemExists(f"document {graph.doc_id!r} already exists; nothing was changed")
        e_states = await s.graph.entity_states(graph.doc_id, names)
        e_stored = group_by_name(await s.graph.entity_fragments(names)) if names else {}
        r_states = await s.graph.relation_states(graph.doc_id, pairs) if pairs else {}
        r_stored = group_by_pair(await s.graph.relation_fragments(pairs)) if pairs else {}
    dangling = sorted(n for n in names if n not in declared and e_states[n].row is None)
    if dangling:
        raise InvalidInput(
            f"relationships name {', '.join(map(repr, dangling))}, which is neither an entity of "
            "custom_kg['entities'] nor of the workspace; nothing was changed"
        )
    entities: list[EntityRow] = []
    e_desc: list[list[str]] = []
    for n in names:
        stored = e_states[n].row
        version = stored.version if stored is not None else 0
        row, frags = build_entity(n, e_stored.get(n, []) + by_name[n], editor.settings, version)
        entities.append(row)
        e_desc.append(frags)
    relations: list[RelationRow] = []
    r_desc: list[list[str]] = []
    for p in pairs:
        current = r_states[p].row
        row_r, frags = build_relation(
            p, r_stored.get(p, []) + by_pair[p], editor.settings, current.version if current else 0
        )
        relations.append(row_r)
        r_desc.append(frags)
    entities = await editor.describe_entities(entities, e_desc)
    relations = await editor.describe_relations(relations, r_desc)
    chunk_vectors = await editor.writer.embed([c.content for c in graph.chunks])

    async def documents(uow: Stores) -> None:
        await uow.docs.insert([DocumentRow(graph.doc_id, graph.content, graph.file_path)])
        await uow.chunks.upsert(graph.chunks, chunk_vectors)

    async def links(uow: Stores) -> None:
        await uow.docs.link_entities(graph.doc_id, names)
        await uow.docs.link_relations(graph.doc_id, pairs)
        details = {"entities": len(names), "relations": len(pairs), "extractor": "custom_kg"}
        await uow.docs.mark_processed(graph.doc_id, [c.id for c in graph.chunks], details)

    return Edit(
        entities={n: st.row.version if st.row is not None else 0 for n, st in e_states.items()},
        relations={p: st.row.version if st.row is not None else 0 for p, st in r_states.items()},
        put_entities=entities,
        put_relations=relations,
        entity_fragments=e_new,
        relation_fragments=r_new,
        entity_vectors=await editor.entity_vectors(entities, {n: e_states[n].vector_content for n in names}),
        relation_vectors=await editor.relation_vectors(
            relations,
            {p: r_states[p].vector_content for p in pairs},
            {c.id: v for c, v in zip(graph.chunks, chunk_vectors, strict=True)},
        ),
        before=documents,
        after=links,
    )


def summary(graph: CustomGraph) -> dict[str, Any]:
    """What an insert of ``graph`` wrote."""
    return {
        "status": "success",
        "doc_id": graph.doc_id,
        "chunks": len(graph.chunks),
        "entities": len(
            {e.name for e in graph.entities} | {n for r in graph.relations for n in (r.src, r.tgt)}
        ),
        "relationships": len({tuple(sorted((r.src, r.tgt))) for r in graph.relations}),
    }
