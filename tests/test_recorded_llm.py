"""The quality harness's recorded LLM: the recording parses cleanly and is replayed by prompt."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bench.recorded_llm import (
    EXTRACTION_FILE,
    KEYWORDS_FILE,
    SUMMARY_WORDS,
    MissingAnswer,
    RecordedLLM,
    chunk_key,
)
from lightrag_pg.config import DEFAULT_ENTITY_TYPES
from lightrag_pg.index.extraction_prompts import (
    COMPLETION_DELIMITER,
    extraction_messages,
    gleaning_messages,
    summary_prompt,
)
from lightrag_pg.index.parse import parse_extraction
from lightrag_pg.query.answer_prompts import keywords_prompt
from lightrag_pg.query.keyword_plan import parse_keywords


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_recorded_extraction_parses_without_a_dropped_line() -> None:
    rows = _rows(EXTRACTION_FILE)
    assert len(rows) == 100 and len({r["key"] for r in rows}) == 100
    for row in rows:
        parsed = parse_extraction(row["answer"], chunk_id=row["key"], file_path="faq")
        assert parsed.dropped_lines == 0, row["key"]
        assert parsed.entities and parsed.relations, row["key"]
        names = {e.name for e in parsed.entities}
        assert all({r.src, r.tgt} <= names for r in parsed.relations), row["key"]


def test_every_recorded_keyword_answer_has_keywords() -> None:
    rows = _rows(KEYWORDS_FILE)
    assert len(rows) == 162 and len({r["question"] for r in rows}) == 162
    for row in rows:
        high, low = parse_keywords(row["answer"])
        assert high or low, row["question"]


def _recording(tmp_path: Path, chunk: str, question: str) -> RecordedLLM:
    extraction = tmp_path / "extraction.jsonl"
    keywords = tmp_path / "keywords.jsonl"
    answer = f"entity<|#|>dpkg<|#|>Artifact<|#|>The package tool.\n{COMPLETION_DELIMITER}"
    extraction.write_text(json.dumps({"key": chunk_key(chunk), "answer": answer}) + "\n")
    keywords.write_text(json.dumps({"question": question, "answer": '{"high_level_keywords": ["x"]}'}) + "\n")
    return RecordedLLM(extraction, keywords)


def test_prompts_are_answered_from_the_recording(tmp_path: Path) -> None:
    chunk, question = "The dpkg tool installs .deb files.\nIt keeps a database.", "What does dpkg do?"
    llm = _recording(tmp_path, chunk, question)
    system, user = extraction_messages(chunk, entity_types=DEFAULT_ENTITY_TYPES, language="English")
    answer = asyncio.run(llm(user, system_prompt=system))
    assert answer.startswith("entity<|#|>dpkg<|#|>")
    assert (
        llm.respond(
            gleaning_messages(chunk, [], [], entity_types=DEFAULT_ENTITY_TYPES, language="English")[1]
        )
        == COMPLETION_DELIMITER
    )
    assert llm.respond(keywords_prompt(question, "English")) == '{"high_level_keywords": ["x"]}'
    long = ["word " * 300, "more " * 300]
    summary = llm.respond(summary_prompt("entity", "dpkg", long, language="English", summary_length=100))
    assert summary.split() == " ".join(long).split()[:SUMMARY_WORDS]
    assert llm.calls == 1


def test_a_prompt_the_recording_lacks_is_an_error_not_an_answer(tmp_path: Path) -> None:
    llm = _recording(tmp_path, "Recorded chunk.", "Recorded question?")
    _, user = extraction_messages("Another chunk.", entity_types=DEFAULT_ENTITY_TYPES, language="English")
    with pytest.raises(MissingAnswer, match="Another chunk"):
        llm.respond(user)
    with pytest.raises(MissingAnswer, match="Another question"):
        llm.respond(keywords_prompt("Another question?", "English"))
    with pytest.raises(MissingAnswer):
        llm.respond("Answer the question.")
