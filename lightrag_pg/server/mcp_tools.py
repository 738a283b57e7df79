"""The MCP server's tools and resources (``lightrag-pg mcp`` over stdio, ``/mcp`` in ``serve``).

Each tool does what the REST route it mirrors does, by calling the same code
(:mod:`.query`, :mod:`.documents`, the facade) on a workspace of the server's
:class:`~.registry.WorkspaceRegistry`, and takes its arguments in the routes'
types (:mod:`.validate`), so the bounds and checks are the routes'. A bad
argument, or an error of the library, is an MCP tool error with the message;
the session goes on. The workspace is the ``workspace`` argument, else the
``LIGHTRAG-WORKSPACE`` header (HTTP), else the server's default.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, StringConstraints, ValidationError

from ..errors import GraphItemNotFound, InvalidInput, LightRAGError
from ..query.param import MAX_TOP_K, QueryMode, QueryParam
from ..store.pipeline_state import doc_status_dict
from ..store.subgraph import MAX_LIMIT
from .deps import ServerState, workspace_name
from .documents import (
    DeleteDocRequest,
    DocumentsRequest,
    InsertTextRequest,
    UpstreamStatus,
    delete_documents,
    ingest_upload,
    insert_texts_of,
    page_of,
    upload_name,
)
from .graph_cards import entity_card
from .query import answer
from .runtime import WorkspaceRuntime
from .validate import MAX_LIST_ITEMS, Bounded, Key, Name, Query, Text

P = ParamSpec("P")
T = TypeVar("T")
Lifespan = Callable[[MCPServer], AbstractAsyncContextManager[None]]

INSTRUCTIONS = (
    "A knowledge graph (entities, relations) built from a collection of documents, with the "
    "documents' text chunks. Ask `query` for an answer with references, or `retrieve` for the "
    "entities, relations and chunks to write the answer yourself. `search_entities` finds entity "
    "names, `entity` shows one with its sources and neighbours, `subgraph` the graph around it."
)

MAX_WAIT_SECONDS = 120
"""The longest ``document_status`` waits for documents to finish."""
POLL_SECONDS = 0.25
"""How often ``document_status`` looks again while it waits."""
FINISHED = frozenset({"processed", "failed"})

_DEFAULTS = QueryParam()

Workspace = Annotated[
    Key | None,
    Field(
        description="Workspace (a schema of the database) to use; default: the LIGHTRAG-WORKSPACE "
        "header, else the server's default workspace",
    ),
]
Question = Annotated[Query, Field(min_length=1, description="The question, in natural language")]
Mode = Annotated[
    QueryMode,
    Field(
        description="How to search: mix (graph and text chunks, the best default), local (entities "
        "named in the question), global (relations), hybrid (local and global), naive (text "
        "chunks only), bypass (the LLM alone, no retrieval)"
    ),
]
Bridge = Annotated[
    bool | None,
    Field(
        description="For questions whose answer is one hop away from what they name (multi-hop): "
        "follow the entities of the best passage to their other passages (mix mode); "
        "default: on unless lexical fusion is off"
    ),
]
TopK = Annotated[
    int, Bounded(1, MAX_TOP_K), Field(description="How many entities and relations the search keeps")
]
ChunkTopK = Annotated[
    int, Bounded(1, MAX_TOP_K), Field(description="How many text chunks the context keeps at most")
]
ResponseType = Annotated[
    Text,
    StringConstraints(min_length=1, max_length=200),
    Field(
        description="The form of the answer, e.g. 'Multiple Paragraphs', 'Single Paragraph', 'Bullet Points'"
    ),
]
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
READS = ToolAnnotations(read_only_hint=True)


def tool_errors(func: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """Report the library's errors and rejected values as tool errors with their message
    (anything else is the SDK's: an error naming the tool, logged with its traceback)."""

    @functools.wraps(func)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await func(*args, **kwargs)
        except ValidationError as exc:
            raise ToolError(_problems(exc)) from exc
        except LightRAGError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return run


def _problems(exc: ValidationError) -> str:
    """A validation error as one line per field, without the rejected value."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
        for e in exc.errors(include_url=False)
    )


class Tools:
    """The tools of one MCP server over the workspaces of ``state_of()``'s registry.

    ``state_of`` is called per call: over HTTP the state exists only once the app's
    lifespan has started. ``uploads`` offers ``upload_file`` (the HTTP server);
    ``read_only`` leaves out every tool that changes something.
    """

    def __init__(self, state_of: Callable[[], ServerState], *, read_only: bool, uploads: bool) -> None:
        self.state_of = state_of
        self.read_only = read_only
        self.uploads = uploads

    def server(self, lifespan: Lifespan | None = None) -> MCPServer:
        """The MCP server with the tools and resources (``lifespan``: entered when it starts)."""
        mcp: MCPServer = MCPServer(
            "lightrag_pg", instructions=INSTRUCTIONS, log_level="WARNING", lifespan=lifespan
        )
        reads: list[Callable[..., Awaitable[Any]]] = [
            self.query,
            self.retrieve,
            self.document_status,
            self.list_documents,
            self.search_entities,
            self.entity,
            self.subgraph,
            self.list_workspaces,
        ]
        for tool in reads:
            mcp.add_tool(tool_errors(tool), annotations=READS, structured_output=True)
        if not self.read_only:
            writes: list[Callable[..., Awaitable[Any]]] = [self.insert_text, self.delete_document]
            if self.uploads:
                writes.append(self.upload_file)
            for tool in writes:
                annotations = (
                    ToolAnnotations(read_only_hint=False, destructive_hint=True)
                    if tool == self.delete_document
                    else WRITES
                )
                mcp.add_tool(tool_errors(tool), annotations=annotations, structured_output=True)
        mcp.resource(
            "lightrag://{workspace}/documents/{doc_id}",
            name="document",
            description="The full text of a document, by workspace and document id",
            mime_type="text/plain",
        )(self.document_text)
        mcp.resource(
            "lightrag://{workspace}/entities/{name}",
            name="entity",
            description="An entity's card (type, description, sources, neighbours) as JSON, by "
            "workspace and entity name (URL-encoded)",
            mime_type="application/json",
        )(self.entity_resource)
        return mcp

    def _runtime(self, ctx: Context | None, workspace: str | None) -> Any:
        """``async with self._runtime(ctx, workspace) as runtime:`` the workspace in use."""
        state = self.state_of()
        headers = ctx.headers if ctx is not None else None
        header = headers.get("lightrag-workspace") if headers else None
        return state.registry.use(
            workspace_name(state, workspace if workspace and workspace.strip() else header)
        )

    async def query(
        self,
        ctx: Context,
        query: Question,
        mode: Mode = _DEFAULTS.mode,
        bridge: Bridge = _DEFAULTS.bridge,
        top_k: TopK = _DEFAULTS.top_k,
        response_type: ResponseType = _DEFAULTS.response_type,
        include_chunk_content: Annotated[
            bool, Field(description="Add the text of the cited chunks to each reference")
        ] = False,
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """Answer a question from the documents' knowledge graph and text: the answer
        (``response``) and the documents it draws on (``references``, numbered as cited)."""
        param = QueryParam(mode=mode, bridge=bridge, top_k=top_k, response_type=response_type)
        async with self._runtime(ctx, workspace) as runtime:
            return await answer(runtime.rag, _question(query), param, with_content=include_chunk_content)

    async def retrieve(
        self,
        ctx: Context,
        query: Question,
        mode: Mode = _DEFAULTS.mode,
        bridge: Bridge = _DEFAULTS.bridge,
        top_k: TopK = _DEFAULTS.top_k,
        chunk_top_k: ChunkTopK = _DEFAULTS.chunk_top_k,
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """Retrieve what answers a question, without writing the answer: ``entities``,
        ``relationships`` and text ``chunks`` (each with ``file_path`` and ``reference_id``),
        and ``references`` (the source documents). For agents that write the answer themselves."""
        param = QueryParam(mode=mode, bridge=bridge, top_k=top_k, chunk_top_k=chunk_top_k)
        async with self._runtime(ctx, workspace) as runtime:
            return await runtime.rag.aquery_data(_question(query), param)

    async def insert_text(
        self,
        ctx: Context,
        text: Annotated[Text, Field(min_length=1, description="The document's text")],
        file_path: Annotated[
            Key | None, Field(description="Where the text comes from (a file name or URL), cited in answers")
        ] = None,
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """Add a document; it is indexed in the background. Returns ``status`` (``success``,
        or ``duplicated`` when the workspace has the same text) and the ``track_id`` to pass
        to ``document_status``."""
        request = InsertTextRequest(text=text, file_source=file_path)
        async with self._runtime(ctx, workspace) as runtime:
            inserted = await insert_texts_of(runtime, [request.text], [request.file_source])
        return inserted.model_dump()

    async def upload_file(
        self,
        ctx: Context,
        file_name: Annotated[Key, Field(description="The file's name; its extension gives its type")],
        content_base64: Annotated[str, Field(description="The file's bytes, base64-encoded")],
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """Add a file (PDF, DOCX, PPTX, XLSX, HTML, Markdown, text, ...): it is saved in the
        workspace's input folder, converted to text and indexed in the background. Returns
        ``status`` and the ``track_id`` to pass to ``document_status``."""
        state = self.state_of()
        limit = state.settings.max_upload_bytes
        if len(content_base64) > (limit + 2) // 3 * 4:
            raise InvalidInput(f"the file exceeds the upload limit of {limit:,} bytes")
        try:
            data = base64.b64decode(content_base64, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise InvalidInput(f"content_base64 is not valid base64: {exc}") from None
        async with self._runtime(ctx, workspace) as runtime:
            name = upload_name(file_name, len(data), runtime, state)
            uploaded = await ingest_upload(runtime, state, name, data)
        return uploaded.model_dump()

    async def document_status(
        self,
        ctx: Context,
        track_id: Annotated[Key | None, Field(description="The track id an insert returned")] = None,
        doc_ids: Annotated[
            list[Key] | None,
            Field(max_length=MAX_LIST_ITEMS, description="Document ids (instead of a track id)"),
        ] = None,
        wait_seconds: Annotated[
            float,
            Bounded(0, MAX_WAIT_SECONDS),
            Field(description="Wait up to this long for the documents to be processed or failed"),
        ] = 0,
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """Where documents are in indexing (pending, processing, processed, failed with the
        error), by the track id of their insert or by id. ``finished`` is true once every
        one is processed or failed; ``wait_seconds`` waits for that."""
        if (track_id is None) == (doc_ids is None):
            raise InvalidInput("give either track_id or doc_ids")
        deadline = time.monotonic() + wait_seconds
        async with self._runtime(ctx, workspace) as runtime:
            while True:
                status = await _statuses(runtime, track_id, doc_ids)
                if status["finished"] or time.monotonic() >= deadline:
                    return status
                await asyncio.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))

    async def list_documents(
        self,
        ctx: Context,
        status: Annotated[UpstreamStatus | None, Field(description="Only documents in this status")] = None,
        page: Annotated[int, Bounded(1, 1_000_000), Field(description="Page number, from 1")] = 1,
        page_size: Annotated[int, Bounded(10, 200), Field(description="Documents per page")] = 50,
        sort_field: Literal["created_at", "updated_at", "id", "file_path"] = "updated_at",
        sort_direction: Literal["asc", "desc"] = "desc",
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """One page of the workspace's documents with their status, source and size, and
        the number of documents in each status."""
        request = DocumentsRequest(
            status_filter=status,
            page=page,
            page_size=page_size,
            sort_field=sort_field,
            sort_direction=sort_direction,
        )
        async with self._runtime(ctx, workspace) as runtime:
            return await page_of(runtime, request)

    async def delete_document(
        self,
        ctx: Context,
        doc_ids: Annotated[
            list[Key], Field(min_length=1, max_length=MAX_LIST_ITEMS, description="Document ids")
        ],
        delete_llm_cache: Annotated[
            bool, Field(description="Also forget the cached LLM answers of their chunks")
        ] = False,
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """Delete documents and everything derived only from them (chunks, entities and
        relations no other document supports), in one transaction. ``not_found`` lists
        unknown ids; ``still_present`` those whose deletion goes on in the background."""
        request = DeleteDocRequest(doc_ids=doc_ids, delete_llm_cache=delete_llm_cache)
        async with self._runtime(ctx, workspace) as runtime:
            found = {r.id for r in await runtime.rag.aget_doc_statuses(request.doc_ids)}
            result = await delete_documents(runtime, request)
            present = {r.id for r in await runtime.rag.aget_doc_statuses(sorted(found))} if found else set()
        return {
            **result,
            "not_found": [i for i in request.doc_ids if i not in found],
            "still_present": [i for i in request.doc_ids if i in present],
        }

    async def search_entities(
        self,
        ctx: Context,
        query: Annotated[Key, Field(min_length=1, description="A name or part of one")],
        limit: Annotated[int, Bounded(1, 100), Field(description="How many names at most")] = 20,
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """Entity names matching ``query``, best first: the whole name, a prefix, the start
        of a word, a substring, then near misses (case-insensitive, typos tolerated)."""
        async with self._runtime(ctx, workspace) as runtime:
            return {"entities": await runtime.rag.asearch_labels(query, limit)}

    async def entity(
        self,
        ctx: Context,
        name: Annotated[Name, Field(description="The entity's exact name (see search_entities)")],
        max_neighbours: Annotated[
            int, Bounded(1, 1000), Field(description="How many neighbours at most, most connected first")
        ] = 50,
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """An entity: its type, description, the documents and chunks it comes from, and its
        neighbours with the relation to each."""
        async with self._runtime(ctx, workspace) as runtime:
            return await entity_card(runtime.rag, name, max_neighbours)

    async def subgraph(
        self,
        ctx: Context,
        label: Annotated[
            Key, Field(min_length=1, description="The entity at the centre ('*': the whole graph)")
        ],
        max_depth: Annotated[int, Bounded(1, MAX_LIMIT), Field(description="Hops from the entity")] = 2,
        max_nodes: Annotated[
            int, Bounded(1, MAX_LIMIT), Field(description="Nodes at most, closest first")
        ] = 100,
        workspace: Workspace = None,
    ) -> dict[str, Any]:
        """The knowledge graph around an entity, as ``nodes`` (entities with their
        properties) and ``edges`` (relations); ``is_truncated`` when nodes were left out."""
        async with self._runtime(ctx, workspace) as runtime:
            graph = await runtime.rag.aget_knowledge_graph(label, max_depth, max_nodes)
        return graph.to_dict()

    async def list_workspaces(self) -> dict[str, Any]:
        """The workspaces of the database (each a separate collection of documents), and the
        one used when none is named."""
        state = self.state_of()
        return {"workspaces": await state.registry.names(), "default": state.settings.default_workspace}

    async def document_text(self, workspace: str, doc_id: str) -> str:
        """The full text of document ``doc_id``."""
        try:
            async with self._runtime(None, workspace) as runtime:
                found = await runtime.rag.aget_documents([doc_id])
        except LightRAGError as exc:
            raise ResourceError(f"{type(exc).__name__}: {exc}") from exc
        if not found:
            raise ResourceNotFoundError(f"no document {doc_id!r} in workspace {workspace!r}")
        return found[0].content

    async def entity_resource(self, workspace: str, name: str) -> dict[str, Any]:
        """The card of entity ``name`` (as the ``entity`` tool gives it)."""
        try:
            async with self._runtime(None, workspace) as runtime:
                return await entity_card(runtime.rag, name, 50)
        except GraphItemNotFound as exc:
            raise ResourceNotFoundError(str(exc)) from exc
        except LightRAGError as exc:
            raise ResourceError(f"{type(exc).__name__}: {exc}") from exc


def _question(query: str) -> str:
    if not query.strip():
        raise InvalidInput("query must not be empty or whitespace only")
    return query.strip()


async def _statuses(
    runtime: WorkspaceRuntime, track_id: str | None, doc_ids: list[str] | None
) -> dict[str, Any]:
    if track_id is not None:
        status = await runtime.rag.aget_docs_by_track_id(track_id.strip())
        documents = status["documents"]
    else:
        assert doc_ids is not None
        rows = await runtime.rag.aget_doc_statuses(doc_ids)
        documents = [doc_status_dict(r) for r in rows]
        known = {r.id for r in rows}
        summary: dict[str, int] = {}
        for row in rows:
            summary[row.status.value] = summary.get(row.status.value, 0) + 1
        status = {"documents": documents, "not_found": [i for i in doc_ids if i not in known]}
        status["status_summary"] = summary
    status["finished"] = bool(documents) and all(d["status"] in FINISHED for d in documents)
    return status
