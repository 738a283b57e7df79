"""Split a document into token-bounded chunks.

This follows upstream LightRAG's ``chunking_by_token_size``:

* Without a separator, the document's tokens are cut into windows of
  ``chunk_token_size`` tokens, each window starting ``chunk_token_size -
  overlap`` tokens after the previous one.
* With ``split_by_character``, the text is first split on that string; a piece
  longer than ``chunk_token_size`` tokens is cut into overlapping token windows
  as above, unless ``split_by_character_only`` is set, in which case such a
  piece raises :class:`~lightrag_pg.errors.InvalidInput` (upstream's
  ``ChunkTokenLimitExceededError``).

Chunk contents are stripped of surrounding whitespace, chunks that are empty
after stripping are dropped, and ``chunk_order_index`` numbers the remaining
chunks 0, 1, 2, ... in document order.

One deliberate difference from upstream: upstream emits a final window that
lies entirely inside the previous one whenever the remaining tail is shorter
than the overlap (e.g. 1150 tokens give windows ``[0, 1150)`` and
``[1100, 1150)``). That duplicate indexes the same text twice, so here the
windowing stops as soon as a window reaches the end of the token list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..errors import ConfigurationError, InvalidInput
from ..types import Chunk

__all__ = ["TokenizerLike", "chunk_text", "token_windows"]


class TokenizerLike(Protocol):
    """The part of a tokenizer the chunker needs."""

    def encode(self, text: str) -> list[int]:
        """Return the token ids of ``text``."""
        ...

    def decode(self, tokens: list[int]) -> str:
        """Return the text of ``tokens``."""
        ...


def token_windows(length: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Return the ``(start, end)`` token windows covering ``length`` tokens.

    Windows are ``size`` tokens long (the last may be shorter) and consecutive
    windows share ``overlap`` tokens. No window lies entirely inside the one
    before it. ``length == 0`` gives no windows.
    """
    _check_sizes(size, overlap)
    step = size - overlap
    windows: list[tuple[int, int]] = []
    start = 0
    while start < length:
        end = min(start + size, length)
        windows.append((start, end))
        if end >= length:
            break
        start += step
    return windows


def chunk_text(
    text: str,
    tokenizer: TokenizerLike,
    *,
    chunk_token_size: int = 1200,
    overlap: int = 100,
    split_by_character: str | None = None,
    split_by_character_only: bool = False,
) -> list[Chunk]:
    """Split ``text`` into :class:`~lightrag_pg.types.Chunk` records.

    ``Chunk.tokens`` is the number of tokens the chunk was cut from (the window
    length, or the token count of a separator-delimited piece). An empty or
    whitespace-only ``text`` gives ``[]``. An empty ``split_by_character`` is
    treated as no separator, as upstream does.

    Raises :class:`~lightrag_pg.errors.ConfigurationError` for a non-positive
    ``chunk_token_size`` or an ``overlap`` outside ``[0, chunk_token_size)``,
    and :class:`~lightrag_pg.errors.InvalidInput` for non-string text or, with
    ``split_by_character_only``, a piece longer than ``chunk_token_size``.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"document text must be a string, got {type(text).__name__}")
    _check_sizes(chunk_token_size, overlap)
    if split_by_character is not None and not isinstance(split_by_character, str):
        raise ConfigurationError("split_by_character must be a string or None")

    pieces: list[tuple[int, str]] = []
    if split_by_character:
        for index, raw in enumerate(text.split(split_by_character)):
            piece = raw.strip()
            if not piece:
                continue
            tokens = tokenizer.encode(piece)
            if len(tokens) <= chunk_token_size:
                pieces.append((len(tokens), piece))
            elif split_by_character_only:
                raise InvalidInput(
                    f"piece {index} split on {split_by_character!r} has {len(tokens)} tokens, "
                    f"more than chunk_token_size={chunk_token_size}; raise chunk_token_size "
                    "or turn off split_by_character_only"
                )
            else:
                pieces.extend(_windows(tokens, tokenizer, chunk_token_size, overlap))
    else:
        pieces.extend(_windows(tokenizer.encode(text), tokenizer, chunk_token_size, overlap))

    chunks: list[Chunk] = []
    for count, piece_text in pieces:
        content = piece_text.strip()
        if content:
            chunks.append(Chunk(tokens=count, content=content, chunk_order_index=len(chunks)))
    return chunks


def _windows(
    tokens: Sequence[int], tokenizer: TokenizerLike, size: int, overlap: int
) -> list[tuple[int, str]]:
    return [
        (end - start, tokenizer.decode(list(tokens[start:end])))
        for start, end in token_windows(len(tokens), size, overlap)
    ]


def _check_sizes(size: int, overlap: int) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ConfigurationError(f"chunk_token_size must be a positive integer, got {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size:
        raise ConfigurationError(f"chunk overlap must be an integer in [0, {size}), got {overlap!r}")
