"""An HTTP server in LightRAG Server's shape, serving any workspace of one database per request.

``create_app()`` builds the ASGI application; ``lightrag-pg serve`` runs it with uvicorn.
Needs the ``[server]`` extra (FastAPI, uvicorn and the file converters).
"""

from __future__ import annotations

from .app import create_app
from .settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]
