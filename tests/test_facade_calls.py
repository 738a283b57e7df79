"""The facade calls that routes and the command line used to do with sessions and SQL of
their own: failed-file records, document statuses, known file paths, entity existence and
the workspace's table counts."""

from __future__ import annotations

from lightrag_pg import LightRAG
from lightrag_pg.types import DocStatus


async def test_failed_files_are_recorded_once_and_read_back_as_statuses(rag: LightRAG) -> None:
    failures = [
        ("doc-bad", "bad.pdf", "track-1", "not a PDF"),
        ("doc-empty", "empty.txt", "track-1", "empty"),
    ]
    assert await rag.arecord_failed_files(failures) == {"doc-bad", "doc-empty"}
    assert await rag.arecord_failed_files(failures[:1]) == set()  # present already: left alone
    assert await rag.arecord_failed_files([]) == set()

    rows = await rag.aget_doc_statuses(["doc-empty", "unknown", "doc-bad"])
    assert [(r.id, r.status, r.file_path, r.error_msg) for r in rows] == [
        ("doc-empty", DocStatus.FAILED, "empty.txt", "empty"),
        ("doc-bad", DocStatus.FAILED, "bad.pdf", "not a PDF"),
    ]
    assert await rag.aknown_file_paths(["bad.pdf", "other.pdf"]) == {"bad.pdf"}
    counts = {t.name: t.row_count for t in await rag.atable_stats()}
    assert counts["doc_status"] == 2 and counts["full_docs"] == 0
    await rag.aprocess_pending()  # no text: nothing processes them, the reason stays
    (row,) = await rag.aget_doc_statuses(["doc-bad"])
    assert (row.status, row.error_msg) == (DocStatus.FAILED, "not a PDF")


async def test_entity_existence(rag: LightRAG) -> None:
    assert not await rag.aentity_exists("Zeta")
    await rag.acreate_entity("Zeta", {"description": "A letter."})
    assert await rag.aentity_exists("Zeta")
    assert not await rag.aentity_exists("zeta")
