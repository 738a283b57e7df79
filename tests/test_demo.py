"""The demo as a newcomer meets it: the sample, the progress bar, and sources in whole sentences."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import replace
from itertools import combinations, pairwise
from pathlib import Path

import asyncpg
import pytest

from lightrag_pg import LightRAG
from lightrag_pg.cli import demo, main
from lightrag_pg.cli.common import ProgressBar
from lightrag_pg.cli.passages import MARK, render
from lightrag_pg.db.workspace import drop_workspace, workspace_exists
from lightrag_pg.index.chunking import chunk_text
from lightrag_pg.index.progress import Progress
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.query.passages import passage, sentences_of_chunk
from lightrag_pg.sentences import Sentence, split_sentences
from lightrag_pg.testing import hashed_embedding_func

from .conftest import drop_if_exists

ENDPOINT_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "LLM_BINDING_HOST",
    "LLM_BINDING_API_KEY",
    "EMBEDDING_BINDING_HOST",
    "EMBEDDING_BINDING_API_KEY",
)
ANSWER = "If the process that indexes a document crashes, PostgreSQL releases its advisory lock"
"""The start of the sentence that answers the demo's default question."""


def words(text: str) -> str:
    return " ".join(text.split())


# --- the bundled sample -----------------------------------------------------------------------


def test_the_sample_is_many_short_chunks_and_answers_the_default_question_in_one_place() -> None:
    files = demo.sample_files()
    tokenizer = get_tokenizer("o200k_base")
    chunks = [
        c.content
        for f in files
        for c in chunk_text(
            f.read_text(encoding="utf-8"),
            tokenizer,
            chunk_token_size=demo.CHUNK_TOKENS,
            overlap=demo.CHUNK_OVERLAP,
        )
    ]
    assert len(files) >= 15 and 40 <= len(chunks) <= 80
    holding = [f.name for f in files if ANSWER in words(f.read_text(encoding="utf-8"))]
    assert holding == ["10-crash-safety.md"]
    assert 1 <= sum(ANSWER in words(c) for c in chunks) <= 2


# --- sentences and passages -------------------------------------------------------------------


def test_sentences_keep_abbreviations_initials_and_headings_apart() -> None:
    text = "# Title\nSee e.g. pdftotext. Then A. Smith\nsaid so! Is it?\n\nNext paragraph"
    found = split_sentences(text)
    assert [s.text for s in found] == [
        "# Title",
        "See e.g. pdftotext.",
        "Then A. Smith said so!",
        "Is it?",
        "Next paragraph",
    ]
    assert [s.heading for s in found] == [True, False, False, False, False]
    assert [s.paragraph for s in found] == [0, 1, 1, 1, 2]
    assert all(words(text[s.start : s.end]) == s.text for s in found)


def test_a_chunk_cut_mid_sentence_gives_the_whole_sentences_it_touches() -> None:
    document = "One sentence here. The second one is long.\n\nA third one. And a fourth."
    chunk = "one is long.\n\nA third one. And a"
    found = sentences_of_chunk(chunk, document)
    assert [s.text for s in found] == ["The second one is long.", "A third one.", "And a fourth."]
    assert [s.text for s in sentences_of_chunk(chunk, "an unrelated document")] == [
        "one is long.",
        "A third one.",
        "And a",
    ]


def test_the_passage_marks_the_best_sentence_with_a_neighbour_each_side() -> None:
    sentences = [
        Sentence(0, 1, "# What happens", 0, heading=True),
        *(Sentence(i, i + 1, f"Sentence {i}.", 1) for i in range(1, 7)),
    ]
    scores = [0.99, 0.1, 0.2, 0.3, 0.9, 0.4, 0.2]
    p = passage(sentences, scores)
    assert p is not None
    assert p.sentences == ("Sentence 3.", "Sentence 4.", "Sentence 5.")
    assert p.marked == {1} and p.cut_before and p.cut_after
    assert render(p, width=40) == [
        "      … Sentence 3.",
        f"   {MARK}Sentence 4.",
        "      Sentence 5. …",
    ]
    assert render(p, highlight=lambda s: f"*{s}*")[1] == f"   {MARK}*Sentence 4.*"


def test_two_close_matches_are_both_marked_and_what_lies_between_is_kept() -> None:
    sentences = [Sentence(i, i + 1, f"S{i}.", 0) for i in range(6)]
    p = passage(sentences, [0.1, 0.8, 0.2, 0.3, 0.78, 0.1])
    assert p is not None
    assert p.sentences == ("S1.", "S2.", "S3.", "S4.") and p.marked == {0, 3}
    assert passage([Sentence(0, 1, "# Only a heading", 0, heading=True)], [1.0]) is None


# --- progress -----------------------------------------------------------------------------------

DOCS = [
    "Alice met Bob in Paris. " * 3,
    "Bob joined Globex in Berlin. Globex makes robots. " * 5,
    "Carol founded Initech in Lyon. Initech sells software to Acme. " * 9,
]


@pytest.fixture
def small_chunk_rag(dsn: str, workspace_name: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[LightRAG]:
    """NLP extraction, hashed embeddings and 24-token chunks, so each document has several."""
    for var in ENDPOINT_VARS:
        monkeypatch.delenv(var, raising=False)
    yield LightRAG(
        dsn=dsn,
        workspace=workspace_name,
        embedding_func=hashed_embedding_func(),
        extractor="nlp",
        chunk_token_size=24,
        chunk_overlap_token_size=4,
    )


async def test_progress_counts_chunks_when_stored_and_only_grows(
    small_chunk_rag: LightRAG, conn: asyncpg.Connection, workspace_name: str
) -> None:
    seen: list[Progress] = []
    try:
        async with small_chunk_rag as rag:
            result = await rag.ainsert(DOCS, progress=lambda p: seen.append(replace(p)))
        per_doc = [
            r["n"]
            for r in await conn.fetch(
                f"SELECT doc_id, count(*) AS n FROM {workspace_name}.text_chunks GROUP BY 1"
            )
        ]
    finally:
        if await workspace_exists(conn, workspace_name):
            await drop_workspace(conn, workspace_name)
    assert result.progress.docs_done == 3 and sorted(per_doc)[0] < sorted(per_doc)[-1]
    final = seen[-1]
    assert (final.docs_done, final.docs_total) == (3, 3)
    assert final.chunks_done == final.chunks_extracted == final.chunks_total == sum(per_doc)
    fields = ("docs_done", "chunks_total", "chunks_extracted", "chunks_done", "entities", "relations")
    for before, after in pairwise(seen):
        assert all(getattr(before, f) <= getattr(after, f) for f in fields), (before, after)
    for p in seen:
        assert p.docs_total == 3 and p.chunks_done <= p.chunks_extracted <= p.chunks_total
        # a chunk counts as done with its stored document, never before
        assert p.chunks_done in {sum(c) for c in combinations(per_doc, p.docs_done)}, p
    assert any(p.docs_done < 3 and p.chunks_extracted > p.chunks_done for p in seen)


def test_the_bar_moves_with_every_chunk_extracted_over_the_documents_and_never_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bar = ProgressBar("indexing")
    bar(Progress(docs_total=3))
    assert (bar.bar.n, bar.bar.total) == (0, 3)
    bar(Progress(docs_total=3, chunks_total=2, chunks_extracted=2))
    assert 0.9 < bar.bar.n < 1
    # a new document is cut: more chunks to go, but the bar does not drop back
    bar(Progress(docs_total=3, chunks_total=7, chunks_extracted=2))
    assert 0.9 < bar.bar.n < 1
    bar(
        Progress(
            docs_total=3,
            docs_done=1,
            docs_failed=1,
            chunks_total=7,
            chunks_extracted=6,
            chunks_embedded=5,
            chunks_done=4,
            merge_batches_total=2,
            merge_batches_done=1,
            entities=40,
            relations=9,
        )
    )
    assert 2 < bar.bar.n < 3 and bar.bar.total == 3
    bar.close()
    err = capsys.readouterr().err
    assert "2/3 docs (1 failed), 6/7 chunks, merging 1/2" in err


# --- the demo end to end, offline -------------------------------------------------------------

SUBSET = ("05-documents.md", "10-crash-safety.md", "15-deleting.md", "18-http-server.md")


@pytest.mark.slow
def test_the_offline_demo_shows_the_answer_in_whole_sentences(
    dsn: str, workspace_name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("spacy")
    pytest.importorskip("onnxruntime")
    for var in ENDPOINT_VARS:
        monkeypatch.delenv(var, raising=False)
    files = [f for f in demo.sample_files() if f.name in SUBSET]
    monkeypatch.setattr(demo, "sample_files", lambda: files)
    texts = {f.name: words(f.read_text(encoding="utf-8")) for f in files}
    argv = ["--dsn", dsn, "--workspace", workspace_name, "demo"]
    try:
        assert main(argv) == 0
        first = capsys.readouterr()
        assert main(argv) == 0
        again = capsys.readouterr().out
    finally:
        asyncio.run(drop_if_exists(dsn, workspace_name))
    out = first.out
    assert f"{len(files)} new, 0 already present" in out
    assert f"0 new, {len(files)} already present" in again
    assert f"Question: {demo.DEFAULT_QUESTION}" in out and "\x1b[" not in out

    sources = _sources(out)
    assert 1 <= len(sources) <= demo.TOP_CHUNKS
    for name, lines in sources:
        text = _passage_text(lines)
        assert text in texts[name], (name, text)  # whole sentences of the document, in order
        assert text[0].isupper() and text[-1] in ".!?", text
    marked = [_marked(lines) for _, lines in sources]
    assert any(m.startswith(ANSWER) for m in marked), marked
    assert all(m for m in marked)

    extracted = [tuple(map(int, m)) for m in re.findall(r"(\d+)/(\d+) chunks", first.err)]
    assert extracted[-1][0] == extracted[-1][1] > len(files)
    assert all(a[0] <= b[0] for a, b in pairwise(extracted))
    docs = [tuple(map(int, m)) for m in re.findall(r"(\d+)/(\d+) docs", first.err)]
    assert docs[-1] == (len(files), len(files))
    assert all(a[0] <= b[0] for a, b in pairwise(docs))
    shares = [int(m) for m in re.findall(r"(\d+)%\|", first.err)]
    assert shares[-1] == 100 and all(a <= b for a, b in pairwise(shares)), "the bar never moves back"


def _sources(out: str) -> list[tuple[str, list[str]]]:
    """The printed sources: the file name of each and its passage's lines (indent removed);
    a chunk whose marked sentences were shown already is left out."""
    tail = out.split("\nSources: ", 1)[1].split("\ndone in ", 1)[0]
    found: list[tuple[str, list[str]]] = []
    for line in tail.splitlines()[1:]:
        header = re.match(r"  \[\d+\] (\S+)$", line)
        if header:
            found.append((header.group(1), []))
        elif line.strip() and not line.strip().startswith("(the same sentences as above"):
            found[-1][1].append(line.strip())
    return [(name, lines) for name, lines in found if lines]


def _passage_text(lines: list[str]) -> str:
    return words(" ".join(line.removeprefix(MARK.strip()) for line in lines).replace("…", ""))


def _marked(lines: list[str]) -> str:
    mark = MARK.strip()
    return " ".join(line.removeprefix(mark).strip() for line in lines if line.startswith(mark))


def test_sample_files_are_packaged() -> None:
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"sample/*.md"' in pyproject


def test_the_demo_with_an_llm_answers_then_shows_the_passages(
    cli_env: None,
    dsn: str,
    workspace_name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = [f for f in demo.sample_files() if f.name in SUBSET]
    monkeypatch.setattr(demo, "sample_files", lambda: files)
    texts = {f.name: words(f.read_text(encoding="utf-8")) for f in files}
    try:
        assert main(["--dsn", dsn, "--workspace", workspace_name, "demo", "--mode", "naive"]) == 0
    finally:
        asyncio.run(drop_if_exists(dsn, workspace_name))
    out = capsys.readouterr().out
    assert "extractor llm" in out and "Scripted answer" in out and "No LLM is configured" not in out
    sources = _sources(out)
    assert sources and all(_marked(lines) for _, lines in sources)
    for name, lines in sources:
        assert _passage_text(lines) in texts[name]


def test_marked_sentences_are_bold_on_a_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(demo.sys.stdout, "isatty", lambda: True)
    style = demo.highlighter()
    assert style is not None and style("answer") == "\x1b[1;33manswer\x1b[0m"
    monkeypatch.setenv("NO_COLOR", "1")
    assert demo.highlighter() is None
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr(demo.sys.stdout, "isatty", lambda: False)
    assert demo.highlighter() is None
