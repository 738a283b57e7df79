"""``lightrag-pg query "QUESTION"``: answer, stream or show the retrieved data."""

from __future__ import annotations

import argparse
import json

from ..errors import InvalidInput
from ..query.param import QueryParam
from .common import connected, make_rag, require_workspace, workspace_of

MODES = ["local", "global", "hybrid", "naive", "mix", "bypass"]


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("query", parents=parents, help="ask a question")
    p.add_argument("question")
    p.add_argument("--mode", choices=MODES, default="mix")
    p.add_argument("--top-k", type=int, default=40)
    p.add_argument("--stream", action="store_true", help="print the answer as it is generated")
    p.add_argument("--data", action="store_true", help="print the retrieved data as JSON, no answer")
    p.add_argument(
        "--bridge",
        action=argparse.BooleanOptionalAction,
        default=QueryParam().bridge,
        help="mix: follow the entities of the best passage to their other passages (multi-hop questions; "
        "default: on, unless --no-lexical)",
    )
    p.add_argument("--pagerank", action="store_true", help="rank the graph's chunks by personalized PageRank")
    p.add_argument(
        "--no-lexical",
        action="store_true",
        help="no lexical (BM25) fusion: upstream LightRAG's retrieval order",
    )
    p.set_defaults(run=run)


async def run(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise InvalidInput("the question is empty")
    workspace = workspace_of(args)
    async with connected(args) as (conn, db):
        await require_workspace(conn, workspace)
    param = QueryParam(
        mode=args.mode,
        top_k=args.top_k,
        bridge=args.bridge,
        pagerank=args.pagerank,
        lexical=not args.no_lexical,
    )
    # one question per process: a question asked before reuses its vectors and token
    # counts, so that neither the embedding model nor the tokenizer is loaded
    async with make_rag(args, db, workspace, query_memo=True) as rag:
        if args.data:
            print(json.dumps(await rag.aquery_data(args.question, param), indent=2, ensure_ascii=False))
        elif args.stream:
            async for piece in await rag.aquery_stream(args.question, param):
                print(piece, end="", flush=True)
            print()
        else:
            print(await rag.aquery(args.question, param))
    return 0
