"""Source passages on a terminal: :func:`render` wraps a :class:`~..query.passages.Passage`,
marking the sentences that match the question."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from ..query.passages import Passage

MARK = ">> "
"""The prefix of a matching sentence's lines."""


def render(
    p: Passage, *, width: int = 88, indent: str = "      ", highlight: Callable[[str], str] | None = None
) -> list[str]:
    """The passage's lines: one wrapped block per sentence, ``…`` where the paragraph goes on.

    Matching sentences' lines start with :data:`MARK` in place of the
    indent's end; ``highlight`` (bold or colour on a terminal) wraps them too.
    """
    marked_indent = indent[: max(len(indent) - len(MARK), 0)] + MARK
    lines: list[str] = []
    last = len(p.sentences) - 1
    for i, text in enumerate(p.sentences):
        if i == 0 and p.cut_before:
            text = "… " + text
        if i == last and p.cut_after:
            text += " …"
        wrapped = textwrap.wrap(text, width=max(width - len(indent), 20))
        if i in p.marked:
            lines.extend(marked_indent + (highlight(w) if highlight else w) for w in wrapped)
        else:
            lines.extend(indent + w for w in wrapped)
    return lines
