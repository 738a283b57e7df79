"""The facade's graph methods: the knowledge graph and its labels, and manual edits.

Edits are planned and applied by :class:`~lightrag_pg.index.graph_edit.GraphEditor`;
what they return is shaped by :mod:`lightrag_pg.results`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import results
from .handle import Facade
from .store.subgraph import KnowledgeGraph
from .store.uow import session


class GraphMethods(Facade):
    """The graph half of :class:`~lightrag_pg.rag.LightRAG`'s API."""

    async def aget_knowledge_graph(
        self, node_label: str, max_depth: int = 3, max_nodes: int = 1000, max_neighbours: int | None = None
    ) -> KnowledgeGraph:
        """The subgraph around entity ``node_label`` for visualisation (``"*"``: the whole graph's
        highest-degree nodes), in upstream LightRAG's shape (``.to_dict()`` for JSON).

        Breadth-first in SQL up to ``max_depth`` hops, each node adding at most
        ``max_neighbours`` new neighbours (heaviest relations first; None: all); at most
        ``max_nodes`` nodes, the closest first, then the highest degree, then by name
        (``is_truncated`` says some were left out); the edges are all relations among
        the nodes kept. Two statements.
        """
        async with session(self._run.pool) as s:
            return await s.subgraph.knowledge_graph(node_label, max_depth, max_nodes, max_neighbours)

    async def aget_graph_labels(self) -> list[str]:
        """Every entity name of the workspace, in byte order."""
        async with session(self._run.pool) as s:
            return await s.subgraph.labels()

    async def aget_popular_labels(self, limit: int = 300) -> list[str]:
        """The ``limit`` entity names of highest degree (ties by name)."""
        async with session(self._run.pool) as s:
            return await s.subgraph.popular_labels(limit)

    async def asearch_labels(self, query: str, limit: int = 50) -> list[str]:
        """Entity names matching ``query``, best first (whole name, prefix, start of a word,
        substring, then near misses by shared trigrams); case-insensitive."""
        async with session(self._run.pool) as s:
            return await s.subgraph.search_labels(query, limit)

    async def aentity_exists(self, entity_name: str) -> bool:
        """Whether the workspace has an entity named ``entity_name``."""
        async with session(self._run.pool) as s:
            return bool(await s.graph.get_entities([entity_name]))

    async def acreate_entity(self, entity_name: str, entity_data: dict[str, Any]) -> dict[str, Any]:
        """Create an entity from ``entity_data`` (``description`` required, ``entity_type``),
        embedded, in one transaction; return :meth:`aget_entity_info`'s dict.

        The data is recorded as a manual contribution (chunk id ``manual_creation``),
        so deleting documents never removes it. An existing name raises
        :class:`~lightrag_pg.errors.GraphItemExists`.
        """
        await self._run.editor().create_entity(entity_name, entity_data)
        return await self.aget_entity_info(entity_name.strip())

    async def aedit_entity(
        self,
        entity_name: str,
        updated_data: dict[str, Any],
        allow_rename: bool = True,
        allow_merge: bool = False,
    ) -> dict[str, Any]:
        """Edit an entity's ``entity_type`` and ``description``, or rename it with
        ``entity_name``, in one transaction (re-embedded; the AGE mirror follows).

        The edit is a manual contribution that pins the type and description
        (documents indexed or deleted later do not change them). A rename moves
        every contribution, relation and link to the new name; renaming onto an
        existing entity raises :class:`~lightrag_pg.errors.GraphItemExists` unless
        ``allow_merge`` (then it is :meth:`amerge_entities`). Unknown names raise
        :class:`~lightrag_pg.errors.GraphItemNotFound`. Returns :meth:`aget_entity_info`.
        """
        editor = self._run.editor()
        name = await editor.edit_entity(
            entity_name, updated_data, allow_rename=allow_rename, allow_merge=allow_merge
        )
        return await self.aget_entity_info(name)

    async def amerge_entities(
        self,
        source_entities: Sequence[str],
        target_entity: str,
        merge_strategy: dict[str, str] | None = None,
        target_entity_data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Merge ``source_entities`` into ``target_entity`` (created if missing), in one transaction.

        Every contribution of the sources becomes the target's, so its fields
        follow the insert's merge rules over the union (descriptions joined, or
        summarised when the rules call for it); relations are redirected to the
        target, those between merged entities dropped, and those landing on one
        pair merged. ``target_entity_data`` (``entity_type``, ``description``)
        pins fields as :meth:`aedit_entity` does. ``merge_strategy`` is accepted
        for compatibility with upstream, where it is deprecated, and not used.
        A target among the sources raises :class:`~lightrag_pg.errors.InvalidInput`.
        """
        await self._run.editor().fold_entities(
            source_entities, target_entity, results.target_data(target_entity_data, merge_strategy)
        )
        return await self.aget_entity_info(target_entity.strip())

    async def adelete_by_entity(self, entity_name: str) -> dict[str, Any]:
        """Delete an entity with its relations, vectors, contributions and AGE rows, in one
        statement; returns ``status``, ``entity_name``, ``relations_deleted`` and ``message``."""
        relations = await self._run.editor().delete_entity(entity_name)
        return results.entity_deleted(entity_name.strip(), relations)

    async def acreate_relation(
        self, source_entity: str, target_entity: str, relation_data: dict[str, Any]
    ) -> dict[str, Any]:
        """Create a relation between two existing entities from ``relation_data``
        (``description`` required, ``keywords``, ``weight`` default 1.0), in one transaction.

        Relations are undirected. It is a manual contribution, and each endpoint
        gets a manual anchor, so deleting documents keeps all three. Returns
        :meth:`aget_relation_info`.
        """
        await self._run.editor().upsert_relation(source_entity, target_entity, relation_data, create=True)
        return await self.aget_relation_info(source_entity.strip(), target_entity.strip())

    async def aedit_relation(
        self, source_entity: str, target_entity: str, updated_data: dict[str, Any]
    ) -> dict[str, Any]:
        """Edit a relation's ``keywords``, ``description`` or ``weight`` in one transaction
        (re-embedded); the edit pins those fields as a manual contribution. Returns
        :meth:`aget_relation_info`."""
        await self._run.editor().upsert_relation(source_entity, target_entity, updated_data, create=False)
        return await self.aget_relation_info(source_entity.strip(), target_entity.strip())

    async def adelete_by_relation(self, source_entity: str, target_entity: str) -> dict[str, Any]:
        """Delete the relation between two entities (either order) with its vector and
        contributions, in one statement; returns ``status`` and ``message``."""
        await self._run.editor().delete_relation(source_entity, target_entity)
        return results.relation_deleted(source_entity.strip(), target_entity.strip())

    async def aget_entity_info(self, entity_name: str, include_vector_data: bool = False) -> dict[str, Any]:
        """An entity in upstream's shape (``entity_name``, ``source_id``, ``graph_data``;
        ``vector_data`` with ``include_vector_data``) plus ``contributions``: what each
        chunk, or a manual edit, said about it. Unknown names raise
        :class:`~lightrag_pg.errors.GraphItemNotFound`."""
        item = await self._run.editor().read_entity(entity_name, include_vector_data)
        return results.entity_info(item, include_vector_data)

    async def aget_relation_info(
        self, src_entity: str, tgt_entity: str, include_vector_data: bool = False
    ) -> dict[str, Any]:
        """A relation in upstream's shape (``src_entity``, ``tgt_entity``, ``source_id``,
        ``graph_data``; ``vector_data``) plus ``contributions``; see :meth:`aget_entity_info`."""
        item = await self._run.editor().read_relation(src_entity, tgt_entity, include_vector_data)
        return results.relation_info(src_entity.strip(), tgt_entity.strip(), item, include_vector_data)

    async def ainsert_custom_kg(
        self, custom_kg: dict[str, Any], full_doc_id: str | None = None
    ) -> dict[str, Any]:
        """Insert a knowledge graph given as ``{"chunks", "entities", "relationships"}``
        (upstream's shape; see :mod:`lightrag_pg.index.custom_kg`) in one transaction.

        The chunks become one processed document (``full_doc_id``, default
        ``doc-`` plus the payload's MD5) that :meth:`adelete_by_doc_id` removes
        again; entities and relations merge with the workspace's by the insert's
        rules. A ``source_id`` naming no chunk of the payload, or a relationship
        endpoint that is no entity of the payload or the workspace, raises
        :class:`~lightrag_pg.errors.InvalidInput` and changes nothing. Returns
        ``status``, ``doc_id`` and the numbers of chunks, entities and relationships.
        """
        return await self._run.insert_custom_kg(custom_kg, full_doc_id)
