"""The FastAPI application: lifespan, error mapping, CORS and the routers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, nullcontext
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.routing import Route

from .. import errors
from ..config import Settings
from ..db.embedded import resolve_dsn
from ..db.pool import SharedPool
from ..defaults import default_embedding, default_llm
from ..llm.embedding_func import EmbeddingFunc
from ..llm.wrap import LLMFunc
from ..rag import LightRAG
from . import documents, graph, metrics, ollama, query, recovery, service
from .auth import AuthFailure, Guard, LoginThrottled
from .deps import ServerState, refusal, require_auth, resume_unfinished
from .disconnect import CancelOnDisconnect
from .files import NameConflict, Throttled, TooLarge
from .limits import BodyLimit
from .registry import RagFactory, ServerBusy, WorkspaceRegistry
from .settings import ServerSettings
from .validate import refused
from .version import API_VERSION

log = logging.getLogger(__name__)

WEBUI = Path(__file__).parent / "static" / "webui"
"""The built web UI (sources in the repository's ``webui/``), served at ``/webui``."""

BODY_OVERHEAD = 64 * 1024
"""Room for multipart headers around an upload of the largest allowed size."""

CANCELLED_ON_DISCONNECT = ("/query", "/query/data", "/query/stream", "/api/chat", "/api/generate")
"""Routes whose work stops when the client disconnects (a question only reads)."""

# most specific first; FastAPI picks the handler of the nearest class in the MRO
STATUS_OF: dict[type[Exception], int] = {
    errors.QueryTooLong: 413,
    errors.StatementTimeout: 504,
    NameConflict: 409,
    TooLarge: 413,
    errors.DocumentNotFound: 404,
    errors.DocumentBusy: 409,
    errors.ProvenanceMissing: 409,
    errors.GraphItemNotFound: 404,
    errors.GraphItemExists: 409,
    errors.InvalidWorkspaceName: 400,
    errors.InvalidInput: 400,
    errors.WorkspaceNotFound: 404,
    errors.WorkspaceConflict: 409,
    Throttled: 429,
    ServerBusy: 503,
    errors.PoolExhausted: 503,
    errors.ConnectFailed: 503,
    errors.ConnectionLost: 503,
    errors.ConcurrentUpdate: 503,
    errors.LLMError: 502,
    errors.LightRAGError: 500,
}


def environment_factory() -> RagFactory:
    """LightRAGs with the LLM and embeddings of the environment, shared by every workspace."""
    shared: dict[str, Any] = {}

    def factory(workspace: str, pool: SharedPool) -> LightRAG:
        if "embedding" not in shared:
            library = Settings()
            embedding: EmbeddingFunc = default_embedding(library)
            llm: LLMFunc | None = default_llm(library)
            shared.update(embedding=embedding, llm=llm)
        return LightRAG(
            workspace=workspace,
            llm_model_func=shared["llm"],
            embedding_func=shared["embedding"],
            pool=pool,
        )

    return factory


def _error_handler(status: int) -> Any:
    async def handle(request: Request, exc: Exception) -> JSONResponse:
        if status >= 500:
            log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
        return JSONResponse({"detail": str(exc)}, status_code=status)

    return handle


async def _auth_failure(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AuthFailure)
    return refusal(exc)


async def _login_throttled(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, LoginThrottled)
    return JSONResponse({"detail": str(exc)}, status_code=429, headers={"Retry-After": str(exc.retry_after)})


def create_app(settings: ServerSettings | None = None, factory: RagFactory | None = None) -> FastAPI:
    """The ASGI application; the database and workspaces open in its lifespan.

    ``factory(workspace, pool)`` builds each workspace's LightRAG on the
    server's shared pool (default: the LLM and embeddings configured in the
    environment).
    """
    settings = settings or ServerSettings.from_env()
    make_rag = factory or environment_factory()
    body_limit = settings.max_upload_bytes + BODY_OVERHEAD
    mcp = _mcp_endpoint(settings, lambda: app.state.server, body_limit)
    opened = settings.open_paths_warning()
    if opened:
        log.warning(opened)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        dsn = await asyncio.to_thread(resolve_dsn, settings.dsn)
        registry = WorkspaceRegistry(settings, dsn, make_rag)
        app.state.server = ServerState(settings=settings, guard=Guard(settings), registry=registry)
        try:
            await registry.start()
            async with mcp.running() if mcp else nullcontext():
                yield
        finally:
            await registry.close()

    # /docs and /redoc with Swagger UI and ReDoc served from the package, not a CDN
    app = FastAPIOffline(
        title="lightrag_pg",
        description="LightRAG Server's API over one PostgreSQL database; a workspace per request "
        "(header LIGHTRAG-WORKSPACE).",
        version=API_VERSION,
        lifespan=lifespan,
    )
    for kind, status in STATUS_OF.items():
        app.add_exception_handler(kind, _error_handler(status))
    app.add_exception_handler(AuthFailure, _auth_failure)
    app.add_exception_handler(LoginThrottled, _login_throttled)
    app.add_exception_handler(RequestValidationError, refused)
    app.add_middleware(BodyLimit, limit=body_limit)
    app.add_middleware(CancelOnDisconnect, paths=CANCELLED_ON_DISCONNECT)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_credentials="*" not in settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
        )
    app.add_middleware(metrics.RequestMetrics)  # outermost: every request, refused ones too
    protected = [Depends(require_auth)]
    app.include_router(documents.router, dependencies=[*protected, Depends(resume_unfinished)])
    app.include_router(recovery.router, dependencies=protected)
    app.include_router(query.router, dependencies=protected)
    app.include_router(graph.router, dependencies=protected)
    app.include_router(ollama.router, prefix="/api", dependencies=protected)
    app.include_router(service.router)
    app.include_router(metrics.router, dependencies=protected)
    if mcp:
        app.router.routes.append(Route(mcp.path, mcp, name="mcp"))
    app.mount("/webui", StaticFiles(directory=WEBUI, html=True), name="webui")
    return app


def _mcp_endpoint(settings: ServerSettings, state_of: Callable[[], ServerState], body_limit: int) -> Any:
    """The ``/mcp`` endpoint, or ``None`` without the ``[mcp]`` extra (the REST routes are served anyway)."""
    try:
        from .mcp_http import MCPEndpoint
    except ImportError as exc:
        log.info("no /mcp endpoint: the [mcp] extra is not installed (%s is missing)", exc.name)
        return None
    return MCPEndpoint(settings, state_of, body_limit)
