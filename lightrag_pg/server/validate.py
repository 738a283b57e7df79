"""What the routes accept as text, keys and numbers: one validator for every body and parameter.

Text holding a NUL or a lone surrogate (PostgreSQL cannot store either, JSON
cannot carry a lone surrogate back) is refused with 400, wherever it comes:
query, keywords, history, names, ids, file names, graph edit data, chat
messages. A value past its bound is refused with 422, naming the bound.
Routes annotate their fields and parameters with the types below;
:func:`refused` turns the validation errors into those answers.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, GetCoreSchemaHandler, StringConstraints, ValidationError
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from ..config import MAX_FILE_PATH_CHARS

MAX_QUERY_CHARS = 100_000
"""The longest question, chat message or prompt (and history message or edit value)."""
MAX_KEY_CHARS = 1024
"""The longest key: an entity or relation name, a label, a document or track id, a file name."""
MAX_LIST_ITEMS = 1000
"""The most keywords, ids or names one request may list."""

ECHOED_CHARS = 200
"""How much of a rejected string a 422 repeats."""

BAD_TEXT = "bad_text"
"""The error type of text holding a NUL or a lone surrogate (a 400, not a 422)."""
REFUSED_WITH_400 = frozenset({BAD_TEXT, "string_unicode"})
"""Validation errors answered with 400; pydantic's ``string_unicode`` is its own lone-surrogate refusal."""
OVER_BOUND = frozenset({"string_too_long", "too_long", "less_than_equal", "greater_than_equal"})
"""Validation errors of a value past its bound."""

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """What makes ``value`` unacceptable (a NUL or a lone surrogate), or ``None``."""
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    char = found.group()
    return "a NUL character" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"


def _check(value: str) -> str:
    problem = text_problem(value)
    if problem:
        raise PydanticCustomError(
            BAD_TEXT, "text contains {problem}, which is not accepted", {"problem": problem}
        )
    return value


def _check_nested(value: Any) -> Any:
    """Check every string of a JSON value (keys included): characters and length."""
    if isinstance(value, str):
        _check(value)
        if len(value) > MAX_QUERY_CHARS:
            raise PydanticCustomError(
                "string_too_long",
                "String should have at most {max_length} characters",
                {"max_length": MAX_QUERY_CHARS},
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_nested(key)
            _check_nested(item)
    elif isinstance(value, list):
        for item in value:
            _check_nested(item)
    return value


def _key(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be empty or whitespace only")
    return stripped


Text = Annotated[str, AfterValidator(_check)]
"""Any text: no NUL, no lone surrogate (its length bounded by the request body's)."""
Query = Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS), AfterValidator(_check)]
"""A question, chat message, prompt or instruction: at most :data:`MAX_QUERY_CHARS`."""
Key = Annotated[str, StringConstraints(max_length=MAX_KEY_CHARS), AfterValidator(_check)]
"""A name, label, id or file name as given: at most :data:`MAX_KEY_CHARS`."""
FilePath = Annotated[str, StringConstraints(max_length=MAX_FILE_PATH_CHARS), AfterValidator(_check)]
"""A document's file path or source label: at most the library's
:data:`~lightrag_pg.config.MAX_FILE_PATH_CHARS` characters."""
Name = Annotated[Key, AfterValidator(_key)]
"""A key with its surrounding whitespace removed; empty is refused."""
Data = Annotated[dict[str, Any], AfterValidator(_check_nested)]
"""A JSON object whose strings are all checked like :data:`Query`."""


@dataclass(frozen=True, slots=True)
class Bounded:
    """Marks an integer as lying in ``low..high`` (``Annotated[int, Bounded(1, 100)]``).

    Out of it, a 422 naming the bound, however large the input: ``1e30`` is
    compared before it is parsed as an integer.
    """

    low: int
    high: int

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        inner = handler(source)
        if inner.get("type") == "int":
            inner = {**inner, "ge": self.low, "le": self.high}  # type: ignore[typeddict-item]
        return core_schema.no_info_before_validator_function(self._check, inner)

    def _check(self, value: Any) -> Any:
        number = value
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return value
        if isinstance(number, (int, float)) and not isinstance(number, bool) and not math.isnan(number):
            if number > self.high:
                raise PydanticCustomError(
                    "less_than_equal", "Input should be less than or equal to {le}", {"le": self.high}
                )
            if number < self.low:
                raise PydanticCustomError(
                    "greater_than_equal", "Input should be greater than or equal to {ge}", {"ge": self.low}
                )
        return value


def routed(exc: ValidationError) -> RequestValidationError | None:
    """For a body validated by hand: the errors :func:`refused` answers (bad text, a bound
    passed), or ``None`` when the route reports them itself."""
    errors = exc.errors(include_url=False)
    if any(e["type"] in REFUSED_WITH_400 | OVER_BOUND for e in errors):
        return RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in errors])
    return None


class _AsciiJSON(JSONResponse):
    """JSON with non-ASCII escaped, so a lone surrogate echoed in an error still encodes."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def _echoed(error: dict[str, Any]) -> dict[str, Any]:
    value = error.get("input")
    if isinstance(value, str) and len(value) > ECHOED_CHARS:
        return {**error, "input": value[:ECHOED_CHARS] + "..."}
    return error


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc) or "body"


async def refused(request: Request, exc: Exception) -> JSONResponse:
    """The answer to invalid input: 400 for unacceptable characters, else FastAPI's 422."""
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    bad = [e for e in errors if e["type"] in REFUSED_WITH_400]
    if bad:
        detail = "; ".join(
            f"{_where(e['loc'])}: "
            + (e["msg"] if e["type"] == BAD_TEXT else "text contains a lone surrogate, which is not accepted")
            for e in bad
        )
        return _AsciiJSON({"detail": detail}, status_code=400)
    return _AsciiJSON({"detail": jsonable_encoder([_echoed(e) for e in errors])}, status_code=422)
