"""Every retrieval development set in one shape: passages to index and questions with gold passages.

Multi-hop sets (a question needs two or more passages):

- ``hotpotqa``, ``musique``: HippoRAG's train subsets (``SOURCE.md`` in ``--data``,
  built by :mod:`bench.multihop_data`); passage ``i`` is ``<set>/<i>``, its title, a
  blank line and its text;
- ``hotpotqa-300``, ``musique-300``: the same 100 questions followed by 200 more of the
  dataset (``<set>_300_*.json`` in ``--data``, same builder), passages grouped by question
  likewise, so their first passages are the 100-question sets' first passages;
- ``git-docs``: git's manual cut into sections (:mod:`bench.git_docs`), with the
  hand-written questions of ``bench/data/multihop/gitdocs_questions.json``.

FAQ sets (one answer passage per question, indexed without its question heading, as
:mod:`bench.quality` indexes the Debian FAQ): ``debian-faq`` and ``debian-faq-reworded``
(the same passages, :func:`bench.debian_faq.reword`'s questions), ``zsh-faq``,
``fetchmail-faq`` and ``gitfaq`` (:mod:`bench.doc_faqs`).

``limit`` cuts a set to its first passages and the questions whose gold passages are all
among them (the passages are grouped by question or by page, so the cut keeps whole
questions with their distractors).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.debian_faq import FaqItem, fetch_faq_text, parse_faq, reword
from bench.doc_faqs import FAQS
from bench.git_docs import git_sections

MULTIHOP: tuple[str, ...] = ("hotpotqa", "musique", "git-docs", "hotpotqa-300", "musique-300")
FAQ: tuple[str, ...] = ("debian-faq", "debian-faq-reworded", "zsh-faq", "fetchmail-faq", "gitfaq")
ALL: tuple[str, ...] = (*MULTIHOP, *FAQ)
GIT_QUESTIONS = Path(__file__).resolve().parent / "data" / "multihop" / "gitdocs_questions.json"


@dataclass(frozen=True, slots=True)
class Doc:
    """One passage: its document id, file path and indexed text."""

    id: str
    path: str
    text: str


@dataclass(frozen=True, slots=True)
class Ask:
    """A question and the file paths of its gold passages."""

    text: str
    gold: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EvalSet:
    """A set: its name, the corpus it is asked over (sets sharing one share a workspace),
    ``multihop`` or ``faq``, the passages, the questions, the passage limit it was cut
    to (0: whole), and whether its passages are grouped by question (else a cut keeps every
    gold passage and fills up with the others in order)."""

    name: str
    corpus: str
    kind: str
    docs: tuple[Doc, ...]
    asks: tuple[Ask, ...]
    limit: int = 0
    grouped: bool = True

    def cut(self, limit: int) -> EvalSet:
        """``limit`` passages and the questions answered within them: the first ones if the
        passages are grouped by question, else every gold passage and the first others."""
        if not limit or limit >= len(self.docs):
            return self
        if self.grouped:
            docs = self.docs[:limit]
        else:
            gold = {p for a in self.asks for p in a.gold}
            others = limit - len(gold)
            docs = tuple(d for d in self.docs if d.path in gold or (others := others - 1) >= 0)
        kept = {d.path for d in docs}
        asks = tuple(a for a in self.asks if set(a.gold) <= kept)
        return replace(self, docs=docs, asks=asks, limit=limit)


def _wikipedia(data: Path, name: str) -> EvalSet:
    stem = name.replace("-", "_") if name.endswith("-300") else f"{name}_train100"
    corpus = json.loads((data / f"{stem}_corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((data / f"{stem}_questions.json").read_text(encoding="utf-8"))
    docs = tuple(
        Doc(f"{name}-{i}", f"{name}/{i}", f"{p['title']}\n\n{p['text']}") for i, p in enumerate(corpus)
    )
    asks = tuple(
        Ask(q["question"], tuple(f"{name}/{i}" for i in q["supporting_passage_ids"])) for q in questions
    )
    return EvalSet(name, name, "multihop", docs, asks)


def _git_docs(cache: Path) -> EvalSet:
    sections = git_sections(cache)
    docs = tuple(Doc(s.path, s.path, s.document) for s in sections)
    questions = json.loads(GIT_QUESTIONS.read_text(encoding="utf-8"))
    known = {d.path for d in docs}
    missing = [p for q in questions for p in q["supporting_paths"] if p not in known]
    if missing:
        raise ValueError(f"gold passages missing from git's manual as packaged: {missing[:5]}")
    asks = tuple(Ask(q["question"], tuple(q["supporting_paths"])) for q in questions)
    return EvalSet("git-docs", "git-docs", "multihop", docs, asks, grouped=False)


def _faq(
    name: str, corpus: str, items: Sequence[FaqItem], questions: Sequence[tuple[str, FaqItem]]
) -> EvalSet:
    docs = tuple(Doc(f"{corpus}-{i.number}", f"{corpus}/{i.number}", i.answer) for i in items)
    asks = tuple(Ask(text, (f"{corpus}/{i.number}",)) for text, i in questions)
    return EvalSet(name, corpus, "faq", docs, asks)


def load(name: str, data: Path, cache: Path) -> EvalSet:
    """Set ``name`` (one of :data:`ALL`); ``data`` holds the HippoRAG sets, ``cache`` the
    Debian packages fetched."""
    if name in ("hotpotqa", "musique", "hotpotqa-300", "musique-300"):
        return _wikipedia(data, name)
    if name == "git-docs":
        return _git_docs(cache)
    if name.startswith("debian-faq"):
        items = parse_faq(fetch_faq_text(cache / "debian-faq"))
        if name == "debian-faq":
            return _faq(name, "debian-faq", items, [(i.question, i) for i in items])
        return _faq(name, "debian-faq", items, [(r, i) for i in items if (r := reword(i.question))])
    if name in FAQS:
        items = FAQS[name](cache)
        return _faq(name, name, items, [(i.question, i) for i in items])
    raise ValueError(f"unknown set {name!r}; known: {', '.join(ALL)}")
