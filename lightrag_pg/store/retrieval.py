"""Retrieval: the entities, relations and chunks of a graph query, in one statement."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import asyncpg
import numpy as np

from ..db.dimensions import HalfvecCast
from ..db.sqlfile import bind, load_vector_queries, positional, render
from .rows import ChunkRow, EntityRow, RelationRow


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What a graph query keeps, best first: entities and relations after the token-budget
    cut, the merged chunks after the ``chunk_top_k`` cut; how many of each were merged
    before the cuts; and whether a side needs the WEIGHT chunk pick instead."""

    entities: list[EntityRow]
    relations: list[RelationRow]
    chunks: list[ChunkRow]
    found_entities: int
    found_relations: int
    merged_chunks: int
    needs_weight: bool


def _vector(v: np.ndarray | None) -> np.ndarray | None:
    return None if v is None else np.asarray(v, np.float32)


HIGH_DEGREE_SET = 1000
"""How many entities of highest degree the edges of a hub (a found entity with more edges
than this) are checked against before their other endpoints' degrees are looked up
(``retrieval.sql``, ``high_degrees``). At 300k entities the 30 largest hubs have 300-800
edges among the first 1000, more than a relation budget can keep."""


RRF_K = 60
"""The constant of reciprocal rank fusion: a row ranked ``rank`` in a list scores
``1 / (RRF_K + rank)`` (``retrieval.sql``, ``{rrf_k}``)."""


PICK_RRF_K = 0
"""The constant of hybrid's fusion of the chunks picked behind its kept entities and those
behind its kept relations (``retrieval.sql``, ``{pick_rrf_k}``). Both lists are long (every
candidate of a hub entity) and ranked by the same question vector, so a small constant
lets a list's first pick stand against the many chunks both lists hold lower down; 0 to
3 all gained on every set of ``bench/multihop.py`` and ``bench/quality.py``, 0 the most
(``docs/quality.md``)."""


HOME_RULES: dict[int, str] = {1: "title", 2: "heading", 3: "file name", 4: "central"}
"""The rules that find an entity's homes (``retrieval.sql``, fragment ``entity_homes``)."""


@dataclass(frozen=True, slots=True)
class EntityHome:
    """The chunks that introduce an entity (in at most ``Bridge.fanout`` chunks) and the rule
    that found them (a key of :data:`HOME_RULES`; ``None``: it has none)."""

    name: str
    rule: int | None
    chunks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Walk:
    """A personalized PageRank over the entity–chunk graph around a query's seeds.

    Seeds: the first ``seeds`` local entities (weight 1 / (rank × the chunks it is in))
    and the query's fused vector and lexical chunks (weight ``chunk_weight`` / rank).
    The walk spreads over the chunks of the seed entities, their entities and those
    entities' chunks; an entity in more than ``fanout`` chunks (a hub) is left out, and
    at most ``entities`` entities take part. ``steps`` power iterations with restart
    probability 1 - ``damping``."""

    damping: float = 0.5
    chunk_weight: float = 1.0
    seeds: int = 5
    fanout: int = 32
    entities: int = 400
    steps: int = 8


@dataclass(frozen=True, slots=True)
class Bridge:
    """A second hop from the question's best passage, and from the articles of what it names.

    An entity's homes are the chunks that introduce it: whose title (a document's first
    line, a first line over a blank one: "David Morse (politician)"), a Markdown or HTML
    heading ("## Installing Pterocarya") or file name less its extension
    (``docs/pterocarya.md``) names it; failing those, with ``central`` > 0, its central
    chunk, the one that mentions it most, at least ``central`` times and at least as
    often as all its other chunks together.

    The starts are the first ``start`` fused (vector and lexical) chunks and, with
    ``articles``, the article of each entity the question names: of its homes found by
    title, heading or file name (by central chunk too with ``central_starts``), the one
    most like the question. The entities of the starts that the question does not name,
    and that are in at most ``fanout`` chunks, lead to their other chunks; those and the
    articles are ranked by a score, the cosine distance to the question less ``heading``
    for a home of such an entity (about it, not just naming it), half of it for a central
    one. The first ``slots`` of them are placed among the fused chunks, never two in a
    row: the homes first, each after at least ``keep_home`` fused chunks, or after the
    first one when the best home's score is below the second fused chunk's distance by
    more than ``lead``; then the others, each after at least ``keep`` fused chunks. A
    question the text answers keeps its first matches; a passage about an entity the hop
    reached that is nearly as close to the question as the second match goes second
    (docs/multihop.md, "The default")."""

    keep: int = 3
    keep_home: int = 2
    lead: float = 0.2
    start: int = 1
    fanout: int = 32
    slots: int = 3
    heading: float = 0.3
    articles: bool = True
    central: int = 3
    central_starts: bool = False


@lru_cache(maxsize=256)
def with_limits(
    sql: str,
    top_k: int,
    chunk_top_k: int = 0,
    high_degree_set: int = HIGH_DEGREE_SET,
    walk: Walk = Walk(),
    bridge: Bridge = Bridge(),
) -> str:
    """``sql`` with its LIMITs filled in (``{top_k}``, ``{chunk_top_k}``, ``{high_degree_set}``,
    the walk's bounds ``{walk_seeds}``, ``{walk_fanout}``, ``{walk_entities}``, ``{walk_steps}``
    and the bridge's ``{bridge_from}``, ``{bridge_fanout}``, ``{bridge_slots}``,
    ``{bridge_articles}``, ``{bridge_central}``, ``{bridge_central_starts}``), and
    :data:`RRF_K` and :data:`PICK_RRF_K` as ``{rrf_k}`` and ``{pick_rrf_k}``.

    They are part of the statement's text, not parameters, so that its generic plan
    (the pool plans each statement once, ``db/pool.py``) is costed for the rows the
    searches return and keeps their HNSW scans; each distinct set of limits is a
    statement of its own in the driver's cache.
    """
    return render(
        sql,
        top_k=int(top_k),
        chunk_top_k=int(chunk_top_k),
        high_degree_set=int(high_degree_set),
        walk_seeds=int(walk.seeds),
        walk_fanout=int(walk.fanout),
        walk_entities=int(walk.entities),
        walk_steps=int(walk.steps),
        bridge_from=int(bridge.start),
        bridge_fanout=int(bridge.fanout),
        bridge_slots=int(bridge.slots),
        bridge_articles=int(bridge.articles),
        bridge_central=int(bridge.central),
        bridge_central_starts=int(bridge.central) if bridge.central_starts else 0,
        rrf_k=RRF_K,
        pick_rrf_k=PICK_RRF_K,
    )


class RetrievalStore:
    """The read statement of a graph query, on one connection."""

    def __init__(self, conn: asyncpg.Connection, halfvec: HalfvecCast) -> None:
        self.conn = conn
        self.sql = load_vector_queries(__package__, "retrieval.sql", halfvec)

    async def context(
        self,
        local_query: np.ndarray | None,
        global_query: np.ndarray | None,
        chunk_query: np.ndarray,
        *,
        threshold: float,
        top_k: int,
        max_entity_tokens: int,
        max_relation_tokens: int,
        vector_top_k: int,
        related_chunks: int,
        chunk_limit: int | None,
        lexical_chunks: str | None = None,
        lexical_entities: str | None = None,
        question: str | None = None,
        walk: Walk | None = None,
        bridge: Bridge | None = None,
    ) -> Retrieval:
        """Local and global graph search merged, ranked and cut to the token budgets, and the
        chunks nearest to ``chunk_query`` merged with the VECTOR pick of the kept rows' chunks,
        cut to ``chunk_limit`` (None: all); ``None`` for a graph vector switches that side off.

        Lexical search, fused with the vector searches by reciprocal rank: chunks matching
        ``lexical_chunks``, entities matching ``lexical_entities`` and, ahead of them, the
        entities a phrase of ``question`` names; ``None`` leaves each out.

        With ``walk``, the chunks a personalized PageRank ranks first (:class:`Walk`) take
        the place of the picks behind the kept entities and relations; with ``bridge``, the
        chunks a second hop from the best fused chunk reaches (:class:`Bridge`) take every
        place among the fused chunks as :class:`Bridge` says (after the walk's, with both)."""
        sql, names = positional(
            with_limits(
                self.sql["context"], top_k, vector_top_k, HIGH_DEGREE_SET, walk or Walk(), bridge or Bridge()
            )
        )
        values: dict[str, object] = {
            "local_query": _vector(local_query),
            "global_query": _vector(global_query),
            "threshold": threshold,
            "top_k": top_k,
            "max_entity_tokens": max_entity_tokens,
            "max_relation_tokens": max_relation_tokens,
            "chunk_query": _vector(chunk_query),
            "vector_top_k": vector_top_k,
            "related_chunks": related_chunks,
            "chunk_limit": chunk_limit,
            "lexical_chunks": lexical_chunks,
            "lexical_entities": lexical_entities,
            "question": question,
            "walk_damping": None if walk is None else walk.damping,
            "walk_chunk_weight": None if walk is None else walk.chunk_weight,
            "bridge_keep": None if bridge is None else bridge.keep,
            "bridge_keep_home": None if bridge is None else bridge.keep_home,
            "bridge_lead": None if bridge is None else bridge.lead,
            "bridge_heading": 0.0 if bridge is None else bridge.heading,
        }
        rows = await self.conn.fetch(sql, *bind(names, values))
        by_kind: dict[str, list[asyncpg.Record]] = {"entity": [], "relation": [], "chunk": [], "flags": []}
        for r in rows:
            by_kind[r["kind"]].append(r)
        entities, relations = by_kind["entity"], by_kind["relation"]
        (flags,) = by_kind["flags"]
        return Retrieval(
            entities=[EntityRow.from_record(r) for r in entities],
            relations=[RelationRow.from_record(r) for r in relations],
            chunks=[ChunkRow.from_record(r) for r in by_kind["chunk"]],
            found_entities=entities[0]["found"] if entities else 0,
            found_relations=relations[0]["found"] if relations else 0,
            merged_chunks=flags["found"],
            needs_weight=bool(flags["needs_weight"]),
        )

    async def naive(
        self, query: np.ndarray, threshold: float, top_k: int, lexical: str | None = None
    ) -> list[ChunkRow]:
        """The ``top_k`` chunks nearest to ``query`` (similarity > ``threshold``), fused with the
        ``top_k`` best lexical matches of ``lexical`` by reciprocal rank; best first. Without
        ``lexical``, exactly the vector search's order."""
        rows = await self.conn.fetch(
            with_limits(self.sql["naive"], top_k), _vector(query), threshold, top_k, lexical
        )
        return [ChunkRow.from_record(r) for r in rows]

    async def homes(self, question: str | None, bridge: Bridge = Bridge()) -> list[EntityHome]:
        """The homes :class:`Bridge` finds for the entities ``question`` names (``None``: for
        every entity), by name, for benches and diagnosis."""
        rows = await self.conn.fetch(with_limits(self.sql["homes"], 0, bridge=bridge), question)
        return [EntityHome(r["name"], r["rule"], tuple(r["homes"])) for r in rows]
