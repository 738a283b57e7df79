"""``/api/*``: an Ollama-compatible chat API answering from the knowledge base.

Open WebUI and Ollama clients see one model (``lightrag:latest`` by default).
A chat message may start with a mode prefix, as upstream: ``/local``,
``/global``, ``/hybrid``, ``/naive``, ``/mix``, ``/bypass`` (straight to the
LLM), ``/context`` or ``/<mode>context`` (return the retrieved context), with an
optional ``[instructions]`` right after the prefix (``/mix[answer in French] ...``).
``/api/generate`` goes straight to the LLM, as upstream.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, ValidationError

from ..errors import InvalidInput
from ..query.engine import QueryStream
from ..query.param import QueryParam
from .deps import State, Workspace
from .query import NDJSON_HEADERS
from .validate import MAX_LIST_ITEMS, Data, Query, Text, routed

router = APIRouter(tags=["ollama"])

OLLAMA_VERSION = "0.9.3"
MODEL_SIZE = 7_365_960_935
MODEL_DIGEST = "sha256:lightrag"
OPEN_WEBUI_TASK = re.compile(r"\n<chat_history>\nUSER:")
_PREFIX = re.compile(r"^/([a-z]*)\[(.*?)\]([\s\S]*)")
_MODES = {
    "/local ": ("local", False),
    "/global ": ("global", False),
    "/naive ": ("naive", False),
    "/hybrid ": ("hybrid", False),
    "/mix ": ("mix", False),
    "/bypass ": ("bypass", False),
    "/context": ("mix", True),
    "/localcontext": ("local", True),
    "/globalcontext": ("global", True),
    "/hybridcontext": ("hybrid", True),
    "/naivecontext": ("naive", True),
    "/mixcontext": ("mix", True),
}

M = TypeVar("M", bound=BaseModel)


class OllamaMessage(BaseModel):
    role: Text = Field(min_length=1, max_length=64)
    content: Query
    images: list[Text] | None = None


class OllamaChatRequest(BaseModel):
    model: Text = Field(max_length=256)
    messages: list[OllamaMessage] = Field(min_length=1, max_length=MAX_LIST_ITEMS)
    stream: bool = True
    options: Data | None = None
    system: Query | None = None


class OllamaGenerateRequest(BaseModel):
    model: Text = Field(max_length=256)
    prompt: Query
    system: Query | None = None
    stream: bool = False
    options: Data | None = None


@dataclass(frozen=True, slots=True)
class Prefixed:
    """A chat message with its mode prefix taken off."""

    query: str
    mode: str
    only_need_context: bool
    user_prompt: str | None


def parse_prefix(text: str) -> Prefixed:
    """Split a mode prefix (and ``[instructions]``) off ``text``; ``mix`` without one."""
    user_prompt = None
    bracket = _PREFIX.match(text)
    if bracket:
        mode, user_prompt, rest = bracket.group(1), bracket.group(2), bracket.group(3).lstrip()
        text = f"/{mode} {rest}" if mode else rest
    for prefix, (mode, context_only) in _MODES.items():
        if text.startswith(prefix):
            return Prefixed(text[len(prefix) :].lstrip(), mode, context_only, user_prompt)
    return Prefixed(text, "mix", False, user_prompt)


async def _body(request: Request, model: type[M]) -> M:
    """The JSON body (whatever the Content-Type, as Ollama clients vary) as ``model``; 400 if
    bad, 422 past a bound (a message longer than ``/query`` accepts), as the other routes."""
    try:
        return model.model_validate(json.loads(await request.body()))
    except json.JSONDecodeError:
        raise InvalidInput("Invalid JSON in request body") from None
    except ValidationError as exc:
        raise routed(exc) or InvalidInput(f"Invalid request body: {exc}") from None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _model_entry(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "size": MODEL_SIZE,
        "digest": MODEL_DIGEST,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "lightrag",
            "families": ["lightrag"],
            "parameter_size": "13B",
            "quantization_level": "Q4_0",
        },
    }


@router.get("/version")
async def version() -> dict[str, str]:
    return {"version": OLLAMA_VERSION}


@router.get("/tags")
async def tags(state: State) -> dict[str, Any]:
    """The one model; ``modified_at`` is when the server started, the same on every call."""
    started = datetime.fromtimestamp(state.started_at, timezone.utc).isoformat()
    return {"models": [{**_model_entry(state.settings.ollama_model), "modified_at": started}]}


@router.get("/ps")
async def ps(state: State) -> dict[str, Any]:
    entry = _model_entry(state.settings.ollama_model)
    return {"models": [{**entry, "expires_at": "2050-12-31T00:00:00Z", "size_vram": MODEL_SIZE}]}


class _Reply:
    """Builds the NDJSON or JSON answers of one chat or generate call.

    ``prompt_eval_count`` and ``eval_count`` are the input and output tokens of the
    query's LLM calls (keywords and answer); an answer that reached no model (the LLM
    cache's, or the context) counts the question's and the answer's tokens instead.
    """

    def __init__(self, model: str, chat: bool, count: Any, prompt: str) -> None:
        self.model = model
        self.chat = chat
        self.count = count
        self.prompt = prompt
        self.started = time.time_ns()
        self.first: int | None = None

    def piece(self, text: str) -> dict[str, Any]:
        if self.first is None:
            self.first = time.time_ns()
        body = (
            {"message": {"role": "assistant", "content": text, "images": None}}
            if self.chat
            else {"response": text}
        )
        return {"model": self.model, "created_at": _now(), **body, "done": False}

    async def done(self, text: str, whole: str, stream: QueryStream) -> dict[str, Any]:
        prompt_tokens, answer_tokens = await stream.conversation_tokens()
        end = time.time_ns()
        first = self.first or end
        final = self.piece(text)
        final.update(
            done=True,
            done_reason="stop",
            total_duration=end - self.started,
            load_duration=0,
            prompt_eval_count=prompt_tokens or self.count(self.prompt),
            prompt_eval_duration=first - self.started,
            eval_count=answer_tokens or self.count(whole),
            eval_duration=end - first,
        )
        if not self.chat:
            final["context"] = []
        return final

    def stream(self, stream: QueryStream) -> StreamingResponse:
        async def lines() -> AsyncIterator[str]:
            whole = []
            try:
                async for text in stream:
                    if text:
                        whole.append(text)
                        yield json.dumps(self.piece(text), ensure_ascii=False) + "\n"
            except Exception as exc:  # the status line is sent: report in the stream, as upstream
                error = f"\n\nError: {type(exc).__name__}: {exc}"
                yield json.dumps({**self.piece(error), "error": error}, ensure_ascii=False) + "\n"
            yield json.dumps(await self.done("", "".join(whole), stream), ensure_ascii=False) + "\n"

        return StreamingResponse(lines(), media_type="application/x-ndjson", headers=NDJSON_HEADERS)

    async def whole(self, stream: QueryStream) -> dict[str, Any]:
        text = "".join([p async for p in stream]) or "No response generated"
        return await self.done(text, text, stream)


async def _answer(runtime: Workspace, query: str, param: QueryParam) -> QueryStream:
    return await runtime.rag.aquery_stream(query, param)


@router.post("/chat")
async def chat(request: Request, runtime: Workspace, state: State) -> Any:
    """Chat with the knowledge base as if it were an Ollama model."""
    body = await _body(request, OllamaChatRequest)
    last = body.messages[-1]
    if last.role != "user":
        raise InvalidInput("Last message must be from user role")
    history = [{"role": m.role, "content": m.content} for m in body.messages[:-1]]
    asked = parse_prefix(last.content)
    if not asked.query.strip():
        raise InvalidInput("the query is empty or whitespace only")
    mode = "bypass" if OPEN_WEBUI_TASK.search(asked.query) else asked.mode
    param = QueryParam(
        mode=mode,  # type: ignore[arg-type]
        only_need_context=asked.only_need_context,
        conversation_history=[m for m in history if m["role"] in ("system", "user", "assistant")],
        user_prompt=asked.user_prompt,
    )
    stream = await _answer(runtime, asked.query, param)
    reply = _Reply(state.settings.ollama_model, True, runtime.rag.tokenizer.count, asked.query)
    return reply.stream(stream) if body.stream else await reply.whole(stream)


@router.post("/generate")
async def generate(request: Request, runtime: Workspace, state: State) -> Any:
    """A completion straight from the LLM (no retrieval), as upstream."""
    body = await _body(request, OllamaGenerateRequest)
    if not body.prompt.strip():
        raise InvalidInput("the prompt is empty or whitespace only")
    history = [{"role": "system", "content": body.system}] if body.system else []
    stream = await _answer(runtime, body.prompt, QueryParam(mode="bypass", conversation_history=history))
    reply = _Reply(state.settings.ollama_model, False, runtime.rag.tokenizer.count, body.prompt)
    return reply.stream(stream) if body.stream else await reply.whole(stream)
