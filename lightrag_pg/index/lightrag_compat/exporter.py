"""Write a workspace as an upstream LightRAG 1.5.7 working directory, which upstream opens.

The files are those of upstream's default storages (:mod:`.formats`): the
key-value JSON files, the three nano-vectordb files and the GraphML graph. Rows
are read page by page from one snapshot and written as they come: a JSON file
record by record, a vector file's records first and its matrix (kept meanwhile
in a temporary binary file) base64-encoded at the end, so memory does not grow
with the workspace. Each file is written under a temporary name and renamed
once complete; a failure removes what was written.

Upstream looks cached answers up by its own keys, so only the cache entries
under upstream's keys (those an import brought) are written. The vectors are
the workspace's: upstream must embed queries with the same model.
"""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
import time
import zlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self
from xml.sax.saxutils import escape, quoteattr

import asyncpg
import numpy as np

from ...errors import InvalidInput
from ...store.transfer import TransferStore
from .formats import (
    DOC_STATUS,
    ENTITY_CHUNKS,
    FULL_DOCS,
    FULL_ENTITIES,
    FULL_RELATIONS,
    GRAPHML,
    LLM_CACHE,
    RELATION_CHUNKS,
    TEXT_CHUNKS,
    VDB_CHUNKS,
    VDB_ENTITIES,
    VDB_RELATIONS,
    entity_vector_id,
    epoch,
    join_field,
    md5_hex,
    relation_key,
    relation_vector_id,
)

PAGE = 500
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass
class ExportReport:
    """What an export wrote: records per file, and the time taken."""

    working_dir: str
    files: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = [f"wrote a LightRAG {'1.5.7'} working directory at {self.working_dir} in {self.seconds:.1f} s"]
        out += [f"  {name}: {count} records" for name, count in self.files.items()]
        return out


class _Output:
    """One file written under a temporary name, renamed into place by :meth:`commit`."""

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / name
        self.tmp = folder / f".{name}.tmp"
        self.handle: IO[str] = self.tmp.open("w", encoding="utf-8")
        self.count = 0

    def commit(self) -> None:
        self.handle.close()
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        self.handle.close()
        self.tmp.unlink(missing_ok=True)


class JsonObject(_Output):
    """A ``kv_store_*.json`` file: one JSON object, written a record at a time."""

    def __init__(self, folder: Path, name: str) -> None:
        super().__init__(folder, name)
        self.handle.write("{")

    def add(self, key: str, value: dict[str, Any]) -> None:
        self.handle.write(("\n" if not self.count else ",\n") + _dumps(key) + ": " + _dumps(value))
        self.count += 1

    def commit(self) -> None:
        self.handle.write("\n}\n")
        super().commit()


class VectorFile(_Output):
    """A nano-vectordb file: ``embedding_dim``, the ``data`` records, then the ``matrix``
    of their vectors (float32 rows, base64), which waits in a temporary file meanwhile."""

    def __init__(self, folder: Path, name: str, dim: int) -> None:
        super().__init__(folder, name)
        self.dim = dim
        self.rows = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115 (closed by commit or discard)
        self.handle.write(f'{{"embedding_dim": {int(dim)}, "data": [')

    def add(self, record: dict[str, Any], vector: np.ndarray) -> None:
        values = np.asarray(vector, dtype="<f4").reshape(self.dim)
        packed = base64.b64encode(zlib.compress(values.astype(np.float16).tobytes())).decode()
        self.handle.write((", " if self.count else "") + _dumps({**record, "vector": packed}))
        self.rows.write(values.tobytes())
        self.count += 1

    def commit(self) -> None:
        self.handle.write('], "matrix": "')
        self.rows.seek(0)
        block = 3 * (1 << 18)  # a multiple of 3 bytes: the base64 pieces join into one string
        while chunk := self.rows.read(block):
            self.handle.write(base64.b64encode(chunk).decode())
        self.handle.write('"}')
        self.rows.close()
        super().commit()

    def discard(self) -> None:
        self.rows.close()
        super().discard()


_NODE_KEYS = (
    ("d0", "entity_id", "string"),
    ("d1", "entity_type", "string"),
    ("d2", "description", "string"),
    ("d3", "source_id", "string"),
    ("d4", "file_path", "string"),
    ("d5", "created_at", "long"),
)
_EDGE_KEYS = (
    ("d6", "weight", "double"),
    ("d7", "description", "string"),
    ("d8", "keywords", "string"),
    ("d9", "source_id", "string"),
    ("d10", "file_path", "string"),
    ("d11", "created_at", "long"),
)


class GraphFile(_Output):
    """The GraphML graph upstream's NetworkX storage reads: nodes first, then edges."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, GRAPHML)
        self.handle.write(
            "<?xml version='1.0' encoding='utf-8'?>\n"
            '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
            'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
        )
        for for_, keys in (("node", _NODE_KEYS), ("edge", _EDGE_KEYS)):
            for key, name, kind in keys:
                self.handle.write(
                    f'  <key id="{key}" for="{for_}" attr.name="{name}" attr.type="{kind}" />\n'
                )
        self.handle.write('  <graph edgedefault="undirected">\n')

    def _data(self, keys: tuple[tuple[str, str, str], ...], values: dict[str, Any]) -> str:
        return "".join(
            f'      <data key="{key}">{escape(_xml(values[name]))}</data>\n' for key, name, _ in keys
        )

    def node(self, values: dict[str, Any]) -> None:
        node = quoteattr(_xml(values["entity_id"]))
        self.handle.write(f"    <node id={node}>\n{self._data(_NODE_KEYS, values)}    </node>\n")
        self.count += 1

    def edge(self, src: str, tgt: str, values: dict[str, Any]) -> None:
        self.handle.write(
            f"    <edge source={quoteattr(_xml(src))} target={quoteattr(_xml(tgt))}>\n"
            f"{self._data(_EDGE_KEYS, values)}    </edge>\n"
        )
        self.count += 1

    def commit(self) -> None:
        self.handle.write("  </graph>\n</graphml>\n")
        super().commit()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _xml(value: Any) -> str:
    """Text XML 1.0 can hold (its forbidden control characters become spaces)."""
    return _XML_INVALID.sub(" ", str(value))


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _vector(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


async def _pages(
    store: TransferStore, kind: str, key: Callable[[asyncpg.Record], tuple[str, ...]]
) -> AsyncIterator[list[asyncpg.Record]]:
    after: tuple[str, ...] | None = None
    while True:
        rows = await store.export_page(kind, after, PAGE)
        if not rows:
            return
        after = key(rows[-1])
        yield rows


class Exporter:
    """Writes one workspace's snapshot into ``folder`` (see the module docstring)."""

    def __init__(self, conn: asyncpg.Connection, folder: Path, dim: int) -> None:
        self.store = TransferStore(conn)
        self.folder = folder
        self.dim = dim
        self.outputs: list[_Output] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for output in self.outputs:
            if exc is None:
                output.commit()
            else:
                output.discard()

    def _json(self, name: str) -> JsonObject:
        self.outputs.append(JsonObject(self.folder, name))
        return self.outputs[-1]  # type: ignore[return-value]

    def _vectors(self, name: str) -> VectorFile:
        self.outputs.append(VectorFile(self.folder, name, self.dim))
        return self.outputs[-1]  # type: ignore[return-value]

    async def run(self) -> dict[str, int]:
        now = int(time.time())
        await self._documents(now)
        await self._chunks(now)
        await self._cache()
        await self._graph(now)
        return {o.path.name: o.count for o in self.outputs}

    async def _documents(self, now: int) -> None:
        docs, statuses = self._json(FULL_DOCS), self._json(DOC_STATUS)
        entities, relations = self._json(FULL_ENTITIES), self._json(FULL_RELATIONS)
        async for rows in _pages(self.store, "statuses", lambda r: (r["id"],)):
            for r in rows:
                created = epoch(r["doc_created"]) or now
                digest = md5_hex(r["content"]) if r["content"] is not None else None
                if r["content"] is not None:
                    docs.add(
                        r["id"],
                        {
                            "content": r["content"],
                            "file_path": r["file_path"],
                            "content_hash": digest,
                            "create_time": created,
                            "update_time": created,
                            "_id": r["id"],
                        },
                    )
                statuses.add(
                    r["id"],
                    {
                        "status": r["status"],
                        "content_summary": r["content_summary"],
                        "content_length": r["content_length"],
                        "created_at": _iso(r["created_at"]),
                        "updated_at": _iso(r["updated_at"]),
                        "file_path": r["file_path"],
                        "track_id": r["track_id"],
                        "chunks_count": r["chunks_count"],
                        "chunks_list": list(r["chunks_list"] or []),
                        "metadata": r["metadata"] or {},
                        "error_msg": r["error_msg"],
                        "content_hash": digest,
                    },
                )
        async for rows in _pages(self.store, "doc_links", lambda r: (r["id"],)):
            for r in rows:
                names, pairs = list(r["entities"]), [list(p) for p in r["relations"]]
                base = {"create_time": now, "update_time": now, "_id": r["id"]}
                if names:
                    entities.add(r["id"], {"entity_names": names, "count": len(names), **base})
                if pairs:
                    relations.add(r["id"], {"relation_pairs": pairs, "count": len(pairs), **base})

    async def _chunks(self, now: int) -> None:
        chunks, vectors = self._json(TEXT_CHUNKS), self._vectors(VDB_CHUNKS)
        async for rows in _pages(self.store, "chunks", lambda r: (r["id"],)):
            for r in rows:
                created = epoch(r["created_at"]) or now
                chunks.add(
                    r["id"],
                    {
                        "tokens": r["tokens"],
                        "content": r["content"],
                        "chunk_order_index": r["chunk_order_index"],
                        "full_doc_id": r["doc_id"],
                        "file_path": r["file_path"],
                        "llm_cache_list": list(r["cache_keys"]),
                        "create_time": created,
                        "update_time": epoch(r["updated_at"]) or created,
                        "_id": r["id"],
                    },
                )
                vector = _vector(r["embedding"])
                if vector is not None:
                    vectors.add(
                        {
                            "__id__": r["id"],
                            "__created_at__": created,
                            "content": r["content"],
                            "full_doc_id": r["doc_id"],
                            "file_path": r["file_path"],
                        },
                        vector,
                    )

    async def _cache(self) -> None:
        cache = self._json(LLM_CACHE)
        async for rows in _pages(self.store, "cache", lambda r: (r["id"],)):
            for r in rows:
                created = epoch(r["created_at"])
                cache.add(
                    r["id"],
                    {
                        "return": r["response"],
                        "cache_type": r["cache_type"],
                        "chunk_id": r["chunk_id"],
                        "original_prompt": r["prompt"],
                        "queryparam": None,
                        "create_time": created,
                        "update_time": created,
                        "_id": r["id"],
                    },
                )

    async def _graph(self, now: int) -> None:
        graph = GraphFile(self.folder)
        self.outputs.append(graph)
        entity_chunks, entity_vectors = self._json(ENTITY_CHUNKS), self._vectors(VDB_ENTITIES)
        async for rows in _pages(self.store, "entities", lambda r: (r["name"],)):
            for r in rows:
                created = epoch(r["created_at"]) or now
                source_id, file_path = join_field(list(r["source_ids"])), join_field(list(r["file_paths"]))
                graph.node(
                    {
                        "entity_id": r["name"],
                        "entity_type": r["entity_type"],
                        "description": r["description"],
                        "source_id": source_id,
                        "file_path": file_path,
                        "created_at": created,
                    }
                )
                chunk_ids = list(dict.fromkeys(r["chunk_ids"]))
                entity_chunks.add(
                    r["name"],
                    {
                        "chunk_ids": chunk_ids,
                        "count": len(chunk_ids),
                        "create_time": created,
                        "update_time": created,
                        "_id": r["name"],
                    },
                )
                vector = _vector(r["embedding"])
                if vector is not None:
                    entity_vectors.add(
                        {
                            "__id__": entity_vector_id(r["name"]),
                            "__created_at__": created,
                            "entity_name": r["name"],
                            "content": r["vector_content"],
                            "source_id": source_id,
                            "file_path": file_path,
                        },
                        vector,
                    )
        relation_chunks, relation_vectors = self._json(RELATION_CHUNKS), self._vectors(VDB_RELATIONS)
        async for rows in _pages(self.store, "relations", lambda r: (r["src"], r["tgt"])):
            for r in rows:
                created = epoch(r["created_at"]) or now
                source_id, file_path = join_field(list(r["source_ids"])), join_field(list(r["file_paths"]))
                graph.edge(
                    r["src"],
                    r["tgt"],
                    {
                        "weight": float(r["weight"]),
                        "description": r["description"],
                        "keywords": r["keywords"],
                        "source_id": source_id,
                        "file_path": file_path,
                        "created_at": created,
                    },
                )
                key = relation_key(r["src"], r["tgt"])
                chunk_ids = list(dict.fromkeys(r["chunk_ids"]))
                relation_chunks.add(
                    key,
                    {
                        "chunk_ids": chunk_ids,
                        "count": len(chunk_ids),
                        "create_time": created,
                        "update_time": created,
                        "_id": key,
                    },
                )
                vector = _vector(r["embedding"])
                if vector is not None:
                    relation_vectors.add(
                        {
                            "__id__": relation_vector_id(r["src"], r["tgt"]),
                            "__created_at__": created,
                            "src_id": r["src"],
                            "tgt_id": r["tgt"],
                            "source_id": source_id,
                            "content": r["vector_content"],
                            "file_path": file_path,
                        },
                        vector,
                    )


async def export_lightrag(
    target: Any, working_dir: str | os.PathLike[str], *, overwrite: bool = False
) -> ExportReport:
    """Write ``target``'s workspace (a :class:`~.importer.Target`) into ``working_dir``."""
    started = time.monotonic()
    folder = Path(working_dir).expanduser()
    if folder.exists() and not folder.is_dir():
        raise InvalidInput(f"{folder} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not overwrite:
        raise InvalidInput(f"{folder} is not empty; choose an empty folder (or overwrite=True)")
    folder.mkdir(parents=True, exist_ok=True)
    if not os.access(folder, os.W_OK):
        raise InvalidInput(f"{folder} is not writable")
    report = ExportReport(str(folder))
    async with target.pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
        with Exporter(conn, folder, target.embedding_dim) as exporter:
            report.files = await exporter.run()
    report.seconds = round(time.monotonic() - started, 3)
    return report
