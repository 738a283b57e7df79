"""FastAPI dependencies shared by the routers: the server state, credentials, the workspace."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Header, Request, Security
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, OAuth2PasswordBearer

from ..db.identifiers import WorkspaceName
from .auth import AuthFailure, Guard
from .convert import Converter
from .registry import WorkspaceRegistry
from .runtime import WorkspaceRuntime
from .scans import ScanJobs
from .settings import ServerSettings

WORKSPACE_HEADER = "LIGHTRAG-WORKSPACE"

api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="API key")
bearer = OAuth2PasswordBearer(tokenUrl="login", auto_error=False, description="Token from /login")


@dataclass
class ServerState:
    """What every request can reach: settings, credentials check, open workspaces, the
    file converter they share and the records of recent scans."""

    settings: ServerSettings
    guard: Guard
    registry: WorkspaceRegistry
    started_at: float = field(default_factory=time.time)
    converter: Converter = field(init=False)
    scans: ScanJobs = field(default_factory=ScanJobs)

    def __post_init__(self) -> None:
        self.converter = Converter(self.settings.conversion)


def server_state(request: Request) -> ServerState:
    state: ServerState = request.app.state.server
    return state


State = Annotated[ServerState, Depends(server_state)]


async def require_auth(
    request: Request,
    state: State,
    token: Annotated[str | None, Security(bearer)] = None,
    api_key: Annotated[str | None, Security(api_key_header)] = None,
) -> None:
    """Let the request through, or raise :class:`~.auth.AuthFailure` (401/403)."""
    if state.guard.whitelisted(request.url.path):
        return
    state.guard.check(token, api_key)


async def check_credentials(request: Request, state: ServerState) -> None:
    """:func:`require_auth` for a request that routes no dependencies (a mounted ASGI app)."""
    await require_auth(request, state, await bearer(request), await api_key_header(request))


def refusal(exc: AuthFailure) -> JSONResponse:
    """The answer to a request refused by :class:`~.auth.Guard`."""
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=headers)


def authenticated(
    state: State,
    token: Annotated[str | None, Security(bearer)] = None,
    api_key: Annotated[str | None, Security(api_key_header)] = None,
) -> bool:
    """Whether the request carries enough credentials (never raises)."""
    return state.guard.authenticated(token, api_key)


def workspace_name(state: ServerState, header: str | None) -> WorkspaceName:
    """The header's workspace, or the server's default when it is absent or blank: where the
    server checks the workspace names of requests (:class:`InvalidWorkspaceName`: 400)."""
    return WorkspaceName(header.strip()) if header and header.strip() else state.settings.default_workspace


async def current_workspace(
    state: State,
    lightrag_workspace: Annotated[
        str | None,
        Header(
            alias=WORKSPACE_HEADER, description="Workspace (schema) to use; the server's default if absent"
        ),
    ] = None,
) -> AsyncIterator[WorkspaceRuntime]:
    """The request's workspace, kept open until the response is sent."""
    async with state.registry.use(workspace_name(state, lightrag_workspace)) as runtime:
        yield runtime


Workspace = Annotated[WorkspaceRuntime, Depends(current_workspace)]


async def resume_unfinished(runtime: Workspace) -> None:
    """Resume the documents an earlier run of the server left unfinished in the request's
    workspace (once per opening; see :meth:`WorkspaceRuntime.resume`)."""
    runtime.resume()


Authenticated = Annotated[bool, Depends(authenticated)]
