"""lightrag_pg: LightRAG with every storage role in one PostgreSQL database."""

from .config import Settings
from .errors import (
    ConfigurationError,
    DimensionMismatch,
    DocumentBusy,
    DocumentNotFound,
    InvalidInput,
    InvalidWorkspaceName,
    LightRAGError,
    LLMError,
    ProvenanceMissing,
    StorageError,
    WorkspaceConflict,
)
from .llm.embedding_func import EmbeddingFunc
from .query.param import QueryParam
from .rag import LightRAG

__all__ = [
    "ConfigurationError",
    "DimensionMismatch",
    "DocumentBusy",
    "DocumentNotFound",
    "EmbeddingFunc",
    "InvalidInput",
    "InvalidWorkspaceName",
    "LLMError",
    "LightRAG",
    "LightRAGError",
    "ProvenanceMissing",
    "QueryParam",
    "Settings",
    "StorageError",
    "WorkspaceConflict",
]
