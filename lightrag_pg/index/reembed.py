"""Changing a workspace's embedding model in place.

A re-embed computes every entity, relation and chunk vector again with the
new model, batch by batch, into shadow tables sized for it, while queries go
on using the live vectors of the old model; then one transaction swaps the
shadows in and records the new model and dimension. Entity and relation vectors
are computed from their stored texts as the writer computes them
(:mod:`.composed`: a relation's short text is composed, not embedded, from the
new model's vectors of its parts and of its source chunks, staged before relations).

* **Progress is the staged rows themselves.** A live row is pending while no
  staged row carries the text it was computed from (entity and relation
  vectors: their ``content``; chunks: the MD5 of the chunk text). A run that
  crashed is resumed by running it again with the same model: only pending
  rows are embedded, and a row whose text changed since it was staged is
  pending again, so it is re-staged before the swap.
* **Writers may go on.** Documents inserted or deleted and entities edited
  during a re-embed write old-model vectors to the live tables as usual;
  each round ends by staging whatever became pending, and the swap, which
  keeps writers out of the vector tables and their parents while it runs,
  happens only when nothing is pending (else another round). After the swap,
  processes still configured with the old model fail on their next vector
  write or search and refuse to open the workspace (``DimensionMismatch``):
  restart them with the new model.
* **One re-embed at a time.** A session advisory lock, on a connection of its
  own, keeps a second run out (:class:`ReembedConflict`) and dies with the
  process. Resuming with another model than the staged one is refused with
  :class:`ReembedConflict`; :func:`discard_reembed` drops what was staged.
* **Indexes before the swap.** The HNSW indexes of the shadow tables
  (``halfvec`` above 2,000 dimensions) are built once the first pass has
  staged everything, so the swap itself only drops and renames. Building them
  over a large workspace takes longer than ``statement_timeout_ms``: it runs
  without the timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import numpy as np

from ..db.advisory import lock_key, session_lock
from ..db.dimensions import HALFVEC_HNSW_MAX_DIM
from ..db.identifiers import WorkspaceName
from ..db.pool import WorkspacePool, without_statement_timeout
from ..db.workspace import read_info, record_embedding
from ..errors import ConcurrentUpdate, ConfigurationError, InvalidInput, ReembedConflict
from ..llm.embedding_func import EmbeddingFunc
from ..store.reembed import FIRST_KEY, KINDS, Kind, ReembedState, ReembedStore
from .composed import Key, PartVectors

DEFAULT_BATCH_SIZE = 256
MAX_ROUNDS = 5


@dataclass
class ReembedProgress:
    """Counters of a re-embed, passed to the progress callback after each batch and phase.

    ``phase`` is ``staging``, ``indexing``, ``swapping`` or ``done``; ``total``
    is the number of live vectors and ``staged`` how many have a current
    staged vector; ``embedded`` counts the texts this run embedded.
    """

    phase: str = "staging"
    total: int = 0
    staged: int = 0
    embedded: int = 0
    batches: int = 0


ReembedCallback = Callable[[ReembedProgress], None]


def ignore_reembed_progress(_: ReembedProgress) -> None:
    """The default callback: do nothing."""


@dataclass(frozen=True, slots=True)
class ReembedResult:
    """What a re-embed did.

    ``embedded`` counts the texts embedded by this run (rows staged by an
    earlier, interrupted run are not embedded again); ``resumed`` says whether
    it continued such a run; ``rounds`` counts staging rounds (more than one
    when writers changed vectors meanwhile); ``swap_seconds`` is how long the
    swap transaction took. ``vectors`` is the number of vectors swapped in.
    """

    workspace: WorkspaceName
    previous_model: str | None
    previous_dim: int
    embedding_model: str
    embedding_dim: int
    vectors: int
    embedded: int
    resumed: bool
    rounds: int
    seconds: float
    swap_seconds: float
    changed: bool = True


class _Pending(Exception):
    """Rows became pending between the last round and the swap."""


class Reembedder:
    """Re-embeds one workspace with ``embed`` (an already wrapped :class:`EmbeddingFunc`)."""

    def __init__(
        self,
        pool: WorkspacePool,
        dsn: str,
        workspace: WorkspaceName,
        embed: EmbeddingFunc,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        connect_timeout: float = 10.0,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")
        dim = embed.embedding_dim
        if dim > HALFVEC_HNSW_MAX_DIM:
            raise ConfigurationError(
                f"embedding_dim {dim} is too wide: pgvector's HNSW index covers at most "
                f"{HALFVEC_HNSW_MAX_DIM} dimensions (as halfvec)"
            )
        self.pool = pool
        self.dsn = dsn
        self.workspace = workspace
        self.embed = embed
        self.parts = PartVectors(embed)
        self.batch_size = batch_size
        self.connect_timeout = connect_timeout

    @property
    def model(self) -> str:
        return self.embed.model_name

    @property
    def dim(self) -> int:
        return self.embed.embedding_dim

    async def run(self, progress: ReembedCallback = ignore_reembed_progress) -> ReembedResult:
        """Stage every vector with the new model, then swap; resumes a run of the same model."""
        started = time.perf_counter()
        async with _reembed_lock(self.dsn, self.workspace, self.connect_timeout):
            async with self.pool.acquire() as conn:
                info = await read_info(conn, self.workspace)
                assert info is not None
                state = await ReembedStore(conn).state()
                self._check_state(state)
                if state is None and (info.embedding_model, info.embedding_dim) == (self.model, self.dim):
                    return ReembedResult(
                        self.workspace, info.embedding_model, info.embedding_dim, self.model, self.dim,
                        0, 0, False, 0, time.perf_counter() - started, 0.0, changed=False,
                    )  # fmt: skip
                if state is None:
                    async with conn.transaction():
                        await ReembedStore(conn).begin(self.model, self.dim)
            counters = ReembedProgress()
            rounds, swap_seconds, vectors = 0, 0.0, 0
            for rounds in range(1, MAX_ROUNDS + 1):
                await self._stage_pending(counters, progress)
                if rounds == 1:
                    counters.phase = "indexing"
                    progress(counters)
                    async with self.pool.acquire() as conn, without_statement_timeout(conn):
                        await ReembedStore(conn).build_indexes(self.dim)
                counters.phase = "swapping"
                progress(counters)
                swap_started = time.perf_counter()
                try:
                    vectors = await self._swap()
                except (_Pending, ConcurrentUpdate):
                    continue
                swap_seconds = time.perf_counter() - swap_started
                break
            else:
                raise ReembedConflict(
                    f"workspace {self.workspace!r}: vectors kept changing during {MAX_ROUNDS} rounds of "
                    "re-embedding; run it again when fewer writers are busy (what is staged is kept)"
                )
        counters.phase = "done"
        progress(counters)
        return ReembedResult(
            workspace=self.workspace,
            previous_model=info.embedding_model,
            previous_dim=info.embedding_dim,
            embedding_model=self.model,
            embedding_dim=self.dim,
            vectors=vectors,
            embedded=counters.embedded,
            resumed=state is not None,
            rounds=rounds,
            seconds=time.perf_counter() - started,
            swap_seconds=swap_seconds,
        )

    def _check_state(self, state: ReembedState | None) -> None:
        if state is None or (state.embedding_model, state.embedding_dim) == (self.model, self.dim):
            return
        raise ReembedConflict(
            f"workspace {self.workspace!r} has a re-embed to model {state.embedding_model!r} "
            f"({state.embedding_dim} dimensions) in progress since {state.started_at:%Y-%m-%d %H:%M}, "
            f"not to {self.model!r} ({self.dim} dimensions): resume it with that model, or discard "
            "what it staged (`lightrag-pg reembed --abort`) and start again"
        )

    async def _stage_pending(self, counters: ReembedProgress, progress: ReembedCallback) -> None:
        """Embed and stage, batch by batch, every row pending when the pass reaches it."""
        async with self.pool.acquire() as conn:
            counts = await ReembedStore(conn).counts()
        counters.phase = "staging"
        counters.total = sum(counts.total.values())
        counters.staged = counters.total - counts.all_pending
        progress(counters)
        for kind in KINDS:
            if counts.pending[kind]:
                await self._stage_kind(kind, counters, progress)

    async def _stage_kind(self, kind: Kind, counters: ReembedProgress, progress: ReembedCallback) -> None:
        after = FIRST_KEY
        while True:
            async with self.pool.acquire() as conn:
                rows = await ReembedStore(conn).pending(kind, after, self.batch_size)
            if not rows:
                return
            contents = [r.content for r in rows]
            if kind == "chunks":
                embeddings, sent = await self.embed(contents), len(contents)
            else:
                keys: list[Key] = [r.key if kind == "relations" else r.key[0] for r in rows]
                embeddings, sent = await self.parts.embed_rows(keys, contents, self._staged_chunks)
            async with self.pool.acquire() as conn:
                await ReembedStore(conn).stage(kind, rows, embeddings)
            after = rows[-1].key
            counters.embedded += sent
            counters.staged = min(counters.total, counters.staged + len(rows))
            counters.batches += 1
            progress(counters)

    async def _staged_chunks(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The new model's vectors of chunk ``ids`` (staged before the relations)."""
        async with self.pool.acquire() as conn:
            return await ReembedStore(conn).staged_chunk_vectors(ids)

    async def _swap(self) -> int:
        """One transaction: keep writers out, check nothing is pending, swap, record the model."""
        async with self.pool.acquire() as conn, conn.transaction():
            store = ReembedStore(conn)
            await store.lock_for_swap()
            counts = await store.counts()
            if counts.all_pending:
                raise _Pending()
            await store.swap()
            await record_embedding(conn, self.workspace, self.dim, self.model)
            return sum(counts.total.values())


async def discard_reembed(
    pool: WorkspacePool, dsn: str, workspace: WorkspaceName, connect_timeout: float = 10.0
) -> ReembedState | None:
    """Drop what an interrupted re-embed staged; return its state (None: there was none).

    Raises :class:`ReembedConflict` if a re-embed of the workspace is running.
    """
    lock = _reembed_lock(dsn, workspace, connect_timeout)
    async with lock, pool.acquire() as conn, conn.transaction():
        store = ReembedStore(conn)
        state = await store.state()
        if state is not None:
            await store.discard()
        return state


def _reembed_lock(
    dsn: str, workspace: WorkspaceName, connect_timeout: float
) -> AbstractAsyncContextManager[None]:
    """The session advisory lock of a workspace's re-embed."""
    refusal = ReembedConflict(
        f"another process is re-embedding workspace {workspace!r}; wait for it to finish"
    )
    return session_lock(dsn, lock_key("reembed", workspace), refusal, connect_timeout)
