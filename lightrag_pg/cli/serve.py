"""``lightrag-pg serve``: the HTTP server (LightRAG Server's routes), with uvicorn."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from ..server.settings import ServerSettings

WARNING = """\
{bar}
WARNING: lightrag-pg serve listens on {host}, beyond this machine, with no API key
and no accounts: anyone who can reach port {port} can read and change every workspace.
Set --api-key (or $LIGHTRAG_API_KEY), or AUTH_ACCOUNTS and TOKEN_SECRET, or bind to 127.0.0.1.
{bar}"""


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        parents=parents,
        help="serve the LightRAG Server API over HTTP (needs the [server] extra)",
        description="Serve LightRAG Server's REST and Ollama APIs, and MCP at /mcp (with the [mcp] extra). "
        "Each request picks its workspace with "
        "the LIGHTRAG-WORKSPACE header (default: --workspace). Flags override the environment "
        "(HOST, PORT, LIGHTRAG_API_KEY, CORS_ORIGINS, INPUT_DIR, MAX_UPLOAD_SIZE, "
        "LIGHTRAG_PG_POOL_SIZE, LIGHTRAG_PG_WORKSPACE_POOL_SIZE, LIGHTRAG_PG_SHUTDOWN_TIMEOUT, "
        "AUTH_ACCOUNTS, TOKEN_SECRET, FORWARDED_ALLOW_IPS).",
    )
    p.add_argument("--host", help="address to bind (default: $HOST, else 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default: $PORT, else 9621)")
    p.add_argument("--api-key", help="require this key in X-API-Key (default: $LIGHTRAG_API_KEY)")
    p.add_argument("--cors-origins", help="comma-separated allowed origins (default: $CORS_ORIGINS)")
    p.add_argument("--input-dir", help="folder for uploads, one subfolder per workspace (default: ./inputs)")
    p.add_argument("--max-upload-size", type=int, help="largest upload in bytes (default: 100 MiB)")
    p.add_argument(
        "--pool-size", type=int, help="database connections shared by all workspaces (default: 16)"
    )
    p.add_argument(
        "--workspace-pool-size",
        type=int,
        help="most connections one workspace may hold, below --pool-size (default: 8)",
    )
    p.add_argument(
        "--forwarded-allow-ips",
        help="comma-separated proxy addresses or networks whose X-Forwarded-For/-Proto headers are "
        "trusted ('*': any); none by default (default: $FORWARDED_ALLOW_IPS)",
    )
    p.add_argument(
        "--allow-create", action="store_true", default=None, help="create unknown workspaces instead of a 404"
    )
    p.add_argument(
        "--mcp-read-only",
        action="store_true",
        default=None,
        help="/mcp offers only the tools that change nothing (default: $LIGHTRAG_MCP_READ_ONLY)",
    )
    p.add_argument(
        "--shutdown-timeout",
        type=float,
        help="seconds a stop (SIGTERM, Ctrl-C) may take; the document in flight is resumed at the "
        "next start (default: 10)",
    )
    p.add_argument(
        "--no-access-log", action="store_true", help="do not log each request (method, path, status)"
    )
    p.set_defaults(run=run)


def settings_from(args: argparse.Namespace) -> ServerSettings:
    """The server settings: flags over the environment."""
    from ..server.settings import ServerSettings

    cors = getattr(args, "cors_origins", None)
    proxies = getattr(args, "forwarded_allow_ips", None)
    return ServerSettings.from_env(
        host=args.host,
        port=args.port,
        dsn=args.dsn,
        default_workspace=args.workspace,
        api_key=args.api_key,
        cors_origins=tuple(o.strip() for o in cors.split(",") if o.strip()) if cors else None,
        input_dir=args.input_dir,
        max_upload_bytes=args.max_upload_size,
        pool_size=args.pool_size,
        workspace_pool_size=args.workspace_pool_size,
        allow_create=args.allow_create,
        forwarded_allow_ips=tuple(p.strip() for p in proxies.split(",") if p.strip()) if proxies else None,
        shutdown_timeout=getattr(args, "shutdown_timeout", None),
        mcp_read_only=getattr(args, "mcp_read_only", None),
    )


def exposure_warning(settings: ServerSettings) -> str | None:
    """The warning to print when the server is reachable from elsewhere by anyone, or when
    credentials are set but ``WHITELIST_PATHS`` opens routes of the knowledge base (the app
    logs that one too, at WARNING, which the command line shows only with -v)."""
    if settings.exposed and settings.unprotected:
        return WARNING.format(bar="!" * 78, host=settings.host, port=settings.port)
    return settings.open_paths_warning()


async def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from ..server import create_app
    except ImportError as exc:
        raise ConfigurationError(
            f"the server needs the [server] extra: pip install 'lightrag-pg[server]' ({exc.name} is missing)"
        ) from None
    settings = settings_from(args)
    warning = exposure_warning(settings)
    if warning:
        print(warning, file=sys.stderr)
    print(
        f"serving http://{settings.host}:{settings.port} (default workspace {settings.default_workspace!r}; "
        f"API docs at /docs; Ctrl-C stops)",
        file=sys.stderr,
    )
    config = uvicorn.Config(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level="info" if args.verbose or args.debug else "warning",
        timeout_graceful_shutdown=settings.shutdown_timeout * REQUEST_SHARE,  # type: ignore[arg-type]
        # proxy headers only from the proxies listed (uvicorn would trust 127.0.0.1 by default)
        proxy_headers=bool(settings.forwarded_allow_ips),
        forwarded_allow_ips=list(settings.forwarded_allow_ips),
    )
    if not args.no_access_log:  # one line per request, whatever the other logs' level
        logging.getLogger("uvicorn.access").setLevel(logging.INFO)
    server = _bounded_stop_server(uvicorn.Server, settings.shutdown_timeout)(config)
    await server.serve()
    print("stopped; unfinished documents are resumed at the next start", file=sys.stderr)
    server.deadline.shorten(EXIT_GRACE)
    return 0


REQUEST_SHARE = 0.4
"""Of ``shutdown_timeout``, what requests in flight get to finish once the port is closed."""

EXIT_GRACE = 1.0
"""Seconds the process waits, once stopped, for worker threads still finishing the chunk
they were on (their result is no longer wanted) before it exits without them."""


class _Deadline:
    """Ends the process with ``os._exit`` when the time is up, unless it has ended by then.

    A worker thread in a spaCy or ONNX call cannot be interrupted, and the
    interpreter waits for such threads at exit (``asyncio.run`` joins its
    executor); this bounds that wait. By then the port is closed, the document
    locks released (their connection closed) and the pools closed, or, if the
    stop itself is stuck, PostgreSQL releases the locks when the process ends.
    """

    def __init__(self) -> None:
        self._ends: float | None = None
        self._timer: threading.Timer | None = None

    def arm(self, seconds: float) -> None:
        """End the process in ``seconds`` (only the first call counts)."""
        if self._ends is None:
            self._start(seconds)

    def shorten(self, seconds: float) -> None:
        """End the process in ``seconds`` if that is sooner (a no-op when not armed)."""
        if self._ends is not None and time.monotonic() + seconds < self._ends:
            self._start(seconds)

    def _start(self, seconds: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._ends = time.monotonic() + seconds
        self._timer = threading.Timer(seconds, _force_exit)
        self._timer.daemon = True
        self._timer.start()


def _force_exit() -> None:
    print("exiting without the worker threads still busy", file=sys.stderr, flush=True)
    logging.shutdown()
    os._exit(0)


def _bounded_stop_server(base: type, timeout: float) -> type:
    """uvicorn's Server, stopping on SIGINT/SIGTERM within ``timeout`` seconds and exiting normally.

    The first signal closes the port and starts the graceful stop (requests in
    flight get :data:`REQUEST_SHARE` of ``timeout``, then the lifespan cancels
    background work, releases the document locks and closes the pools), and
    arms a :class:`_Deadline` of ``timeout`` seconds. The handlers are plain
    signal handlers, so the deadline is armed even while the event loop is busy.
    uvicorn re-raises the signal after its graceful shutdown, which would end
    the process with "killed by SIGTERM"; a requested stop is a normal exit.
    """

    class Server(base):  # type: ignore[misc,valid-type]
        def __init__(self, config: object) -> None:
            super().__init__(config)
            self.deadline = _Deadline()

        def _stop(self, sig: int, frame: FrameType | None) -> None:
            self.deadline.arm(timeout)
            self.handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            stops = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self._stop) for sig in stops}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server
