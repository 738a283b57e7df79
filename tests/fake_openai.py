"""A local OpenAI-compatible HTTP server for tests (stdlib only).

Usage::

    with FakeOpenAI(lambda messages, body: "hello") as srv:
        client = OpenAIChat(base_url=srv.base_url, api_key="test")

Serves ``POST /v1/chat/completions`` (JSON or SSE streaming) and
``POST /v1/embeddings``; records requests; can inject failures and delays.
Every answer reports a ``usage`` of one prompt and one completion token (a
stream, in a last chunk, when asked with ``stream_options``); embeddings report
one prompt token per text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[list[dict[str, Any]], dict[str, Any]], str]
Embedder = Callable[[list[str]], list[list[float]]]


def echo_responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Answer with the last user message, prefixed by ``echo: ``."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return f"echo: {message.get('content', '')}"
    return "echo:"


def hash_embedding(text: str, dim: int = 64) -> list[float]:
    """A deterministic unit vector derived from SHA-256 of ``text``."""
    values: list[float] = []
    counter = 0
    while len(values) < dim:
        digest = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        values.extend((b - 127.5) / 127.5 for b in digest)
        counter += 1
    values = values[:dim]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def hash_embedder(dim: int = 64) -> Embedder:
    """An embedder returning :func:`hash_embedding` vectors of size ``dim``."""
    return lambda texts: [hash_embedding(t, dim) for t in texts]


def _split(text: str, pieces: int = 4) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


class FakeOpenAI:
    """An OpenAI-compatible server on ``127.0.0.1`` in a daemon thread.

    ``requests`` holds ``(path, body)`` for every request; ``calls`` counts
    them. ``fail_next(n, status)`` makes the next ``n`` requests fail;
    ``delay`` (seconds) is slept before each answer.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        embedder: Embedder | None = None,
        *,
        embedding_dim: int = 64,
        model: str = "fake-model",
    ) -> None:
        self.responder = responder or echo_responder
        self.embedder = embedder or hash_embedder(embedding_dim)
        self.model = model
        self.delay = 0.0
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._failures: list[int] = []
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def calls(self) -> int:
        """Number of requests received so far."""
        with self._lock:
            return len(self.requests)

    @property
    def base_url(self) -> str:
        """The ``/v1`` base URL to give an OpenAI client."""
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def fail_next(self, n: int, status: int = 500) -> None:
        """Make the next ``n`` requests return HTTP ``status`` with an error body."""
        with self._lock:
            self._failures.extend([status] * n)

    def reset_faults(self) -> None:
        """Forget pending failures and the delay."""
        with self._lock:
            self._failures.clear()
        self.delay = 0.0

    def start(self) -> FakeOpenAI:
        """Start serving; returns ``self``."""
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._server.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _record(self, path: str, body: dict[str, Any]) -> int | None:
        with self._lock:
            self.requests.append((path, body))
            return self._failures.pop(0) if self._failures else None

    def _wait(self) -> None:
        if self.delay > 0:
            self._stop.wait(self.delay)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        failure = self.fake._record(path, body)
        self.fake._wait()
        try:
            if failure is not None:
                self._error(failure, f"injected failure {failure}")
            elif path.endswith("/chat/completions"):
                self._chat(body)
            elif path.endswith("/embeddings"):
                self._embeddings(body)
            else:
                self._error(404, f"unknown path {path}")
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:
            self._error(500, f"{type(exc).__name__}: {exc}")

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        kind = "rate_limit_error" if status == 429 else "invalid_request_error"
        if status >= 500:
            kind = "server_error"
        self._json(status, {"error": {"message": message, "type": kind, "code": status}})

    def _chat(self, body: dict[str, Any]) -> None:
        text = self.fake.responder(list(body.get("messages", [])), body)
        model = body.get("model", self.fake.model)
        created = int(time.time())
        if not body.get("stream"):
            self._json(
                200,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        base = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
        }
        deltas: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant"}, None)]
        deltas += [({"content": piece}, None) for piece in _split(text)]
        deltas.append(({}, "stop"))
        for delta, finish in deltas:
            chunk = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            self.wfile.write(f"data: {json.dumps(dict(base, choices=[], usage=usage))}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _embeddings(self, body: dict[str, Any]) -> None:
        inputs = body.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else [str(t) for t in inputs]
        vectors = self.fake.embedder(texts)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, vector in enumerate(vectors):
            values: Any = list(vector)
            if as_base64:
                values = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
            data.append({"object": "embedding", "index": i, "embedding": values})
        self._json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model", self.fake.model),
                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
            },
        )
