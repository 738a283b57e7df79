"""An upstream working directory read as streams, never a whole file in memory.

The key-value files are walked with ijson (one top-level record at a time); the
nano-vectordb files twice at once: their ``data`` records with ijson, their
``matrix`` (one base64 string of float32 rows, the last value of the file) decoded
a few rows at a time from a second handle (:class:`MatrixRows`); the GraphML graph
with the standard library's incremental XML parser, each node or edge dropped once
read. Parsing runs in a worker thread, one batch at a time.
"""

from __future__ import annotations

import asyncio
import base64
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from ...errors import SourceFormatError
from ...store.transfer import StatusImport
from . import convert
from .formats import (
    DOC_STATUS,
    ENTITY_CHUNKS,
    FULL_DOCS,
    GRAPHML,
    LLM_CACHE,
    RELATION_CHUNKS,
    TEXT_CHUNKS,
    VDB_CHUNKS,
    VDB_ENTITIES,
    VDB_RELATIONS,
    split_relation_key,
)
from .records import (
    ChunkList,
    Embedding,
    SourceCacheEntry,
    SourceChunk,
    SourceDoc,
    SourceEntity,
    SourceRelation,
    SourceStats,
    SourceVector,
)

T = TypeVar("T")

BLOCK = 1 << 20
"""Bytes read at a time when looking for the matrix and decoding it."""

_MATRIX_KEY = re.compile(rb'"matrix"\s*:\s*\Z')
_GRAPHML_NS = "{http://graphml.graphdrawing.org/xmlns}"


def _ijson() -> Any:
    try:
        import ijson
    except ImportError as exc:  # the [lightrag] extra
        raise SourceFormatError(
            "reading an upstream working directory needs ijson: pip install 'lightrag-pg[lightrag]'"
        ) from exc
    return ijson


def _take(iterator: Iterator[T], size: int) -> list[T]:
    batch: list[T] = []
    for item in iterator:
        batch.append(item)
        if len(batch) >= size:
            break
    return batch


async def _batches(
    make: Callable[[], Iterator[T]], size: int, executor: ThreadPoolExecutor
) -> AsyncIterator[list[T]]:
    """Batches of what ``make()`` yields, each parsed in ``executor``'s one thread (one
    thread, not the loop's pool: the C parsers' buffers then reuse one allocator arena)."""
    loop = asyncio.get_running_loop()
    iterator = await loop.run_in_executor(executor, make)
    try:
        while True:
            batch = await loop.run_in_executor(executor, _take, iterator, size)
            if not batch:
                return
            yield batch
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            await loop.run_in_executor(executor, close)


def _rfind(handle: IO[bytes], byte: bytes, before: int) -> int:
    """The position of the last ``byte`` before offset ``before``, or -1."""
    end = before
    while end > 0:
        start = max(0, end - BLOCK)
        handle.seek(start)
        found = handle.read(end - start).rfind(byte)
        if found >= 0:
            return start + found
        end = start
    return -1


def _until_data_ends(events: Iterator[tuple[str, str, Any]]) -> Iterator[tuple[str, str, Any]]:
    """A vector file's parse events up to the end of its ``data`` array: the ``matrix``
    string after it, tens of megabytes, is read by :class:`MatrixRows`, never parsed whole."""
    for prefix, event, value in events:
        yield prefix, event, value
        if prefix == "data" and event == "end_array":
            return


class MatrixRows:
    """The ``matrix`` of a nano-vectordb file, read a few rows at a time.

    Its span is found from the end of the file: the last string of the file, after
    the ``"matrix":`` key (upstream writes it last; base64 holds no quote, so the
    opening quote is the first one before the closing quote).
    """

    def __init__(self, path: Path, dim: int) -> None:
        self.path = path
        self.row_bytes = dim * 4
        self.dim = dim
        self.handle = path.open("rb")
        try:
            self.start, self.end = self._span()
        except BaseException:
            self.handle.close()
            raise
        self.handle.seek(self.start)
        self.left = self.end - self.start
        self.pending = b""
        self.decoded = bytearray()

    def _span(self) -> tuple[int, int]:
        size = self.path.stat().st_size
        close = _rfind(self.handle, b'"', size)
        self.handle.seek(close + 1)
        tail = self.handle.read(size - close - 1) if close >= 0 else b""
        if close < 0 or tail.strip(b" \t\r\n}"):
            raise SourceFormatError(f"{self.path}: the vector matrix is not the last value of the file")
        opening = _rfind(self.handle, b'"', close)
        self.handle.seek(max(0, opening - 64))
        head = self.handle.read(opening - max(0, opening - 64))
        if opening < 0 or not _MATRIX_KEY.search(head):
            raise SourceFormatError(f'{self.path}: no "matrix" value at the end of the file')
        return opening + 1, close

    def take(self, rows: int) -> np.ndarray:
        """The next ``rows`` rows (fewer at the end of the matrix)."""
        need = rows * self.row_bytes
        while len(self.decoded) < need and self.left > 0:
            data = self.handle.read(min(BLOCK, self.left))
            if not data:
                break
            self.left -= len(data)
            text = self.pending + data
            cut = len(text) if self.left == 0 else len(text) // 4 * 4
            try:
                self.decoded += base64.b64decode(text[:cut], validate=True)
            except ValueError as exc:
                raise SourceFormatError(f"{self.path}: the vector matrix is not valid base64") from exc
            self.pending = text[cut:]
        have = min(need, len(self.decoded) // self.row_bytes * self.row_bytes)
        out = np.frombuffer(bytes(self.decoded[:have]), dtype="<f4").reshape(-1, self.dim)
        del self.decoded[:have]
        return out

    def close(self) -> None:
        self.handle.close()


class _Tracked:
    """A file read by a parser, recording how far it has read (for the progress bar)."""

    def __init__(self, path: Path, kind: str, position: dict[str, tuple[int, int]]) -> None:
        self.handle = path.open("rb")
        self.kind = kind
        self.total = path.stat().st_size
        self.position = position
        position[kind] = (0, self.total)

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.position[self.kind] = (self.handle.tell(), self.total)
        return data

    def close(self) -> None:
        self.handle.close()


class FileSource:
    """An upstream working directory (its workspace folder), read as :class:`~.records.Source`."""

    def __init__(self, folder: Path, embedding_model: str | None = None) -> None:
        self.folder = folder
        self.description = f"LightRAG working directory {folder}"
        self.tag = f"files:{folder.resolve()}"
        self.stats = SourceStats()
        self.model = embedding_model
        self.position: dict[str, tuple[int, int]] = {}
        self.unit = "B"
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lightrag-import")

    # ------------------------------------------------------------ facts

    def _file(self, name: str) -> Path:
        return self.folder / name

    def _exists(self, name: str) -> bool:
        return self._file(name).is_file()

    async def embedding(self) -> Embedding:
        dims = {}
        for name in (VDB_CHUNKS, VDB_ENTITIES, VDB_RELATIONS):
            if self._exists(name):
                dims[name] = await asyncio.get_running_loop().run_in_executor(
                    self.executor, self._dim, self._file(name)
                )
        found = {d for d in dims.values() if d is not None}
        if len(found) > 1:
            raise SourceFormatError(f"{self.folder}: the vector files disagree on the dimension: {dims}")
        where = f"{self.folder} ({', '.join(dims) or 'no vector files'})"
        return Embedding(found.pop() if found else None, None, where)

    def _dim(self, path: Path) -> int | None:
        ijson = _ijson()
        with path.open("rb") as handle:
            for value in ijson.items(handle, "embedding_dim"):
                return int(value)
        return None

    async def totals(self) -> dict[str, int | None]:
        names = {
            "documents": FULL_DOCS,
            "statuses": DOC_STATUS,
            "chunks": TEXT_CHUNKS,
            "chunk_vectors": VDB_CHUNKS,
            "cache": LLM_CACHE,
            "entities": GRAPHML,
            "entity_vectors": VDB_ENTITIES,
            "entity_chunks": ENTITY_CHUNKS if self._exists(ENTITY_CHUNKS) else GRAPHML,
            "relations": GRAPHML,
            "relation_vectors": VDB_RELATIONS,
            "relation_chunks": RELATION_CHUNKS if self._exists(RELATION_CHUNKS) else GRAPHML,
        }
        return {k: self._file(v).stat().st_size if self._exists(v) else 0 for k, v in names.items()}

    def check(self) -> None:
        """Refuse a folder that is no upstream working directory."""
        if not self.folder.is_dir():
            raise SourceFormatError(f"{self.folder} is not a folder")
        if not self._exists(FULL_DOCS) and not self._exists(GRAPHML):
            subfolders = sorted(p.name for p in self.folder.iterdir() if (p / FULL_DOCS).is_file())
            hint = f" (its workspaces: {', '.join(subfolders)}; pass one as the source workspace)"
            raise SourceFormatError(
                f"{self.folder} holds no LightRAG storage files ({FULL_DOCS}, {GRAPHML})"
                + (hint if subfolders else "")
            )

    # ------------------------------------------------------------ readers

    def _tracked(self, kind: str, path: Path) -> _Tracked:
        return _Tracked(path, kind, self.position)

    def _kv(self, kind: str, name: str) -> Iterator[tuple[str, Any]]:
        path = self._file(name)
        if not path.is_file():
            return
        ijson = _ijson()
        handle = self._tracked(kind, path)
        try:
            yield from ijson.kvitems(handle, "", use_float=True)
        except ijson.JSONError as exc:
            raise SourceFormatError(f"{path}: not valid JSON ({exc})") from exc
        finally:
            handle.close()

    def _records(self, kind: str, name: str, build: Callable[[str, Any], T | None]) -> Iterator[T]:
        for key, value in self._kv(kind, name):
            record = build(key, value) if isinstance(value, dict) else None
            if record is None:
                self.stats.skip(kind, str(key))
            else:
                yield record

    def documents(self, size: int) -> AsyncIterator[list[SourceDoc]]:
        return _batches(lambda: self._records("documents", FULL_DOCS, convert.document), size, self.executor)

    def statuses(self, size: int) -> AsyncIterator[list[StatusImport]]:
        return _batches(lambda: self._records("statuses", DOC_STATUS, convert.status), size, self.executor)

    def chunks(self, size: int) -> AsyncIterator[list[SourceChunk]]:
        return _batches(lambda: self._records("chunks", TEXT_CHUNKS, convert.chunk), size, self.executor)

    def cache(self, size: int) -> AsyncIterator[list[SourceCacheEntry]]:
        def entries() -> Iterator[SourceCacheEntry]:
            for key, value in self._kv("cache", LLM_CACHE):
                found = list(convert.cache_entries(key, value)) if isinstance(value, dict) else []
                if not found:
                    self.stats.skip("cache", key)
                yield from found

        return _batches(entries, size, self.executor)

    def _vectors(self, kind: str, name: str, namespace: str) -> Iterator[SourceVector]:
        path = self._file(name)
        if not path.is_file():
            return
        dim = self._dim(path)
        if not dim:
            raise SourceFormatError(f"{path}: no embedding_dim")
        ijson = _ijson()
        matrix = MatrixRows(path, dim)
        handle = self._tracked(kind, path)
        rows = np.zeros((0, dim), dtype=np.float32)
        at = 0
        try:
            for record in ijson.items(_until_data_ends(ijson.parse(handle, use_float=True)), "data.item"):
                if at == len(rows):
                    rows, at = matrix.take(256), 0
                    if not len(rows):
                        raise SourceFormatError(f"{path}: fewer matrix rows than data records")
                values = rows[at]
                at += 1
                found = convert.vector(namespace, record, values) if isinstance(record, dict) else None
                if found is None:
                    self.stats.skip(kind, str(record)[:100])
                else:
                    yield found
            if at < len(rows) or len(matrix.take(1)):
                raise SourceFormatError(f"{path}: more matrix rows than data records")
        except ijson.JSONError as exc:
            raise SourceFormatError(f"{path}: not valid JSON ({exc})") from exc
        finally:
            matrix.close()
            handle.close()

    def chunk_vectors(self, size: int) -> AsyncIterator[list[SourceVector]]:
        return _batches(lambda: self._vectors("chunk_vectors", VDB_CHUNKS, "chunks"), size, self.executor)

    def entity_vectors(self, size: int) -> AsyncIterator[list[SourceVector]]:
        return _batches(
            lambda: self._vectors("entity_vectors", VDB_ENTITIES, "entities"), size, self.executor
        )

    def relation_vectors(self, size: int) -> AsyncIterator[list[SourceVector]]:
        return _batches(
            lambda: self._vectors("relation_vectors", VDB_RELATIONS, "relationships"), size, self.executor
        )

    def _graph(self, kind: str, want: str) -> Iterator[tuple[dict[str, str], dict[str, Any]]]:
        """``(attributes, data)`` of every ``want`` element (node or edge) of the GraphML file."""
        path = self._file(GRAPHML)
        if not path.is_file():
            return
        keys: dict[str, tuple[str, str]] = {}
        parent: ElementTree.Element | None = None
        handle = self._tracked(kind, path)
        try:
            for event, elem in ElementTree.iterparse(handle, events=("start", "end")):
                tag = elem.tag.removeprefix(_GRAPHML_NS)
                if event == "start":
                    if tag == "graph":
                        parent = elem
                    continue
                if tag == "key":
                    keys[elem.get("id", "")] = (elem.get("attr.name", ""), elem.get("attr.type", "string"))
                elif tag in ("node", "edge"):
                    if tag == want:
                        yield dict(elem.attrib), _graph_data(elem, keys)
                    elem.clear()
                    if parent is not None:
                        parent.remove(elem)
        except ElementTree.ParseError as exc:
            raise SourceFormatError(f"{path}: not valid GraphML ({exc})") from exc
        finally:
            handle.close()

    def _entities(self, kind: str) -> Iterator[SourceEntity]:
        for attrs, data in self._graph(kind, "node"):
            found = convert.entity(attrs.get("id"), data)
            if found is None:
                self.stats.skip(kind, str(attrs))
            else:
                yield found

    def _relations(self, kind: str) -> Iterator[SourceRelation]:
        for attrs, data in self._graph(kind, "edge"):
            found = convert.relation(attrs.get("source"), attrs.get("target"), data)
            if found is None:
                self.stats.skip(kind, str(attrs))
            else:
                yield found

    def entities(self, size: int) -> AsyncIterator[list[SourceEntity]]:
        return _batches(lambda: self._entities("entities"), size, self.executor)

    def relations(self, size: int) -> AsyncIterator[list[SourceRelation]]:
        return _batches(lambda: self._relations("relations"), size, self.executor)

    def _chunk_lists(self, kind: str, name: str, relations: bool) -> Iterator[ChunkList]:
        if not self._exists(name):  # an older upstream: the graph's (possibly capped) lists
            if relations:
                yield from (ChunkList((r.src, r.tgt), r.source_ids) for r in self._relations(kind))
            else:
                yield from (ChunkList((e.name,), e.source_ids) for e in self._entities(kind))
            return
        for key, value in self._kv(kind, name):
            pair = split_relation_key(key) if relations else None
            found = None
            if not relations and key:
                found = convert.chunk_list((key,), value)
            elif pair is not None:
                found = convert.chunk_list(pair, value)
            if found is None:
                self.stats.skip(kind, key)
            else:
                yield found

    def entity_chunks(self, size: int) -> AsyncIterator[list[ChunkList]]:
        return _batches(lambda: self._chunk_lists("entity_chunks", ENTITY_CHUNKS, False), size, self.executor)

    def relation_chunks(self, size: int) -> AsyncIterator[list[ChunkList]]:
        return _batches(
            lambda: self._chunk_lists("relation_chunks", RELATION_CHUNKS, True), size, self.executor
        )

    async def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def _graph_data(elem: ElementTree.Element, keys: dict[str, tuple[str, str]]) -> dict[str, str]:
    """The ``data`` children of a node or edge, by attribute name, as text."""
    return {
        keys.get(child.get("key", ""), (child.get("key", ""), ""))[0]: child.text or ""
        for child in elem
        if child.tag.removeprefix(_GRAPHML_NS) == "data"
    }
