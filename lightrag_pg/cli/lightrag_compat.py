"""``lightrag-pg import-lightrag`` and ``export-lightrag``: move in from upstream LightRAG and back."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from .common import connected, describe_created, existing_rag, make_rag, print_json, workspace_of

if TYPE_CHECKING:
    from ..index.lightrag_compat.report import ImportProgress


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "import-lightrag",
        parents=parents,
        help="import an upstream LightRAG workspace (files or PostgreSQL) without re-indexing",
        description=(
            "Import an upstream LightRAG 1.5.7 workspace into --workspace (created if missing, with the "
            "embedding model of the environment, which must be upstream's): documents, statuses, "
            "chunks, vectors, the LLM cache, entities and relations, with no LLM or embedding call. "
            "SOURCE is a working directory or a postgresql:// DSN of upstream's PostgreSQL storages. "
            "Interrupted, run it again: it finishes the job; once done, it changes nothing."
        ),
    )
    p.add_argument("source", help="upstream's working directory, or a postgresql:// DSN")
    p.add_argument(
        "--source-workspace",
        help="upstream's workspace: a subfolder of the working directory, or the value of the "
        "workspace column (default: the folder itself; 'default' for PostgreSQL)",
    )
    p.add_argument(
        "--embedding-model",
        help="the embedding model upstream used (its files do not record it; its tables do)",
    )
    p.add_argument(
        "--graph", choices=["auto", "age", "pgtable"], default="auto", help="upstream's graph storage"
    )
    p.add_argument("--batch-size", type=int, default=500, help="records per transaction (default: 500)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run_import)
    p = sub.add_parser(
        "export-lightrag",
        parents=parents,
        help="write the workspace as an upstream LightRAG working directory",
        description=(
            "Write --workspace as an upstream LightRAG 1.5.7 working directory (JSON, nano-vectordb and "
            "GraphML files) that upstream opens and queries with the same embedding model."
        ),
    )
    p.add_argument("working_dir", help="an empty or new folder")
    p.add_argument("--overwrite", action="store_true", help="write into a folder that is not empty")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run_export)


class ImportBar:
    """A tqdm bar per phase of the import, over the bytes or rows its input holds."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.phase = ""

    def __call__(self, p: ImportProgress) -> None:
        from tqdm import tqdm

        if p.phase != self.phase:
            self.close()
            self.phase = p.phase
            label = f"[{p.phase_index + 1}/{p.phases}] {p.phase.replace('_', ' ')}"
            scale = p.unit == "B"
            self.bar = tqdm(
                total=p.total or None, unit=p.unit, unit_scale=scale, desc=label, dynamic_ncols=True
            )
        self.bar.total = p.total or None
        self.bar.n = p.done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


async def run_import(args: argparse.Namespace) -> int:
    from ..db.workspace import read_info

    workspace = workspace_of(args)
    async with connected(args) as (conn, db):
        existed = await read_info(conn, workspace) is not None
    async with make_rag(args, db, workspace) as rag:
        if not existed and not args.json:
            print(describe_created(rag))
        bar = None if args.json else ImportBar()
        try:
            report = await rag.aimport_lightrag(
                args.source,
                args.source_workspace,
                embedding_model=args.embedding_model,
                graph=args.graph,
                batch_size=args.batch_size,
                progress=bar,
            )
        except asyncio.CancelledError:
            print("interrupted: what was imported stays; run the same command again to finish")
            raise
        finally:
            if bar is not None:
                bar.close()
    if args.json:
        print_json(report.to_dict())
    else:
        print("\n".join(report.lines()))
    return 0


async def run_export(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        report = await rag.aexport_lightrag(args.working_dir, overwrite=args.overwrite)
    if args.json:
        print_json({"working_dir": report.working_dir, "files": report.files, "seconds": report.seconds})
    else:
        print("\n".join(report.lines()))
    return 0
