"""What the differential benchmark compares, and why two answers differ.

Each system is seen through a :class:`View` of one query: its own indexed graph
(degrees, weights), the distances its own vectors give (entities to the
low-level keywords, relations to the high-level ones, chunks to the question),
and what it returned, in order. A row only one system returned gets a cause
(:data:`CAUSES`) from the ranking the query's mode cuts by:

* local side: entities by distance, the first ``top_k``; relations, the edges of
  those entities, by (edge degree, weight), cut by a token budget;
* global side: relations by distance, the first ``top_k``; entities are their
  endpoints, so an entity's key is the distance of its nearest relation.

A row is a ``tie`` when, in *both* systems, its key equals the key of that
system's cut row: which of the rows tied at a cut are kept is the order a
vector index or a graph scan returned them in, undefined in upstream (and, for
vector searches, in lightrag_pg). :func:`tie_aware_jaccard` counts those rows
as agreeing; the raw Jaccard is always reported beside it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Pair = tuple[str, str]

LOCAL_MODES = ("local", "hybrid", "mix")
GLOBAL_MODES = ("global", "hybrid", "mix")

CAUSES: dict[str, str] = {
    "tie": "tied with the cut row at the cut, in both systems",
    "entity-vector": (
        "its distance, or that of the entity at the top_k cut, differs"
        " (stored descriptions, hence vectors, differ)"
    ),
    "relation-vector": (
        "its distance (an entity's: of its nearest relation), or that of the relation at the top_k cut,"
        " differs (stored descriptions, hence vectors, differ)"
    ),
    "follows-entity": "an edge of an entity only one system found",
    "follows-relation": "an endpoint of a relation only one system kept",
    "index-miss": (
        "an approximate vector search: the row is nearer than one the system without it returned"
        " (which skipped it), or beyond the exact top_k cut (returned in place of a skipped one)"
    ),
    "tie-order": (
        "paired with a row only the other system kept, of the same key in both systems:"
        " equal-key rows in another order, cut by a token budget"
    ),
    "entity-budget": "below the entity token budget of the system without it",
    "relation-budget": "below the relation token budget of the system without it",
    "chunk-budget": "below the chunk token budget of the system without it",
    "follows-graph": "a chunk of the entities or relations only one system kept (candidates differ)",
    "other": "unexplained",
}


def jaccard(a: frozenset[Any], b: frozenset[Any]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets are identical (1.0)."""
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def tie_aware_jaccard(a: frozenset[Any], b: frozenset[Any], ties: frozenset[Any]) -> float:
    """:func:`jaccard`, counting the rows in ``ties`` (kept by one side, tied at a cut) as agreeing."""
    union = a | b
    return len((a & b) | (ties & union)) / len(union) if union else 1.0


@dataclass(frozen=True, slots=True)
class Graph:
    """Entities (name -> type, description) and relations (sorted pair -> weight, keywords, description)."""

    entities: dict[str, tuple[str, str]]
    relations: dict[Pair, tuple[float, frozenset[str], str]]

    def degrees(self) -> dict[str, int]:
        """Relations touching each entity."""
        out: dict[str, int] = dict.fromkeys(self.entities, 0)
        for a, b in self.relations:
            out[a] = out.get(a, 0) + 1
            out[b] = out.get(b, 0) + 1
        return out


@dataclass(frozen=True, slots=True)
class Distances:
    """Cosine distances one system's vectors give for one query (rounded to 6 places).

    Entities to the low-level keywords, relations to the high-level ones, chunks
    (by content) to the question.
    """

    entities: dict[str, float]
    relations: dict[Pair, float]
    chunks: dict[str, float] = field(default_factory=dict)
    at_limit: frozenset[tuple[str, Any]] = frozenset()
    """(kind, key) of the rows at exactly ``1 - threshold``."""
    index_missed: frozenset[tuple[str, Any]] = frozenset()
    """(kind, key) of the rows this system's own top-k search skipped though nearer than its cut."""


@dataclass(frozen=True, slots=True)
class Retrieved:
    """What one system returned for one query, in its order, with its truncation counts."""

    entity_list: tuple[str, ...]
    relation_list: tuple[Pair, ...]
    chunk_list: tuple[str, ...]
    chunk_ids: frozenset[str] = frozenset()
    info: Mapping[str, int] = field(default_factory=dict)
    tokens: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_data(cls, result: dict[str, Any]) -> Retrieved:
        """From an ``aquery_data`` answer (upstream's or ours: same shape)."""
        data = result.get("data") or {}
        info = (result.get("metadata") or {}).get("processing_info") or {}
        return cls(
            tuple(e["entity_name"] for e in data.get("entities", [])),
            tuple(tuple(sorted((r["src_id"], r["tgt_id"]))) for r in data.get("relationships", [])),  # type: ignore[misc]
            tuple(c["content"] for c in data.get("chunks", [])),
            frozenset(c.get("chunk_id", "") for c in data.get("chunks", [])),
            {k: int(v) for k, v in info.items() if isinstance(v, int | float)},
        )

    @property
    def entities(self) -> frozenset[str]:
        """The entity names."""
        return frozenset(self.entity_list)

    @property
    def relations(self) -> frozenset[Pair]:
        """The relations, as sorted pairs."""
        return frozenset(self.relation_list)

    @property
    def chunks(self) -> frozenset[str]:
        """The chunk contents."""
        return frozenset(self.chunk_list)

    def truncated(self, kind: str) -> bool:
        """Whether the token budget of ``kind`` (``entities``, ``relations``) dropped rows."""
        found = self.info.get(f"total_{kind}_found")
        kept = self.info.get(f"{kind}_after_truncation")
        return found is not None and kept is not None and kept < found


@dataclass(frozen=True, slots=True)
class View:
    """One system's side of one query.

    ``strict``: the similarity threshold is strict (upstream: ``distance < 1 - t``)
    rather than inclusive (lightrag_pg: ``distance <= 1 - t``).
    """

    graph: Graph
    distances: Distances
    got: Retrieved
    strict: bool = False


def passes(distance: float, threshold: float, strict: bool) -> bool:
    """Whether a row at ``distance`` passes the cosine similarity ``threshold``."""
    limit = 1 - threshold
    return distance < limit if strict else distance <= limit


def vector_cut(distances: Mapping[Any, float], top_k: int, threshold: float, strict: bool) -> float | None:
    """The distance of the ``top_k``-th nearest row passing the threshold; ``None`` if fewer pass."""
    passing = sorted(d for d in distances.values() if passes(d, threshold, strict))
    return passing[top_k - 1] if len(passing) >= top_k else None


def tied_cut(distances: Mapping[Any, float], top_k: int, threshold: float, strict: bool) -> float | None:
    """:func:`vector_cut` when more rows lie at that distance than fit (the index picks), else ``None``."""
    cut = vector_cut(distances, top_k, threshold, strict)
    if cut is None or sum(d <= cut for d in distances.values() if passes(d, threshold, strict)) <= top_k:
        return None
    return cut


@dataclass(frozen=True, slots=True)
class Ranking:
    """The keys and cuts of one system's rankings for one query."""

    entity_distance: Callable[[str], float | None]
    nearest_relation: Callable[[str], float | None]
    relation_distance: Callable[[Pair], float | None]
    relation_rank: Callable[[Pair], tuple[int, float] | None]
    entity_cut: float | None
    relation_cut: float | None
    relation_rank_cut: tuple[int, float] | None
    local_entities: frozenset[str]
    # the same cuts, only where more rows share the cut's key than were kept
    entity_tie: float | None = None
    relation_tie: float | None = None
    relation_rank_tie: tuple[int, float] | None = None


def ranking(view: View, mode: str, top_k: int, threshold: float) -> Ranking:
    """The keys each ranking of ``mode`` sorts rows by in ``view``, and where it cut them."""
    d = view.distances
    graph = view.graph
    degrees = graph.degrees()
    relation_cut = vector_cut(d.relations, top_k, threshold, view.strict) if mode in GLOBAL_MODES else None
    entity_cut = vector_cut(d.entities, top_k, threshold, view.strict) if mode in LOCAL_MODES else None
    relation_tie = tied_cut(d.relations, top_k, threshold, view.strict) if mode in GLOBAL_MODES else None
    entity_tie = tied_cut(d.entities, top_k, threshold, view.strict) if mode in LOCAL_MODES else None
    nearest: dict[str, float] = {}
    for (a, b), dist in d.relations.items():
        if passes(dist, threshold, view.strict):
            for name in (a, b):
                nearest[name] = min(dist, nearest.get(name, 2.0))
    local = frozenset(
        name
        for name, dist in d.entities.items()
        if mode in LOCAL_MODES
        and passes(dist, threshold, view.strict)
        and (entity_cut is None or dist <= entity_cut)
    )

    def relation_rank(pair: Pair) -> tuple[int, float] | None:
        if pair not in graph.relations:
            return None
        return (degrees.get(pair[0], 0) + degrees.get(pair[1], 0), graph.relations[pair][0])

    # the local relations come last in the round-robin with the global ones, so the
    # last kept edge of a local entity is the row the relation budget cut after
    rank_cut = rank_tie = None
    if mode in LOCAL_MODES and view.got.truncated("relations"):
        last = [p for p in view.got.relation_list if p[0] in local or p[1] in local][-1:]
        rank_cut = relation_rank(last[0]) if last else None
        dropped = (
            p for p in graph.relations if (p[0] in local or p[1] in local) and p not in view.got.relations
        )
        rank_tie = rank_cut if any(relation_rank(p) == rank_cut for p in dropped) else None
    return Ranking(
        entity_distance=d.entities.get,
        nearest_relation=nearest.get,
        relation_distance=d.relations.get,
        relation_rank=relation_rank,
        entity_cut=entity_cut,
        relation_cut=relation_cut,
        relation_rank_cut=rank_cut,
        local_entities=local,
        entity_tie=entity_tie,
        relation_tie=relation_tie,
        relation_rank_tie=rank_tie,
    )


@dataclass(frozen=True, slots=True)
class Difference:
    """A row only one system returned, why, and its keys in both systems (``ours``, ``upstream``)."""

    kind: str
    item: Any
    kept_by: str
    cause: str
    keys: dict[str, Any]


def _at(key: Any, cut: Any) -> bool:
    return cut is not None and key is not None and key == cut


def _entity_cause(x: str, mode: str, has: Ranking, lacks: Ranking, has_view: View, lacks_view: View) -> str:
    if (
        mode in LOCAL_MODES
        and _at(has.entity_distance(x), has.entity_tie)
        and _at(lacks.entity_distance(x), lacks.entity_tie)
    ):
        return "tie"
    if (
        mode in GLOBAL_MODES
        and _at(has.nearest_relation(x), has.relation_tie)
        and _at(lacks.nearest_relation(x), lacks.relation_tie)
    ):
        return "tie"
    if mode in LOCAL_MODES and x in has.local_entities and x not in lacks.local_entities:
        return "entity-vector"
    if ("entities", x) in lacks_view.distances.index_missed and mode in LOCAL_MODES:
        return "index-miss"
    if mode == "local" and _beyond(has.entity_distance(x), has.entity_cut):
        return "index-miss"
    if (
        mode == "local"
        and not lacks_view.got.truncated("entities")
        and _nearer_than_kept(
            lacks.entity_distance(x), (lacks.entity_distance(e) for e in lacks_view.got.entity_list)
        )
    ):
        return "index-miss"
    if mode in GLOBAL_MODES and x not in has.local_entities:
        kept = [p for p in has_view.got.relation_list if x in p]
        if kept and all(p not in lacks_view.got.relations for p in kept):
            return "follows-relation"
        if has.nearest_relation(x) != lacks.nearest_relation(x):
            return "relation-vector"
    if lacks_view.got.truncated("entities"):
        return "entity-budget"
    return "other"


def _beyond(distance: float | None, cut: float | None) -> bool:
    """Whether a returned row lies beyond the exact top-k cut (its search skipped nearer rows)."""
    return distance is not None and cut is not None and distance > cut


def _nearer_than_kept(distance: float | None, kept: Any) -> bool:
    """Whether ``distance`` is strictly nearer than a row the search kept (an exact search keeps it too)."""
    farthest = max((d for d in kept if d is not None), default=None)
    return distance is not None and farthest is not None and distance < farthest


def _budget_keys(mode: str) -> dict[str, Callable[[Ranking, Any], Any]]:
    """The key that orders the rows a token budget cuts, per kind, in ``mode``.

    Entities: in a mode with a global side, the distance of the nearest relation (the
    global half of the merged list follows the relations' order); else the entity's
    distance. Relations: the (edge degree, weight) of the local side, which fills the
    tail of the merged list; in global mode, the distance.
    """
    entity = "nearest_relation" if mode in GLOBAL_MODES else "entity_distance"
    relation = "relation_rank" if mode in LOCAL_MODES else "relation_distance"
    return {
        "entities": lambda r, x: getattr(r, entity)(x),
        "relations": lambda r, x: getattr(r, relation)(x),
    }


def _relation_cause(
    x: Pair, mode: str, has: Ranking, lacks: Ranking, has_view: View, lacks_view: View
) -> str:
    if (
        mode in GLOBAL_MODES
        and _at(has.relation_distance(x), has.relation_tie)
        and _at(lacks.relation_distance(x), lacks.relation_tie)
    ):
        return "tie"
    local_has = x[0] in has.local_entities or x[1] in has.local_entities
    local_lacks = x[0] in lacks.local_entities or x[1] in lacks.local_entities
    if (
        mode in LOCAL_MODES
        and local_has
        and local_lacks
        and _at(has.relation_rank(x), has.relation_rank_tie)
        and _at(lacks.relation_rank(x), lacks.relation_rank_tie)
    ):
        return "tie"
    if mode in LOCAL_MODES and local_has and not local_lacks:
        return "follows-entity"
    if mode in GLOBAL_MODES and (
        has.relation_distance(x) != lacks.relation_distance(x) or has.relation_cut != lacks.relation_cut
    ):
        return "relation-vector"
    if mode in GLOBAL_MODES and ("relations", x) in lacks_view.distances.index_missed:
        return "index-miss"
    if mode in GLOBAL_MODES and _beyond(has.relation_distance(x), has.relation_cut) and not local_has:
        return "index-miss"
    distance = lacks.relation_distance(x)
    if (
        mode in GLOBAL_MODES
        and distance is not None
        and lacks.relation_cut is not None
        and (distance < lacks.relation_cut or (distance == lacks.relation_cut and lacks.relation_tie is None))
        and (
            not lacks_view.got.truncated("relations")
            or _nearer_than_kept(distance, map(lacks.relation_distance, lacks_view.got.relation_list))
        )
    ):
        return "index-miss"
    if mode in LOCAL_MODES and local_lacks and lacks_view.got.truncated("relations"):
        rank, cut = lacks.relation_rank(x), lacks.relation_rank_cut
        if rank is not None and cut is not None and rank <= cut:
            return "relation-budget"
    return "other"


def explain(
    mode: str, ours: View, upstream: View, top_k: int, threshold: float, chunk_top_k: int
) -> list[Difference]:
    """Every row only one system returned for one query, with its cause and keys in both systems."""
    views = {"ours": ours, "upstream": upstream}
    ranks = {name: ranking(view, mode, top_k, threshold) for name, view in views.items()}
    out: list[Difference] = []
    for kept_by, other in (("ours", "upstream"), ("upstream", "ours")):
        has_view, lacks_view = views[kept_by], views[other]
        has, lacks = ranks[kept_by], ranks[other]
        for x in sorted(has_view.got.entities - lacks_view.got.entities):
            cause = _entity_cause(x, mode, has, lacks, has_view, lacks_view)
            keys: dict[str, dict[str, Any]] = {
                side: {"distance": r.entity_distance(x), "nearest_relation": r.nearest_relation(x)}
                for side, r in ranks.items()
            }
            out.append(Difference("entities", x, kept_by, cause, keys))
        for p in sorted(has_view.got.relations - lacks_view.got.relations):
            cause = _relation_cause(p, mode, has, lacks, has_view, lacks_view)
            keys = {
                side: {"distance": r.relation_distance(p), "degree_weight": r.relation_rank(p)}
                for side, r in ranks.items()
            }
            out.append(Difference("relations", p, kept_by, cause, keys))
        lacks_chunks = lacks_view.got.chunk_list
        for position, c in enumerate(has_view.got.chunk_list):
            if c in lacks_view.got.chunks:
                continue
            short = len(lacks_chunks) < min(len(has_view.got.chunk_list), chunk_top_k)
            prefix = has_view.got.chunk_list[: len(lacks_chunks)]
            if short and position >= len(lacks_chunks) and set(prefix) == set(lacks_chunks):
                cause = "chunk-budget"
            elif ours.got.entities != upstream.got.entities or ours.got.relations != upstream.got.relations:
                cause = "follows-graph"
            else:
                cause = "other"
            keys = {side: {"distance": v.distances.chunks.get(c)} for side, v in views.items()}
            out.append(Difference("chunks", c[:60], kept_by, cause, keys))
    return _pair_equal_keys(out, ranks, mode)


_BUDGET_CAUSES = ("entity-budget", "relation-budget", "other")


def _pair_equal_keys(
    differences: list[Difference], ranks: Mapping[str, Ranking], mode: str
) -> list[Difference]:
    """Budget-cut rows only one system kept, paired with rows only the other kept under the same key.

    A row's key is its ranking key, equal in both systems; a pair of such rows is
    the same slot filled by two rows of equal keys in another order (``tie-order``).
    """
    key_of = _budget_keys(mode)
    waiting: dict[tuple[str, Any], list[int]] = {}
    relabel: set[int] = set()
    for i, d in enumerate(differences):
        if d.kind not in key_of or d.cause not in _BUDGET_CAUSES:
            continue
        key = key_of[d.kind](ranks["ours"], d.item)
        if key != key_of[d.kind](ranks["upstream"], d.item):
            continue
        partners = waiting.setdefault((d.kind, key), [])
        match = next((j for j in partners if differences[j].kept_by != d.kept_by), None)
        if match is None:
            partners.append(i)
        else:
            partners.remove(match)
            relabel |= {i, match}
    return [
        dataclasses.replace(d, cause="tie-order") if i in relabel else d for i, d in enumerate(differences)
    ]


def cut_summary(mode: str, view: View, top_k: int, threshold: float) -> dict[str, Any]:
    """Where ``view``'s rankings cut, and how many rows sit exactly at each cut."""
    r = ranking(view, mode, top_k, threshold)
    d = view.distances
    return {
        "entity_cut": r.entity_cut,
        "entities_at_cut": sum(v == r.entity_cut for v in d.entities.values())
        if r.entity_cut is not None
        else 0,
        "relation_cut": r.relation_cut,
        "relations_at_cut": (
            sum(v == r.relation_cut for v in d.relations.values()) if r.relation_cut is not None else 0
        ),
        "relation_rank_cut": r.relation_rank_cut,
        "info": dict(view.got.info),
        "tokens": dict(view.got.tokens),
    }


TIE_CAUSES = ("tie", "tie-order")


def ties_of(differences: Sequence[Difference], kind: str) -> frozenset[Any]:
    """The rows of ``kind`` only one system kept because of the order of rows with equal keys."""
    return frozenset(d.item for d in differences if d.kind == kind and d.cause in TIE_CAUSES)
