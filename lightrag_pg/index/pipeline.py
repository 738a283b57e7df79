"""The document pipeline: enqueue → claim → chunk → extract → merge → finish.

A document is processed by one worker at a time across all processes: the
worker holds a session advisory lock on it (:mod:`.locks`), so a crashed
process releases its documents automatically and the next run picks them up.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import asyncpg

from ..config import Settings
from ..llm.embedding_func import EmbeddingFunc
from ..llm.tokenizer import Tokenizer
from ..store.rows import ChunkRow, DocumentRow
from ..store.uow import session, unit_of_work
from ..tasks import gather_all
from ..types import Extraction
from .chunking import chunk_text
from .extract import Extractor
from .intake import md5_id
from .locks import DocumentLocks
from .progress import Progress, ProgressCallback, ignore_progress
from .writer import GraphWriter

log = logging.getLogger(__name__)

DONE, BUSY, FINISHED_ELSEWHERE = "done", "busy", "finished elsewhere"


@dataclass
class Pipeline:
    """Everything the pipeline needs, passed explicitly."""

    pool: asyncpg.Pool
    settings: Settings
    tokenizer: Tokenizer
    extractor: Extractor
    embed: EmbeddingFunc
    writer: GraphWriter
    locks: DocumentLocks
    _gate: asyncio.Semaphore | None = field(default=None, init=False)

    async def enqueue(self, docs: Sequence[DocumentRow]) -> list[str]:
        """Store new documents as pending; return their ids (already known ids are skipped)."""
        async with unit_of_work(self.pool) as uow:
            inserted = await uow.docs.insert(docs)
        return [d.id for d in docs if d.id in inserted]

    async def process(
        self, progress: ProgressCallback = ignore_progress, wait_for: Collection[str] = ()
    ) -> Progress:
        """Process every pending, processing or failed document of the workspace that has
        a text (a failed status row without one, such as a file that could not be
        converted, keeps its status and reason).

        Documents another process is working on are skipped, except those in
        ``wait_for``: for them this call waits until they are finished (or
        takes them over if that process dies). When documents were processed,
        the retrieval tables they grew a lot are analyzed (one statement).
        """
        async with session(self.pool) as s:
            ids = await s.docs.unfinished_ids()
        state = Progress(docs_total=len(ids))
        progress(state)
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.settings.max_parallel_insert)
        gate = self._gate

        async def run(doc_id: str) -> None:
            delay = 0.05
            while True:
                async with gate:
                    outcome = await self._process_one(doc_id, state, progress)
                if outcome != BUSY or doc_id not in wait_for:
                    break
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            if outcome != DONE:
                state.docs_skipped += 1
                progress(state)

        await gather_all(*(run(i) for i in ids))
        if state.docs_done:
            async with session(self.pool) as s:
                await s.statistics.analyze_grown()
        return state

    async def close(self) -> None:
        """Release the document locks."""
        await self.locks.close()

    async def _process_one(self, doc_id: str, state: Progress, progress: ProgressCallback) -> str:
        if not await self.locks.try_acquire(doc_id):
            return BUSY
        try:
            async with session(self.pool) as s:
                claimed = await s.docs.claim([doc_id])
            if not claimed:
                return FINISHED_ELSEWHERE
            try:
                await self._run(claimed[0], state, progress)
                state.docs_done += 1
            except Exception as exc:  # recorded in doc_status, never lost
                log.exception("document %s failed", doc_id)
                message = f"{type(exc).__name__}: {exc}"
                async with session(self.pool) as s:
                    await s.docs.mark_failed(doc_id, message)
                state.docs_failed += 1
                state.failures[doc_id] = message
            progress(state)
            return DONE
        finally:
            await self.locks.release(doc_id)

    async def _run(self, doc: DocumentRow, state: Progress, progress: ProgressCallback) -> None:
        started = time.monotonic()
        doc_id = doc.id
        s = self.settings
        pieces = await asyncio.to_thread(
            chunk_text,
            doc.content,
            self.tokenizer,
            chunk_token_size=s.chunk_token_size,
            overlap=s.chunk_overlap_token_size,
            split_by_character=s.split_by_character,
            split_by_character_only=s.split_by_character_only,
        )
        chunks = [
            ChunkRow(
                md5_id("chunk-", doc_id, str(p.chunk_order_index), p.content),
                doc_id,
                p.chunk_order_index,
                p.tokens,
                p.content,
                doc.file_path,
            )
            for p in pieces
        ]
        state.chunks_total += len(chunks)
        progress(state)
        async with self.extractor.batched():  # one cache look-up per batch of calls, one write
            chunk_vectors = asyncio.ensure_future(self.embed([c.content for c in chunks]))
            try:
                extractions = await self._extract_all(chunks, state, progress)
                vectors = await chunk_vectors
            finally:
                if not chunk_vectors.done():
                    chunk_vectors.cancel()
                    await asyncio.gather(chunk_vectors, return_exceptions=True)
            entities = [e for x in extractions for e in x.entities]
            relations = [r for x in extractions for r in x.relations]
            stats = await self.writer.merge(doc_id, entities, relations)
        state.entities += stats.entities
        state.relations += stats.relations
        details = {
            "entities": stats.entities,
            "relations": stats.relations,
            "merge_rounds": stats.rounds,
            "locked_rounds": stats.locked_rounds,
            "dropped_lines": sum(x.dropped_lines for x in extractions),
            "extractor": self.extractor.name,
            "seconds": round(time.monotonic() - started, 3),
        }
        async with session(self.pool) as stores:  # one statement, one transaction
            await stores.docs.finish(doc_id, chunks, vectors, details)
        state.chunks_done += len(chunks)

    async def _extract_all(
        self, chunks: Sequence[ChunkRow], state: Progress, progress: ProgressCallback
    ) -> list[Extraction]:
        gate = asyncio.Semaphore(self.settings.max_parallel_chunks)

        async def one(chunk: ChunkRow) -> Extraction:
            async with gate:
                result = await self.extractor.extract(chunk.id, chunk.content, chunk.file_path)
            state.chunks_extracted += 1
            progress(state)
            return result

        return await gather_all(*(one(c) for c in chunks))
