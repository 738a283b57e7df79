"""Pieces shared by the commands: building LightRAG and printing results."""

from __future__ import annotations

import argparse
from typing import Any

from tqdm import tqdm

from ..index.progress import Progress
from ..llm.openai_client import llm_configured
from ..rag import LightRAG


def make_rag(args: argparse.Namespace, default_workspace: str = "default", **settings: Any) -> LightRAG:
    """A LightRAG for the command's DSN and workspace (LLM and embeddings from the environment)."""
    extractor = getattr(args, "extractor", None)
    if extractor:
        settings["extractor"] = extractor
    return LightRAG(dsn=args.dsn, workspace=args.workspace or default_workspace, **settings)


def describe_setup(rag: LightRAG) -> str:
    """One line saying which LLM, extractor and embedding model are in use."""
    llm = "LLM endpoint from the environment" if llm_configured() else "no LLM configured"
    model = rag.embedding_func.model_name if rag.embedding_func else "?"
    extractor = rag.settings.extractor or ("llm" if rag.llm_model_func else "nlp")
    return f"workspace {rag.workspace!r}: {llm}; extractor {extractor}; embeddings {model}"


class ProgressBar:
    """A tqdm bar over chunks, with documents, entities and relations as postfix."""

    def __init__(self, label: str) -> None:
        self.bar = tqdm(total=0, unit="chunk", desc=label, dynamic_ncols=True)

    def __call__(self, p: Progress) -> None:
        self.bar.total = p.chunks_total
        self.bar.n = p.chunks_done
        self.bar.set_postfix(
            docs=f"{p.docs_done + p.docs_failed}/{p.docs_total}",
            entities=p.entities,
            relations=p.relations,
            refresh=False,
        )
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def print_knowledge(data: dict[str, Any], limit: int = 8) -> None:
    """The entities, relations and sources behind an answer."""
    if data.get("status") != "success":
        print(f"(no knowledge retrieved: {data.get('message')})")
        return
    d = data["data"]
    print(f"\nEntities used ({len(d['entities'])}):")
    for e in d["entities"][:limit]:
        print(f"  - {e['entity_name']} ({e['entity_type']})")
    print(f"Relations used ({len(d['relationships'])}):")
    for r in d["relationships"][:limit]:
        print(f"  - {r['src_id']} <-> {r['tgt_id']}")
    print("Sources:")
    for ref in d["references"]:
        print(f"  [{ref['reference_id']}] {ref['file_path']}")
