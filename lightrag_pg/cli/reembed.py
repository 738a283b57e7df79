"""``lightrag-pg reembed``: move a workspace to the embedding model of the environment."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from .common import connected, require_workspace, workspace_of

if TYPE_CHECKING:
    from ..index.reembed import ReembedProgress

DEFAULT_BATCH_SIZE = 256


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "reembed",
        parents=parents,
        help="re-embed a workspace with the embedding model configured in the environment",
        description=(
            "Embed every entity, relation and chunk again with the embedding model of the "
            "environment (EMBEDDING_MODEL, EMBEDDING_DIM, ...; else the local MiniLM) while queries "
            "keep using the current vectors, then swap the new vectors in, in one transaction. "
            "Interrupted, run it again with the same model: it resumes."
        ),
    )
    p.add_argument(
        "--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="texts embedded per batch (default: 256)"
    )
    p.add_argument(
        "--abort",
        action="store_true",
        help="discard what an interrupted re-embed staged; keep the current model",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


class ReembedBar:
    """A tqdm bar over the vectors to stage, with the phase as description; shown from the
    first progress report on, so a run with nothing to do shows none."""

    def __init__(self) -> None:
        self.bar: Any = None

    def __call__(self, p: ReembedProgress) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=p.total, unit="vector", desc=p.phase, dynamic_ncols=True)
        self.bar.total = p.total
        self.bar.n = p.staged
        self.bar.set_description(p.phase, refresh=False)
        self.bar.set_postfix(embedded=p.embedded, refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


async def run(args: argparse.Namespace) -> int:
    import asyncio

    from ..config import Settings
    from ..db.pool import create_pool
    from ..db.workspace import open_workspace
    from ..defaults import default_embedding
    from ..index.reembed import Reembedder, discard_reembed, ignore_reembed_progress
    from ..llm.wrap import wrap_embedding

    name = workspace_of(args)
    settings = Settings()
    async with connected(args) as (conn, db):
        await require_workspace(conn, name)
        info = await open_workspace(conn, db.dsn, name)
    pool = await create_pool(
        db.dsn,
        name,
        embedding_dim=info.embedding_dim,
        min_size=1,
        max_size=2,
        connect_timeout=db.connect_timeout,
    )
    try:
        if args.abort:
            state = await discard_reembed(pool, db.dsn, name, db.connect_timeout)
            if args.json:
                print(json.dumps({"workspace": name, "discarded": state.embedding_model if state else None}))
            elif state is None:
                print(f"workspace {name!r}: no re-embed in progress; nothing to discard")
            else:
                print(
                    f"workspace {name!r}: discarded the re-embed to {state.embedding_model!r} "
                    f"({state.embedding_dim} dimensions); it keeps {info.embedding_model!r}"
                )
            return 0
        embed = wrap_embedding(await asyncio.to_thread(default_embedding, settings), settings=settings)
        reembedder = Reembedder(
            pool, db.dsn, name, embed, batch_size=args.batch_size, connect_timeout=db.connect_timeout
        )
        bar = None if args.json else ReembedBar()
        try:
            result = await reembedder.run(bar or ignore_reembed_progress)
        finally:
            if bar is not None:
                bar.close()
    finally:
        await pool.close()
    if args.json:
        print(json.dumps(asdict(result)))
    elif not result.changed:
        print(f"workspace {name!r} already uses {result.embedding_model!r}; nothing to do")
    else:
        resumed = " (resumed)" if result.resumed else ""
        print(
            f"workspace {name!r}: {result.vectors} vectors re-embedded{resumed} from "
            f"{result.previous_model!r} ({result.previous_dim} dimensions) to {result.embedding_model!r} "
            f"({result.embedding_dim} dimensions); {result.embedded} embedded by this run in "
            f"{result.seconds:.1f} s, swap {result.swap_seconds * 1000:.0f} ms"
        )
    return 0
