"""lightrag_pg: LightRAG with every storage role in one PostgreSQL database.

The public names are loaded on first access (PEP 562), so importing the
package, or running ``lightrag-pg --help``, does not pay for the LLM client,
the migrations or numpy until they are used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    ConfigurationError,
    DimensionMismatch,
    DocumentBusy,
    DocumentNotFound,
    GraphItemExists,
    GraphItemNotFound,
    InvalidInput,
    InvalidWorkspaceName,
    LightRAGError,
    LLMError,
    ProvenanceMissing,
    ReembedConflict,
    StorageError,
    WorkspaceConflict,
)

if TYPE_CHECKING:
    from .config import Settings
    from .llm.embedding_func import EmbeddingFunc
    from .query.param import QueryParam
    from .rag import LightRAG

_LAZY = {
    "EmbeddingFunc": ".llm.embedding_func",
    "LightRAG": ".rag",
    "QueryParam": ".query.param",
    "Settings": ".config",
}
"""Public names loaded on first access, and the module that defines each."""

__all__ = [
    "ConfigurationError",
    "DimensionMismatch",
    "DocumentBusy",
    "DocumentNotFound",
    "EmbeddingFunc",
    "GraphItemExists",
    "GraphItemNotFound",
    "InvalidInput",
    "InvalidWorkspaceName",
    "LLMError",
    "LightRAG",
    "LightRAGError",
    "ProvenanceMissing",
    "QueryParam",
    "ReembedConflict",
    "Settings",
    "StorageError",
    "WorkspaceConflict",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
