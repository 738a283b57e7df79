"""The migration drift check: how a workspace's tables differ from the package's table metadata."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from lightrag_pg.db.embedded import sqlalchemy_url
from lightrag_pg.db.migrate import MigrationTarget, configure_context, prepare_workspace


def schema_drift(workspace: str, dim: int) -> Callable[[Any], list[Any]]:
    """For ``run_sync``: the differences Alembic's autogenerate finds in ``workspace``
    (of ``dim`` dimensions) against the metadata, as ``migrations/env.py`` configures it."""
    target = MigrationTarget(workspace, dim)

    def diff(sync_conn: Any) -> list[Any]:
        prepare_workspace(sync_conn, target)
        captured: dict[str, Any] = {}

        class Capture:
            @staticmethod
            def configure(**kwargs: Any) -> None:
                captured.update(kwargs)

        configure_context(Capture, sync_conn, target)
        ctx = MigrationContext.configure(
            connection=sync_conn,
            opts={
                "include_name": captured["include_name"],
                "compare_type": True,
                "compare_server_default": False,
            },
        )
        return compare_metadata(ctx, captured["target_metadata"])

    return diff


async def drift_of(dsn: str, workspace: str, dim: int) -> list[Any]:
    """:func:`schema_drift` of ``workspace`` on its own connection."""
    engine = create_async_engine(sqlalchemy_url(dsn), poolclass=NullPool)
    try:
        async with engine.begin() as sa_conn:
            return await sa_conn.run_sync(schema_drift(workspace, dim))
    finally:
        await engine.dispose()
