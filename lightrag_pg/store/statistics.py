"""Planner statistics and full text index upkeep after a batch that grew the tables retrieval reads."""

from __future__ import annotations

import asyncpg

from ..db.sqlfile import load_queries

SQL = load_queries(__package__, "statistics.sql")


class StatisticsStore:
    """The planner statistics of a workspace's retrieval tables, on one connection."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def analyze_grown(self) -> None:
        """In one statement: ANALYZE the retrieval tables whose statistics are stale (never
        analyzed but holding rows, or changed by more than a tenth of their rows, plus 50,
        since they were last analyzed), then move the pending lists of their GIN (full
        text) indexes into the indexes, as autovacuum's analyze would. A workspace right
        after a large batch is otherwise planned on the figures of its former size, and
        its lexical searches read the pending lists, until autovacuum gets to it. Tables
        the session's role does not own are left to autovacuum."""
        await self.conn.execute(SQL["analyze_grown"])
