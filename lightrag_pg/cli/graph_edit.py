"""``lightrag-pg entity ...`` and ``lightrag-pg relation ...``: show, edit, rename, merge, delete."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InvalidInput
from ..types import GRAPH_FIELD_SEP
from .common import existing_rag, print_json


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    entity = sub.add_parser("entity", parents=parents, help="show, edit, rename, merge or delete entities")
    verbs = entity.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("show", parents=parents, help="an entity with its contributions")
    p.add_argument("name")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--vector", action="store_true", help="include the stored vector (with --json)")
    p.set_defaults(run=run_entity_show)
    p = verbs.add_parser("edit", parents=parents, help="set an entity's type or description (pins them)")
    p.add_argument("name")
    p.add_argument("--type", dest="entity_type")
    p.add_argument("--description")
    p.add_argument("--json", action="store_true", help="print the entity as JSON")
    p.set_defaults(run=run_entity_edit)
    p = verbs.add_parser("rename", parents=parents, help="rename an entity")
    p.add_argument("name")
    p.add_argument("new_name")
    p.add_argument("--merge", action="store_true", help="merge into NEW_NAME if it exists")
    p.add_argument("--json", action="store_true", help="print the entity as JSON")
    p.set_defaults(run=run_entity_rename)
    p = verbs.add_parser("merge", parents=parents, help="merge SOURCES into TARGET")
    p.add_argument("target")
    p.add_argument("sources", nargs="+")
    p.add_argument("--type", dest="entity_type", help="pin the target's type")
    p.add_argument("--description", help="pin the target's description")
    p.add_argument("--json", action="store_true", help="print the entity as JSON")
    p.set_defaults(run=run_entity_merge)
    p = verbs.add_parser("delete", parents=parents, help="delete an entity with its relations")
    p.add_argument("name")
    p.set_defaults(run=run_entity_delete)

    relation = sub.add_parser("relation", parents=parents, help="show, edit or delete relations")
    verbs = relation.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("show", parents=parents, help="a relation with its contributions")
    p.add_argument("src")
    p.add_argument("tgt")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_relation_show)
    p = verbs.add_parser("edit", parents=parents, help="set a relation's keywords, description or weight")
    p.add_argument("src")
    p.add_argument("tgt")
    p.add_argument("--keywords")
    p.add_argument("--description")
    p.add_argument("--weight", type=float)
    p.add_argument("--create", action="store_true", help="create the relation (it must not exist)")
    p.add_argument("--json", action="store_true", help="print the relation as JSON")
    p.set_defaults(run=run_relation_edit)
    p = verbs.add_parser("delete", parents=parents, help="delete a relation")
    p.add_argument("src")
    p.add_argument("tgt")
    p.set_defaults(run=run_relation_delete)


def _fields(args: argparse.Namespace, names: tuple[str, ...]) -> dict[str, Any]:
    return {n: getattr(args, n) for n in names if getattr(args, n) is not None}


def _print_contributions(description: str, contributions: list[dict[str, Any]], *, with_type: bool) -> None:
    for part in description.split(GRAPH_FIELD_SEP):  # descriptions merged without a summary
        print(f"  {part.strip()}")
    print(f"  contributions ({len(contributions)}):")
    for c in contributions:
        where = "manual edit" if c["manual"] else f"{c['doc_id']} {c['chunk_id']}"
        kind = f"{c['entity_type']}: " if with_type else ""
        text = " ".join(c["description"].replace(GRAPH_FIELD_SEP, " ").split())
        print(f"    - [{where}] {kind}{text[:100]}")


def print_entity(info: dict[str, Any], as_json: bool) -> None:
    """An entity's info, as JSON or as readable lines."""
    if as_json:
        print_json(info)
        return
    g = info["graph_data"]
    print(f"{info['entity_name']} ({g['entity_type']}), degree {g['degree']}")
    _print_contributions(g["description"], info["contributions"], with_type=True)


def print_relation(info: dict[str, Any], as_json: bool) -> None:
    """A relation's info, as JSON or as readable lines."""
    if as_json:
        print_json(info)
        return
    g = info["graph_data"]
    keywords = ", ".join(k.strip() for k in g["keywords"].split(GRAPH_FIELD_SEP))
    print(f"{g['src_id']} <-> {g['tgt_id']}  weight {g['weight']:g}  keywords: {keywords}")
    _print_contributions(g["description"], info["contributions"], with_type=False)


async def run_entity_show(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        print_entity(await rag.aget_entity_info(args.name, include_vector_data=args.vector), args.json)
    return 0


async def run_entity_edit(args: argparse.Namespace) -> int:
    fields = _fields(args, ("entity_type", "description"))
    if not fields:
        raise InvalidInput("nothing to change: give --type and/or --description")
    async with existing_rag(args) as rag:
        print_entity(await rag.aedit_entity(args.name, fields), args.json)
    return 0


async def run_entity_rename(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        info = await rag.aedit_entity(args.name, {"entity_name": args.new_name}, allow_merge=args.merge)
        print_entity(info, args.json)
    return 0


async def run_entity_merge(args: argparse.Namespace) -> int:
    data = _fields(args, ("entity_type", "description")) or None
    async with existing_rag(args) as rag:
        print_entity(await rag.amerge_entities(args.sources, args.target, target_entity_data=data), args.json)
    return 0


async def run_entity_delete(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        print((await rag.adelete_by_entity(args.name))["message"])
    return 0


async def run_relation_show(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        print_relation(await rag.aget_relation_info(args.src, args.tgt), args.json)
    return 0


async def run_relation_edit(args: argparse.Namespace) -> int:
    fields = _fields(args, ("keywords", "description", "weight"))
    async with existing_rag(args) as rag:
        if args.create:
            info = await rag.acreate_relation(args.src, args.tgt, fields)
        else:
            info = await rag.aedit_relation(args.src, args.tgt, fields)
        print_relation(info, args.json)
    return 0


async def run_relation_delete(args: argparse.Namespace) -> int:
    async with existing_rag(args) as rag:
        print((await rag.adelete_by_relation(args.src, args.tgt))["message"])
    return 0
