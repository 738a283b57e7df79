"""Alembic environment: migrates one workspace schema per run.

The workspace comes from the caller (``config.attributes['lightrag_target']``,
set by :mod:`lightrag_pg.db.migrate`), else ``-x workspace=NAME``, else
``$LIGHTRAG_PG_WORKSPACE``. Each workspace schema has its own
``alembic_version`` table.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from lightrag_pg.db.embedded import resolve_dsn, sqlalchemy_url
from lightrag_pg.db.migrate import (
    TARGET_KEY,
    configure_context,
    finish_workspace,
    prepare_workspace,
    target_from_cli,
)

config = context.config


def run_on(connection) -> None:
    target = config.attributes[TARGET_KEY]
    prepare_workspace(connection, target)
    configure_context(context, connection, target)
    with context.begin_transaction():
        context.run_migrations()
    finish_workspace(connection, target)


async def run_standalone() -> None:
    engine = create_async_engine(sqlalchemy_url(resolve_dsn(None)), poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(run_on)
    finally:
        await engine.dispose()


if context.is_offline_mode():
    raise SystemExit("lightrag_pg migrations need a live database (offline SQL mode is not supported)")

if TARGET_KEY not in config.attributes:
    config.attributes[TARGET_KEY] = target_from_cli(context.get_x_argument(as_dictionary=True))

connection = config.attributes.get("connection")
if connection is None:
    asyncio.run(run_standalone())
else:
    run_on(connection)
