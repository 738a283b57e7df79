"""No LLM and no embedding endpoint: NLP extraction, local embeddings, knowledge answers."""

from __future__ import annotations

import asyncpg
import pytest

from lightrag_pg import LightRAG, QueryParam
from lightrag_pg.db.workspace import read_info
from lightrag_pg.query.knowledge import NO_LLM_LINE

pytest.importorskip("spacy")
pytest.importorskip("onnxruntime")

TEXT = (
    "Marie Curie worked at the University of Paris. Marie Curie discovered polonium with "
    "Pierre Curie. The Nobel Prize committee honoured Marie Curie in 1903. "
    "Pierre Curie taught physics at the University of Paris."
)
ENDPOINT_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "LLM_BINDING_HOST",
    "LLM_BINDING_API_KEY",
    "EMBEDDING_BINDING_HOST",
    "EMBEDDING_BINDING_API_KEY",
)


async def test_offline_ingest_and_query_through_the_public_api(
    dsn: str, workspace_name: str, conn: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ENDPOINT_VARS:
        monkeypatch.delenv(var, raising=False)
    rag = LightRAG(dsn=dsn, workspace=workspace_name)
    await rag.initialize()
    try:
        info = await read_info(conn, workspace_name)
        assert info is not None and info.embedding_dim == 384
        assert info.embedding_model == "all-MiniLM-L6-v2-onnx-int8"
        result = await rag.ainsert(TEXT, file_paths="curie.txt")
        assert result.progress.docs_done == 1
        names = {r[0] for r in await conn.fetch(f"SELECT name FROM {workspace_name}.entities")}
        assert {"Marie Curie", "Pierre Curie", "University of Paris"} <= names
        pair = await conn.fetchrow(
            f"SELECT weight, description FROM {workspace_name}.relations "
            "WHERE src = 'Marie Curie' AND tgt = 'University of Paris'"
        )
        assert pair is not None and "University of Paris" in pair["description"]
        assert await conn.fetchval(f"SELECT count(*) FROM {workspace_name}.llm_cache") == 0

        answer = await rag.aquery("Where did Marie Curie work?")
        assert answer.startswith(NO_LLM_LINE)
        assert "Marie Curie" in answer and "curie.txt" in answer
        data = await rag.aquery_data("Where did Marie Curie work?", QueryParam(mode="local"))
        assert "Marie Curie" in data["metadata"]["keywords"]["low_level"]
        assert "Marie Curie" in [e["entity_name"] for e in data["data"]["entities"]]
    finally:
        await rag.drop_workspace()
