"""Reference implementations the tests compare the SQL against."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lightrag_pg.store.rows import RelationRow


def rank_local_relations(relations: Iterable[RelationRow], entity_order: Sequence[str]) -> list[RelationRow]:
    """Order the edges of the local search like upstream: (edge degree, weight) desc.

    Upstream collects the edges entity by entity, in ``entity_order`` (the
    entities found, nearest first), before a stable sort; so equal edges go by
    the first entity they touch, then keep the order they were found in.
    """
    position = {name: i for i, name in enumerate(entity_order)}
    unranked = len(position)

    def first(r: RelationRow) -> int:
        return min(position.get(r.src, unranked), position.get(r.tgt, unranked))

    return sorted(relations, key=lambda r: (-r.degree, -r.weight, first(r)))
