"""More FAQs packaged in Debian, as question / answer-passage pairs like the Debian FAQ.

Each FAQ is cut as :mod:`bench.debian_faq` cuts the Debian FAQ: a section whose heading
is a question (it holds a ``?``) is one item, the heading is the question and the
section's text is its answer passage; answers under 25 words are left out. The texts
come from Debian packages fetched at run time (:func:`bench.debian_docs.package_files`):

- ``zsh-faq``: the Z shell FAQ (``zsh-doc``, ``FAQ01.html``-``FAQ06.html``);
- ``fetchmail-faq``: the fetchmail FAQ (``fetchmail``, ``fetchmail-FAQ.html``);
- ``gitfaq``: Git's FAQ, gitfaq(7) (``git-doc``, ``gitfaq.txt``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.debian_docs import Block, html_blocks, join_blocks, package_files
from bench.debian_faq import MIN_ANSWER_WORDS, FaqItem

_SPACES = re.compile(r"\s+")
ZSH_HEADING = re.compile(r"^(\d+\.\d+):\s*(.+)$")
FETCHMAIL_HEADING = re.compile(r"^([A-Z]\d+)\.\s*(.+)$")
ZSH_DOC = "usr/share/doc/zsh-common/html"
FETCHMAIL_DOC = "usr/share/doc/fetchmail/fetchmail-FAQ.html"
GIT_DOC = "usr/share/doc/git-doc"


def _item(number: str, question: str, answer: str) -> FaqItem | None:
    question = _SPACES.sub(" ", question).strip()
    if "?" not in question or len(answer.split()) < MIN_ANSWER_WORDS:
        return None
    return FaqItem(number, question, answer)


def headed_items(blocks: Sequence[Block], heading: re.Pattern[str], level: str) -> list[FaqItem]:
    """Items of an HTML FAQ whose question headings (``level``) match ``heading``
    (group 1 the number, group 2 the question); a section runs to the next heading."""
    items: list[FaqItem] = []
    current: tuple[str, str] | None = None
    body: list[Block] = []

    def close() -> None:
        if current and (item := _item(current[0], current[1], join_blocks(body))):
            items.append(item)

    for block in blocks:
        if block.kind.startswith("h"):
            close()
            match = heading.match(block.text) if block.kind == level else None
            current = (match.group(1), match.group(2)) if match else None
            body = []
        elif current:
            body.append(block)
    close()
    return items


def zsh_faq(cache: Path) -> list[FaqItem]:
    """The Z shell FAQ's question sections."""
    members = [f"{ZSH_DOC}/FAQ0{i}.html" for i in range(1, 7)]
    paths = package_files(cache, "zsh-doc", members)
    items: list[FaqItem] = []
    for member in members:
        blocks = html_blocks(paths[member].read_text(encoding="latin-1"))
        items += headed_items(blocks, ZSH_HEADING, "h2")
    return items


def fetchmail_faq(cache: Path) -> list[FaqItem]:
    """The fetchmail FAQ's question sections."""
    path = package_files(cache, "fetchmail", [FETCHMAIL_DOC])[FETCHMAIL_DOC]
    blocks = html_blocks(path.read_text(encoding="utf-8", errors="replace"))
    return headed_items(blocks, FETCHMAIL_HEADING, "h2")


_ASCIIDOC_ANCHOR = re.compile(r"^\[\[([\w-]+)\]\]$")
_ASCIIDOC_TITLE = re.compile(r"^[A-Z][\w ]*$")
_ASCIIDOC_MARKUP = re.compile(r"linkgit:([\w-]+)\[(\d)\]")


def _asciidoc_text(lines: Sequence[str]) -> str:
    """Paragraphs of an AsciiDoc list item's body: ``+`` joins, ``----`` fences dropped."""
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped in ("+", "", "----"):
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(_ASCIIDOC_MARKUP.sub(r"\1(\2)", stripped))
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(_SPACES.sub(" ", p) for p in paragraphs)


def gitfaq(cache: Path) -> list[FaqItem]:
    """gitfaq(7)'s question sections."""
    member = f"{GIT_DOC}/gitfaq.txt"
    return parse_gitfaq(package_files(cache, "git-doc", [member])[member].read_text(encoding="utf-8"))


def parse_gitfaq(text: str) -> list[FaqItem]:
    """The questions of gitfaq(7)'s AsciiDoc source: each ``[[anchor]]`` followed by
    ``Question?::`` and its body, up to the next anchor or section title."""
    lines = text.splitlines()
    items: list[FaqItem] = []
    anchor: str | None = None
    question = ""
    body: list[str] = []

    def close() -> None:
        if anchor and (item := _item(anchor, question, _asciidoc_text(body))):
            items.append(item)

    for i, line in enumerate(lines):
        if match := _ASCIIDOC_ANCHOR.match(line.strip()):
            close()
            anchor, question, body = match.group(1), "", []
        elif anchor and not question and line.endswith("::"):
            question = line[:-2].replace("`", "")
        elif anchor and question:
            if line.startswith("---") and i and _ASCIIDOC_TITLE.match(lines[i - 1]):
                body = body[:-1]
                close()
                anchor = None
            else:
                body.append(line)
    close()
    return items


FAQS: dict[str, Callable[[Path], list[FaqItem]]] = {
    "zsh-faq": zsh_faq,
    "fetchmail-faq": fetchmail_faq,
    "gitfaq": gitfaq,
}
