"""Synthesized upstream LightRAG 1.5.7 workspaces, in both shapes, of any size, in seconds.

Indexing 10,000 documents with upstream itself takes far too long for a benchmark,
so these are built directly in upstream's storage formats, as upstream 1.5.7 writes
them (checked against real upstream output by tests/test_lightrag_import.py):

* :func:`write_workdir`: a working directory (``kv_store_*.json``, nano-vectordb
  ``vdb_*.json`` with their base64 float32 matrix, the GraphML graph);
* :func:`write_postgres`: upstream's ``LIGHTRAG_*`` tables in a database, keyed by a
  workspace column, the vector tables named after the model, the graph in Apache
  AGE (vertex label ``base``, edge label ``DIRECTED``) or in upstream's plain tables.

Each document has a few chunks; each chunk names a few entities from a Zipf-weighted
vocabulary and relates those that share a sentence. The LLM cache holds each chunk's
extraction answer (and an empty gleaning answer) in upstream's record format; the
merged rows are the ``<SEP>``-joined per-chunk descriptions, as upstream merges them
without a summary. Vectors are :func:`lightrag_pg.testing.hashed_vectors` of the texts
upstream embeds (model ``hashed-bow-<dim>``). Everything is deterministic for a seed.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import random
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lightrag_pg.db.identifiers import catalog_name
from lightrag_pg.db.sqlfile import load_queries, render
from lightrag_pg.testing import hashed_vectors

SEP = "<SEP>"
D = "<|#|>"
TYPES = ("person", "organization", "location", "artifact", "concept")
_SYLLABLES = ("ka", "lo", "mi", "nu", "ra", "se", "ti", "vo", "ze", "dra", "pli", "sto", "gre", "bau", "fen")
_VERBS = ("met", "worked with", "wrote to", "visited", "funded", "studied", "joined", "advised")
_FILLER = (
    "The committee reviewed the figures.",
    "A draft was circulated before the deadline.",
    "Several questions remained open after the session.",
    "The report was published in the spring.",
)
EPOCH = 1_767_225_600  # 2026-01-01, the time every record is stamped with


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


@dataclass
class Merged:
    """An entity or relation as upstream merges it: per-chunk descriptions joined."""

    kind: str
    descriptions: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


@dataclass
class Corpus:
    """One synthesized upstream workspace, held in memory."""

    dim: int
    docs: dict[str, dict[str, Any]] = field(default_factory=dict)
    chunks: dict[str, dict[str, Any]] = field(default_factory=dict)
    cache: dict[str, dict[str, Any]] = field(default_factory=dict)
    entities: dict[str, Merged] = field(default_factory=dict)
    relations: dict[tuple[str, str], Merged] = field(default_factory=dict)
    doc_entities: dict[str, list[str]] = field(default_factory=dict)
    doc_relations: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    @property
    def model(self) -> str:
        return f"hashed-bow-{self.dim}"

    def entity_content(self, name: str) -> str:
        return f"{name}\n{SEP.join(self.entities[name].descriptions)}"

    def relation_content(self, pair: tuple[str, str]) -> str:
        r = self.relations[pair]
        return f"{','.join(r.keywords)}\t{pair[0]}\n{pair[1]}\n{SEP.join(r.descriptions)}"


def _name(rng: random.Random, used: set[str]) -> str:
    while True:
        name = " ".join(
            "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 3)))).capitalize() for _ in range(2)
        )
        if name not in used:
            used.add(name)
            return name


def synthesize(docs: int, *, dim: int = 64, chunks_per_doc: int = 2, seed: int = 0) -> Corpus:
    """A workspace of ``docs`` documents of ``chunks_per_doc`` chunks each."""
    rng = random.Random(f"lightrag-shapes:{seed}")
    used: set[str] = set()
    vocab = [(_name(rng, used), TYPES[i % len(TYPES)]) for i in range(max(40, docs * 2))]
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) ** 0.8 for rank in range(len(vocab))))
    types = dict(vocab)
    corpus = Corpus(dim)
    for d in range(docs):
        file_path = f"doc-{d:06d}.txt"
        pieces: list[tuple[str, list[str], list[tuple[str, str, str, str]]]] = []
        for _ in range(chunks_per_doc):
            cast = list(dict.fromkeys(n for n, _ in rng.choices(vocab, cum_weights=cumulative, k=5)))
            sentences, pairs = [], []
            for i, a in enumerate(cast):
                b = cast[(i + 1) % len(cast)]
                if a != b:
                    verb = rng.choice(_VERBS)
                    sentences.append(f"{a} {verb} {b} in {1990 + rng.randrange(30)}.")
                    pairs.append((a, b, verb, sentences[-1]))
                sentences.append(rng.choice(_FILLER))
            pieces.append((f"[{file_path}] " + " ".join(sentences), cast, pairs))
        content = "\n\n".join(p[0] for p in pieces)
        doc_id = "doc-" + md5(content)
        corpus.docs[doc_id] = {"content": content, "file_path": file_path}
        names: dict[str, None] = {}
        links: dict[tuple[str, str], None] = {}
        for order, (text, cast, pairs) in enumerate(pieces):
            chunk_id = f"{doc_id}-chunk-{order:03d}"
            lines = []
            for name in cast:
                sentence = next((s for s in text.split(". ") if name in s), text[:80])
                description = f"{name} is mentioned: {sentence.strip('. ')}."
                lines.append(f"entity{D}{name}{D}{types[name].capitalize()}{D}{description}")
                e = corpus.entities.setdefault(name, Merged(types[name]))
                e.descriptions.append(description)
                e.chunks.append(chunk_id)
                if file_path not in e.files:
                    e.files.append(file_path)
                names[name] = None
            for a, b, verb, description in pairs:
                pair = (a, b) if a < b else (b, a)
                keyword = verb.replace(" ", "_")
                lines.append(f"relation{D}{a}{D}{b}{D}{keyword}{D}{description}")
                r = corpus.relations.setdefault(pair, Merged("relation"))
                r.descriptions.append(description)
                if keyword not in r.keywords:
                    r.keywords.append(keyword)
                r.chunks.append(chunk_id)
                if file_path not in r.files:
                    r.files.append(file_path)
                links[pair] = None
            answer = "\n".join([*lines, "<|COMPLETE|>"])
            prompt = f"Extract the entities and relationships of this text.\n```\n{text}\n```"
            first, glean = f"default:extract:{md5(prompt)}", f"default:extract:{md5('glean' + prompt)}"
            corpus.cache[first] = _cache_record(first, answer, chunk_id, prompt)
            corpus.cache[glean] = _cache_record(glean, "<|COMPLETE|>", chunk_id, "Anything missed above?")
            corpus.chunks[chunk_id] = {
                "tokens": len(text.split()) * 4 // 3,
                "content": text,
                "chunk_order_index": order,
                "full_doc_id": doc_id,
                "file_path": file_path,
                "llm_cache_list": [first, glean],
            }
        corpus.doc_entities[doc_id] = list(names)
        corpus.doc_relations[doc_id] = list(links)
    return corpus


def _cache_record(key: str, answer: str, chunk_id: str, prompt: str) -> dict[str, Any]:
    return {
        "return": answer,
        "cache_type": "extract",
        "chunk_id": chunk_id,
        "original_prompt": prompt,
        "queryparam": None,
        "create_time": EPOCH,
        "update_time": EPOCH,
        "_id": key,
    }


def _status(doc_id: str, doc: dict[str, Any], chunks: list[str]) -> dict[str, Any]:
    stamp = "2026-01-01T00:00:00+00:00"
    return {
        "status": "processed",
        "content_summary": doc["content"][:250],
        "content_length": len(doc["content"]),
        "created_at": stamp,
        "updated_at": stamp,
        "file_path": doc["file_path"],
        "track_id": f"insert_{md5(doc_id)[:8]}",
        "chunks_count": len(chunks),
        "chunks_list": chunks,
        "metadata": {"chunk_method": "legacy_chunking_func"},
        "error_msg": None,
    }


def _chunks_by_doc(corpus: Corpus) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for chunk_id, chunk in corpus.chunks.items():
        out.setdefault(chunk["full_doc_id"], []).append(chunk_id)
    return out


def _vectors(texts: list[str], dim: int) -> Iterator[np.ndarray]:
    for start in range(0, len(texts), 4096):
        yield from hashed_vectors(texts[start : start + 4096], dim)


# --- the working directory --------------------------------------------------


def _write_kv(path: Path, records: Iterator[tuple[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write("{")
        for i, (key, value) in enumerate(records):
            out.write(("," if i else "") + "\n  " + json.dumps(key, ensure_ascii=False) + ": ")
            out.write(json.dumps(value, ensure_ascii=False))
        out.write("\n}")


def _write_vdb(path: Path, dim: int, records: list[dict[str, Any]], texts: list[str]) -> None:
    matrix = np.zeros((len(records), dim), dtype=np.float32)
    for i, vector in enumerate(_vectors(texts, dim)):
        matrix[i] = vector
        f16 = zlib.compress(vector.astype(np.float16).tobytes())
        records[i] = {**records[i], "vector": base64.b64encode(f16).decode()}
    with path.open("w", encoding="utf-8") as out:
        json.dump(
            {"embedding_dim": dim, "data": records, "matrix": base64.b64encode(matrix.tobytes()).decode()},
            out,
            ensure_ascii=False,
        )


def write_workdir(corpus: Corpus, folder: Path) -> Path:
    """Write ``corpus`` as upstream's default file storages into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    by_doc = _chunks_by_doc(corpus)
    stamp = {"create_time": EPOCH, "update_time": EPOCH}
    _write_kv(
        folder / "kv_store_full_docs.json", ((k, {**v, **stamp, "_id": k}) for k, v in corpus.docs.items())
    )
    _write_kv(
        folder / "kv_store_doc_status.json",
        ((k, _status(k, v, by_doc.get(k, []))) for k, v in corpus.docs.items()),
    )
    _write_kv(
        folder / "kv_store_text_chunks.json",
        ((k, {**v, **stamp, "_id": k}) for k, v in corpus.chunks.items()),
    )
    _write_kv(folder / "kv_store_llm_response_cache.json", iter(corpus.cache.items()))
    _write_kv(
        folder / "kv_store_full_entities.json",
        (
            (k, {"entity_names": sorted(v), "count": len(v), **stamp, "_id": k})
            for k, v in corpus.doc_entities.items()
        ),
    )
    _write_kv(
        folder / "kv_store_full_relations.json",
        (
            (k, {"relation_pairs": [list(p) for p in sorted(v)], "count": len(v), **stamp, "_id": k})
            for k, v in corpus.doc_relations.items()
        ),
    )
    _write_kv(
        folder / "kv_store_entity_chunks.json",
        (
            (n, {"chunk_ids": e.chunks, "count": len(e.chunks), **stamp, "_id": n})
            for n, e in corpus.entities.items()
        ),
    )
    _write_kv(
        folder / "kv_store_relation_chunks.json",
        (
            (f"{a}{SEP}{b}", {"chunk_ids": r.chunks, "count": len(r.chunks), **stamp, "_id": f"{a}{SEP}{b}"})
            for (a, b), r in corpus.relations.items()
        ),
    )
    chunk_records = [
        {
            "__id__": k,
            "__created_at__": EPOCH,
            "content": c["content"],
            "full_doc_id": c["full_doc_id"],
            "file_path": c["file_path"],
        }
        for k, c in corpus.chunks.items()
    ]
    _write_vdb(
        folder / "vdb_chunks.json", corpus.dim, chunk_records, [c["content"] for c in corpus.chunks.values()]
    )
    names = list(corpus.entities)
    entity_records = [
        {
            "__id__": "ent-" + md5(n),
            "__created_at__": EPOCH,
            "entity_name": n,
            "content": corpus.entity_content(n),
            "source_id": SEP.join(corpus.entities[n].chunks),
            "file_path": SEP.join(corpus.entities[n].files),
        }
        for n in names
    ]
    _write_vdb(
        folder / "vdb_entities.json", corpus.dim, entity_records, [corpus.entity_content(n) for n in names]
    )
    pairs = list(corpus.relations)
    relation_records = [
        {
            "__id__": "rel-" + md5(a + b),
            "__created_at__": EPOCH,
            "src_id": a,
            "tgt_id": b,
            "source_id": SEP.join(corpus.relations[(a, b)].chunks),
            "content": corpus.relation_content((a, b)),
            "file_path": SEP.join(corpus.relations[(a, b)].files),
        }
        for a, b in pairs
    ]
    _write_vdb(
        folder / "vdb_relationships.json",
        corpus.dim,
        relation_records,
        [corpus.relation_content(p) for p in pairs],
    )
    _write_graphml(corpus, folder / "graph_chunk_entity_relation.graphml")
    return folder


def _write_graphml(corpus: Corpus, path: Path) -> None:
    from xml.sax.saxutils import escape, quoteattr

    node_keys = ("entity_id", "entity_type", "description", "source_id", "file_path", "created_at")
    edge_keys = ("weight", "description", "keywords", "source_id", "file_path", "created_at")
    with path.open("w", encoding="utf-8") as out:
        out.write(
            '<?xml version="1.0" encoding="utf-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
        )
        for i, k in enumerate(node_keys):
            kind = "long" if k == "created_at" else "string"
            out.write(f'<key id="n{i}" for="node" attr.name="{k}" attr.type="{kind}"/>\n')
        for i, k in enumerate(edge_keys):
            kind = {"weight": "double", "created_at": "long"}.get(k, "string")
            out.write(f'<key id="e{i}" for="edge" attr.name="{k}" attr.type="{kind}"/>\n')
        out.write('<graph edgedefault="undirected">\n')
        for name, e in corpus.entities.items():
            values = (name, e.kind, SEP.join(e.descriptions), SEP.join(e.chunks), SEP.join(e.files), EPOCH)
            data = "".join(f'<data key="n{i}">{escape(str(v))}</data>' for i, v in enumerate(values))
            out.write(f"<node id={quoteattr(name)}>{data}</node>\n")
        for (a, b), r in corpus.relations.items():
            values = (
                float(len(r.chunks)),
                SEP.join(r.descriptions),
                ",".join(r.keywords),
                SEP.join(r.chunks),
                SEP.join(r.files),
                EPOCH,
            )
            data = "".join(f'<data key="e{i}">{escape(str(v))}</data>' for i, v in enumerate(values))
            out.write(f"<edge source={quoteattr(a)} target={quoteattr(b)}>{data}</edge>\n")
        out.write("</graph>\n</graphml>\n")


# --- upstream's PostgreSQL storages -----------------------------------------

SQL = load_queries("bench", "lightrag_shapes.sql")


def _vec(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in v) + "]"


async def write_postgres(
    corpus: Corpus, conn: Any, workspace: str, graph: str = "age", batch: int = 2000
) -> None:
    """Write ``corpus`` as upstream's PostgreSQL storages of ``workspace`` (graph ``age`` or ``pgtable``)."""
    suffix = re.sub(r"[^a-z0-9_]", "_", corpus.model.lower()) + f"_{corpus.dim}d"
    tables = {
        f"{kind}_table": catalog_name(f"lightrag_vdb_{base}_{suffix}")
        for kind, base in (("chunk", "chunks"), ("entity", "entity"), ("relation", "relation"))
    }
    await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    await conn.execute(SQL["tables"])
    await conn.execute(render(SQL["vector_tables"], dim=corpus.dim, **tables))

    async def rows(name: str, records: list[tuple[Any, ...]], **values: Any) -> None:
        sql = render(SQL[name], **tables, **values)
        for start in range(0, len(records), batch):
            await conn.executemany(sql, records[start : start + batch])

    by_doc = _chunks_by_doc(corpus)
    await rows("insert_docs", [(workspace, k, v["file_path"], v["content"]) for k, v in corpus.docs.items()])
    statuses = [(k, _status(k, v, by_doc.get(k, []))) for k, v in corpus.docs.items()]
    await rows(
        "insert_statuses",
        [
            (
                workspace,
                k,
                s["content_summary"],
                s["content_length"],
                s["chunks_count"],
                s["status"],
                s["file_path"],
                json.dumps(s["chunks_list"]),
                s["track_id"],
                json.dumps(s["metadata"]),
            )
            for k, s in statuses
        ],
    )
    await rows(
        "insert_chunks",
        [
            (
                workspace,
                k,
                c["full_doc_id"],
                c["chunk_order_index"],
                c["tokens"],
                c["content"],
                c["file_path"],
                json.dumps(c["llm_cache_list"]),
            )
            for k, c in corpus.chunks.items()
        ],
    )
    await rows(
        "insert_cache",
        [
            (workspace, k, c["original_prompt"], c["return"], c["chunk_id"], c["cache_type"])
            for k, c in corpus.cache.items()
        ],
    )
    await rows(
        "insert_entity_chunks",
        [(workspace, n, json.dumps(e.chunks), len(e.chunks)) for n, e in corpus.entities.items()],
    )
    await rows(
        "insert_relation_chunks",
        [
            (workspace, f"{a}{SEP}{b}", json.dumps(r.chunks), len(r.chunks))
            for (a, b), r in corpus.relations.items()
        ],
    )
    ids = list(corpus.chunks)
    texts = [corpus.chunks[k]["content"] for k in ids]
    await rows(
        "insert_chunk_vectors",
        [
            (workspace, k, corpus.chunks[k]["full_doc_id"], t, _vec(v), corpus.chunks[k]["file_path"])
            for k, t, v in zip(ids, texts, _vectors(texts, corpus.dim), strict=True)
        ],
    )
    names = list(corpus.entities)
    texts = [corpus.entity_content(n) for n in names]
    await rows(
        "insert_entity_vectors",
        [
            (workspace, "ent-" + md5(n), n, t, _vec(v))
            for n, t, v in zip(names, texts, _vectors(texts, corpus.dim), strict=True)
        ],
    )
    pairs = list(corpus.relations)
    texts = [corpus.relation_content(p) for p in pairs]
    await rows(
        "insert_relation_vectors",
        [
            (workspace, "rel-" + md5(a + b), a, b, t, _vec(v))
            for (a, b), t, v in zip(pairs, texts, _vectors(texts, corpus.dim), strict=True)
        ],
    )
    nodes = [
        (
            n,
            json.dumps(
                {
                    "entity_id": n,
                    "entity_type": e.kind,
                    "description": SEP.join(e.descriptions),
                    "source_id": SEP.join(e.chunks),
                    "file_path": SEP.join(e.files),
                    "created_at": EPOCH,
                }
            ),
        )
        for n, e in corpus.entities.items()
    ]
    edges = [
        (
            a,
            b,
            json.dumps(
                {
                    "weight": float(len(r.chunks)),
                    "description": SEP.join(r.descriptions),
                    "keywords": ",".join(r.keywords),
                    "source_id": SEP.join(r.chunks),
                    "file_path": SEP.join(r.files),
                    "created_at": EPOCH,
                }
            ),
        )
        for (a, b), r in corpus.relations.items()
    ]
    if graph == "pgtable":
        await conn.execute(SQL["pgtable_tables"])
        await rows("insert_pgtable_nodes", [(workspace, n, p) for n, p in nodes])
        await rows("insert_pgtable_edges", [(workspace, a, b, p) for a, b, p in edges])
        return
    name = catalog_name(
        f"{workspace}_chunk_entity_relation" if workspace != "default" else "chunk_entity_relation"
    )
    await conn.execute("CREATE EXTENSION IF NOT EXISTS age")
    await conn.execute("LOAD 'age'")
    await conn.execute("SET search_path = public, ag_catalog")
    await conn.execute(SQL["age_graph"], name.name)
    await rows("insert_age_nodes", [(p,) for _, p in nodes], graph=name)
    await conn.execute(SQL["age_edges_table"])
    await rows("insert_age_edge_rows", edges)
    await conn.execute(render(SQL["age_edges"], graph=name))
    await conn.execute(SQL["drop_age_edges_table"])
