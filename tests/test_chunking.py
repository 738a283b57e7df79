"""Unit tests for lightrag_pg.index.chunking (offline, no database)."""

from __future__ import annotations

import itertools

import pytest

from lightrag_pg.errors import ConfigurationError, InvalidInput
from lightrag_pg.index.chunking import chunk_text, token_windows
from lightrag_pg.types import Chunk


class WordTokenizer:
    """One token per whitespace-separated word; decode joins with spaces."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._words: list[str] = []

    def encode(self, text: str) -> list[int]:
        ids = []
        for word in text.split():
            if word not in self._ids:
                self._ids[word] = len(self._words)
                self._words.append(word)
            ids.append(self._ids[word])
        return ids

    def decode(self, tokens: list[int]) -> str:
        return " ".join(self._words[t] for t in tokens)


def words(n: int, prefix: str = "w") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


@pytest.fixture
def tok() -> WordTokenizer:
    return WordTokenizer()


def test_empty_and_blank_text_give_no_chunks(tok: WordTokenizer) -> None:
    assert chunk_text("", tok) == []
    assert chunk_text("   \n\t ", tok) == []
    assert chunk_text("", tok, split_by_character="\n") == []
    assert chunk_text("\n\n\n", tok, split_by_character="\n", split_by_character_only=True) == []


def test_short_text_is_one_stripped_chunk(tok: WordTokenizer) -> None:
    assert chunk_text("  alpha beta gamma \n", tok) == [Chunk(3, "alpha beta gamma", 0)]


def test_token_windows_and_overlap_are_exact(tok: WordTokenizer) -> None:
    text = " ".join(words(25))
    chunks = chunk_text(text, tok, chunk_token_size=10, overlap=3)
    assert [c.chunk_order_index for c in chunks] == [0, 1, 2, 3]
    assert [c.tokens for c in chunks] == [10, 10, 10, 4]
    expected = [words(25)[s:e] for s, e in [(0, 10), (7, 17), (14, 24), (21, 25)]]
    assert [c.content.split() for c in chunks] == expected
    for left, right in itertools.pairwise(chunks):
        assert left.content.split()[-3:] == right.content.split()[:3]


def test_windows_cover_every_token_in_order(tok: WordTokenizer) -> None:
    all_words = words(1000)
    chunks = chunk_text(" ".join(all_words), tok, chunk_token_size=120, overlap=20)
    rebuilt = chunks[0].content.split()
    for chunk in chunks[1:]:
        rebuilt += chunk.content.split()[20:]
    assert rebuilt == all_words
    assert all(c.tokens == len(c.content.split()) for c in chunks)


def test_zero_overlap_gives_disjoint_windows(tok: WordTokenizer) -> None:
    chunks = chunk_text(" ".join(words(9)), tok, chunk_token_size=4, overlap=0)
    assert [c.content for c in chunks] == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8"]


def test_no_window_is_contained_in_the_previous_one(tok: WordTokenizer) -> None:
    # upstream would add a redundant [7, 10) window here; we stop at the end
    assert len(chunk_text(" ".join(words(10)), tok, chunk_token_size=10, overlap=3)) == 1
    chunks = chunk_text(" ".join(words(12)), tok, chunk_token_size=10, overlap=3)
    assert [c.tokens for c in chunks] == [10, 5]
    assert token_windows(12, 10, 3) == [(0, 10), (7, 12)]
    assert token_windows(0, 10, 3) == []


def test_default_sizes_are_1200_and_100(tok: WordTokenizer) -> None:
    chunks = chunk_text(" ".join(words(2500)), tok)
    assert [c.tokens for c in chunks] == [1200, 1200, 300]
    assert chunks[1].content.split()[0] == "w1100"
    assert chunks[2].content.split()[0] == "w2200"


def test_split_by_character(tok: WordTokenizer) -> None:
    text = "a b\n\nc d e\n\n  \n\nf\n\n"
    chunks = chunk_text(text, tok, split_by_character="\n\n")
    assert chunks == [Chunk(2, "a b", 0), Chunk(3, "c d e", 1), Chunk(1, "f", 2)]


def test_split_by_character_token_splits_long_pieces(tok: WordTokenizer) -> None:
    long_piece = " ".join(words(12, "x"))
    text = f"first piece\n{long_piece}\nlast"
    chunks = chunk_text(text, tok, chunk_token_size=5, overlap=1, split_by_character="\n")
    assert [c.chunk_order_index for c in chunks] == list(range(len(chunks)))
    assert chunks[0].content == "first piece"
    assert chunks[-1].content == "last"
    middle = chunks[1:-1]
    assert [c.tokens for c in middle] == [5, 5, 4]
    assert [c.content for c in middle] == ["x0 x1 x2 x3 x4", "x4 x5 x6 x7 x8", "x8 x9 x10 x11"]


def test_split_by_character_only_keeps_pieces_whole(tok: WordTokenizer) -> None:
    text = "one two three|four|five six"
    chunks = chunk_text(
        text,
        tok,
        chunk_token_size=3,
        overlap=1,
        split_by_character="|",
        split_by_character_only=True,
    )
    assert [c.content for c in chunks] == ["one two three", "four", "five six"]
    assert [c.tokens for c in chunks] == [3, 1, 2]


def test_split_by_character_only_rejects_over_long_piece(tok: WordTokenizer) -> None:
    text = "short\n" + " ".join(words(8))
    with pytest.raises(InvalidInput) as info:
        chunk_text(
            text,
            tok,
            chunk_token_size=5,
            overlap=1,
            split_by_character="\n",
            split_by_character_only=True,
        )
    message = str(info.value)
    assert "8 tokens" in message
    assert "chunk_token_size=5" in message


def test_empty_separator_means_no_separator(tok: WordTokenizer) -> None:
    text = " ".join(words(7))
    assert chunk_text(text, tok, chunk_token_size=4, overlap=1, split_by_character="") == chunk_text(
        text, tok, chunk_token_size=4, overlap=1
    )


@pytest.mark.parametrize(
    ("size", "overlap"), [(0, 0), (-5, 0), (10, 10), (10, 11), (10, -1), (True, 0), (10, 1.5)]
)
def test_bad_sizes_are_configuration_errors(tok: WordTokenizer, size: object, overlap: object) -> None:
    with pytest.raises(ConfigurationError):
        chunk_text("a b c", tok, chunk_token_size=size, overlap=overlap)  # type: ignore[arg-type]


def test_non_string_text_is_invalid_input(tok: WordTokenizer) -> None:
    with pytest.raises(InvalidInput):
        chunk_text(b"bytes", tok)  # type: ignore[arg-type]


def test_real_tokenizer_windows() -> None:
    tokenizer_module = pytest.importorskip("lightrag_pg.llm.tokenizer")
    tokenizer = tokenizer_module.get_tokenizer("o200k_base")
    text = " ".join(f"Sentence number {i} talks about graphs and Postgres." for i in range(400))
    total = len(tokenizer.encode(text))
    chunks = chunk_text(text, tokenizer, chunk_token_size=200, overlap=20)
    starts = list(range(0, total, 180))
    starts = [s for s in starts if s == 0 or s - 180 + 200 < total]
    assert [c.tokens for c in chunks] == [min(200, total - s) for s in starts]
    assert all(c.content and c.content in text for c in chunks)
    assert chunks[0].content == tokenizer.decode(tokenizer.encode(text)[:200]).strip()
