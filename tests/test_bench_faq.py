"""The quality harness's Debian FAQ parsing, rewording and scoring, on a small sample of its text format."""

from __future__ import annotations

from bench.debian_faq import FaqItem, parse_faq, reword
from bench.quality import Question, Score, differences, passage_rank, question_sets, rank_rows

ANSWER = (
    "    The dpkg tool installs, removes and queries .deb files; apt-get fetches them\n"
    "    from the archive and resolves their dependencies first, so most users run\n"
    "    apt-get or a front end built on it rather than dpkg itself.\n"
)
SAMPLE = (
    "Table of Contents\n\n"
    "1. Definitions\n"
    "    1.1. What is this FAQ?\n\n"
    "Chapter 1. Definitions and overview\n\n"
    "1.1.\u00a0What is this FAQ?\n\n"
    "    This document answers questions frequently asked about Debian, and points\n"
    "    to other documentation where that is better; it assumes little prior\n"
    "    knowledge of Unix-like systems, and keeps answers to beginners simple.\n\n"
    "1.2.\u00a0How do I choose between the package tools dpkg and apt-get and the\n"
    "many front ends?\n\n" + ANSWER + "\n"
    "1.3.\u00a0Credits\n\n"
    "    Many people wrote this document over the years; their names are in the\n"
    "    source of the document, together with the history of each of its sections.\n\n"
    "1.4.\u00a0Where is Java?\n\n"
    "    Too short.\n\n"
    "Chapter 2. Getting Debian\n\n"
    "2.1.\u00a0Can I get Debian from a mirror near me?\n\n" + ANSWER
)


def test_sections_become_question_and_answer_pairs() -> None:
    items = parse_faq(SAMPLE)
    assert [(i.number, i.question) for i in items] == [
        ("1.1", "What is this FAQ?"),
        ("1.2", "How do I choose between the package tools dpkg and apt-get and the many front ends?"),
        ("2.1", "Can I get Debian from a mirror near me?"),
    ]
    assert items[1].answer.startswith("The dpkg tool installs, removes and queries .deb files; apt-get")
    assert "\n" not in items[1].answer and "  " not in items[1].answer


def test_rewording_changes_the_frame_and_keeps_the_content_words() -> None:
    assert (
        reword("How do I install Debian from CD-ROMs?") == "What is the way to install Debian from CD-ROMs?"
    )
    assert (
        reword("Can I get Debian from a mirror near me?")
        == "Is it possible to get Debian from a mirror near me?"
    )
    assert reword("Debian claims to update a running program; how?") is None


def test_passage_rank_counts_distinct_passages() -> None:
    chunks = [{"file_path": p} for p in ("a", "a", "b", "c", "b")]
    assert passage_rank(chunks, "c") == 3
    assert passage_rank(chunks, "z") is None
    sets = question_sets([FaqItem("2.1", "Can I get Debian?", "x"), FaqItem("2.2", "Debian, really?", "y")])
    assert [q.passage for q in sets["as written"]] == ["debian-faq/2.1", "debian-faq/2.2"]
    assert [q.text for q in sets["reworded"]] == ["Is it possible to get Debian?"]


def test_per_question_ranks_show_what_one_mode_finds_and_the_other_misses() -> None:
    sets = {"as written": [Question("q1", "p1"), Question("q2", "p2"), Question("q3", "p3")]}
    results = {
        ("as written", "naive", True): Score(1.0, 1.0, 1.0, None, (1, 3, 7)),
        ("as written", "mix", True): Score(1.0, 1.0, 1.0, None, (2, None, 4)),
    }
    rows = rank_rows(results, sets)
    assert [(r["mode"], r["question"], r["rank"]) for r in rows][:3] == [
        ("naive", "q1", 1),
        ("naive", "q2", 3),
        ("naive", "q3", 7),
    ]
    assert differences(rows, "naive", "mix") == [
        "only naive: as written, lexical on: 3 | None: q2",
        "only mix: as written, lexical on: 7 | 4: q3",
    ]
