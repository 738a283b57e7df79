"""The document pipeline: enqueue → claim → chunk → extract and embed → merge → finish.

A document is processed by one worker at a time across all processes: the
worker holds a session advisory lock on it (:mod:`.locks`), so a crashed
process releases its documents automatically and the next run picks them up.

The work inside a document is cut into bounded jobs: cutting it into chunks,
extracting one chunk offline (or, with the LLM extractor, one call of the model
that a cached answer does not spare, see :func:`scheduled_llm`), embedding a
batch of ``embedding_batch_num`` texts (chunks, merged entities and relations,
of any of the documents in progress: see :func:`scheduled_embedding`). Every job of every workspace
sharing a pool runs in a slot of the pool's
:class:`~lightrag_pg.tasks.FairScheduler` (``max_parallel_chunks`` slots; with
the offline extractor no more than the cores), passed in as :attr:`Pipeline.scheduler`,
which serves the least busy
workspace first, so a workspace indexing a huge document delays another
workspace's small one by about one job. A document of many
chunks keeps its extraction answers segment by segment
(:data:`SEGMENT_CHUNKS`), so a run stopped midway loses little, and records
how far it has come in its ``doc_status`` metadata every
:data:`PROGRESS_SECONDS`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Collection, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..config import Settings
from ..db.advisory import DocumentLocks
from ..db.pool import WorkspacePool
from ..errors import LightRAGError
from ..llm.cached import CachedLLM
from ..llm.embedding_func import EmbeddingFunc
from ..llm.tokenizer import Tokenizer
from ..llm.usage import Usage, UsageMeter, UsageScope, usage_scope
from ..llm.usage import totals as usage_totals
from ..observe.tracing import NO_SPAN, SpanLike, span
from ..store.rows import ChunkRow, DocumentRow
from ..store.uow import Stores, session, unit_of_work
from ..tasks import FairScheduler, gather_all, usable_cores
from ..types import DocStatus, Extraction
from .chunking import chunk_text
from .embedding_pool import EmbeddingPool
from .extract import Extractor
from .intake import md5_id
from .progress import Progress, ProgressCallback, ignore_progress
from .writer import Due, GraphWriter, MergeStats

log = logging.getLogger(__name__)

DONE, BUSY, FINISHED_ELSEWHERE = "done", "busy", "finished elsewhere"

SEGMENT_CHUNKS = 64
"""Chunks whose extraction answers are cached together; a longer document writes
them segment by segment (the last segment with the merge's summaries)."""

PROGRESS_SECONDS = 2.0
"""How often a document being processed records its progress in ``doc_status``
(``metadata.progress``); a document done sooner records none."""


def scheduler_width(settings: Settings, *, offline: bool) -> int:
    """Slots the chunk scheduler needs: ``max_parallel_chunks``, but no more than the
    cores the process may run on for the ``offline`` extractor, whose jobs are computation in threads
    (more of them only slow each one down, and the event loop with them)."""
    if offline:
        return min(settings.max_parallel_chunks, usable_cores())
    return settings.max_parallel_chunks


def scheduled_llm(llm: CachedLLM, owner: str, scheduler: FairScheduler) -> CachedLLM:
    """``llm`` whose calls of the model each run in a slot of ``scheduler`` for workspace
    ``owner``; its cache look-ups take no slot, so a chunk answered before waits for none.
    For indexing only: a question must not wait."""
    func = llm.func

    @functools.wraps(func)
    async def scheduled(*args: Any, **kwargs: Any) -> Any:
        return await scheduler.run(owner, lambda: func(*args, **kwargs))

    return dataclasses.replace(llm, func=scheduled)


def scheduled_embedding(
    embed: EmbeddingFunc, owner: str, batch_size: int, scheduler: FairScheduler, width: int
) -> EmbeddingFunc:
    """``embed`` as the pipeline calls it: the texts of every document of workspace
    ``owner`` in progress are pooled, and embedded in batches of ``batch_size`` texts of
    about one length, each batch a job of ``scheduler`` (at most ``width`` at once); see
    :class:`~.embedding_pool.EmbeddingPool`.

    Never call it from inside a scheduled job: that job would hold a slot while
    waiting for another.
    """
    return EmbeddingPool(embed, owner, batch_size, lambda: scheduler, width).as_embedding_func()


@dataclass
class _DocumentCounters:
    """How far one document has come, as recorded in its ``doc_status`` metadata."""

    chunks: int
    extracted: int = 0
    embedded: int = 0
    merge_batches: int = 0
    merged: int = 0
    phase: str = "extracting"

    def view(self) -> dict[str, object]:
        return {
            "phase": self.phase,
            "chunks": self.chunks,
            "extracted": self.extracted,
            "embedded": self.embedded,
            "merge_batches": self.merge_batches,
            "merged": self.merged,
        }


def _merge_reporter(
    counters: _DocumentCounters, state: Progress, progress: ProgressCallback, merge_span: SpanLike = NO_SPAN
) -> Callable[[int, int], None]:
    """The writer's ``on_batch``: counts the merge batches of a document and of the run (an
    event of the document's merge span each)."""

    def merged(done: int, total: int) -> None:
        if done:
            state.merge_batches_done += 1
            merge_span.add_event("merge batch written", {"lightrag.batch": done, "lightrag.batches": total})
        else:
            state.merge_batches_total += total
        counters.merged, counters.merge_batches = done, total
        progress(state)

    return merged


@dataclass
class Pipeline:
    """Everything the pipeline needs, passed explicitly.

    ``embed``, the chunks' embedding function, and the writer's are one
    :func:`scheduled_embedding`, so the texts of every document in progress share batches.
    """

    pool: WorkspacePool
    settings: Settings
    tokenizer: Tokenizer
    extractor: Extractor
    embed: EmbeddingFunc
    writer: GraphWriter
    locks: DocumentLocks
    scheduler: FairScheduler
    """Whose slots every job of the pipeline (a chunk's extraction, a batch of vectors) takes
    its turn in, shared with the other workspaces of the pool (:attr:`SharedPool.scheduler`)."""
    meter: UsageMeter | None = None
    """Records the LLM and embedding calls; a document's are written with it (its
    ``doc_status`` metadata has their totals under ``usage``)."""
    _gate: asyncio.Semaphore | None = field(default=None, init=False)

    @property
    def owner(self) -> str:
        """The workspace whose turn this pipeline's jobs take in the chunk scheduler."""
        return self.locks.workspace

    @property
    def offline(self) -> bool:
        """Whether extraction is computation here (spaCy), scheduled chunk by chunk; the
        LLM extractor's model calls are scheduled instead (:func:`scheduled_llm`)."""
        return self.extractor.name == "nlp"

    def _scheduler(self) -> FairScheduler:
        self.scheduler.widen(scheduler_width(self.settings, offline=self.offline))
        return self.scheduler

    async def enqueue(self, docs: Sequence[DocumentRow]) -> list[str]:
        """Store new documents as pending; return their ids (already known ids are skipped)."""
        async with unit_of_work(self.pool) as uow:
            inserted = await uow.docs.insert(docs)
        return [d.id for d in docs if d.id in inserted]

    async def process_failed(self, progress: ProgressCallback = ignore_progress) -> Progress:
        """:meth:`process`, waiting for the failed documents that another process holds."""
        async with session(self.pool) as s:
            failed = await s.docs.ids_with_status(DocStatus.FAILED)
        return await self.process(progress, wait_for=failed)

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

        The rows whose many fragments need a summary are summarised once, after
        every merge of the run (:meth:`GraphWriter.merge`), with (when the run has
        documents to process) those a run that stopped early left unsummarised.
        """
        due = Due()
        async with session(self.pool) as s:
            ids = await s.docs.unfinished_ids()
            if ids and self.writer.summarizer.llm is not None:
                due.entities, due.relations = await s.graph.unsummarized(
                    max(2, self.settings.force_llm_summary_on_merge)
                )
        state = Progress(docs_total=len(ids))
        progress(state)
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.settings.max_parallel_insert)
        gate = self._gate

        async def run(doc_id: str) -> None:
            delay = 0.05
            while True:
                async with gate:
                    outcome = await self._process_one(doc_id, state, progress, due)
                if outcome != BUSY or doc_id not in wait_for:
                    break
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            if outcome != DONE:
                state.docs_skipped += 1
                progress(state)

        await gather_all(*(run(i) for i in ids))
        async with self.extractor.batched():  # the summaries' cache look-ups, a batch each
            await self.writer.refresh("", due)
        if self.meter is not None:  # the run's summaries are no document's: written now
            await self.meter.flush()
        if state.docs_done:
            async with session(self.pool) as s:
                await s.statistics.analyze_grown()
        return state

    async def close(self) -> None:
        """Release the document locks."""
        await self.locks.close()

    async def _process_one(self, doc_id: str, state: Progress, progress: ProgressCallback, due: Due) -> str:
        if not await self.locks.try_acquire(doc_id):
            return BUSY
        scope = self.meter.scope(doc_id=doc_id) if self.meter is not None else None
        try:
            async with session(self.pool) as s:
                claimed = await s.docs.claim([doc_id])
            if not claimed:
                return FINISHED_ELSEWHERE
            attributes = {"lightrag.workspace": self.owner, "lightrag.extractor": self.extractor.name}
            with (
                usage_scope(scope) if scope is not None else nullcontext(),
                span("lightrag.document", attributes) as doc_span,
            ):
                try:
                    await self._run(claimed[0], state, progress, due, scope, doc_span)
                    state.docs_done += 1
                except Exception as exc:  # recorded in doc_status, never lost
                    log.exception("document %s failed", doc_id)
                    message = f"{type(exc).__name__}: {exc}"
                    calls, summed = await self._usage(scope)
                    async with session(self.pool) as s:
                        await s.docs.mark_failed(doc_id, message, calls, summed)
                    if scope is not None:
                        scope.records.clear()
                    state.docs_failed += 1
                    state.failures[doc_id] = message
            progress(state)
            return DONE
        finally:
            if scope is not None and self.meter is not None:
                self.meter.adopt(scope)  # calls of a run that neither finished nor failed
            await self.locks.release(doc_id)

    async def _usage(self, scope: UsageScope | None) -> tuple[list[Usage], dict[str, Any] | None]:
        """The document's calls to write with it (none without accounting) and their totals."""
        if scope is None or self.meter is None:
            return [], None
        calls = await scope.counted()
        return (calls if self.meter.sink is not None else []), usage_totals(calls)

    def _chunks(self, doc: DocumentRow) -> list[ChunkRow]:
        s = self.settings
        pieces = chunk_text(
            doc.content,
            self.tokenizer,
            chunk_token_size=s.chunk_token_size,
            overlap=s.chunk_overlap_token_size,
            split_by_character=s.split_by_character,
            split_by_character_only=s.split_by_character_only,
        )
        return [
            ChunkRow(
                md5_id("chunk-", doc.id, str(p.chunk_order_index), p.content),
                doc.id,
                p.chunk_order_index,
                p.tokens,
                p.content,
                doc.file_path,
            )
            for p in pieces
        ]

    async def _run(
        self,
        doc: DocumentRow,
        state: Progress,
        progress: ProgressCallback,
        due: Due,
        scope: UsageScope | None = None,
        doc_span: SpanLike = NO_SPAN,
    ) -> None:
        started = time.monotonic()
        with span("lightrag.chunks") as chunk_span:
            chunks = await self._scheduler().run(self.owner, lambda: asyncio.to_thread(self._chunks, doc))
            chunk_span.set_attribute("lightrag.chunks", len(chunks))
        state.chunks_total += len(chunks)
        progress(state)
        counters = _DocumentCounters(len(chunks))
        reporter = asyncio.ensure_future(self._report(doc.id, counters))
        try:
            extractions, vectors, stats = await self._index(
                doc.id, chunks, counters, state, progress, due, scope
            )
        finally:
            reporter.cancel()
            await asyncio.gather(reporter, return_exceptions=True)
        state.entities += stats.entities
        state.relations += stats.relations
        details: dict[str, object] = {
            "entities": stats.entities,
            "relations": stats.relations,
            "merge_rounds": stats.rounds,
            "locked_rounds": stats.locked_rounds,
            "texts_embedded": len(chunks) + stats.embedded,
            "rows_reembedded": stats.reembedded,
            "dropped_lines": sum(x.dropped_lines for x in extractions),
            "extractor": self.extractor.name,
            "seconds": round(time.monotonic() - started, 3),
        }
        calls, summed = await self._usage(scope)
        if summed is not None:
            details["usage"] = summed
            for key in ("llm_calls", "input_tokens", "output_tokens", "embed_tokens"):
                doc_span.set_attribute(f"lightrag.usage.{key}", summed[key])
        for key in ("entities", "relations", "merge_rounds"):
            doc_span.set_attribute(f"lightrag.{key}", details[key])  # type: ignore[arg-type]
        doc_span.set_attribute("lightrag.chunks", len(chunks))
        with span("lightrag.finish"):
            if self.writer.composes:
                await self._finish(doc.id, [], vectors[:0], details, [c.id for c in chunks], calls)
            else:
                await self._finish(doc.id, chunks, vectors, details, usage=calls)
        if scope is not None:
            scope.records.clear()  # written with the document
        state.chunks_done += len(chunks)

    async def _store_chunks(self, chunks: list[ChunkRow], vectors: np.ndarray) -> None:
        """Store the chunks with their vectors before the merge, in one transaction of a
        statement per :data:`SEGMENT_CHUNKS` chunks (the document stays unprocessed)."""
        async with unit_of_work(self.pool) as uow:
            await _upsert_segments(uow, chunks, vectors)

    async def _finish(
        self,
        doc_id: str,
        chunks: list[ChunkRow],
        vectors: np.ndarray,
        details: dict[str, object],
        chunk_ids: list[str] | None = None,
        usage: Sequence[Usage] = (),
    ) -> None:
        """Store the chunks with their vectors and mark the document processed (with
        ``chunk_ids``, default the chunks': those stored before) and its LLM and embedding
        calls (``usage``), in one transaction: one statement, or for a long document one
        more per earlier segment of :data:`SEGMENT_CHUNKS` chunks, so no statement grows
        with the document."""
        if len(chunks) <= SEGMENT_CHUNKS:
            async with session(self.pool) as stores:  # one statement, one transaction
                await stores.docs.finish(doc_id, chunks, vectors, details, chunk_ids, usage)
            return
        last = (len(chunks) - 1) // SEGMENT_CHUNKS * SEGMENT_CHUNKS
        async with unit_of_work(self.pool) as uow:
            await _upsert_segments(uow, chunks[:last], vectors[:last])
            ids = chunk_ids if chunk_ids is not None else [c.id for c in chunks]
            await uow.docs.finish(doc_id, chunks[last:], vectors[last:], details, ids, usage)

    async def _index(
        self,
        doc_id: str,
        chunks: list[ChunkRow],
        counters: _DocumentCounters,
        state: Progress,
        progress: ProgressCallback,
        due: Due,
        scope: UsageScope | None = None,
    ) -> tuple[list[Extraction], np.ndarray, MergeStats]:
        """Extract and embed the chunks segment by segment, then merge the document (the
        tokens of each segment's calls are counted after it, so their texts are not kept)."""
        gate = asyncio.Semaphore(self.settings.max_parallel_chunks)
        parts = [chunks[i : i + SEGMENT_CHUNKS] for i in range(0, len(chunks), SEGMENT_CHUNKS)]
        *leading, last = parts or [[]]
        extractions: list[Extraction] = []
        vectors = [np.zeros((0, self.embed.embedding_dim), dtype=np.float32)]

        async def segment(part: list[ChunkRow]) -> None:
            found, embedded = await self._segment(part, gate, counters, state, progress)
            extractions.extend(found)
            vectors.append(embedded)
            if scope is not None:
                await scope.counted()

        for part in leading:
            async with self.extractor.batched():  # its cache look-ups batched, its answers kept
                await segment(part)
        async with self.extractor.batched():  # the last segment's answers with the merge's
            await segment(last)
            if self.writer.composes:  # its relations' vectors take in their chunks' vectors
                await self._store_chunks(chunks, np.concatenate(vectors, axis=0))
            counters.phase = "merging"
            entities = [e for x in extractions for e in x.entities]
            relations = [r for x in extractions for r in x.relations]
            with span("lightrag.merge") as merge_span:
                merge_span.set_attribute("lightrag.mentions", len(entities) + len(relations))
                stats = await self.writer.merge(
                    doc_id, entities, relations, _merge_reporter(counters, state, progress, merge_span), due
                )
                for key in ("rounds", "locked_rounds", "entities", "relations", "embedded"):
                    merge_span.set_attribute(f"lightrag.merge.{key}", getattr(stats, key))
        counters.phase = "storing"
        return extractions, np.concatenate(vectors, axis=0), stats

    async def _segment(
        self,
        chunks: list[ChunkRow],
        gate: asyncio.Semaphore,
        counters: _DocumentCounters,
        state: Progress,
        progress: ProgressCallback,
    ) -> tuple[list[Extraction], np.ndarray]:
        """Each chunk's extraction and each batch's vectors, as scheduled jobs. Offline, at
        most ``max_parallel_chunks`` of the document's extractions are queued or running
        at once; with the LLM, every chunk of the segment looks its answers up together
        (one statement) and only the model calls queue (:func:`scheduled_llm`)."""
        scheduler = self._scheduler()
        size = self.settings.embedding_batch_num

        async def extract(chunk: ChunkRow) -> Extraction:
            with span("lightrag.extract", {"lightrag.chunk_tokens": chunk.tokens}) as extract_span:
                if self.offline:
                    async with gate:
                        result = await scheduler.run(
                            self.owner,
                            lambda: self.extractor.extract(chunk.id, chunk.content, chunk.file_path),
                        )
                else:
                    result = await self.extractor.extract(chunk.id, chunk.content, chunk.file_path)
                extract_span.set_attribute("lightrag.entities", len(result.entities))
                extract_span.set_attribute("lightrag.relations", len(result.relations))
            counters.extracted += 1
            state.chunks_extracted += 1
            progress(state)
            return result

        async def embed(batch: list[ChunkRow]) -> np.ndarray:
            result = await self.embed([c.content for c in batch])
            counters.embedded += len(batch)
            state.chunks_embedded += len(batch)
            progress(state)
            return result

        batches = [chunks[i : i + size] for i in range(0, len(chunks), size)]
        jobs = [job for b in batches for job in (*(extract(c) for c in b), embed(b))]
        done = await gather_all(*jobs)
        found = [x for x in done if isinstance(x, Extraction)]
        empty = np.zeros((0, self.embed.embedding_dim), dtype=np.float32)
        return found, np.concatenate([empty, *(x for x in done if isinstance(x, np.ndarray))], axis=0)

    async def _report(self, doc_id: str, counters: _DocumentCounters) -> None:
        """Record ``counters`` in the document's status every :data:`PROGRESS_SECONDS`
        while they move (cancelled when the document is done)."""
        recorded: dict[str, object] | None = None
        while True:
            await asyncio.sleep(PROGRESS_SECONDS)
            view = counters.view()
            if view == recorded:
                continue
            try:
                async with session(self.pool) as s:
                    await s.docs.record_progress(doc_id, view)
                recorded = view
            except LightRAGError as exc:
                log.warning("document %s: progress not recorded: %s", doc_id, exc)


async def _upsert_segments(uow: Stores, chunks: list[ChunkRow], vectors: np.ndarray) -> None:
    """Store ``chunks`` with their vectors in ``uow``, a statement per :data:`SEGMENT_CHUNKS`
    chunks, so no statement grows with the document."""
    for i in range(0, len(chunks), SEGMENT_CHUNKS):
        await uow.chunks.upsert(chunks[i : i + SEGMENT_CHUNKS], vectors[i : i + SEGMENT_CHUNKS])
