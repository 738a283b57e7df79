"""The one write protocol of the graph: the merge writer, the deleter and the graph editor.

A change is planned from rows read without locks (summaries and vectors are
computed then, with no transaction open) and written in one transaction whose
statements re-check every row against the version it was planned on
(:mod:`lightrag_pg.store.graph`'s ``write_*`` and ``delete_*_if_unchanged``):

- a row read at version v > 0 is updated only while the newest committed row is
  still at v, and deleted only at v;
- only a row never seen (version 0) is inserted, and only if nobody created it
  meanwhile.

A row that moved (changed, created or deleted since it was read) is not written,
so a plan can never bring back a row deleted after it read it. What a round does
then is the caller's: a merge round keeps the rows it wrote and plans the others
again; an all-or-nothing change (a delete, an edit) raises :class:`RowsMoved`
from :func:`expect_written`, rolling its transaction back, and plans again.

:func:`settle` is the one retry loop: :data:`OPTIMISTIC_ROUNDS` planned
rounds, then :data:`LOCKED_ROUNDS` rounds that lock their rows first, in the
one lock order of every writer (:func:`lock_rows`: entities before relations,
each in key order), so that writers cannot deadlock and a popular row cannot
starve a change forever.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..errors import ConcurrentUpdate, ReferenceGone
from ..store.graph import GraphStore

K = TypeVar("K")
V = TypeVar("V")

Pair = tuple[str, str]

OPTIMISTIC_ROUNDS = 3
"""Planned rounds before the rows still changing are written under their locks."""
LOCKED_ROUNDS = 3
"""Locked rounds before giving up (a locked round only misses rows created or
deleted by someone else between its lock and its write)."""
BACKOFF = 0.01
"""Seconds: after losing round ``n`` (from 0) a change waits a random time up to this
times 2**n before planning again, so two writers racing on one row fall out of step."""

Round = Callable[[dict[K, V]], Awaitable[set[K]]]
"""A round: given the pending keys (and what each carries), the keys it finished."""


class RowsMoved(Exception):
    """A row a change was planned on moved before it was written: roll back, plan again."""


class Tally(Protocol):
    """Where :func:`settle` counts the rounds it ran."""

    rounds: int
    locked_rounds: int


@dataclass
class Rounds:
    """A plain :class:`Tally`."""

    rounds: int = 0
    locked_rounds: int = 0


async def settle(
    what: str,
    pending: dict[K, V],
    optimistic: Round[K, V],
    locked: Round[K, V],
    tally: Tally | None = None,
    *,
    optimistic_rounds: int = OPTIMISTIC_ROUNDS,
    locked_rounds: int = LOCKED_ROUNDS,
) -> int:
    """Run ``optimistic`` rounds, then ``locked`` ones, until every key of ``pending``
    is finished; return how many keys were finished.

    A round that raises :class:`RowsMoved`, or is rolled back by a deadlock or
    serialization failure (:class:`ConcurrentUpdate`), or by a foreign key whose row a
    concurrent delete removed (:class:`ReferenceGone`), finished nothing. Raises
    :class:`ConcurrentUpdate` naming ``what`` when keys are still pending after the
    last round.
    """
    tally = tally if tally is not None else Rounds()
    finished = 0
    lost = 0
    for attempt in range(optimistic_rounds + locked_rounds):
        if not pending:
            break
        is_locked = attempt >= optimistic_rounds
        tally.rounds += 1
        tally.locked_rounds += is_locked
        try:
            done = await (locked if is_locked else optimistic)(pending)
        except (RowsMoved, ConcurrentUpdate, ReferenceGone):
            done = set()
        finished += len(done)
        pending = {k: v for k, v in pending.items() if k not in done}
        if pending:
            await asyncio.sleep(random.uniform(0.0, BACKOFF * 2**lost))
            lost += 1
    if pending:
        raise ConcurrentUpdate(
            f"{what}: {len(pending)} rows kept changing under concurrent writers; nothing more was changed"
        )
    return finished


async def settle_one(
    what: str,
    optimistic: Callable[[], Awaitable[None]],
    locked: Callable[[], Awaitable[None]] | None = None,
    tally: Tally | None = None,
    **rounds: int,
) -> None:
    """:func:`settle` for an all-or-nothing change: each round either lands whole or
    raises (:class:`RowsMoved` when a row moved); ``locked`` defaults to ``optimistic``."""

    async def run(step: Callable[[], Awaitable[None]], pending: dict[str, None]) -> set[str]:
        await step()
        return set(pending)

    await settle(
        what,
        {what: None},
        lambda p: run(optimistic, p),
        lambda p: run(locked or optimistic, p),
        tally,
        **rounds,
    )


def expect_written(planned: Collection[object], written: Collection[object]) -> None:
    """Raise :class:`RowsMoved` unless every planned row was written."""
    if len(written) != len(planned):
        raise RowsMoved


async def lock_rows(graph: GraphStore, names: Sequence[str], pairs: Sequence[Pair]) -> None:
    """Lock the stored rows among ``names`` and ``pairs`` until the transaction ends, in the
    one lock order of every writer: entities before relations, each in key order."""
    if names:
        await graph.lock_entities(sorted(names))
    if pairs:
        await graph.lock_relations(sorted(pairs))


async def lock_for_edit(
    graph: GraphStore, entities: dict[str, int], relations: dict[Pair, int], touching: Sequence[str]
) -> None:
    """Lock (FOR UPDATE, in the order of :func:`lock_rows`) the entities and relations an
    edit was planned on, and every relation touching ``touching``; raise
    :class:`RowsMoved` unless each stands at its planned version (0: must not exist) and
    no other relation touches ``touching``."""
    if entities:
        found = await graph.lock_entities_for_edit(sorted(entities))
        if found != {n: v for n, v in entities.items() if v}:
            raise RowsMoved
    if relations or touching:
        found_r = await graph.lock_relations_for_edit(sorted(relations), touching)
        if found_r != {p: v for p, v in relations.items() if v}:
            raise RowsMoved
