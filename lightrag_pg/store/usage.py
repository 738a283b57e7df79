"""Usage store: one row per LLM or embedding call, and its sums by kind, day or document."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

import asyncpg

from ..db.pool import WorkspacePool
from ..db.sqlfile import load_queries
from ..errors import InvalidInput

SQL = load_queries(__package__, "usage.sql")

Grouping = Literal["kind", "day", "doc"]
GROUPINGS: tuple[Grouping, ...] = ("kind", "day", "doc")


class UsageRow(Protocol):
    """One call to store (:class:`lightrag_pg.llm.usage.Usage`, counted)."""

    @property
    def at(self) -> datetime: ...
    @property
    def kind(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def doc_id(self) -> str | None: ...
    @property
    def query_id(self) -> str | None: ...
    @property
    def cache_hit(self) -> bool: ...
    @property
    def input_tokens(self) -> int | None: ...
    @property
    def output_tokens(self) -> int | None: ...
    @property
    def cached_input_tokens(self) -> int: ...
    @property
    def counted_by(self) -> str: ...
    @property
    def seconds(self) -> float: ...


def usage_columns(rows: Iterable[UsageRow]) -> list[list[Any]]:
    """``rows`` as the 11 parallel arrays of ``insert_usage``."""
    cols: list[list[Any]] = [[] for _ in range(11)]
    for r in rows:
        values = (
            r.at,
            r.kind,
            r.model,
            r.doc_id,
            r.query_id,
            r.cache_hit,
            r.input_tokens or 0,
            r.output_tokens or 0,
            r.cached_input_tokens,
            r.counted_by,
            round(r.seconds * 1000, 3),
        )
        for col, value in zip(cols, values, strict=True):
            col.append(value)
    return cols


@dataclass(frozen=True, slots=True)
class UsageSum:
    """Calls and tokens of one group: ``key`` a kind, a day (``YYYY-MM-DD``) or a document id
    (``None``: calls of no document), ``label`` the document's file path. Tokens count the
    calls that reached a model; ``cache_hits`` the calls the LLM cache answered."""

    key: str | None
    label: str | None
    calls: int
    cache_hits: int
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int


class UsageStore:
    """``usage`` on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def insert(self, rows: Sequence[UsageRow]) -> None:
        """Store ``rows`` in one statement."""
        if rows:
            await self.conn.execute(SQL["insert_usage"], *usage_columns(rows))

    async def sums(self, by: Grouping, since: datetime) -> list[UsageSum]:
        """Calls and tokens since ``since``, grouped ``by`` kind, day or document."""
        if by not in GROUPINGS:
            raise InvalidInput(f"usage is summed by one of {', '.join(GROUPINGS)}, not {by!r}")
        rows = await self.conn.fetch(SQL[f"usage_by_{by}"], since)
        return [UsageSum(**dict(r)) for r in rows]


class PoolUsageSink:
    """Writes usage records through a pool, each batch on its own connection (autocommit)."""

    def __init__(self, pool: WorkspacePool) -> None:
        self.pool = pool

    async def write(self, records: Sequence[UsageRow]) -> None:
        """Store ``records`` in one statement."""
        if records:
            async with self.pool.acquire() as conn:
                await UsageStore(conn).insert(records)
