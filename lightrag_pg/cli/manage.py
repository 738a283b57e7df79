"""Workspace content commands: ``delete``, ``docs``, ``graph``, ``export``, ``import-kg``,
``clear-cache``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import InvalidInput
from .common import existing_rag, print_json

CACHE_TYPES = ["extract", "summary", "keywords", "query", "query_memo"]
EXPORT_FORMATS = ["csv", "json", "md", "xlsx", "graphml"]


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("delete", parents=parents, help="delete documents by id or file path")
    p.add_argument("ids", nargs="*", help="document ids")
    p.add_argument("--file-path", action="append", default=[], help="delete the documents of this path")
    p.add_argument("--keep-cache", action="store_true", help="keep the cached extraction answers")
    p.add_argument("--wait", type=float, default=0.0, help="seconds to wait for documents being indexed")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run_delete)
    p = sub.add_parser("docs", parents=parents, help="list documents, status counts or a track id")
    p.add_argument("--status", choices=["pending", "processing", "processed", "failed"])
    p.add_argument("--page", type=int, default=1)
    p.add_argument("--page-size", type=int, default=50)
    p.add_argument("--counts", action="store_true", help="only the number of documents per status")
    p.add_argument("--track", metavar="ID", help="the documents of one insert (its track id)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_docs)
    p = sub.add_parser("graph", parents=parents, help="the subgraph around an entity ('*': the hubs)")
    p.add_argument("label")
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--max-nodes", type=int, default=1000)
    p.add_argument("--json", action="store_true", help="print the subgraph as JSON (upstream's shape)")
    p.set_defaults(run=run_graph)
    p = sub.add_parser("export", parents=parents, help="export entities and relations to a file")
    p.add_argument("path")
    p.add_argument("--format", choices=EXPORT_FORMATS, default="csv")
    p.add_argument("--vectors", action="store_true", help="include the vectors")
    p.add_argument("--chunks", action="store_true", help="include the chunks")
    p.set_defaults(run=run_export)
    p = sub.add_parser("import-kg", parents=parents, help="insert a custom knowledge graph from JSON")
    p.add_argument("file", help='JSON: {"chunks": [...], "entities": [...], "relationships": [...]}')
    p.add_argument("--doc-id", help="the document id of the graph (default: doc- plus its MD5)")
    p.set_defaults(run=run_import)
    p = sub.add_parser("clear-cache", parents=parents, help="delete cached LLM answers")
    p.add_argument(
        "--type", dest="types", action="append", choices=CACHE_TYPES, help="(repeatable; default all)"
    )
    p.set_defaults(run=run_clear_cache)


async def run_delete(args: argparse.Namespace) -> int:
    if not args.ids and not args.file_path:
        raise InvalidInput("give document ids or --file-path")
    async with existing_rag(args) as rag:
        results = []
        if args.ids:
            results.append(await rag.adelete_by_doc_id(args.ids, keep_cache=args.keep_cache, wait=args.wait))
        if args.file_path:
            results.append(
                await rag.adelete_by_file_path(args.file_path, keep_cache=args.keep_cache, wait=args.wait)
            )
    for r in results:
        if args.json:
            print_json({k: getattr(r, k) for k in r.__dataclass_fields__})
        else:
            print(
                f"deleted {len(r.deleted_ids)} documents; entities rebuilt {r.entities_rebuilt}, "
                f"deleted {r.entities_deleted}; relations rebuilt {r.relations_rebuilt}, "
                f"deleted {r.relations_deleted}"
            )
    return 0


async def run_docs(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        if args.counts:
            counts = await rag.aget_status_counts()
            if args.json:
                print_json(counts)
            else:
                for status, n in counts.items():
                    print(f"{status:<11} {n}")
            return 0
        if args.track:
            data = await rag.aget_docs_by_track_id(args.track)
        else:
            data = await rag.aget_docs_paginated(args.status, args.page, args.page_size)
    if args.json:
        print_json(data)
        return 0
    for d in data["documents"]:
        print(f"{d['id']}\t{d['status']}\t{d.get('file_path', '')}\t{d.get('chunks_count') or 0} chunks")
    if "pagination" in data:
        p = data["pagination"]
        print(f"page {p['page']} of {p['total_pages']} ({p['total_count']} documents)")
    else:
        print(f"{data['total_count']} documents: {data['status_summary']}")
    return 0


async def run_graph(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        graph = await rag.aget_knowledge_graph(args.label, args.depth, args.max_nodes)
    data = graph.to_dict()
    if args.json:
        print_json(data)
        return 0
    print(
        f"{len(data['nodes'])} nodes, {len(data['edges'])} edges"
        + (" (truncated)" if data["is_truncated"] else "")
    )
    for n in data["nodes"][:20]:
        print(f"  {n['id']} ({n['properties'].get('entity_type', '?')})")
    if len(data["nodes"]) > 20:
        print(f"  ... and {len(data['nodes']) - 20} more")
    return 0


async def run_export(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        result = await rag.aexport_data(
            args.path, args.format, include_vector_data=args.vectors, include_chunks=args.chunks
        )
    rows = ", ".join(f"{n} {k}" for k, n in result.rows.items())
    print(f"wrote {result.path} ({result.file_format}: {rows})")
    return 0


async def run_import(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc}") from exc
    async with existing_rag(args) as rag:
        result = await rag.ainsert_custom_kg(payload, full_doc_id=args.doc_id)
    print(
        f"imported {result['doc_id']}: {result['chunks']} chunks, {result['entities']} entities, "
        f"{result['relationships']} relationships"
    )
    return 0


async def run_clear_cache(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        n = await rag.aclear_cache(args.types)
    print(f"deleted {n} cached answers")
    return 0
