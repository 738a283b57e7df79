"""What ``/health`` and ``/documents/pipeline_status`` report: upstream 1.5.7's keys, this
server's real values.

Upstream names the storage class of each role (``PGKVStorage``, ...); here one
PostgreSQL schema holds all four roles, so each key names what holds it in this
design, never an upstream class that does not run here.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..config import Settings
from ..llm.openai_client import OpenAIChat, OpenAIEmbedding
from ..offline.minilm import LocalMiniLM
from ..rag import LightRAG
from ..store.subgraph import MAX_LIMIT
from .runtime import WorkspaceRuntime
from .settings import ServerSettings

OPENAI_API = "https://api.openai.com/v1"
"""Where the OpenAI client sends requests when no base URL is configured."""

KV_STORAGE = "PostgreSQL tables (lightrag_pg)"
DOC_STATUS_STORAGE = "PostgreSQL doc_status table (lightrag_pg)"
VECTOR_STORAGE = "PostgreSQL pgvector (lightrag_pg)"
GRAPH_STORAGE = "PostgreSQL tables (lightrag_pg)"
GRAPH_STORAGE_MIRRORED = "PostgreSQL tables + Apache AGE mirror (lightrag_pg)"


def workspace_busy(runtime: WorkspaceRuntime) -> bool:
    """Whether the workspace has background work in flight: indexing, or uploads being
    converted, a scan, a delete (what upstream's clients wait on before refreshing)."""
    return runtime.processing or runtime.pending_tasks > 0


def _host(url: str | None) -> str | None:
    """``url`` without any user name or password in it."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _llm(rag: LightRAG | None) -> tuple[str, str | None, str | None]:
    """Binding, host and model of the workspace's chat model."""
    func = rag.llm_model_func if rag else None
    if func is None:
        return "none", None, None
    if isinstance(func, OpenAIChat):
        return "openai", _host(func.base_url) or OPENAI_API, func.model
    return "custom", None, getattr(func, "__name__", type(func).__name__)


def _embedding(rag: LightRAG | None) -> tuple[str, str | None, str | None]:
    """Binding, host and model of the workspace's embedding function."""
    embedding = rag.embedding_func if rag else None
    if embedding is None:
        return "none", None, None
    func = embedding.func
    if isinstance(func, OpenAIEmbedding):
        return "openai", _host(func.base_url) or OPENAI_API, embedding.model_name
    if isinstance(func, LocalMiniLM):
        return "local", None, embedding.model_name
    return "custom", None, embedding.model_name


def configuration(
    settings: ServerSettings, runtime: WorkspaceRuntime | None, workspace: str
) -> dict[str, Any]:
    """``/health``'s ``configuration`` in upstream's keys, for the request's ``workspace``
    (its LightRAG when open; library defaults otherwise)."""
    rag = runtime.rag if runtime else None
    llm_binding, llm_host, llm_model = _llm(rag)
    embed_binding, embed_host, embed_model = _embedding(rag)
    mirrored = bool(rag and rag.info and rag.info.graph_enabled)
    library = rag.settings if rag else Settings()

    def setting(name: str) -> Any:
        return getattr(library, name)

    return {
        "llm_binding": llm_binding,
        "llm_binding_host": llm_host,
        "llm_model": llm_model,
        "embedding_binding": embed_binding,
        "embedding_binding_host": embed_host,
        "embedding_model": embed_model,
        "summary_max_tokens": setting("summary_max_tokens"),
        "summary_context_size": setting("summary_context_size"),
        "kv_storage": KV_STORAGE,
        "doc_status_storage": DOC_STATUS_STORAGE,
        "graph_storage": GRAPH_STORAGE_MIRRORED if mirrored else GRAPH_STORAGE,
        "vector_storage": VECTOR_STORAGE,
        "enable_llm_cache_for_extract": setting("enable_llm_cache"),
        "enable_llm_cache": setting("enable_llm_cache"),
        "vlm_process_enable": False,
        "workspace": settings.default_workspace,
        "whitelist_paths": list(settings.whitelist_paths),
        "storage_workspaces": {
            role: workspace
            for role in ("kv_storage", "doc_status_storage", "graph_storage", "vector_storage")
        },
        "max_graph_nodes": MAX_LIMIT,
        "enable_rerank": bool(rag and rag.rerank_model_func),
        "rerank_binding": "custom" if rag and rag.rerank_model_func else None,
        "rerank_model": None,
        "rerank_binding_host": None,
        "rerank_max_async": None,
        "rerank_timeout": None,
        "summary_language": setting("summary_language"),
        "force_llm_summary_on_merge": setting("force_llm_summary_on_merge"),
        "max_parallel_insert": setting("max_parallel_insert"),
        "cosine_threshold": setting("cosine_threshold"),
        "min_rerank_score": None,
        "related_chunk_number": setting("related_chunk_number"),
        "max_async": setting("llm_max_async"),
        "llm_timeout": setting("llm_timeout"),
        "embedding_func_max_async": setting("embedding_max_async"),
        "embedding_batch_num": setting("embedding_batch_num"),
        "embedding_timeout": setting("embedding_timeout"),
        "role_llm_config": {},
        "parser_routing": None,
        "mineru": None,
        "docling": None,
    }
