"""Turning caller input into documents: scrubbing, ids, duplicates (no database)."""

from __future__ import annotations

import pytest

from lightrag_pg.config import MAX_ID_BYTES
from lightrag_pg.errors import InvalidInput
from lightrag_pg.index.intake import SkippedDuplicate, clean_text, md5_id, prepare_batch
from lightrag_pg.textclean import scrub_text
from lightrag_pg.types import UNKNOWN_SOURCE


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("met\x00Bob", "met Bob"),
        ("met\x00\x00\x00Bob", "met Bob"),
        ("met \x00Bob", "met Bob"),
        ("met\x00 Bob", "met Bob"),
        ("line\n\x00\nnext", "line\n\nnext"),
        ("caf\ud800", "caf\ufffd"),
        ("\udfffx\ud800", "\ufffdx\ufffd"),
        ("pair \ud83d\ude00", "pair \U0001f600"),
        ("plain text, kept", "plain text, kept"),
    ],
)
def test_scrub_text(raw: str, expected: str) -> None:
    assert scrub_text(raw) == expected
    expected.encode("utf-8")


def test_clean_text_scrubs_instead_of_refusing() -> None:
    cleaned = clean_text(" Alice met\x00Bob in caf\udce9 ", index=0, max_bytes=1000)
    assert cleaned == "Alice met Bob in caf\ufffd"
    with pytest.raises(InvalidInput, match="empty"):
        clean_text("\x00 \x00", index=0, max_bytes=1000)


def test_one_bad_character_does_not_reject_the_batch() -> None:
    docs = prepare_batch(["good one", "bad\ud800one", "nul\x00one"], max_bytes=1000).documents
    assert [d.content for d in docs] == ["good one", "bad\ufffdone", "nul one"]
    for doc in docs:
        doc.content.encode("utf-8")


def test_duplicates_in_a_batch_are_reported_with_the_document_they_duplicate() -> None:
    batch = prepare_batch(
        ["Alice met Bob.", "Other text.", " Alice met Bob. ", "Alice met Bob."],
        file_paths=["a.txt", "b.txt", "c.txt", ""],
        max_bytes=1000,
    )
    kept = md5_id("doc-", "Alice met Bob.")
    assert [(d.id, d.file_path) for d in batch.documents] == [
        (kept, "a.txt"),
        (md5_id("doc-", "Other text."), "b.txt"),
    ]
    assert batch.duplicates == [
        SkippedDuplicate(index=2, file_path="c.txt", duplicate_of=kept, duplicate_of_path="a.txt"),
        SkippedDuplicate(index=3, file_path=UNKNOWN_SOURCE, duplicate_of=kept, duplicate_of_path="a.txt"),
    ]


def test_caller_ids_keep_equal_contents_apart() -> None:
    batch = prepare_batch(["same", "same"], ids=["one", "two"], max_bytes=1000)
    assert [d.id for d in batch.documents] == ["one", "two"] and batch.duplicates == []


def test_file_paths_are_scrubbed() -> None:
    (doc,) = prepare_batch("text", file_paths="dir/caf\udce9\x00.txt", max_bytes=1000).documents
    assert doc.file_path == "dir/caf\ufffd .txt"


def test_id_length_is_bounded() -> None:
    (doc,) = prepare_batch("text", ids="é" * (MAX_ID_BYTES // 2), max_bytes=1000).documents
    assert len(doc.id.encode("utf-8")) == MAX_ID_BYTES
    with pytest.raises(InvalidInput, match=f"3,000 bytes long; ids are at most {MAX_ID_BYTES} UTF-8 bytes"):
        prepare_batch("text", ids="x" * 3000, max_bytes=1000)
    with pytest.raises(InvalidInput, match="at most"):
        prepare_batch("text", ids="é" * (MAX_ID_BYTES // 2) + "x", max_bytes=1000)


@pytest.mark.parametrize("bad", ["id\ud800", "id\x00"])
def test_ids_that_are_not_text_are_refused(bad: str) -> None:
    with pytest.raises(InvalidInput, match=r"surrogate|NUL"):
        prepare_batch("text", ids=bad, max_bytes=1000)
