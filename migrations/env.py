"""Alembic environment: migrates one workspace schema per run.

The workspace comes from the caller (``config.attributes['lightrag_target']``,
set by :mod:`lightrag_pg.db.migrate`), else ``-x workspace=NAME``, else
``$LIGHTRAG_PG_WORKSPACE``. Each workspace schema has its own
``alembic_version`` table. From the command line, a new workspace gets the
dimension of ``-x embedding_dim=N``, else ``$LIGHTRAG_PG_EMBEDDING_DIM``, else
that of the embedding configured in the environment (the one ``lightrag-pg``
and ``LightRAG()`` would use), and each run prints what it did.
"""

from __future__ import annotations

import asyncio
import os
import warnings

from alembic import context
from alembic.util import CommandError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from lightrag_pg.db.embedded import resolve_dsn, sqlalchemy_url
from lightrag_pg.db.migrate import (
    DIM_ENV,
    TARGET_KEY,
    MigrationTarget,
    configure_context,
    finish_workspace,
    prepare_workspace,
    recorded_dim,
    target_from_cli,
)
from lightrag_pg.errors import ConfigurationError, LightRAGError
from lightrag_pg.llm.openai_client import OpenAIEmbedding, embedding_configured

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

config = context.config
DIM_GIVEN_KEY = "lightrag_dim_given"
"""Whether the command line named the dimension (``-x embedding_dim`` or the environment)."""


def configured_embedding() -> tuple[int, str]:
    """Dimension and model name of the embedding the environment configures."""
    if embedding_configured():
        client = OpenAIEmbedding()
        if client.embedding_dim is None:
            raise ConfigurationError(
                f"unknown dimension of embedding model {client.model!r}: "
                "set EMBEDDING_DIM or pass -x embedding_dim=N"
            )
        return client.embedding_dim, client.model
    from lightrag_pg.offline.minilm import EMBEDDING_DIM, MODEL_NAME

    return EMBEDDING_DIM, MODEL_NAME


def target_from_command_line() -> MigrationTarget:
    x_args = dict(context.get_x_argument(as_dictionary=True))
    config.attributes[DIM_GIVEN_KEY] = bool(x_args.get("embedding_dim") or os.environ.get(DIM_ENV))
    if not config.attributes[DIM_GIVEN_KEY]:
        dim, model = configured_embedding()
        x_args["embedding_dim"] = str(dim)
        x_args.setdefault("embedding_model", model)
    return target_from_cli(x_args)


def run_on(connection, report: bool = False) -> None:
    target = config.attributes[TARGET_KEY]
    prepare_workspace(connection, target)
    recorded = recorded_dim(connection, target.workspace)
    created = recorded is None
    if not created and config.attributes.get(DIM_GIVEN_KEY) and recorded != target.embedding_dim:
        raise ConfigurationError(
            f"workspace {target.workspace!r} stores {recorded}-dimensional embeddings, not "
            f"{target.embedding_dim}: the dimension of an existing workspace does not change on "
            "upgrade (to move it to another model, re-embed it: `lightrag-pg reembed`)"
        )
    configure_context(context, connection, target)
    before = context.get_context().get_current_revision()
    with context.begin_transaction():
        context.run_migrations()
    finish_workspace(connection, target)
    if report:
        after = context.get_context().get_current_revision()
        print(describe_run(target, connection, created, before, after))


def describe_run(
    target: MigrationTarget, connection, created: bool, before: str | None, after: str | None
) -> str:
    name = target.workspace
    if created and after is not None:
        dim = recorded_dim(connection, name)
        model = target.embedding_model or "unnamed model"
        return f"created workspace {name!r} at revision {after}: {dim} dimensions, embeddings {model}"
    if before == after:
        return f"workspace {name!r} is already at revision {after or 'base'}; nothing to do"
    return f"workspace {name!r}: revision {before or 'base'} -> {after or 'base'}"


async def run_standalone() -> None:
    engine = create_async_engine(sqlalchemy_url(resolve_dsn(None)), poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(run_on, True)
    finally:
        await engine.dispose()


if context.is_offline_mode():
    raise SystemExit("lightrag_pg migrations need a live database (offline SQL mode is not supported)")

connection = config.attributes.get("connection")
if connection is None:
    try:  # the alembic command line: its FAILED line instead of a traceback
        if TARGET_KEY not in config.attributes:
            config.attributes[TARGET_KEY] = target_from_command_line()
        asyncio.run(run_standalone())
    except LightRAGError as exc:
        raise CommandError(str(exc)) from None
else:
    if TARGET_KEY not in config.attributes:
        config.attributes[TARGET_KEY] = target_from_command_line()
    run_on(connection)
