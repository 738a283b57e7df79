"""Making caller text storable in PostgreSQL without losing the rest of it."""

from __future__ import annotations

import re

__all__ = ["scrub_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_NUL_BESIDE_SPACE = re.compile(r"(?<=\s)\x00+|\x00+(?=\s)")
_NUL_RUN = re.compile("\x00+")


def scrub_text(text: str) -> str:
    """Return ``text`` with what PostgreSQL cannot store replaced.

    * Surrogate code points: a high/low pair is joined into the character it
      encodes; a lone surrogate becomes U+FFFD (the replacement character).
    * NUL: a run of NULs becomes one space (``"met\\x00Bob"`` -> ``"met Bob"``),
      or nothing when whitespace is already next to it.

    Everything else is kept verbatim.
    """
    if _SURROGATE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if "\x00" in text:
        text = _NUL_RUN.sub(" ", _NUL_BESIDE_SPACE.sub("", text))
    return text
