"""Hostile input end to end: absurd strengths, widest keys, unstorable characters, long ids."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest

from lightrag_pg import InvalidInput, LightRAG
from lightrag_pg.config import MAX_ENTITY_NAME_LENGTH, MAX_ID_BYTES
from lightrag_pg.index.parse import MAX_RELATION_WEIGHT
from lightrag_pg.testing import classify_prompt, responder

from .fake_openai import FakeOpenAI

D = "<|#|>"


def answering(extraction: str) -> Callable[[list[dict[str, Any]], dict[str, Any]], str]:
    """A responder giving ``extraction`` to every extraction prompt and the scripted answer otherwise."""

    def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        if classify_prompt(messages[-1]["content"]) == "extraction":
            return extraction
        return responder(messages, body)

    return respond


async def run_with(
    llm_server: FakeOpenAI, make_rag: Callable[..., LightRAG], extraction: str, *args: Any, **settings: Any
) -> tuple[LightRAG, Any]:
    original = llm_server.responder
    llm_server.responder = answering(extraction)
    rag = make_rag(entity_extract_max_gleaning=0, **settings)
    await rag.initialize()
    try:
        return rag, await rag.ainsert(*args)
    finally:
        llm_server.responder = original


async def test_absurd_relation_strengths_are_bounded_and_the_document_is_processed(
    make_rag: Callable[..., LightRAG], llm_server: FakeOpenAI, conn: asyncpg.Connection
) -> None:
    strengths = {"B": "9.3e18", "C": "1e308", "D": "inf", "E": "nan", "F": "-5"}
    lines = [f"entity{D}{n}{D}Person{D}{n} is a person." for n in "ABCDEF"]
    lines += [f"relation{D}A{D}{n}{D}knows{D}A knows {n}.{D}{s}" for n, s in strengths.items()]
    rag, result = await run_with(llm_server, make_rag, "\n".join(lines), "A knows B, C, D, E and F.")
    try:
        assert result.progress.docs_done == 1 and result.progress.docs_failed == 0
        ws = rag.workspace
        weights = dict(await conn.fetch(f"SELECT tgt, weight FROM {ws}.relations"))
        assert weights == {"B": MAX_RELATION_WEIGHT, "C": MAX_RELATION_WEIGHT, "D": 1.0, "E": 1.0, "F": 1.0}
        assert await conn.fetchval(f'SELECT count(*) FROM {ws}_kg."DIRECTED"') == 5
    finally:
        await rag.drop_workspace()


async def test_longest_id_and_names_fit_postgresql_indexes(
    make_rag: Callable[..., LightRAG], llm_server: FakeOpenAI, conn: asyncpg.Connection
) -> None:
    rng = random.Random(13)
    ascii_chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    doc_id = "".join(rng.choice(ascii_chars) for _ in range(MAX_ID_BYTES))

    def four_byte_name() -> str:
        return "".join(chr(rng.randrange(0x20000, 0x2A6DF)) for _ in range(MAX_ENTITY_NAME_LENGTH))

    a, b = four_byte_name(), four_byte_name()
    extraction = "\n".join(
        [
            f"entity{D}{a}{D}Person{D}First.",
            f"entity{D}{b}{D}Person{D}Second.",
            f"relation{D}{a}{D}{b}{D}knows{D}They know each other.",
        ]
    )
    rag, result = await run_with(
        llm_server,
        make_rag,
        extraction,
        "Two people with long names.",
        [doc_id],
        max_entity_name_length=MAX_ENTITY_NAME_LENGTH,
    )
    try:
        assert result.progress.docs_done == 1, result
        ws = rag.workspace
        assert await conn.fetchval(f"SELECT count(*) FROM {ws}.doc_relations WHERE doc_id = $1", doc_id) == 1
        lengths = await conn.fetch(f"SELECT octet_length(name) FROM {ws}.entities")
        assert [r[0] for r in lengths] == [4 * MAX_ENTITY_NAME_LENGTH] * 2
    finally:
        await rag.drop_workspace()


@pytest.mark.slow
async def test_lone_surrogate_and_nul_do_not_reject_the_batch(
    llm_rag: LightRAG, conn: asyncpg.Connection
) -> None:
    result = await llm_rag.ainsert(
        ["Alice met\x00Bob in Paris.", "Carol left caf\ud800 Berlin.", "Acme hired Carol."],
        file_paths=["a.txt", "b\udce9.txt", "c.txt"],
    )
    assert len(result.new_ids) == 3 and result.progress.docs_done == 3
    rows = await conn.fetch(f"SELECT content, file_path FROM {llm_rag.workspace}.full_docs ORDER BY content")
    assert [(r["content"], r["file_path"]) for r in rows] == [
        ("Acme hired Carol.", "c.txt"),
        ("Alice met Bob in Paris.", "a.txt"),
        ("Carol left caf\ufffd Berlin.", "b\ufffd.txt"),
    ]


@pytest.mark.parametrize("doc_id", ["x" * 3000, "é" * 1000], ids=["ascii", "two-byte"])
async def test_overlong_id_is_invalid_input_and_writes_nothing(
    llm_rag: LightRAG, conn: asyncpg.Connection, doc_id: str
) -> None:
    with pytest.raises(InvalidInput, match=f"ids are at most {MAX_ID_BYTES} UTF-8 bytes"):
        await llm_rag.ainsert(["Alice met Bob.", "Carol met Bob."], ids=["short", doc_id])
    assert await conn.fetchval(f"SELECT count(*) FROM {llm_rag.workspace}.full_docs") == 0
