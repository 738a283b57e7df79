"""lightrag_pg: LightRAG with every storage role in one PostgreSQL database."""

from .config import Settings
from .errors import (
    ConfigurationError,
    DimensionMismatch,
    InvalidInput,
    InvalidWorkspaceName,
    LightRAGError,
    LLMError,
    StorageError,
    WorkspaceConflict,
)
from .llm.embedding_func import EmbeddingFunc
from .query.param import QueryParam
from .rag import LightRAG

__all__ = [
    "ConfigurationError",
    "DimensionMismatch",
    "EmbeddingFunc",
    "InvalidInput",
    "InvalidWorkspaceName",
    "LLMError",
    "LightRAG",
    "LightRAGError",
    "QueryParam",
    "Settings",
    "StorageError",
    "WorkspaceConflict",
]
