"""Exceptions raised by lightrag_pg.

Every error the library raises on purpose derives from :class:`LightRAGError`.
Driver errors (asyncpg) are translated at the storage boundary into
:class:`StorageError` subclasses so callers never need to import asyncpg.
"""

from __future__ import annotations


class LightRAGError(Exception):
    """Root of every error raised by lightrag_pg."""


class ConfigurationError(LightRAGError):
    """A setting is missing, malformed or inconsistent."""


class ModelFileMismatch(ConfigurationError):
    """An offline model file is not the one pinned by SHA-256 (lightrag_pg.offline.model_files)."""


class InvalidWorkspaceName(ConfigurationError):
    """A workspace name is not a safe, non-system SQL identifier."""


class WorkspaceNotFound(LightRAGError):
    """The workspace (schema) does not exist or is not a lightrag_pg workspace."""


class WorkspaceConflict(ConfigurationError):
    """A schema or AGE graph with the workspace's name exists and is not lightrag_pg's."""


class MissingPrivilege(ConfigurationError):
    """The database role lacks a privilege or an extension lightrag_pg needs (see docs/deploy-grants.md)."""


class DimensionMismatch(ConfigurationError):
    """The embedding dimension differs from the one recorded for the workspace."""

    def __init__(self, workspace: str, recorded: int, given: int) -> None:
        super().__init__(
            f"workspace {workspace!r} stores {recorded}-dimensional embeddings, "
            f"but the embedding function produces {given} dimensions (to move the workspace "
            "to another model, re-embed it: `lightrag-pg reembed`)"
        )
        self.workspace = workspace
        self.recorded = recorded
        self.given = given


class EmbeddingMismatch(ConfigurationError):
    """An imported LightRAG workspace was embedded with another model or dimension than the target."""


class SourceFormatError(LightRAGError):
    """An upstream LightRAG working directory or database holds what the importer cannot read."""


class InvalidInput(LightRAGError, ValueError):
    """A caller passed a document, id or parameter that cannot be processed."""


class QueryTooLong(InvalidInput):
    """A question is longer than ``max_query_chars``; nothing was searched."""


class DocumentNotFound(InvalidInput):
    """Documents named by id or file path are not in the workspace; nothing was changed."""


class GraphItemNotFound(InvalidInput):
    """An entity or relation named by a graph edit is not in the workspace; nothing was changed."""


class GraphItemExists(InvalidInput):
    """A graph edit would create an entity or relation that already exists; nothing was changed."""


class DocumentBusy(LightRAGError):
    """Another process is indexing documents that were to be deleted or replaced; nothing was changed."""


class ProvenanceMissing(LightRAGError):
    """Documents cannot be deleted exactly: rows they touch hold contributions merged
    before fragments were recorded (workspaces indexed before migration 0006)."""


class ReembedConflict(LightRAGError):
    """A re-embed cannot start or go on: another process runs one, or the one staged
    uses another embedding model; nothing was changed."""


class StorageError(LightRAGError):
    """The database refused or failed an operation."""


class ConnectionLost(StorageError):
    """The connection to PostgreSQL dropped in the middle of an operation."""


class ConnectFailed(StorageError):
    """No connection to PostgreSQL could be made (wrong DSN, server down, credentials refused)."""


class PoolExhausted(StorageError):
    """No pooled connection became free within ``pool_acquire_timeout`` seconds."""


class StatementTimeout(StorageError):
    """A statement ran longer than ``statement_timeout_ms`` and PostgreSQL cancelled it."""


class ConcurrentUpdate(StorageError):
    """A transaction was aborted by a serialization failure or deadlock; retry it."""


class ReferenceGone(StorageError):
    """A row refers to one that another transaction deleted (a foreign-key violation)."""


class LLMError(LightRAGError):
    """The language model or embedding endpoint failed after all retries."""


class LLMTimeout(LLMError):
    """A call to the language model or embedding endpoint timed out."""


class EmbeddingError(LLMError):
    """The embedding function returned vectors of the wrong shape or count."""


class ExtractionError(LightRAGError):
    """Entity and relation extraction failed for a chunk."""
