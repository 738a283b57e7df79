"""Git's manual (Debian's ``git-doc``, HTML) cut into passages, for a multi-hop set that is
not Wikipedia.

Each page in :data:`PAGES` is cut at its headings (``h2``, ``h3``): a section is one
passage, except that a section made of a list of terms (OPTIONS, git-config's
Variables) gives one passage per top-level term (an option, a configuration variable)
with the text the term leads. NAME, SYNOPSIS, SEE ALSO, GIT and the commands'
CONFIGURATION sections are left out: the last repeat git-config's variables word for
word, which would give a question two copies of its gold passage. A passage's text is
its heading, a blank line and its body; it is indexed under the file path
``git-doc/<page>.html#<anchor>``, so the page's file name and the heading stay with it.

The questions (``bench/data/multihop/gitdocs_questions.json``) were written by hand
from these passages: each needs two (or three) of them, typically a command's section
that names a setting or another command, and that setting's or command's own passage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bench.debian_docs import Block, html_blocks, join_blocks, package_files

GIT_DOC = "usr/share/doc/git-doc"
PAGES: tuple[str, ...] = (
    "git-add", "git-am", "git-bisect", "git-blame", "git-branch", "git-checkout", "git-cherry-pick",
    "git-clean", "git-clone", "git-commit", "git-config", "git-describe", "git-diff", "git-fetch",
    "git-format-patch", "git-gc", "git-grep", "git-init", "git-log", "git-maintenance", "git-merge",
    "git-mv", "git-pull", "git-push", "git-rebase", "git-reflog", "git-remote", "git-reset",
    "git-restore", "git-revert", "git-rm", "git-send-email", "git-sparse-checkout",
    "git-stash", "git-status", "git-submodule", "git-switch", "git-tag", "git-worktree",
)  # fmt: skip
SKIPPED = {"NAME", "SYNOPSIS", "SEE ALSO", "GIT", "CONFIGURATION", "AUTHOR", "DOCUMENTATION"}
MIN_WORDS = 8
_SLUG = re.compile(r"[^a-z0-9.]+")


@dataclass(frozen=True, slots=True)
class Section:
    """One passage: the page, its heading and body, and the file path it is indexed under."""

    page: str
    heading: str
    body: str

    @property
    def path(self) -> str:
        """``git-doc/<page>.html#<anchor>``."""
        anchor = _SLUG.sub("-", self.heading.lower()).strip("-")[:60]
        return f"git-doc/{self.page}.html#{anchor}"

    @property
    def document(self) -> str:
        """The text indexed: the heading, a blank line and the body."""
        return f"{self.heading}\n\n{self.body}"


def _split(page: str, heading: str, blocks: list[Block]) -> list[Section]:
    """One section, or one per top-level term when its body is a term list."""
    def term(i: int) -> bool:
        return blocks[i].kind == "dt" and blocks[i].depth == 1

    terms = [i for i in range(len(blocks)) if term(i) and not (i and term(i - 1))]
    if not terms:
        return [Section(page, heading, join_blocks(blocks))]
    sections = [Section(page, heading, join_blocks(blocks[: terms[0]]))] if terms[0] else []
    for n, start in enumerate(terms):
        end = terms[n + 1] if n + 1 < len(terms) else len(blocks)
        names = [blocks[start].text]
        body_start = start + 1
        while body_start < end and term(body_start):
            names.append(blocks[body_start].text)
            body_start += 1
        sections.append(Section(page, ", ".join(names), join_blocks(blocks[body_start:end])))
    return sections


def page_sections(page: str, html: str) -> list[Section]:
    """The passages of one manual page (see the module docstring)."""
    sections: list[Section] = []
    heading: str | None = None
    level = ""
    blocks: list[Block] = []

    def close() -> None:
        if heading is not None and heading not in SKIPPED:
            sections.extend(_split(page, heading, blocks))

    skipping = False
    for block in html_blocks(html):
        if block.kind in ("h2", "h3"):
            if block.kind == "h3" and skipping and level == "h2":
                continue
            close()
            heading, level, blocks = block.text, block.kind, []
            skipping = block.kind == "h2" and block.text in SKIPPED
        elif block.kind in ("h1", "h4"):
            continue
        elif heading is not None:
            blocks.append(block)
    close()
    unique: dict[str, Section] = {}
    for s in sections:
        if len(s.body.split()) >= MIN_WORDS:
            unique.setdefault(s.path, s)
    return list(unique.values())


def git_sections(cache: Path) -> list[Section]:
    """Every passage of :data:`PAGES`, page by page; a body that several pages share (the diff
    options of git-log and git-diff, a variable git-commit repeats from git-config) is kept
    once, in git-config if it is there, else where it first appears."""
    members = [f"{GIT_DOC}/{p}.html" for p in PAGES]
    paths = package_files(cache, "git-doc", members)
    pages = {page: page_sections(page, paths[m].read_text()) for page, m in zip(PAGES, members, strict=True)}
    owner: dict[str, str] = {}
    for page in ("git-config", *PAGES):
        for s in pages[page]:
            owner.setdefault(s.body, s.path)
    return [s for page in PAGES for s in pages[page] if owner[s.body] == s.path]
