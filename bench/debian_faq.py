"""The Debian FAQ as question / answer-passage pairs, for the retrieval quality harness.

The text comes from Debian's ``debian-faq`` package (its plain-text edition,
``debian-faq.en.txt.gz``), fetched at run time with ``apt-get download`` into a
cache directory; nothing of it is committed. :func:`parse_faq` splits the text
into sections: a section heading such as ``8.1. What package management tools
does Debian provide?`` (possibly wrapped over several lines) is the question,
and the indented text up to the next heading is its answer passage. Sections
whose heading is not a question (no ``?``) or whose answer is very short are
left out.

:func:`reword` is the paraphrase: a fixed table of question frames rewritten
into other frames ("How do I X?" -> "What is the way to X?"), applied to the
first frame that matches. The content words of the question are kept as they
are; only the frame changes, so a reworded question is as honest as a person
asking the same thing with other function words, and no harder than that.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

FAQ_MEMBER = "usr/share/doc/debian/FAQ/debian-faq.en.txt.gz"
MIN_ANSWER_WORDS = 25

_HEADING = re.compile(r"^(\d+)\.(\d+)\.\s+(\S.*)$")
_CHAPTER = re.compile(r"^Chapter \d+\. ")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class FaqItem:
    """One FAQ section: its number (``"8.1"``), question and answer passage."""

    number: str
    question: str
    answer: str


def fetch_faq_text(cache_dir: Path) -> str:
    """The FAQ's plain text, from ``cache_dir`` or downloaded there with ``apt-get download``."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    text_file = cache_dir / "debian-faq.en.txt"
    if not text_file.exists():
        with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
            work = Path(tmp)
            subprocess.run(["apt-get", "download", "debian-faq"], cwd=work, check=True, capture_output=True)
            (deb,) = work.glob("debian-faq_*.deb")
            subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "x")], check=True)
            with gzip.open(work / "x" / FAQ_MEMBER, "rt", encoding="utf-8") as src:
                body = src.read()
            shutil.copy(deb, cache_dir / deb.name)
        text_file.write_text(body, encoding="utf-8")
    return text_file.read_text(encoding="utf-8")


def _clean(lines: list[str]) -> str:
    """Paragraphs of an indented answer, each joined into one line."""
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(_SPACES.sub(" ", p) for p in paragraphs)


def parse_faq(text: str) -> list[FaqItem]:
    """The FAQ's question sections in order (see the module docstring)."""
    text = text.replace("\u00a0", " ")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _CHAPTER.match(line)), 0)
    items: list[FaqItem] = []
    number: str | None = None
    title: list[str] = []
    body: list[str] = []
    in_title = False

    def close() -> None:
        if number is None:
            return
        question = _SPACES.sub(" ", " ".join(title)).strip()
        answer = _clean(body)
        if question.endswith("?") and len(answer.split()) >= MIN_ANSWER_WORDS:
            items.append(FaqItem(number, question, answer))

    for line in lines[start:]:
        heading = _HEADING.match(line)
        if heading or _CHAPTER.match(line):
            close()
            number, title, body = None, [], []
            in_title = False
            if heading:
                number = f"{heading.group(1)}.{heading.group(2)}"
                title = [heading.group(3)]
                in_title = True
            continue
        if in_title:
            if line.strip() and not line.startswith("    "):
                title.append(line.strip())
                continue
            in_title = False
        if number is not None:
            body.append(line)
    close()
    return items


_REWORDINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), replacement)
    for pattern, replacement in (
        (r"^How do I (.+)\?$", r"What is the way to \1?"),
        (r"^How can I (.+)\?$", r"What should I do to \1?"),
        (r"^How does (.+)\?$", r"In what way does \1?"),
        (r"^How should I (.+)\?$", r"What is the right way to \1?"),
        (r"^What is (.+)\?$", r"Could you explain \1?"),
        (r"^What are (.+)\?$", r"Could you explain \1?"),
        (r"^Where is (.+)\?$", r"Where can I find \1?"),
        (r"^Where can I (.+)\?$", r"Where is it possible to \1?"),
        (r"^Why does (.+)\?$", r"For what reason does \1?"),
        (r"^Why do (.+)\?$", r"For what reason do \1?"),
        (r"^Why is (.+)\?$", r"For what reason is \1?"),
        (r"^Can I (.+)\?$", r"Is it possible to \1?"),
        (r"^Is there (.+)\?$", r"Does there exist \1?"),
        (r"^Are there (.+)\?$", r"Do there exist \1?"),
        (r"^Do I (.+)\?$", r"Must I \1?"),
        (r"^Which (.+)\?$", r"Tell me which \1."),
    )
)


def reword(question: str) -> str | None:
    """``question`` with its frame rewritten by the first matching rule, or None if none matches."""
    for pattern, replacement in _REWORDINGS:
        if pattern.match(question):
            return pattern.sub(replacement, question)
    return None
