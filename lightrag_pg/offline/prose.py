"""The prose of a chunk of text, for the offline extractor: what is not prose is not mined.

Technical text (Markdown documentation, READMEs) mixes sentences with code, tables
and markup. Parsed as prose, a SQL statement gives "EXISTS" and "GRANT CREATE", a
table row "CPU 40.8×", a shell line "lightrag-pg doctor" (typed a person). So:

* **Removed** (each block replaced by a paragraph break, and a colon ending the line
  before it by a full stop, so the sentences around it stay apart): fenced code blocks
  (a chunk cut inside one is read from its first fence: a bare fence with an opening
  fence after it, or with an odd count of fences, closes a block the chunk began
  inside), tables (lines of two pipes or more starting or ending with one (a chunk may
  cut a row), or a delimiter line ``---|---`` with the header above it and the lines
  with ``|`` after it) but for their rows that say something, YAML or TOML front matter
  at the start, HTML comments, Markdown link reference definitions and shell prompt
  lines (``$ ...``, ``>>> ...``).
* **Read as sentences**: a table row with a cell of prose (after its first; three
  words or more, more letters than digits) reads "first cell: other cells; ... ." on
  a line of its own ("| PyJWT | the tokens of logins |" reads "PyJWT: the tokens of
  logins."); a row of figures is left out with its table's header.
* **Unwrapped**: links keep their text (``[text](url)`` reads "text"), autolinks
  their address; ``**bold**`` and ``*italic*`` lose their stars; images go (their
  text is a caption, not a sentence).
* **Marked** (kept in the text, so the sentence around it still parses and reads, but
  not mined): inline code, URLs, issue references (``apache/age#54``) and commit hashes
  (7 to 40 hex digits with a digit and a letter); a backtick left open on the first line
  (the chunk began inside a code span) or the last makes code of the text before or
  after it. An inline code span holding one identifier other than a hash
  (``chunk_token_size``, ``QueryParam.bridge``, ``rag.aquery()`` without its
  parentheses) carries it as ``name``: the extractor may take it as a code entity.
* Markdown headings become sentences of their own ("## Install" reads "Install."), as
  does a first line followed by a blank line without ending a sentence (a title). A
  sentence starts at each paragraph (after a blank line), at each table row read as
  one and at the text after a block left out (``sentence_starts``: the small English
  model often runs a sentence on over a blank line, "Run\n\nNote that ..." is one).

Plain prose comes out unchanged but for those two rules (and Windows line ends read as
line ends).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate

__all__ = ["CodeSpan", "Prose", "prose"]


@dataclass(frozen=True, slots=True)
class CodeSpan:
    """Characters ``start:end`` of :attr:`Prose.text` that are code, not prose; ``name`` is the
    identifier an inline code span holds ("" for anything else)."""

    start: int
    end: int
    name: str = ""


@dataclass(frozen=True, slots=True)
class Prose:
    """The text to parse, the code spans in it and the offsets where a sentence must start,
    in text order."""

    text: str
    code: tuple[CodeSpan, ...]
    sentence_starts: tuple[int, ...] = ()


_BREAK = "\x00"
"""Marks a sentence start while the text is rewritten (the extractor's text holds no NUL)."""


_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)")
_TABLE_ROW = re.compile(r"^(?:[ \t]*\|.*\||.*\|.*\|[ \t]*$)")
"""A table row: two pipes, the first starting the line or the last ending it (a row the chunk cut)."""
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_PROMPT = re.compile(r"^[ \t]*(?:\$|>>>)[ \t]")
_REFERENCE = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]+\S+")
_FRONT_MATTER = re.compile(
    r"\A(?:---[ \t]*\n[\w-]+:.*?\n(?:---|\.\.\.)|\+\+\+[ \t]*\n[\w-]+[ \t]*=.*?\n\+\+\+)[ \t]*(?:\n|\Z)", re.S
)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TICKS = re.compile(r"`+")
_QUOTE_CLOSERS = {1: re.compile(r"(?<!')'(?![\w'])"), 2: re.compile(r"''")}
"""What closes a quote opened by backticks: `like this' (GNU) or ``like this'' (TeX)."""
_OPEN_END_CHARS = 60
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\s]*(?:[ \t]+\"[^\"\n]*\")?\)")
_LINK = re.compile(r"\[([^\]\n]+)\]\([^)\s]*(?:[ \t]+\"[^\"\n]*\")?\)")
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^>\s]+|[\w.+-]+@[\w-]+\.[\w.-]+)>")
_BOLD = re.compile(r"\*\*(?=\S)([^*\n]*?\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>`\"]+|\bwww\.[^\s<>`\"]+")
_URL_END = ".,;:!?)]}'"
_HASH = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_ISSUE = re.compile(r"(?<![\w/])[\w.-]+/[\w.-]+#\d+\b")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w]*(?:(?:\.|::|-)[A-Za-z_][\w]*)*(?:\(\))?")
_HEADING = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_TITLE = re.compile(r"\A(?![ \t]{0,3}#)([ \t]*[^\n]*[^\s.!?:;,])[ \t]*\n[ \t]*\n\s*")


def prose(text: str) -> Prose:
    """The prose of ``text``, its code spans and sentence starts (see the module docstring);
    ``text`` must hold no NUL."""
    text = _COMMENT.sub("", _FRONT_MATTER.sub("", text.replace("\r\n", "\n")))
    text = _HEADING.sub(r"\1.", _TITLE.sub(r"\1. ", text))
    text = _unwrap("\n".join(_without_blocks(text.split("\n"))))
    pieces = text.split(_BREAK)
    starts = list(accumulate(len(piece) for piece in pieces[:-1]))
    text = "".join(pieces)
    return Prose(text, _code_spans(text), tuple(starts))


def _fence_opens_inside(fences: list[re.Match[str]]) -> bool:
    """True when a chunk begins inside a fenced block (see the module docstring)."""
    if not fences or fences[0].group(2):
        return False
    return len(fences) % 2 == 1 or (len(fences) > 1 and bool(fences[1].group(2)))


def _without_blocks(lines: list[str]) -> list[str]:
    """``lines`` without code blocks, prompts and reference definitions, and with table rows
    read as sentences or left out; each block left out leaves one blank line after a line
    whose ending colon became a full stop."""
    fences = [m for m in map(_FENCE.match, lines) if m]
    table = _table_lines(lines)
    out: list[str] = []
    fence = fences[0].group(1)[:3] if _fence_opens_inside(fences) else ""
    dropping = bool(fence)
    for index, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1).startswith(fence) and not opened.group(2):
                fence = ""
            line = ""
        elif opened:
            fence, line = opened.group(1)[:3], ""
        elif index in table:
            line = _row_sentence(line) if table[index] else ""
        elif _PROMPT.match(line) or _REFERENCE.match(line):
            line = ""
        else:
            starts = line.strip() and (dropping or (bool(out) and not out[-1].strip()))
            out.append(_BREAK + line if starts else line)
            dropping = dropping and not line.strip()
            continue
        if not dropping:
            _end_sentence(out)
            dropping = True
        if line:
            out.append(_BREAK + line)
    return out


def _table_lines(lines: list[str]) -> dict[int, bool]:
    """The table lines by index, True for a row (False for a header or a delimiter line): lines
    with a leading pipe, and around a delimiter line its header and the lines with a pipe after it."""
    rows = {i: True for i, line in enumerate(lines) if _TABLE_ROW.match(line)}
    for index, line in enumerate(lines):
        if "|" in line and _TABLE_RULE.match(line):
            rows[index] = False
            if index and "|" in lines[index - 1]:
                rows[index - 1] = False
            after = index + 1
            while after < len(lines) and "|" in lines[after] and lines[after].strip():
                rows[after] = True
                after += 1
    return rows


def _row_sentence(line: str) -> str:
    """A table row as a sentence ("first cell: the other cells; ... .") when a cell after the
    first is prose (three words or more, more letters than digits), else ""."""
    cells = [c.strip() for c in _CELL_SPLIT.split(line.strip().strip("|"))]
    rest = [c for c in cells[1:] if c]
    if not cells[0] or not any(_is_prose_cell(c) for c in rest):
        return ""
    return f"{cells[0]}: {'; '.join(rest)}".rstrip(".") + "."


def _is_prose_cell(cell: str) -> bool:
    for span in reversed(_inline_code(cell)[0]):
        cell = cell[: span[0]] + " " + cell[span[1] :]
    words = _WORD.findall(cell)
    return len(words) >= 3 and sum(map(len, words)) > sum(c.isdigit() for c in cell)


def _end_sentence(out: list[str]) -> None:
    """A blank line where a block was, the line before it ending a sentence if it ended in a colon."""
    while out and not out[-1].strip():
        out.pop()
    if out:
        stripped = out[-1].rstrip()
        if stripped.endswith(":"):
            out[-1] = stripped[:-1] + "."
        out.append("")


def _unwrap(text: str) -> str:
    """Links, images and emphasis unwrapped outside inline code."""
    parts: list[str] = []
    last = 0
    for start, end, _, _ in _inline_code(text)[0]:
        parts.append(_unwrap_prose(text[last:start]))
        parts.append(text[start:end])
        last = end
    parts.append(_unwrap_prose(text[last:]))
    return "".join(parts)


def _unwrap_prose(text: str) -> str:
    text = _LINK.sub(r"\1", _IMAGE.sub("", text))
    text = _AUTOLINK.sub(r"\1", text)
    return _ITALIC.sub(r"\1", _BOLD.sub(r"\1", text))


def _inline_code(text: str) -> tuple[list[tuple[int, int, int, int]], set[int]]:
    """The inline code spans of ``text`` (start and end with the backticks, then without),
    and where the backticks that open a quote rather than code are."""
    runs = list(_TICKS.finditer(text))
    spans: list[tuple[int, int, int, int]] = []
    quotes: set[int] = set()
    index = 0
    while index < len(runs):
        run = runs[index]
        width = len(run.group())
        line_end = text.find("\n", run.end()) % (len(text) + 1)
        closer = next(
            (
                k
                for k in range(index + 1, len(runs))
                if runs[k].start() < line_end and len(runs[k].group()) == width
            ),
            None,
        )
        closes = _QUOTE_CLOSERS.get(width)
        quote = closes.search(text, run.end(), line_end) if closes else None
        if quote and (closer is None or quote.start() < runs[closer].start()):
            quotes.update(range(run.start(), run.end()))
        elif closer is not None:
            spans.append((run.start(), runs[closer].end(), run.end(), runs[closer].start()))
            index = closer
        index += 1
    return spans, quotes


def _open_ends(text: str, closed: list[tuple[int, int]], quotes: set[int]) -> list[tuple[int, int]]:
    """The code before a backtick left open near the start of the first line, and after one
    near the end of the last (a chunk that begins or ends inside a code span)."""

    def stray(low: int, high: int) -> list[int]:
        return [
            i
            for i in range(low, high)
            if text[i] == "`" and i not in quotes and not any(s <= i < e for s, e in closed)
        ]

    out: list[tuple[int, int]] = []
    first_end = text.find("\n") % (len(text) + 1)
    ticks = stray(0, min(first_end, _OPEN_END_CHARS))
    if ticks:
        out.append((0, ticks[0]))
    last_start = text.rfind("\n") + 1
    ticks = stray(max(last_start, len(text) - _OPEN_END_CHARS), len(text)) if last_start else []
    if ticks:
        out.append((ticks[-1] + 1, len(text)))
    return [(start, end) for start, end in out if start < end]


def _code_spans(text: str) -> tuple[CodeSpan, ...]:
    spans: list[CodeSpan] = []
    inline, quotes = _inline_code(text)
    taken: list[tuple[int, int]] = []
    for outer_start, outer_end, inner_start, inner_end in inline:
        inner = text[inner_start:inner_end]
        start = inner_start + len(inner) - len(inner.lstrip())
        inner = inner.strip()
        identifier = _IDENTIFIER.fullmatch(inner) and not _HASH.fullmatch(inner)
        spans.append(CodeSpan(start, start + len(inner), inner.removesuffix("()") if identifier else ""))
        taken.append((outer_start, outer_end))
    for start, end in _open_ends(text, taken, quotes):
        spans.append(CodeSpan(start, end))
        taken.append((start, end))
    for pattern in (_URL, _ISSUE, _HASH):
        for match in pattern.finditer(text):
            start, end = match.start(), match.end()
            if pattern is _URL:
                while end > start and text[end - 1] in _URL_END:
                    end -= 1
            if not any(s < end and start < e for s, e in taken):
                spans.append(CodeSpan(start, end))
                taken.append((start, end))
    return tuple(sorted(spans, key=lambda span: span.start))
