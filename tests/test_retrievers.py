"""The LangChain and LlamaIndex retrievers, on a ``LightRAG`` of this process and on a real
``lightrag-pg serve`` (one process for the module): LangChain's standard retriever tests,
the metadata of what they return, and a LlamaIndex query engine answering offline."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from lightrag_pg import InvalidInput, LightRAG, LightRAGError
from lightrag_pg.integrations import langchain, llamaindex
from lightrag_pg.integrations.source import query_param
from lightrag_pg.testing import hashed_embedding_func, scripted_llm

from .conftest import drop_if_exists, fresh_name
from .served_process import Server

KEY = "retriever-key"
DOCS = {
    "alice.md": "Alice founded Acme in Paris. Acme makes anvils.",
    "bob.md": "Bob joined Acme in Berlin. Bob sells anvils for Acme.",
    "carol.md": "Carol left Globex for Acme. Carol runs research at Acme.",
    "globex.md": "Globex competes with Acme in Berlin.",
    "lab.md": "Quantum Lab tests the anvils Acme makes.",
}
QUESTION = "Who works at Acme?"


@pytest.fixture(scope="module")
def server(
    serve_process: Callable[..., AbstractContextManager[Server]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with serve_process(fresh_name(), tmp_path_factory.mktemp("retrievers"), KEY) as served:
        for source, text in DOCS.items():
            served.insert(text, source)
        yield served


@pytest.fixture(scope="module")
def rag_workspace(dsn: str) -> Iterator[str]:
    """A workspace indexed in this process, with the scripted LLM and hashed embeddings."""
    name = fresh_name()

    async def index() -> None:
        async with new_rag(dsn, name) as rag:
            await rag.ainsert(list(DOCS.values()), file_paths=list(DOCS))

    asyncio.run(index())
    yield name
    asyncio.run(drop_if_exists(dsn, name))


def new_rag(dsn: str, workspace: str) -> LightRAG:
    """A LightRAG on ``workspace``, not initialized."""
    return LightRAG(
        dsn=dsn, workspace=workspace, llm_model_func=scripted_llm, embedding_func=hashed_embedding_func()
    )


class TestLangChainOverTheServer(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _server(self, server: Server) -> None:
        self.params = {"url": server.url, "api_key": KEY}

    @property
    def retriever_constructor(self) -> type[langchain.LightRAGRetriever]:
        return langchain.LightRAGRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return self.params

    @property
    def retriever_query_example(self) -> str:
        return QUESTION


class TestLangChainOverALightRAG(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _rag(self, dsn: str, rag_workspace: str) -> None:
        self.params = {"rag": new_rag(dsn, rag_workspace), "mode": "mix"}

    @property
    def retriever_constructor(self) -> type[langchain.LightRAGRetriever]:
        return langchain.LightRAGRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return self.params

    @property
    def retriever_query_example(self) -> str:
        return QUESTION


async def test_documents_say_where_they_come_from(server: Server, dsn: str, rag_workspace: str) -> None:
    over_server = langchain.LightRAGRetriever(url=server.url, api_key=KEY, k=3)
    async with new_rag(dsn, rag_workspace) as rag:
        over_rag = await langchain.LightRAGRetriever(rag=rag, k=3).ainvoke(QUESTION)
    for documents in (await over_server.ainvoke(QUESTION), over_rag):
        assert len(documents) == 3
        assert [d.metadata["rank"] for d in documents] == [1, 2, 3]
        assert [d.metadata["score"] for d in documents] == [1.0, 0.5, 1 / 3]
        for document in documents:
            assert DOCS[document.metadata["file_path"]] == document.page_content
            assert document.metadata["chunk_id"].startswith("chunk-")
            assert "Acme" in document.metadata["entities"]
    server_chunks = [d.page_content for d in await over_server.ainvoke(QUESTION)]
    assert server_chunks == [d.page_content for d in over_server.invoke(QUESTION)]
    assert set(server_chunks) == {d.page_content for d in over_rag}


def test_the_query_fields_are_arguments(server: Server) -> None:
    naive = langchain.LightRAGRetriever(url=server.url, api_key=KEY, mode="naive", k=2)
    assert {d.metadata["mode"] for d in naive.invoke("anvils")} == {"naive"}
    assert all(not d.metadata["entities"] for d in naive.invoke("anvils"))
    with pytest.raises(ValueError, match="top_k"):
        langchain.LightRAGRetriever(url=server.url, top_k=0)
    with pytest.raises(ValueError, match="either rag"):
        langchain.LightRAGRetriever()
    with pytest.raises(LightRAGError, match="403"):
        langchain.LightRAGRetriever(url=server.url, api_key="wrong").invoke(QUESTION)
    with pytest.raises(InvalidInput, match="400"):
        langchain.LightRAGRetriever(url=server.url, api_key=KEY).invoke("a\x00b")


async def test_a_llamaindex_query_engine_answers_offline(
    server: Server, dsn: str, rag_workspace: str
) -> None:
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    retriever = llamaindex.LightRAGRetriever(url=server.url, api_key=KEY, k=2, mode="mix")
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = await engine.aquery(QUESTION)
    assert len(response.source_nodes) == 2
    for node in response.source_nodes:
        assert node.node.get_content() == DOCS[node.node.metadata["file_path"]]
        assert node.node.get_content() in str(response)  # MockLLM answers with its prompt
        assert "chunk_id" not in node.node.get_content(metadata_mode="llm")  # type: ignore[arg-type]
    assert [n.score for n in response.source_nodes] == [1.0, 0.5]

    async with new_rag(dsn, rag_workspace) as rag:
        nodes = await llamaindex.LightRAGRetriever(rag, k=3).aretrieve(QUESTION)
        with pytest.raises(LightRAGError, match="initialized in an event loop"):
            llamaindex.LightRAGRetriever(rag, k=3).retrieve(QUESTION)
    assert [n.node.metadata["rank"] for n in nodes] == [1, 2, 3]
    with pytest.raises(InvalidInput, match="k must be"):
        llamaindex.LightRAGRetriever(rag=new_rag(dsn, rag_workspace), k=0)


def test_the_retrievers_answer_the_same_as_the_facade(dsn: str, rag_workspace: str) -> None:
    rag = new_rag(dsn, rag_workspace)
    data = rag.query_data(QUESTION, query_param({}, 3))
    expected = [c["content"] for c in data["data"]["chunks"]][:3]
    assert [d.page_content for d in langchain.LightRAGRetriever(rag=rag, k=3).invoke(QUESTION)] == expected
    assert [
        n.node.get_content() for n in llamaindex.LightRAGRetriever(rag, k=3).retrieve(QUESTION)
    ] == expected


def readme_block(heading: str, language: str = "python") -> str:
    """The first ``language`` block under ``heading`` in the README."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    found = re.search(rf"```{language}\n(.*?)```", readme.split(heading, 1)[1], re.S)
    assert found, heading
    return found.group(1)


def test_the_readme_langchain_chain_runs_with_a_chat_model(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    block = readme_block("### LangChain")
    block = block.replace("from langchain_openai import ChatOpenAI  # pip install langchain-openai\n", "")
    block = block.replace('ChatOpenAI(model="gpt-4o-mini")', "chat_model")
    block = block.replace("http://127.0.0.1:9621", server.url).replace('"s3cret"', repr(KEY))
    seen: list[Any] = []

    class Recording(FakeListChatModel):
        def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
            seen.append(messages)
            return super()._call(messages, *args, **kwargs)

    exec(block, {"chat_model": Recording(responses=["Alice founded Acme."])})
    assert capsys.readouterr().out == "Alice founded Acme.\n"
    assert "[alice.md] Alice founded Acme in Paris." in seen[0][0].content
