"""``/documents/*``: uploads, text inserts, scans, status, paging, retries, deletes, clearing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, File, HTTPException, Query, UploadFile
from pydantic import BaseModel, Field, field_validator

from ..errors import DocumentBusy, InvalidInput, LightRAGError, ReembedConflict
from ..results import InsertResult, new_track_id
from ..types import UNKNOWN_SOURCE
from .convert import SUPPORTED_EXTENSIONS, supported
from .deps import ServerState, State, Workspace
from .files import NameConflict, Throttled, TooLarge, safe_name
from .intake import ingest_files, ingest_folder
from .runtime import WorkspaceRuntime
from .scans import ScanJob
from .status import workspace_busy
from .validate import MAX_LIST_ITEMS, Bounded, FilePath, Key, Text

router = APIRouter(prefix="/documents", tags=["documents"])

UpstreamStatus = Literal[
    "pending", "parsing", "analyzing", "processing", "preprocessed", "processed", "failed"
]

IN_FLIGHT = {"parsing": "processing", "analyzing": "processing", "preprocessed": "processing"}
"""Upstream's stages of a document being processed; here they are all ``processing``."""

DELETE_WAIT = 600.0
"""Seconds a background delete waits for documents being indexed to finish."""

DELETE_ANSWER_WAIT = 5.0
"""Seconds ``/documents/delete_document`` waits for its delete before answering: clients
that list the documents right after the answer (upstream's WebUI does) see them gone."""

MAX_PAGE = 1_000_000
"""The last page ``/documents/paginated`` may be asked for."""


class InsertTextRequest(BaseModel):
    text: Text = Field(min_length=1, description="The text to insert")
    file_source: FilePath | None = Field(default=None, description="Source (file name) of the text")

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("text must not be empty or whitespace only")
        return text


class InsertTextsRequest(BaseModel):
    texts: list[Text] = Field(min_length=1, description="The texts to insert")
    file_sources: list[FilePath] | None = Field(default=None, description="One source per text")

    @field_validator("texts")
    @classmethod
    def _not_blank(cls, texts: list[str]) -> list[str]:
        if any(not t.strip() for t in texts):
            raise ValueError("texts must not contain empty or whitespace-only items")
        return texts


class InsertResponse(BaseModel):
    """Upstream's answer to an insert; ``duplicated`` when the workspace already has the
    content (the message names that document, ``track_id`` is its track)."""

    status: Literal["success", "duplicated", "partial_success", "failure"]
    message: str
    track_id: str


class ScanResponse(BaseModel):
    status: Literal["scanning_started", "scanning_skipped_pipeline_busy"]
    message: str | None = None
    track_id: str


class ClearResponse(BaseModel):
    """Upstream's answer to ``DELETE /documents``: ``busy`` when refused (nothing changed)."""

    status: Literal["success", "partial_success", "busy", "fail"]
    message: str


class DocumentsRequest(BaseModel):
    status_filter: UpstreamStatus | None = None
    status_filters: list[UpstreamStatus] | None = None
    page: Annotated[int, Bounded(1, MAX_PAGE)] = 1
    page_size: Annotated[int, Bounded(10, 200)] = 50
    sort_field: Literal["created_at", "updated_at", "id", "file_path"] = "updated_at"
    sort_direction: Literal["asc", "desc"] = "desc"


class DeleteDocRequest(BaseModel):
    doc_ids: list[Key] = Field(min_length=1, max_length=MAX_LIST_ITEMS)
    delete_file: bool = False
    delete_llm_cache: bool = False

    @field_validator("doc_ids")
    @classmethod
    def _clean(cls, ids: list[str]) -> list[str]:
        cleaned = [i.strip() for i in ids]
        if any(not i for i in cleaned):
            raise ValueError("Document ID cannot be empty")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("Document IDs must be unique")
        return cleaned


async def _duplicated(runtime: WorkspaceRuntime, doc_ids: list[str], what: str) -> InsertResponse:
    """The answer when the workspace already has the content: which documents, and their track."""
    rows = await runtime.rag.aget_doc_statuses(list(dict.fromkeys(doc_ids)))
    found = ", ".join(f"{r.id} ('{r.file_path}', {r.status.value})" for r in rows)
    tracks = {r.track_id or "" for r in rows}
    return InsertResponse(
        status="duplicated",
        message=f"{what} already in document storage as {found or ', '.join(doc_ids)}; nothing was added",
        track_id=tracks.pop() if len(tracks) == 1 else "",
    )


async def _insert_response(runtime: WorkspaceRuntime, result: InsertResult) -> InsertResponse:
    known = [*result.skipped_ids, *(d.duplicate_of for d in result.duplicates)]
    if not result.new_ids:
        what = "The same content is" if len(known) == 1 else "Every text is"
        return await _duplicated(runtime, known, what)
    runtime.kick("indexing texts")
    if known:
        return InsertResponse(
            status="partial_success",
            message=f"{len(result.new_ids)} text(s) received, {len(known)} already present "
            f"({', '.join(dict.fromkeys(known))}). Processing will continue in background.",
            track_id=result.track_id,
        )
    return InsertResponse(
        status="success",
        message="Text successfully received. Processing will continue in background.",
        track_id=result.track_id,
    )


def upload_name(name: str | None, size: int | None, runtime: WorkspaceRuntime, state: ServerState) -> str:
    """The name an upload is saved under, once its name, type, size (when known) and the
    workspace's queue of conversions allow it; else the error saying which does not."""
    name = safe_name(name)
    if not supported(name):
        raise InvalidInput(f"Unsupported file type. Supported types: {', '.join(SUPPORTED_EXTENSIONS)}")
    limit = state.settings.max_upload_bytes
    if size is not None and size > limit:
        raise TooLarge(f"file of {size:,} bytes exceeds the upload limit of {limit:,}")
    if runtime.pending_tasks >= state.settings.max_pending_uploads:
        raise Throttled(f"{runtime.pending_tasks} uploads are still being converted; retry later")
    return name


@router.post("/upload", response_model=InsertResponse)
async def upload(runtime: Workspace, state: State, file: Annotated[UploadFile, File()]) -> InsertResponse:
    """Save a file in the workspace's input folder, convert it and index it in the background.

    Answers once the file is converted: ``success``, ``duplicated`` (the workspace already
    has its content; the file is not kept) or ``failure`` (unreadable: a failed document).
    """
    name = upload_name(file.filename, file.size, runtime, state)
    return await ingest_upload(runtime, state, name, await file.read())


async def ingest_upload(
    runtime: WorkspaceRuntime, state: ServerState, name: str, data: bytes
) -> InsertResponse:
    """Save ``data`` as file ``name`` (from :func:`upload_name`) in the input folder, convert
    it and enqueue its text; ``/documents/upload``'s answer (the MCP ``upload_file`` tool's too)."""
    limit = state.settings.max_upload_bytes
    if len(data) > limit:
        raise TooLarge(f"file of {len(data):,} bytes exceeds the upload limit of {limit:,}")
    if await runtime.rag.aknown_file_paths([name]):
        raise NameConflict(f"Document storage already contains '{name}'")
    await asyncio.to_thread(runtime.folder.save, name, data)
    track_id = new_track_id()
    # converted and enqueued by the runtime's task, which goes on if the client leaves
    task = runtime.spawn(ingest_files(runtime, state.converter, [(name, data)], track_id), "upload")
    ingested = await asyncio.shield(task)
    if ingested.skipped_ids:
        await asyncio.to_thread(runtime.folder.remove, name)
        return await _duplicated(runtime, ingested.skipped_ids, f"The content of '{name}' is")
    if ingested.failures:
        return InsertResponse(
            status="failure",
            message=f"File '{name}' could not be read: {ingested.failures[0][1]}",
            track_id=track_id,
        )
    return InsertResponse(
        status="success",
        message=f"File '{name}' uploaded successfully. Processing will continue in background.",
        track_id=track_id,
    )


async def insert_texts_of(
    runtime: WorkspaceRuntime, texts: list[str], sources: Sequence[str | None] | None
) -> InsertResponse:
    """Enqueue ``texts`` (with their sources; none: unknown) and start indexing them in the
    background; the answer of ``/documents/text`` and ``/documents/texts`` (and of the MCP
    ``insert_text`` tool)."""
    if sources is not None and len(sources) != len(texts):
        raise InvalidInput(f"{len(texts)} texts but {len(sources)} file_sources")
    paths = [s or UNKNOWN_SOURCE for s in sources] if sources else None
    return await _insert_response(runtime, await runtime.rag.aenqueue(texts, file_paths=paths))


@router.post("/text", response_model=InsertResponse)
async def insert_text(request: InsertTextRequest, runtime: Workspace) -> InsertResponse:
    """Insert one text; it is indexed in the background (``duplicated`` if already present)."""
    return await insert_texts_of(runtime, [request.text], [request.file_source])


@router.post("/texts", response_model=InsertResponse)
async def insert_texts(request: InsertTextsRequest, runtime: Workspace) -> InsertResponse:
    """Insert several texts; they are indexed in the background (``partial_success`` when
    some, ``duplicated`` when all are already present)."""
    return await insert_texts_of(runtime, request.texts, request.file_sources)


@router.post("/scan", response_model=ScanResponse)
async def scan(runtime: Workspace, state: State) -> ScanResponse:
    """Index the files of the workspace's input folder that no document has yet; follow it
    with ``/documents/scan/status/{track_id}``."""
    found = await asyncio.to_thread(runtime.folder.files)
    files = [p for p in found if supported(p.name)]
    known = await runtime.rag.aknown_file_paths([p.name for p in files]) if files else set()
    new = [p.name for p in files if p.name not in known]
    track_id = new_track_id()
    job = state.scans.start(runtime.name, track_id)
    job.count("discovered", len(found))
    job.count("unsupported", len(found) - len(files))
    for path in found:
        if not supported(path.name):
            job.sample("warning", f"{path.name}: unsupported file type")
    job.count("processed", len(known))
    for name in sorted(known):
        job.sample("processed", name)
    job.count("claimed_new", len(new))
    message = f"Scanning started: {len(new)} new file(s) in {runtime.folder.path}"
    if new:
        limit = state.settings.max_upload_bytes
        runtime.spawn(_scan(runtime, state, job, new, limit), "scan")
    else:
        job.enqueued("Scan finished: no new file")
    return ScanResponse(status="scanning_started", message=message, track_id=track_id)


async def _scan(
    runtime: WorkspaceRuntime, state: ServerState, job: ScanJob, names: list[str], limit: int
) -> None:
    try:
        ingested = await ingest_folder(runtime, state.converter, names, job.track_id, limit)
    except asyncio.CancelledError:
        job.end("cancelled", "Scan cancelled (the server is stopping); its files are read at the next scan")
        raise
    except Exception as exc:
        job.end("failed", f"Scan failed: {type(exc).__name__}: {exc}")
        job.sample("error", job.message)
        raise
    job.count("errors", len(ingested.failures))
    for name, reason in ingested.failures:
        job.sample("error", f"{name}: {reason}")
    job.count("duplicate_content", len(ingested.skipped_ids))
    for doc_id in ingested.skipped_ids:
        job.sample("warning", f"same content as document {doc_id}; not added again")
    new = len(names) - len(ingested.failures) - len(ingested.skipped_ids)
    job.enqueued(f"Scan enqueued {new} new document(s) of {len(names)} new file(s)")


@router.get("/scan/status/{track_id}")
async def scan_status(track_id: Key, runtime: Workspace, state: State) -> dict[str, Any]:
    """What the scan ``track_id`` found and did (upstream's bounded scan job record); 404
    for a track id no recent scan of this workspace has."""
    job = state.scans.get(runtime.name, track_id.strip())
    if job is None:
        raise HTTPException(404, f"no scan with track id {track_id!r} in workspace {runtime.name!r}")
    if not job.finished and not job.enqueuing:
        summary = (await runtime.rag.aget_docs_by_track_id(job.track_id))["status_summary"]
        job.settle(summary.get("pending", 0) + summary.get("processing", 0))
    return job.view()


@router.get("/status_counts")
async def status_counts(runtime: Workspace) -> dict[str, Any]:
    """How many documents are in each status."""
    return {"status_counts": await runtime.rag.aget_status_counts()}


@router.get("/track_status/{track_id}")
async def track_status(track_id: Key, runtime: Workspace) -> dict[str, Any]:
    """The documents enqueued under ``track_id`` and their status."""
    track_id = track_id.strip()
    if not track_id:
        raise InvalidInput("Track ID cannot be empty")
    return await runtime.rag.aget_docs_by_track_id(track_id)


@router.get("/pipeline_status")
async def pipeline_status(runtime: Workspace) -> dict[str, Any]:
    """What the workspace's indexing is doing; ``busy`` also while uploads are converted, a
    scan reads files or a delete runs. ``recovery_required`` is always false: every change
    is one transaction, so a crash leaves nothing half-done to recover."""
    return {
        **runtime.job.view(),
        "busy": workspace_busy(runtime),
        "workspace": runtime.name,
        "pending_uploads": runtime.pending_tasks,
    }


@router.post("/paginated")
async def paginated(request: DocumentsRequest, runtime: Workspace) -> dict[str, Any]:
    """One page of documents, filtered by status (``status_filters`` wins over
    ``status_filter``) and sorted."""
    return await page_of(runtime, request)


async def page_of(runtime: WorkspaceRuntime, request: DocumentsRequest) -> dict[str, Any]:
    """``/documents/paginated``'s answer (the MCP ``list_documents`` tool's too)."""
    wanted = request.status_filters or ([request.status_filter] if request.status_filter else None)
    statuses = sorted({IN_FLIGHT.get(s, s) for s in wanted}) if wanted else None
    return await runtime.rag.aget_docs_paginated(
        statuses, request.page, request.page_size, request.sort_field, request.sort_direction
    )


@router.get("/supported_file_types")
async def supported_file_types() -> dict[str, Any]:
    """The file extensions ``/documents/upload`` accepts."""
    return {
        "supported_extensions": list(SUPPORTED_EXTENSIONS),
        "engines": {"builtin": list(SUPPORTED_EXTENSIONS)},
    }


@router.post("/reprocess_failed")
async def reprocess_failed(runtime: Workspace) -> dict[str, Any]:
    """Process failed (and pending) documents again, in the background; they keep their
    track ids (``track_id`` is empty, as upstream)."""
    runtime.kick("reprocessing failed documents", failed=True)
    return {
        "status": "reprocessing_started",
        "message": "Reprocessing of failed documents has been initiated in background. "
        "Documents retain their original track_id.",
        "track_id": "",
    }


@router.post("/cancel_pipeline")
async def cancel_pipeline(runtime: Workspace) -> dict[str, Any]:
    """Stop the indexing in progress; unfinished documents stay pending and are resumed later."""
    if not runtime.cancel_processing():
        return {"status": "not_busy", "message": "Pipeline is not currently running. No cancellation needed."}
    return {
        "status": "cancellation_requested",
        "message": "Pipeline cancellation has been requested. Unfinished documents stay pending "
        "and are resumed by /documents/reprocess_failed or at the next start.",
    }


@router.post("/clear_cache")
@router.delete("/clear_cache", operation_id="clear_cache_with_delete")
async def clear_cache(
    runtime: Workspace, _: Annotated[dict[str, Any] | None, Body()] = None
) -> dict[str, Any]:
    """Delete every cached LLM answer of the workspace (the body is ignored, as upstream)."""
    removed = await runtime.rag.aclear_cache()
    return {"status": "success", "message": f"Successfully cleared all cache ({removed} answer(s))"}


@router.delete("/delete_document")
async def delete_document(request: DeleteDocRequest, runtime: Workspace) -> dict[str, Any]:
    """Delete documents and everything derived from them, in one transaction, in the background.

    As upstream, the answer is ``deletion_started`` whatever the ids; ids of no document
    are named in ``pipeline_status``' history and the others are deleted. ``delete_llm_cache``
    also deletes the cached extraction answers of their chunks; ``delete_file`` removes
    their files from the input folder. Documents being indexed are waited for; the outcome
    is reported in ``pipeline_status``, which reads busy until it is done. The answer
    comes once the delete is done, or after :data:`DELETE_ANSWER_WAIT` seconds.
    """
    return await delete_documents(runtime, request)


async def delete_documents(runtime: WorkspaceRuntime, request: DeleteDocRequest) -> dict[str, Any]:
    """``/documents/delete_document``'s work and answer (the MCP ``delete_document`` tool's too)."""
    rows = await runtime.rag.aget_doc_statuses(request.doc_ids)
    missing = sorted(set(request.doc_ids) - {r.id for r in rows})
    if missing:
        runtime.job.say(f"no document with id {', '.join(missing)}; not deleted")
    found = [d for d in request.doc_ids if d not in missing]
    files = [r.file_path for r in rows if request.delete_file and r.file_path != UNKNOWN_SOURCE]
    if found:
        keep = not request.delete_llm_cache
        task = runtime.spawn(_delete(runtime, found, files, keep_cache=keep), "delete")
        await asyncio.wait([task], timeout=DELETE_ANSWER_WAIT)  # goes on in the background past it
    return {
        "status": "deletion_started",
        "message": f"Document deletion for {len(request.doc_ids)} documents has been initiated. "
        "Processing will continue in background.",
        "doc_id": ", ".join(request.doc_ids),
    }


@router.delete("", response_model=ClearResponse)
async def clear_documents(
    runtime: Workspace,
    keep_llm_cache: Annotated[
        bool, Query(description="keep the cached LLM answers (default: they go too)")
    ] = False,
) -> ClearResponse:
    """Empty the workspace in one transaction: every document with its chunks, vectors,
    entities, relations, fragments, AGE mirror and (unless ``keep_llm_cache``) the LLM
    cache; then delete the files of its input folder.

    ``busy`` (nothing changed) while the workspace indexes, converts uploads, scans or
    deletes, or another process indexes its documents or re-embeds it.
    """
    if workspace_busy(runtime):
        return ClearResponse(
            status="busy", message="The pipeline is busy (indexing, uploads, a scan or a delete); retry later"
        )
    # finished by the runtime's task if the client leaves, so the folder follows the database
    task = runtime.spawn(_clear(runtime, keep_cache=keep_llm_cache), "clear")
    return await asyncio.shield(task)


async def _clear(runtime: WorkspaceRuntime, *, keep_cache: bool) -> ClearResponse:
    try:
        result = await runtime.rag.aclear_workspace(keep_cache=keep_cache)
    except (DocumentBusy, ReembedConflict) as exc:
        return ClearResponse(status="busy", message=str(exc))
    deleted, failed = await asyncio.to_thread(runtime.folder.clear)
    cache = "and the LLM cache " if result.cache_cleared else ""
    message = (
        f"Cleared {result.documents} document(s) with their chunks, vectors and graph {cache}"
        f"in one transaction; deleted {deleted} file(s) from the input folder"
    )
    if failed:
        message += f"; {failed} file(s) could not be deleted"
    runtime.job.say(message)
    return ClearResponse(status="partial_success" if failed else "success", message=message)


async def _delete(
    runtime: WorkspaceRuntime, doc_ids: list[str], files: list[str], *, keep_cache: bool
) -> None:
    job = runtime.job
    job.say(f"deleting {len(doc_ids)} document(s){'' if keep_cache else ' and their cached LLM answers'}")
    try:
        result = await runtime.rag.adelete_by_doc_id(doc_ids, keep_cache=keep_cache, wait=DELETE_WAIT)
    except LightRAGError as exc:
        job.say(f"deletion failed, nothing was deleted: {exc}")
        raise
    for name in files:
        await asyncio.to_thread(runtime.folder.remove, name)
    job.say(
        f"deleted {len(doc_ids)} document(s): {result.entities_rebuilt} entities and "
        f"{result.relations_rebuilt} relations rebuilt, {result.entities_deleted} entities and "
        f"{result.relations_deleted} relations deleted"
    )
