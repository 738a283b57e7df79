"""Pieces shared by the commands: the database, building LightRAG and printing results.

Importing this module stays cheap (``lightrag-pg --help`` imports every
command): the driver, the facade and the progress bar are imported by the
functions that use them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..db.embedded import DSN_ENV, default_data_dir, embedded_dsn, redact_dsn
from ..db.identifiers import WorkspaceName
from ..errors import WorkspaceNotFound

if TYPE_CHECKING:
    import asyncpg

    from ..db.workspace import WorkspaceInfo
    from ..index.progress import Progress
    from ..rag import LightRAG

DEFAULT_WORKSPACE = "default"


@dataclass(frozen=True, slots=True)
class Database:
    """The DSN a command uses, where it came from (for messages) and how long to wait for it."""

    dsn: str
    source: str
    connect_timeout: float

    @classmethod
    def of(cls, dsn: str, source: str) -> Database:
        """``dsn`` with its ``connect_timeout`` parameter taken out (default: the library's)."""
        from ..db.connect import split_connect_timeout

        plain, timeout = split_connect_timeout(dsn, Settings().connect_timeout)
        return cls(plain, source, timeout)

    def describe(self) -> str:
        return f"{redact_dsn(self.dsn)} (from {self.source})"


async def find_database(args: argparse.Namespace) -> Database:
    """``--dsn``, else ``$LIGHTRAG_PG_DSN``, else the embedded server (started if needed)."""
    if args.dsn:
        return Database.of(args.dsn, "--dsn")
    if os.environ.get(DSN_ENV):
        return Database.of(os.environ[DSN_ENV], f"${DSN_ENV}")
    data_dir = default_data_dir()
    return Database.of(await asyncio.to_thread(embedded_dsn, data_dir), f"the embedded server in {data_dir}")


async def connect(db: Database) -> asyncpg.Connection:
    """A connection to ``db``; :class:`ConnectFailed` naming the DSN and its source if none can be made."""
    from ..db.connect import connect as connect_to

    return await connect_to(db.dsn, timeout=db.connect_timeout, where=db.describe())


@asynccontextmanager
async def connected(args: argparse.Namespace) -> AsyncIterator[tuple[asyncpg.Connection, Database]]:
    """``async with connected(args) as (conn, db):`` one connection, closed afterwards."""
    db = await find_database(args)
    conn = await connect(db)
    try:
        yield conn, db
    finally:
        await conn.close()


async def reachable_database(args: argparse.Namespace) -> Database:
    """The command's database, once a connection to it has been made."""
    async with connected(args) as (_, db):
        return db


def workspace_of(
    args: argparse.Namespace, default: str = DEFAULT_WORKSPACE, option: str = "workspace"
) -> WorkspaceName:
    """The workspace the command names: ``--workspace`` (``default`` when not given), or the
    argument ``option``; the one place the command line's workspace names are checked."""
    return WorkspaceName(getattr(args, option) or default)


async def require_workspace(conn: asyncpg.Connection, name: WorkspaceName) -> WorkspaceInfo:
    """The workspace's info; :class:`WorkspaceNotFound` listing the existing ones if it is missing."""
    from ..db.workspace import list_workspaces, read_info

    info = await read_info(conn, name)
    if info is None:
        names = await list_workspaces(conn)
        existing = ", ".join(names) if names else "none yet; `lightrag-pg insert` creates one"
        raise WorkspaceNotFound(f"workspace {name!r} does not exist (existing workspaces: {existing})")
    return info


def make_rag(args: argparse.Namespace, db: Database, workspace: WorkspaceName, **settings: Any) -> LightRAG:
    """A LightRAG for the command's database and workspace (LLM and embeddings from the environment)."""
    from ..rag import LightRAG

    extractor = getattr(args, "extractor", None)
    if extractor:
        settings["extractor"] = extractor
    return LightRAG(dsn=db.dsn, workspace=workspace, **settings)


@asynccontextmanager
async def existing_rag(args: argparse.Namespace, **settings: Any) -> AsyncIterator[LightRAG]:
    """``async with existing_rag(args) as rag:`` an initialized LightRAG on the command's
    workspace, which must exist (:class:`WorkspaceNotFound` otherwise)."""
    workspace = workspace_of(args)
    async with connected(args) as (conn, db):
        await require_workspace(conn, workspace)
    async with make_rag(args, db, workspace, **settings) as rag:
        yield rag


def print_json(value: Any) -> None:
    """``value`` as indented JSON (non-ASCII kept; dates and other objects as strings)."""
    import json

    print(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def describe_setup(rag: LightRAG) -> str:
    """One line saying which LLM, extractor and embedding model are in use."""
    from ..llm.openai_client import llm_configured

    llm = "LLM endpoint from the environment" if llm_configured() else "no LLM configured"
    model = rag.embedding_func.model_name if rag.embedding_func else "?"
    extractor = rag.settings.extractor or ("llm" if rag.llm_model_func else "nlp")
    return f"workspace {rag.workspace!r}: {llm}; extractor {extractor}; embeddings {model}"


def describe_created(rag: LightRAG) -> str:
    """The line announcing a workspace the command has just created."""
    assert rag.info is not None
    model = rag.info.embedding_model or "unnamed model"
    return f"created workspace {rag.workspace!r}: {rag.info.embedding_dim} dimensions, embeddings {model}"


class ProgressBar:
    """A tqdm bar over the documents, whose total is known from the start, moving with
    every chunk extracted (the unfinished documents' share of the chunks cut so far) and
    never back; its label says documents and chunks in a few words, so that an
    80-column terminal still shows the bar (the merges are in the insert's summary)."""

    FORMAT = "{desc} {percentage:3.0f}%|{bar}| {remaining}"

    def __init__(self, label: str) -> None:
        from tqdm import tqdm

        self.label = label
        self.bar = tqdm(total=0, desc=label, dynamic_ncols=True, bar_format=self.FORMAT)

    def __call__(self, p: Progress) -> None:
        finished = p.docs_done + p.docs_failed + p.docs_skipped
        open_chunks = p.chunks_total - p.chunks_done
        share = (p.chunks_extracted - p.chunks_done) / open_chunks if open_chunks > 0 else 0.0
        estimate = min(float(p.docs_total), finished + min(share, 0.99))
        self.bar.total = p.docs_total
        self.bar.n = max(self.bar.n, estimate)
        failed = f" ({p.docs_failed} failed)" if p.docs_failed else ""
        merging = (
            f", merging {p.merge_batches_done}/{p.merge_batches_total}"
            if p.merge_batches_done < p.merge_batches_total
            else ""
        )
        self.bar.set_description_str(
            f"{self.label}: {finished}/{p.docs_total} docs{failed}, "
            f"{p.chunks_extracted}/{p.chunks_total} chunks{merging}",
            refresh=False,
        )
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
