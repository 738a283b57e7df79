"""Vectors are recomputed only when what the embedding model reads of a row changes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import numpy as np
import pytest

from lightrag_pg import EmbeddingFunc, LightRAG
from lightrag_pg.index.composed import SOURCES
from lightrag_pg.index.writer import MergeStats
from lightrag_pg.testing import hashed_vectors
from lightrag_pg.types import NO_KEYWORDS

from .conftest import RagFactory

READS = 40
"""Characters the counting model reads of a text."""

FIRST = "Alice works at Acme."
LATER = "Alice writes reports in Paris."
"""Alice's description fragment from this document sorts after FIRST's ("wr" > "wo"),
so it lands past what the model reads of Alice's vector text."""
EARLIER = "Alice lives in Paris."
"""This one sorts before FIRST's, so it changes what the model reads."""


class CountingModel:
    """An embedding model that reads the first :data:`READS` characters of a text and
    records every text it is sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def __call__(self, texts: list[str]) -> np.ndarray:
        self.sent.extend(texts)
        return hashed_vectors([t[:READS] for t in texts], 32)

    def func(self) -> EmbeddingFunc:
        return EmbeddingFunc(
            embedding_dim=32,
            func=self,
            model_name="counting-32",
            truncate=lambda texts: [t[:READS] for t in texts],
        )

    def sent_for(self, name: str) -> list[str]:
        """Texts sent for entity ``name`` (its vector text is its name, a newline, its description)."""
        return [t for t in self.sent if t.startswith(f"{name}\n")]


Build = Callable[[CountingModel], Awaitable[LightRAG]]


@pytest.fixture
def build(rag_factory: RagFactory) -> Build:
    """LightRAGs with the scripted LLM and a counting model, each on a fresh workspace."""
    return lambda model: rag_factory(embedding_func=model.func())


async def test_an_unchanged_row_is_not_embedded_again(build: Build) -> None:
    model = CountingModel()
    rag = await build(model)
    await rag.ainsert([FIRST], file_paths=["first.txt"])
    assert len(model.sent_for("Alice")) == 1
    model.sent.clear()
    await rag.ainsert([LATER], file_paths=["later.txt"])
    assert len(model.sent_for("Paris")) == 1, "a new entity is embedded"
    assert model.sent_for("Alice") == [], "Alice's text changed only past what the model reads"
    async with rag.pool.acquire() as c:
        description = await c.fetchval("SELECT description FROM entities WHERE name = 'Alice'")
        content = await c.fetchval("SELECT content FROM entity_vectors WHERE name = 'Alice'")
    assert "writes reports" in description
    assert content == f"Alice\n{description}"[:READS], "the stored text is what the model read"
    model.sent.clear()
    await rag.ainsert([EARLIER], file_paths=["earlier.txt"])
    assert len(model.sent_for("Alice")) == 1, "a change the model reads is embedded"


@pytest.mark.slow
async def test_skipped_embeddings_do_not_make_vectors_depend_on_order(
    build: Build, conn: asyncpg.Connection
) -> None:
    forward, backward = await build(CountingModel()), await build(CountingModel())
    for doc in (FIRST, LATER, EARLIER):
        await forward.ainsert([doc], file_paths=[f"{doc[:12]}.txt"])
    for doc in (EARLIER, LATER, FIRST):
        await backward.ainsert([doc], file_paths=[f"{doc[:12]}.txt"])
    snapshots = []
    for rag in (forward, backward):
        async with rag.pool.acquire() as c:
            snapshots.append(
                [
                    tuple(r)
                    for r in await c.fetch(
                        "SELECT e.name, e.description, v.content, v.embedding::real[] "
                        "FROM entities e JOIN entity_vectors v USING (name) ORDER BY e.name"
                    )
                ]
                + [
                    tuple(r)
                    for r in await c.fetch(
                        "SELECT src, tgt, content, embedding::real[] FROM relation_vectors ORDER BY src, tgt"
                    )
                ]
            )
    assert snapshots[0] == snapshots[1]
    for name, description, content, vector in snapshots[0][:3]:
        if description is not None:
            assert content == f"{name}\n{description}"[:READS]
            assert np.allclose(vector, hashed_vectors([content], 32)[0])


async def test_the_merge_counts_the_texts_it_embeds(build: Build) -> None:
    model = CountingModel()
    rag = await build(model)
    await rag.ainsert([FIRST], file_paths=["first.txt"])
    writer = rag._run.pipeline().writer
    merge = writer.merge
    stats: list[MergeStats] = []

    async def recorded(*args: Any) -> MergeStats:
        stats.append(await merge(*args))
        return stats[-1]

    writer.merge = recorded  # type: ignore[method-assign]
    model.sent.clear()
    await rag.ainsert([LATER], file_paths=["later.txt"])
    assert [s.embedded for s in stats] == [len(model.sent) - 1], "all but the chunk"
    assert stats[0].reembedded == 0, "Alice's read text is unchanged; Paris and its relation are new"
    model.sent.clear()
    await rag.ainsert([EARLIER], file_paths=["earlier.txt"])
    assert stats[1].embedded == len(model.sent) - 1
    again = model.sent_for("Alice") + model.sent_for("Paris") + [t for t in model.sent if "Alice\nParis" in t]
    assert stats[1].reembedded == len(again) == 3, "the entities and the relation sorted first now"


async def test_offline_entities_are_embedded_by_their_name_once(rag_factory: RagFactory) -> None:
    """The offline extractor's entity descriptions are sentences of the chunks: embedding
    them again with every name of a sentence cost most of an offline insert's time, and
    every new mention re-embedded the entity."""
    pytest.importorskip("spacy")
    model = CountingModel()
    rag = await rag_factory(embedding_func=model.func(), extractor="nlp")
    await rag.ainsert(["Marie Curie worked in Paris with Pierre Curie."], file_paths=["a.txt"])
    assert {"Marie Curie", "Paris"} <= set(model.sent), "an entity's vector text is its name"
    model.sent.clear()
    await rag.ainsert(["Marie Curie discovered polonium in Paris."], file_paths=["b.txt"])
    assert "Marie Curie" not in model.sent and "Paris" not in model.sent, "names already embedded"
    async with rag.pool.acquire() as c:
        content = await c.fetchval("SELECT content FROM entity_vectors WHERE name = 'Marie Curie'")
    assert content == "Marie Curie"


async def test_offline_relations_are_embedded_without_their_sentence(rag_factory: RagFactory) -> None:
    """An offline relation's description is a sentence of its chunk, embedded with the
    chunk: embedding it again in the relation's vector text made relations most of an
    offline insert's embedding time, and every new sentence linking a pair re-embedded it."""
    pytest.importorskip("spacy")
    model = CountingModel()
    rag = await rag_factory(embedding_func=model.func(), extractor="nlp")
    await rag.ainsert(["Marie Curie worked in Paris."], file_paths=["a.txt"])
    async with rag.pool.acquire() as c:
        row = await c.fetchrow(
            "SELECT r.keywords, r.description, v.content FROM relations r "
            "JOIN relation_vectors v USING (src, tgt) WHERE r.src = 'Marie Curie' AND r.tgt = 'Paris'"
        )
    async with rag.pool.acquire() as c:
        chunk = await c.fetchval("SELECT id FROM text_chunks")
    short = f"{row['keywords']}\tMarie Curie\nParis{SOURCES}{chunk}"
    assert row["content"] == short, "keywords, endpoints and source chunks only"
    model.sent.clear()
    await rag.ainsert(["Famously, Marie Curie worked in Paris."], file_paths=["b.txt"])
    async with rag.pool.acquire() as c:
        description = await c.fetchval(
            "SELECT description FROM relations WHERE src = 'Marie Curie' AND tgt = 'Paris'"
        )
    assert description != row["description"], "the second sentence is merged into the relation"
    assert [t for t in model.sent if "Marie Curie\nParis" in t] == [], "its vector text did not change"


async def test_offline_relations_cost_no_text_of_their_own(rag_factory: RagFactory) -> None:
    """A passage's texts embedded were its chunk, its new entities and its new relations
    (about 30 for a HotpotQA passage); an offline relation's vector is now composed from
    its endpoints' and keywords' vectors, so a passage embeds its chunk, its new entity
    names and the keywords not seen before."""
    pytest.importorskip("spacy")
    model = CountingModel()
    rag = await rag_factory(embedding_func=model.func(), extractor="nlp")
    first = "Marie Curie worked in Paris with Pierre Curie. She discovered polonium in Warsaw."
    await rag.ainsert([first], file_paths=["a.txt"])
    async with rag.pool.acquire() as c:
        names = {r[0] for r in await c.fetch("SELECT name FROM entities")}
        keywords = {
            k.strip() for r in await c.fetch("SELECT keywords FROM relations") for k in r[0].split(",")
        }
        relations = await c.fetchval("SELECT count(*) FROM relation_vectors")
    assert relations >= 2
    assert sorted(model.sent) == sorted([first, *names, *(keywords - names - {NO_KEYWORDS})])
    model.sent.clear()
    second = "Pierre Curie worked in Warsaw."
    await rag.ainsert([second], file_paths=["b.txt"])
    assert model.sent == [second], "its names and keywords were embedded already"
    async with rag.pool.acquire() as c:
        assert await c.fetchval("SELECT count(*) FROM relation_vectors") > relations


async def test_offline_relation_vectors_take_in_their_source_chunks(rag_factory: RagFactory) -> None:
    """A composed relation vector was a function of its keywords and endpoints alone: the
    sentences linking the pair no longer counted, and the Debian FAQ's mix and hybrid
    recall fell. It now adds the mean vector of its source chunks (no text embedded), so
    a relation whose short text is unchanged moves with the chunks it comes from, and a
    delete brings it back to what it was."""
    pytest.importorskip("spacy")
    model = CountingModel()
    rag = await rag_factory(embedding_func=model.func(), extractor="nlp")
    pair = "SELECT r.keywords, v.content, v.embedding::text AS vector FROM relations r "
    pair += "JOIN relation_vectors v USING (src, tgt) WHERE r.src = 'Marie Curie' AND r.tgt = 'Paris'"
    await rag.ainsert(["Marie Curie worked in Paris."], file_paths=["a.txt"])
    async with rag.pool.acquire() as c:
        first = await c.fetchrow(pair)
    model.sent.clear()
    await rag.ainsert(["Famously, Marie Curie worked in Paris."], file_paths=["b.txt"])
    async with rag.pool.acquire() as c:
        second = await c.fetchrow(pair)
    assert second["keywords"] == first["keywords"]
    assert second["vector"] != first["vector"], "a new source chunk moves the vector"
    assert [t for t in model.sent if "Marie Curie\nParis" in t] == [], "no text of its own"
    await rag.adelete_by_file_path("b.txt")
    async with rag.pool.acquire() as c:
        assert await c.fetchrow(pair) == first, "the delete recomputes it from the chunks left"
