"""``/health``, ``/auth-status``, ``/login`` and ``/`` (to the web UI)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.security import OAuth2PasswordRequestForm

from ..db.embedded import redact_dsn
from ..llm.openai_client import llm_configured
from .auth import GUEST, USER, AuthFailure
from .deps import WORKSPACE_HEADER, Authenticated, State, require_auth, workspace_name
from .version import API_VERSION, CORE_VERSION

router = APIRouter(tags=["service"])

TITLE = "lightrag_pg"
DESCRIPTION = "LightRAG over one PostgreSQL database"


def _about() -> dict[str, Any]:
    return {
        "core_version": CORE_VERSION,
        "api_version": API_VERSION,
        "webui_title": TITLE,
        "webui_description": DESCRIPTION,
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
        return {"auth_configured": True, "auth_mode": "enabled", **_about()}
    token = state.guard.tokens.create("guest", GUEST, {"auth_mode": "disabled"})
    return {
        "auth_configured": False,
        "access_token": token,
        "token_type": "bearer",
        "auth_mode": "disabled",
        "message": "Authentication is disabled. Using guest access.",
        **_about(),
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
            **_about(),
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
        **_about(),
    }


@router.get("/health")
async def health(
    state: State,
    authenticated: Authenticated,
    lightrag_workspace: Annotated[str | None, Header(alias=WORKSPACE_HEADER)] = None,
) -> JSONResponse:
    """Liveness for anyone; configuration, pipeline state and database for authenticated callers.

    503 when the database does not answer.
    """
    registry = state.registry
    reachable = await registry.database_reachable()
    busy = any(r.processing for r in registry.opened())
    body: dict[str, Any] = {
        "status": "healthy" if reachable else "unhealthy",
        "auth_mode": "enabled" if state.guard.accounts_configured else "disabled",
        "webui_available": True,
        "api_docs_available": True,
        "pipeline_busy": busy,
        **_about(),
    }
    if authenticated:
        settings = state.settings
        name = workspace_name(state, lightrag_workspace)
        opened = {r.name: r for r in registry.opened()}
        runtime = opened.get(name)
        rag = runtime.rag if runtime else None
        body.update(
            database={"reachable": reachable, "dsn": redact_dsn(registry.dsn)},
            input_directory=str(settings.input_dir.resolve()),
            configuration={
                "workspace": settings.default_workspace,
                "request_workspace": name,
                "open_workspaces": sorted(opened),
                "workspaces": await registry.names() if reachable else [],
                "allow_create": settings.allow_create,
                "llm_configured": llm_configured(),
                "llm_model": type(rag.llm_model_func).__name__ if rag and rag.llm_model_func else None,
                "embedding_model": rag.embedding_func.model_name if rag and rag.embedding_func else None,
                "max_upload_bytes": settings.max_upload_bytes,
                "max_workspaces": settings.max_workspaces,
                "pool_size": settings.pool_size,
                "workspace_pool_size": settings.workspace_pool_size,
            },
            pipeline=runtime.job.view() if runtime else None,
        )
    return JSONResponse(body, status_code=200 if reachable else 503)
