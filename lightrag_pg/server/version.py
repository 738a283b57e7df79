"""Versions the server reports."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    CORE_VERSION = version("lightrag-pg")
except PackageNotFoundError:  # running from a source tree
    CORE_VERSION = "0.0.0"

API_VERSION = "1.5.7-pg"
"""LightRAG Server API whose routes and bodies this server follows, marked as this implementation."""
