"""Token accounting: every LLM and embedding call recorded with its kind, model, tokens,
cache hit and duration; a document's calls written with it, a query's totals in its data,
the ``usage`` table summed by the facade and the CLI; and the cheaper gleaning pass."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import asyncpg
import pytest

from lightrag_pg import QueryParam
from lightrag_pg.cli import main as cli_main
from lightrag_pg.config import Settings
from lightrag_pg.index.extract import LLMExtractor
from lightrag_pg.llm.cached import CachedLLM
from lightrag_pg.llm.usage import FLUSH_ROWS, Usage, UsageMeter, llm_usage
from lightrag_pg.testing import StatementCounter, classify_prompt, prompt_input_text, respond

from .conftest import RagFactory

DOCS = [
    "Alice met Bob in Paris. Bob works with Carol at Acme.",
    "Carol visited Berlin with Alice. Acme competes with Globex.",
]
USAGE_INSERT = "INSERT INTO usage (created_at"


class Recording:
    """The scripted LLM, keeping every (prompt, system prompt, history) it is asked."""

    def __init__(self, answer: Any = respond) -> None:
        self.asked: list[tuple[str, str | None, list[dict[str, Any]]]] = []
        self.answer = answer

    async def __call__(
        self, prompt: str, system_prompt: str | None = None, history_messages: Any = None, **kwargs: Any
    ) -> str:
        self.asked.append((prompt, system_prompt, list(history_messages or ())))
        return str(self.answer(prompt, system_prompt))


class UsageInserts(StatementCounter):
    """A statement counter that also counts the stand-alone inserts into ``usage``."""

    def __init__(self) -> None:
        super().__init__()
        self.usage_inserts = 0

    def _wrap(self, name, method):  # type: ignore[no-untyped-def]
        counted = super()._wrap(name, method)

        async def also(conn: asyncpg.Connection, *args, **kwargs):  # type: ignore[no-untyped-def]
            if args and isinstance(args[0], str) and args[0].lstrip().startswith(USAGE_INSERT):
                self.usage_inserts += 1
            return await counted(conn, *args, **kwargs)

        return also


async def usage_rows(conn: asyncpg.Connection, workspace: str) -> list[asyncpg.Record]:
    return await conn.fetch(f"SELECT * FROM {workspace}.usage ORDER BY id")


async def test_a_documents_calls_are_written_with_it_and_summed_in_its_metadata(
    rag_factory: RagFactory, conn: asyncpg.Connection
) -> None:
    rag = await rag_factory(force_llm_summary_on_merge=2)
    with UsageInserts() as counter:
        result = await rag.ainsert(DOCS, file_paths=["a.txt", "b.txt"])
    assert result.progress.docs_done == 2
    # a document's calls are written by the statement that finishes it; the summaries of
    # the run, made once after all its merges, are no document's and written after them
    assert counter.usage_inserts <= 1
    everything = await usage_rows(conn, rag.workspace)
    run_kinds = {r["kind"] for r in everything if r["doc_id"] is None}
    assert "summary" in run_kinds and run_kinds <= {"summary", "embed"}
    rows = [r for r in everything if r["doc_id"] is not None]
    assert {r["kind"] for r in rows} >= {"extract", "glean", "embed"}
    assert all(r["doc_id"] in (*result.new_ids, None) and r["query_id"] is None for r in everything)
    assert all(r["model"] == ("scripted_llm" if r["kind"] != "embed" else "hashed-bow-32") for r in rows)
    assert all(r["counted_by"] == "tokenizer" and not r["cache_hit"] for r in rows)
    assert all(r["input_tokens"] > 0 and r["duration_ms"] >= 0 for r in rows)
    assert all(r["output_tokens"] > 0 for r in rows if r["kind"] in ("extract", "summary"))
    statuses = {s.id: s for s in await rag.aget_doc_statuses(result.new_ids)}
    for doc_id, status in statuses.items():
        mine = [r for r in rows if r["doc_id"] == doc_id]
        usage = status.metadata["usage"]
        llm = [r for r in mine if r["kind"] != "embed"]
        assert usage["llm_calls"] == len(llm) and usage["cache_hits"] == 0
        assert usage["input_tokens"] == sum(r["input_tokens"] for r in llm)
        assert usage["output_tokens"] == sum(r["output_tokens"] for r in llm)
        assert usage["embed_tokens"] == sum(r["input_tokens"] for r in mine if r["kind"] == "embed")
        assert usage["by_kind"]["extract"]["calls"] == usage["by_kind"]["glean"]["calls"]
    by_kind = {s.key: s for s in await rag.ausage(by="kind")}
    assert by_kind["extract"].calls == sum(1 for r in rows if r["kind"] == "extract")
    assert by_kind["summary"].input_tokens == sum(
        r["input_tokens"] for r in everything if r["kind"] == "summary"
    )
    by_doc = {s.key: s for s in await rag.ausage(by="doc") if s.key is not None}
    assert set(by_doc) == set(result.new_ids) and {s.label for s in by_doc.values()} == {"a.txt", "b.txt"}
    (day,) = await rag.ausage(by="day")
    assert day.key == datetime.now(timezone.utc).strftime("%Y-%m-%d") and day.calls == len(everything)


async def test_a_reprocessed_document_records_its_cache_hits_without_tokens(
    rag_factory: RagFactory, conn: asyncpg.Connection
) -> None:
    rag = await rag_factory()
    (doc_id,) = (await rag.ainsert(DOCS[0])).new_ids
    await rag.adelete_by_doc_id(doc_id, keep_cache=True)
    await rag.ainsert(DOCS[0])
    rows = [r for r in await usage_rows(conn, rag.workspace) if r["kind"] in ("extract", "glean")]
    first, again = rows[: len(rows) // 2], rows[len(rows) // 2 :]
    assert not any(r["cache_hit"] for r in first)
    assert all(r["cache_hit"] and r["input_tokens"] == r["output_tokens"] == 0 for r in again)
    assert {r["counted_by"] for r in again} == {"none"}
    (status,) = await rag.aget_doc_statuses([doc_id])
    usage = status.metadata["usage"]
    assert usage["cache_hits"] == len(again) and usage["by_kind"]["extract"]["calls"] == 0


async def test_a_failed_document_keeps_the_calls_it_paid_for(
    rag_factory: RagFactory, conn: asyncpg.Connection
) -> None:
    async def garbage(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        return "I cannot help with that."

    rag = await rag_factory(llm_model_func=garbage)
    result = await rag.ainsert(DOCS[0])
    assert result.progress.docs_failed == 1
    rows = await usage_rows(conn, rag.workspace)
    (extract,) = [r for r in rows if r["kind"] != "embed"]
    assert (
        extract["kind"] == "extract" and extract["doc_id"] == result.new_ids[0] and not extract["cache_hit"]
    )
    (status,) = await rag.aget_doc_statuses(result.new_ids)
    assert status.metadata["usage"]["llm_calls"] == 1
    assert status.metadata["usage"]["input_tokens"] == extract["input_tokens"] > 0


async def test_the_providers_usage_is_recorded_when_it_reports_one(
    make_rag, conn: asyncpg.Connection
) -> None:  # type: ignore[no-untyped-def]
    rag = make_rag()
    async with rag:
        await rag.ainsert(DOCS[0])
        answer = await rag.aquery("Who is Alice?", QueryParam(mode="local"))
        assert answer
        await rag.ausage()  # writes the query's calls
        rows = await usage_rows(conn, rag.workspace)
    llm = [r for r in rows if r["kind"] != "embed"]
    assert {r["kind"] for r in llm} == {"extract", "glean", "keywords", "answer"}
    # the scripted server reports one prompt and one completion token per answer, a stream's too
    assert all(
        (r["counted_by"], r["model"], r["input_tokens"], r["output_tokens"])
        == ("provider", "fake-model", 1, 1)
        for r in llm
    )
    query_ids = {r["query_id"] for r in rows if r["kind"] in ("keywords", "answer")}
    assert len(query_ids) == 1 and None not in query_ids


async def test_a_querys_totals_are_in_its_data_and_its_calls_in_the_table(
    rag_factory: RagFactory, conn: asyncpg.Connection
) -> None:
    rag = await rag_factory()
    await rag.ainsert(DOCS)
    data = await rag.aquery_data("How is Alice related to Acme?", QueryParam(mode="hybrid"))
    usage = data["metadata"]["usage"]
    assert usage["llm_calls"] == 1 and usage["by_kind"]["keywords"]["calls"] == 1
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["embed_calls"] == 1 and usage["embed_tokens"] > 0
    again = (await rag.aquery_data("How is Alice related to Acme?", QueryParam(mode="hybrid")))["metadata"]
    assert again["usage"]["cache_hits"] == 1 and again["usage"]["input_tokens"] == 0
    assert again["usage"]["query_id"] != usage["query_id"]
    await rag.ausage()
    rows = [r for r in await usage_rows(conn, rag.workspace) if r["query_id"] == usage["query_id"]]
    assert sorted(r["kind"] for r in rows) == ["embed", "keywords"]
    assert sum(r["input_tokens"] for r in rows if r["kind"] == "keywords") == usage["input_tokens"]


async def test_the_query_answer_stream_reports_its_calls_once_read(rag_factory: RagFactory) -> None:
    rag = await rag_factory()
    await rag.ainsert(DOCS)
    stream = await rag.aquery_stream("Who is Bob?", QueryParam(mode="local"))
    answer = "".join([piece async for piece in stream])
    usage = await stream.usage()
    assert usage["by_kind"]["answer"]["calls"] == 1 and usage["by_kind"]["keywords"]["calls"] == 1
    prompt_tokens, answer_tokens = await stream.conversation_tokens()
    assert usage["by_kind"]["answer"]["output_tokens"] == rag.tokenizer.count(answer)
    assert (prompt_tokens, answer_tokens) == (usage["input_tokens"], usage["output_tokens"])


async def test_calls_outside_documents_are_written_in_batches(rag_factory: RagFactory) -> None:
    rag = await rag_factory()
    meter = rag._run.meter
    writes: list[int] = []
    sink = meter.sink
    assert sink is not None

    class Counting:
        async def write(self, records: Sequence[Usage]) -> None:
            writes.append(len(records))
            await sink.write(records)

    meter.sink, meter.flush_seconds = Counting(), 0.05
    for _ in range(3):
        meter.record(llm_usage("keywords", "m", 0.0, ["What?"], "{}", cache_hit=False))
    await asyncio.sleep(0.3)
    assert writes == [3]  # one statement, some time after the first record
    for _ in range(FLUSH_ROWS + 20):
        meter.record(llm_usage("keywords", "m", 0.0, ["What?"], "{}", cache_hit=False))
    await asyncio.sleep(0)
    await meter.flush()
    assert writes == [3, FLUSH_ROWS, 20]
    (row,) = await rag.ausage(by="kind")
    assert (row.key, row.calls) == ("keywords", FLUSH_ROWS + 23)


async def test_records_of_a_failed_write_are_written_later() -> None:
    written: list[Usage] = []
    failures = [OSError("the database is away")]

    class Flaky:
        async def write(self, records: Sequence[Usage]) -> None:
            if failures:
                raise failures.pop()
            written.extend(records)

    meter = UsageMeter("w", len, Flaky(), flush_seconds=0.05)
    meter.record(llm_usage("keywords", "m", 0.0, ["What?"], "{}", cache_hit=False))
    for _ in range(40):
        await asyncio.sleep(0.05)
        if written:
            break
    assert [(u.kind, u.input_tokens, u.output_tokens) for u in written] == [("keywords", 5, 2)]
    assert meter._pending == [] and failures == []


def test_the_meter_without_a_sink_counts_and_keeps_nothing() -> None:
    meter = UsageMeter("w", len, None)
    meter.record(llm_usage("summary", "m", 0.0, ["abc"], "de", cache_hit=False))
    assert meter._pending == []


async def test_lightrag_pg_usage_prints_the_sums(
    rag_factory: RagFactory, dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rag = await rag_factory()
    result = await rag.ainsert(DOCS[0], file_paths=["only.txt"])
    expected = {s.key: s for s in await rag.ausage(by="kind")}
    base = ["--dsn", dsn, "--workspace", rag.workspace, "usage"]
    assert await asyncio.to_thread(cli_main, [*base, "--by", "kind", "--json"]) == 0
    printed = {row["key"]: row for row in json.loads(capsys.readouterr().out)}
    assert printed.keys() == expected.keys()
    assert all(printed[k]["input_tokens"] == expected[k].input_tokens for k in expected)
    assert await asyncio.to_thread(cli_main, [*base, "--by", "doc"]) == 0
    table = capsys.readouterr().out
    assert result.new_ids[0] in table and "only.txt" in table and "input tokens" in table
    assert await asyncio.to_thread(cli_main, [*base, "--since", "1h", "--by", "day"]) == 0
    assert datetime.now(timezone.utc).strftime("%Y-%m-%d") in capsys.readouterr().out
    assert await asyncio.to_thread(cli_main, [*base, "--since", "2999-01-01"]) == 2
    assert "future" in capsys.readouterr().err


# ---------------------------------------------------------------- gleaning


def extractor(llm: Recording, **settings: Any) -> LLMExtractor:
    return LLMExtractor(CachedLLM(llm, None), Settings(**settings))


async def test_gleaning_repeats_the_extraction_prompt_and_lists_the_records_by_name() -> None:
    llm = Recording()
    text = "Alice met Bob in Paris."
    result = await extractor(llm).extract("chunk-1", text, "f.txt")
    assert {e.name for e in result.entities} == {"Alice", "Bob", "Paris"}
    (first, system, history), (glean, glean_system, glean_history) = llm.asked
    assert classify_prompt(first) == "extraction" and classify_prompt(glean) == "gleaning"
    assert history == glean_history == [] and system == glean_system
    assert glean.startswith(first[: first.rindex("\n---Output---")]) and prompt_input_text(glean) == text
    listed = glean[len(first) - len("\n---Output---\n") :]
    assert "- Alice (Person)" in listed and "- Alice — Bob" in listed
    assert "is mentioned" not in listed  # descriptions are left out


async def test_gleaning_only_incomplete_answers_is_an_option() -> None:
    cut = "entity<|#|>Alice<|#|>Person<|#|>Alice is a person.\nentity<|#|>Bob<|#|>Per"

    def answer(prompt: str, system: str | None) -> str:
        return (
            cut
            if "Bob" in (prompt_input_text(prompt) or "") and classify_prompt(prompt) == "extraction"
            else respond(prompt, system)
        )

    llm = Recording(answer)
    await extractor(llm, gleaning_rule="incomplete").extract("c1", "Alice met Carol.", "f")
    assert [classify_prompt(p) for p, _, _ in llm.asked] == ["extraction"]
    await extractor(llm, gleaning_rule="incomplete").extract("c2", "Alice met Bob.", "f")
    assert [classify_prompt(p) for p, _, _ in llm.asked[1:]] == ["extraction", "gleaning"]
    assert "- entity<|#|>Bob<|#|>Per" in llm.asked[-1][0]
    with pytest.raises(Exception, match="gleaning_rule"):
        Settings(gleaning_rule="sometimes")  # type: ignore[arg-type]


async def test_settings_turn_the_table_off(rag_factory: RagFactory, conn: asyncpg.Connection) -> None:
    rag = await rag_factory(usage_accounting=False)
    result = await rag.ainsert(DOCS[0])
    await rag.aquery_data("Who is Alice?")
    await rag.ausage()
    assert await usage_rows(conn, rag.workspace) == []
    (status,) = await rag.aget_doc_statuses(result.new_ids)
    assert status.metadata["usage"]["llm_calls"] > 0  # totals are kept


async def test_the_ollama_api_reports_the_tokens_of_the_querys_calls(
    served: Any, conn: asyncpg.Connection
) -> None:
    inserted = await served.client.post("/documents/text", json={"text": DOCS[0]})
    await served.track(inserted.json()["track_id"])
    ask = {"model": "lightrag:latest", "messages": [{"role": "user", "content": "/local Who is Alice?"}]}
    reply = (await served.client.post("/api/chat", json={**ask, "stream": False})).json()
    (runtime,) = served.app.state.server.registry.opened()
    await runtime.rag.ausage()  # writes the query's calls
    rows = await conn.fetch(
        f"SELECT kind, input_tokens, output_tokens FROM {served.workspace}.usage WHERE query_id IS NOT NULL"
    )
    llm = [r for r in rows if r["kind"] != "embed"]
    assert sorted(r["kind"] for r in llm) == ["answer", "keywords"]
    assert reply["prompt_eval_count"] == sum(r["input_tokens"] for r in llm) > 0
    assert reply["eval_count"] == sum(r["output_tokens"] for r in llm) > 0
    again = (await served.client.post("/api/chat", json={**ask, "stream": False})).json()
    assert again["message"]["content"] == reply["message"]["content"]  # from the LLM cache:
    assert again["eval_count"] == runtime.rag.tokenizer.count(again["message"]["content"])  # its tokens
