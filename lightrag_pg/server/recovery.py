"""``/documents/source_conflicts``, ``/documents/source_conflicts/repair`` and
``/documents/recovery/force_reset``: upstream's shapes, answered for this design.

Upstream fences a workspace when a worker dies halfway through a delete or a
clear, and its scans stop on a file name that several documents claim. Here
every change is one transaction (a crash leaves it undone, never half-done) and
a scan skips a file whose name any document has, so there is never a fence to
reset nor a conflict to settle: the listing is empty, a repair names no
candidate (409, as upstream for a document that is not one) and a reset finds
nothing to do.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field, model_validator

from .deps import Workspace
from .validate import Bounded, Key, Name

router = APIRouter(prefix="/documents", tags=["documents"])

CONFLICT_PAGE_MAX = 200
"""The largest page ``/documents/source_conflicts`` accepts (upstream's)."""


class SourceConflictsResponse(BaseModel):
    conflicts: list[dict[str, Any]] = Field(default_factory=list)
    next_cursor: str | None = None


class RepairRequest(BaseModel):
    canonical_source_key: Name
    primary_doc_id: Name
    expected_candidate_count: Annotated[int, Bounded(0, 1_000_000)] | None = None
    expected_candidate_fingerprint: Key | None = None
    dry_run: bool = True

    @model_validator(mode="after")
    def _commit_needs_tokens(self) -> RepairRequest:
        if not self.dry_run and (
            self.expected_candidate_count is None or not self.expected_candidate_fingerprint
        ):
            raise ValueError(
                "a commit (dry_run false) needs expected_candidate_count and "
                "expected_candidate_fingerprint from a dry run"
            )
        return self


class ForceResetRequest(BaseModel):
    confirm: bool = False


class ForceResetResponse(BaseModel):
    status: Literal["reset", "no_recovery_required"]
    message: str
    cancelled_manual_retries: int = 0


@router.get("/source_conflicts", response_model=SourceConflictsResponse)
async def source_conflicts(
    runtime: Workspace,
    limit: Annotated[int, Bounded(1, CONFLICT_PAGE_MAX), Query()] = 50,
    cursor: Annotated[Key | None, Query()] = None,
) -> SourceConflictsResponse:
    """File names claimed by several documents that a scan cannot resolve: none here, as a
    scan never picks a document by file name (it skips a name any document has)."""
    return SourceConflictsResponse()


@router.post("/source_conflicts/repair")
async def repair_source_conflict(request: RepairRequest, runtime: Workspace) -> dict[str, Any]:
    """Settle a source conflict: there are none, so no document is a candidate (409)."""
    raise HTTPException(
        409,
        f"Document {request.primary_doc_id} is not a primary candidate for source "
        f"'{request.canonical_source_key}': workspace {runtime.name!r} has no source conflicts "
        "(a scan never picks a document by file name)",
    )


@router.post("/recovery/force_reset", response_model=ForceResetResponse)
async def force_reset(request: ForceResetRequest, runtime: Workspace) -> ForceResetResponse:
    """Clear a recovery fence (``confirm`` must be true): there is never one, since every
    change is one transaction and a crash leaves nothing half-done."""
    if not request.confirm:
        raise HTTPException(400, "set confirm to true to force a reset")
    return ForceResetResponse(
        status="no_recovery_required",
        message=f"Workspace {runtime.name!r} needs no recovery: every change is one transaction",
    )
