"""``/health``, ``/auth-status``, ``/login``, ``/ui/customization`` and ``/`` (to the web UI)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.security import OAuth2PasswordRequestForm

from ..db.embedded import redact_dsn
from ..llm.openai_client import llm_configured
from ..query.param import QueryParam
from .auth import GUEST, USER, AuthFailure
from .deps import WORKSPACE_HEADER, Authenticated, ServerState, State, require_auth
from .runtime import WorkspaceRuntime
from .settings import ServerSettings
from .status import configuration, workspace_busy
from .validate import Key
from .version import API_VERSION, CORE_VERSION

router = APIRouter(tags=["service"])

NO_STORE = {"Cache-Control": "no-store"}


def _about(settings: ServerSettings) -> dict[str, Any]:
    return {
        "core_version": CORE_VERSION,
        "api_version": API_VERSION,
        "webui_title": settings.webui_title,
        "webui_description": settings.webui_description,
        "ai_content_notice_enabled": False,
    }


@router.get("/", include_in_schema=False)
async def root() -> RedirectResponse:
    return RedirectResponse(url="/webui/")


@router.get("/auth/verify", dependencies=[Depends(require_auth)])
async def verify() -> dict[str, str]:
    """200 when the request's credentials are accepted."""
    return {"status": "ok"}


@router.get("/auth-status")
async def auth_status(state: State) -> dict[str, Any]:
    """Whether login is required; a guest token when it is not."""
    if state.guard.accounts_configured:
        return {"auth_configured": True, "auth_mode": "enabled", **_about(state.settings)}
    token = state.guard.tokens.create("guest", GUEST, {"auth_mode": "disabled"})
    return {
        "auth_configured": False,
        "access_token": token,
        "token_type": "bearer",
        "auth_mode": "disabled",
        "message": "Authentication is disabled. Using guest access.",
        **_about(state.settings),
    }


@router.post("/login")
async def login(
    request: Request, state: State, form: Annotated[OAuth2PasswordRequestForm, Depends()]
) -> dict[str, Any]:
    """Exchange an account's user name and password (form fields) for a bearer token."""
    guard = state.guard
    if not guard.accounts_configured:
        return {
            "access_token": guard.tokens.create("guest", GUEST, {"auth_mode": "disabled"}),
            "token_type": "bearer",
            "auth_mode": "disabled",
            "message": "Authentication is disabled. Using guest access.",
            **_about(state.settings),
        }
    # the peer's address, or X-Forwarded-For's when the peer is a proxy in --forwarded-allow-ips
    client = request.client.host if request.client else "unknown"
    guard.limiter.check(client, form.username)
    if not guard.login(form.username, form.password):
        guard.limiter.failed(client, form.username)
        raise AuthFailure(401, "Incorrect credentials")
    guard.limiter.succeeded(form.username)
    return {
        "access_token": guard.tokens.create(form.username, USER, {"auth_mode": "enabled"}),
        "token_type": "bearer",
        "auth_mode": "enabled",
        **_about(state.settings),
    }


@router.get("/ui/customization")
async def ui_customization(
    state: State, locale: Annotated[Key, Query(description="BCP 47 locale (ignored)")] = ""
) -> JSONResponse:
    """The web UI's branding, in upstream's shape: ``WEBUI_TITLE`` and ``WEBUI_DESCRIPTION``;
    no customization bundle (``customized`` is false), so clients show their own texts."""
    brand = {"title": state.settings.webui_title, "description": state.settings.webui_description}
    return JSONResponse({"customized": False, "brand": brand}, headers=NO_STORE)


@router.get("/ui/customization/assets/{asset_hash}/{asset_id}")
async def ui_customization_asset(asset_hash: Key, asset_id: Key) -> JSONResponse:
    """No bundle, hence no asset: always 404, as upstream without one."""
    return JSONResponse({"detail": "Unknown asset"}, status_code=404)


@router.get("/health")
async def health(
    state: State,
    authenticated: Authenticated,
    lightrag_workspace: Annotated[str | None, Header(alias=WORKSPACE_HEADER)] = None,
) -> JSONResponse:
    """Liveness for anyone; configuration (upstream's keys with this server's values),
    pipeline state and database for authenticated callers.

    ``pipeline_busy`` and ``pipeline_active`` are the request's workspace's (true while
    it indexes, converts uploads, scans or deletes). 503 when the database does not answer.
    """
    registry = state.registry
    reachable = await registry.database_reachable()
    # only reported, never opened: a name that is no workspace is just not among the open ones
    name = (lightrag_workspace or "").strip() or state.settings.default_workspace
    opened: dict[str, WorkspaceRuntime] = {r.name: r for r in registry.opened()}
    runtime = opened.get(name)
    busy = workspace_busy(runtime) if runtime else False
    body: dict[str, Any] = {
        "status": "healthy" if reachable else "unhealthy",
        "auth_mode": "enabled" if state.guard.accounts_configured else "disabled",
        "webui_available": True,
        "workspace_available": False,
        "api_docs_available": True,
        "pipeline_busy": busy,
        "pipeline_active": busy,
        **_about(state.settings),
    }
    if authenticated:
        body.update(await _details(state, name, runtime, reachable))
    return JSONResponse(body, status_code=200 if reachable else 503)


def query_defaults() -> dict[str, Any]:
    """The retrieval defaults a query gets when it does not set them (the mode and the
    switches the web UI and ``/query`` offer)."""
    default = QueryParam()
    return {
        "mode": default.mode,
        "lexical": default.lexical,
        "bridge": default.uses_bridge(),
        "pagerank": default.pagerank,
        "top_k": default.top_k,
        "chunk_top_k": default.chunk_top_k,
    }


async def _details(
    state: ServerState, name: str, runtime: WorkspaceRuntime | None, reachable: bool
) -> dict[str, Any]:
    """What only authenticated callers see."""
    settings = state.settings
    registry = state.registry
    ours = {
        "request_workspace": name,
        "open_workspaces": sorted(r.name for r in registry.opened()),
        "workspaces": await registry.names() if reachable else [],
        "allow_create": settings.allow_create,
        "llm_configured": llm_configured(),
        "max_upload_bytes": settings.max_upload_bytes,
        "max_workspaces": settings.max_workspaces,
        "pool_size": settings.pool_size,
        "workspace_pool_size": settings.workspace_pool_size,
        "query_defaults": query_defaults(),
    }
    return {
        "database": {"reachable": reachable, "dsn": redact_dsn(registry.dsn)},
        "input_directory": str(settings.input_dir.resolve()),
        "configuration": {**configuration(settings, runtime, name), **ours},
        "server_mode": "uvicorn",
        "workers": 1,
        "pipeline": runtime.job.view() if runtime else None,
    }
