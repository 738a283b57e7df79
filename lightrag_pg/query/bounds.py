"""Bounds on the work one question costs, whatever its length.

A question longer than ``Settings.max_query_chars`` is refused
(:class:`~lightrag_pg.errors.QueryTooLong`), and so is a ``conversation_history`` message
longer than that. Below that, what grows with the
question reads a bounded part of it, so a long question costs about what a
paragraph does:

* lexical search (the chunk and entity full text searches, and the phrases
  matched against entity names) and the offline keyword rule read the first
  :data:`LEXICAL_WORDS` words of the text searched (at most
  :data:`LEXICAL_CHARS` characters);
* each keyword list keeps its first :data:`MAX_KEYWORDS` keywords, each cut to
  :data:`MAX_KEYWORD_CHARS` characters;
* the text embedded is cut to the embedding model's ``max_token_size`` tokens
  (as the workspace's tokenizer counts them), or :data:`DEFAULT_EMBED_TOKENS`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import islice

from ..errors import QueryTooLong
from ..llm.tokenizer import TokenEncoder
from .param import HistoryMessage

LEXICAL_WORDS = 100
"""Words of a question that lexical search and the offline keyword rule read: a long
paragraph. Each word costs the statement a phrase look-up per name length and the
full text search a posting list, so past this the cost grows and the ranking does not
improve (a pasted document is searched by its vector)."""
LEXICAL_CHARS = 4000
"""Characters of those words at most (a "word" may be a long run without spaces)."""
MAX_KEYWORDS = 20
"""Keywords kept per level (high, low), from the LLM, the offline rule or the caller."""
MAX_KEYWORD_CHARS = 200
"""Characters kept of one keyword."""
DEFAULT_EMBED_TOKENS = 8192
"""Tokens embedded of a question when the embedding function declares no ``max_token_size``."""

TOKEN_CHARS = 6
"""Characters read per token kept when cutting a text to a number of tokens: more than an
English token spans on average (about four), so the cut text is the one tokenizing the
whole would give; a text of longer tokens is cut shorter, never longer."""

_WORD = re.compile(r"\S+")


def check_length(query: str, max_chars: int) -> str:
    """``query``, or :class:`QueryTooLong` if it has more than ``max_chars`` characters."""
    if len(query) > max_chars:
        raise QueryTooLong(
            f"the query has {len(query):,} characters, more than the limit of {max_chars:,} "
            "(setting max_query_chars)"
        )
    return query


def check_history(history: Sequence[HistoryMessage], max_chars: int) -> None:
    """:class:`QueryTooLong` if a message of ``history`` has more than ``max_chars`` characters
    (each earlier turn is bounded as the question is)."""
    for index, message in enumerate(history):
        size = len(message["content"])
        if size > max_chars:
            raise QueryTooLong(
                f"conversation_history[{index}] has {size:,} characters, more than the limit of "
                f"{max_chars:,} (setting max_query_chars)"
            )


def leading_words(text: str, words: int = LEXICAL_WORDS, chars: int = LEXICAL_CHARS) -> str:
    """The first ``words`` whitespace-separated words of ``text`` joined by single spaces,
    cut to ``chars`` characters; reads no further into ``text`` than that."""
    return " ".join(m.group(0) for m in islice(_WORD.finditer(text), words))[:chars]


def bounded_keywords(keywords: list[str]) -> list[str]:
    """The first :data:`MAX_KEYWORDS` of ``keywords``, each cut to :data:`MAX_KEYWORD_CHARS`."""
    return [k[:MAX_KEYWORD_CHARS].strip() for k in keywords[:MAX_KEYWORDS]]


def embeddable(text: str, tokenizer: TokenEncoder, max_tokens: int | None) -> str:
    """``text`` cut to ``max_tokens`` tokens (:data:`DEFAULT_EMBED_TOKENS` when None).

    A text of no more UTF-8 bytes than that has no more tokens (a byte-level encoding
    never gives a byte more than one token), so only a longer one is tokenized, and only
    its first :data:`TOKEN_CHARS` characters per token kept; an encoder without
    ``decode`` keeps that many bytes."""
    limit = max_tokens or DEFAULT_EMBED_TOKENS
    if len(text) <= limit and len(text.encode("utf-8")) <= limit:
        return text
    head = text[: limit * TOKEN_CHARS]
    tokens = tokenizer.encode(head)
    if len(tokens) <= limit:
        return head
    decode = getattr(tokenizer, "decode", None)
    if decode is None:
        return text.encode("utf-8")[:limit].decode("utf-8", "ignore")
    return str(decode(tokens[:limit]))
