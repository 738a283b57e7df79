"""Tests for lightrag_pg.offline: spaCy extraction, query keywords, local MiniLM embeddings."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

pytest.importorskip("spacy")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from lightrag_pg.config import DEFAULT_ENTITY_TYPES
from lightrag_pg.defaults import local_embedding_func
from lightrag_pg.errors import ConfigurationError, ExtractionError
from lightrag_pg.offline.keywords import nlp_keywords
from lightrag_pg.offline.minilm import EMBEDDING_DIM, LocalMiniLM
from lightrag_pg.offline.nlp_extract import SpacyExtractor, load_spacy, resolve_type
from lightrag_pg.types import Extraction

CURIE = (
    "Marie Curie worked at the University of Paris. "
    "Marie Curie discovered polonium with Pierre Curie. "
    "Pierre Curie taught physics at the University of Paris, and Curie studied the radioactivity "
    "of polonium. "
    "In 1903 the Nobel Prize in Physics was awarded to Marie Curie and Pierre Curie."
)

EXPECTED_ENTITIES = [
    ("Marie Curie", "Person"),
    ("University of Paris", "Organization"),
    ("polonium", "Concept"),
    ("Pierre Curie", "Person"),
    ("physics", "Concept"),
    ("Nobel Prize in Physics", "Event"),
]

EXPECTED_RELATIONS = {
    # Each sentence's entities joined by the fewest and shortest dependency paths ("Curie
    # studied the radioactivity of polonium" joins Pierre Curie and polonium through two
    # content words, a link the sentence's shorter ones make needless, so that pair counts
    # one sentence); the third sentence's physics is joined to Pierre Curie, not also to
    # the University of Paris, and the last one's Nobel Prize to Marie Curie only.
    frozenset({"Marie Curie", "University of Paris"}): 1.0,
    frozenset({"Marie Curie", "polonium"}): 1.0,
    frozenset({"Marie Curie", "Pierre Curie"}): 2.0,
    frozenset({"Pierre Curie", "polonium"}): 1.0,
    frozenset({"Pierre Curie", "University of Paris"}): 1.0,
    frozenset({"Pierre Curie", "physics"}): 1.0,
    frozenset({"Nobel Prize in Physics", "Marie Curie"}): 1.0,
}


@pytest.fixture(scope="module")
def extractor() -> SpacyExtractor:
    load_spacy()
    return SpacyExtractor(DEFAULT_ENTITY_TYPES)


@pytest.fixture(scope="module")
def minilm() -> LocalMiniLM:
    model = LocalMiniLM()
    model.load()
    return model


def test_entities_and_types(extractor: SpacyExtractor) -> None:
    result = extractor.extract(CURIE, chunk_id="chunk-1", file_path="curie.txt")
    assert [(e.name, e.entity_type) for e in result.entities] == EXPECTED_ENTITIES
    assert all(e.chunk_id == "chunk-1" and e.file_path == "curie.txt" for e in result.entities)
    marie = result.entities[0]
    assert marie.description.startswith("Marie Curie worked at the University of Paris.")
    assert len(marie.description) <= 500


def test_cooccurrence_relations() -> None:
    result = SpacyExtractor(DEFAULT_ENTITY_TYPES, max_relations_per_chunk=16).extract(
        CURIE, chunk_id="chunk-1", file_path="curie.txt"
    )
    got = {frozenset({r.src, r.tgt}): r.weight for r in result.relations}
    assert got == EXPECTED_RELATIONS
    assert len(result.relations) == len(EXPECTED_RELATIONS)
    assert all(r.src != r.tgt for r in result.relations)
    pair = next(r for r in result.relations if {r.src, r.tgt} == {"Marie Curie", "Pierre Curie"})
    assert pair.description == "Marie Curie discovered polonium with Pierre Curie."
    assert pair.weight == 2.0, "the weight still counts every shared sentence"
    assert "discover" in pair.keywords.split(", ")


def test_extraction_is_deterministic(extractor: SpacyExtractor) -> None:
    first = extractor.extract(CURIE, chunk_id="c", file_path="f")
    assert extractor.extract(CURIE, chunk_id="c", file_path="f") == first
    assert extractor.extract("", chunk_id="e", file_path="f") == Extraction(entities=(), relations=())


def test_bad_input(extractor: SpacyExtractor) -> None:
    result = extractor.extract("Marie Curie\x00 lived in Warsaw.", chunk_id="c", file_path="f")
    assert {e.name for e in result.entities} == {"Marie Curie", "Warsaw"}
    with pytest.raises(ExtractionError):
        extractor.extract(b"bytes", chunk_id="c", file_path="f")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        SpacyExtractor(())


def test_type_fallback_and_name_bound() -> None:
    assert resolve_type("organization", ("Person", "Organization")) == "Organization"
    assert resolve_type("Content", ("Person", "concept")) == "concept"
    assert resolve_type("Content", ("Person", "Place")) == "Person"
    narrow = SpacyExtractor(("Person", "Concept"), max_name_length=8)
    result = narrow.extract(CURIE, chunk_id="c", file_path="f")
    assert all(len(e.name) <= 8 for e in result.entities)
    assert ("Marie Cu", "Person") in [(e.name, e.entity_type) for e in result.entities]
    assert {e.entity_type for e in result.entities} == {"Person", "Concept"}


def test_query_keywords() -> None:
    hl, ll = nlp_keywords("How did Marie Curie and Pierre Curie contribute to radioactivity research?")
    assert ll == ["Marie Curie", "Pierre Curie", "radioactivity research"]
    assert hl == ["contribute"]
    hl, ll = nlp_keywords("What are the environmental impacts of renewable energy?")
    assert hl == ["environmental impact", "renewable energy"] and ll == hl
    hl, ll = nlp_keywords("Who is Marie Curie?")
    assert (hl, ll) == (["Marie Curie"], ["Marie Curie"])
    assert nlp_keywords("   ") == ([], [])


def test_query_keywords_are_the_query_s_own_words() -> None:
    # a noun phrase extending a name is kept whole, and its head noun is the high-level
    # keyword, not the name's entity type ("organization" before)
    assert nlp_keywords("What is a Debian package?") == (["package"], ["Debian package"])
    assert nlp_keywords("Could you explain a Debian control file?") == (["file"], ["Debian control file"])
    # every content verb counts, not only the sentence's root ("is" here)
    hl, ll = nlp_keywords("Is it possible to automatically update the system?")
    assert "update" in hl and ll == ["system"]
    # words that only frame the question are no keywords
    hl, _ = nlp_keywords("Could you explain the pool directory?")
    assert "explain" not in hl


async def test_minilm_unit_vectors(minilm: LocalMiniLM) -> None:
    texts = [
        "A man is playing a guitar.",
        "Someone plays the guitar on stage.",
        "The stock market fell sharply today.",
        "Polonium was discovered by Marie Curie.",
    ]
    vectors = await minilm(texts)
    assert vectors.shape == (4, EMBEDDING_DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    again = await minilm(list(reversed(texts)))
    assert np.allclose(again[::-1], vectors, atol=1e-5)
    sims = vectors @ vectors.T
    assert sims[0, 1] > 0.6
    assert sims[0, 1] > sims[0, 2] + 0.4 and sims[0, 1] > sims[0, 3] + 0.4
    assert (await minilm([])).shape == (0, EMBEDDING_DIM)


async def test_minilm_truncates_long_text(minilm: LocalMiniLM) -> None:
    long_text = "graph retrieval " * 2000
    vectors = await minilm([long_text, "short"])
    assert vectors.shape == (2, EMBEDDING_DIM)
    assert np.isfinite(vectors).all()


async def test_local_embedding_func(minilm: LocalMiniLM) -> None:
    func = local_embedding_func()
    assert func.embedding_dim == EMBEDDING_DIM and func.model_name == LocalMiniLM.model_name
    vectors = await func(["Marie Curie", "polonium"])
    assert np.allclose(vectors, await minilm(["Marie Curie", "polonium"]), atol=1e-6)


def test_missing_model_file_is_a_configuration_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = LocalMiniLM(model_path=tmp_path / "missing.onnx")
    with pytest.raises(ConfigurationError):
        model.load()


def test_minilm_truncate_cuts_where_the_model_stops_reading(minilm: LocalMiniLM) -> None:
    long = "graph " * 300 + "retrieval"
    cut_long, short, split = minilm.truncate(
        [long, "a short text", "word " * 253 + "antidisestablishmentarianism"]
    )
    assert cut_long == ("graph " * 254).rstrip(), "254 word pieces besides [CLS] and [SEP]"
    assert short == "a short text"
    assert split == ("word " * 253).rstrip(), "a word the limit cuts through is left out"
    vectors = minilm.embed_sync([long, cut_long, cut_long + " more words past the limit"])
    assert np.allclose(vectors[0], vectors[1], atol=1e-5)
    assert np.allclose(vectors[1], vectors[2], atol=1e-5)
    func = local_embedding_func()
    assert func.truncate is not None and func.truncate([long]) == [cut_long]


def test_minilm_vector_of_a_text_does_not_depend_on_its_batch(minilm: LocalMiniLM) -> None:
    """Batches shared by documents must not change a text's vector: the workspace stays a
    function of its documents whichever texts a pipeline embeds together, and whichever
    batches run at the same time."""
    texts = ["Marie Curie", "Polonium was discovered by Marie Curie in 1898. " * 6, "radium", "a b"]
    alone = np.stack([minilm.embed_sync([t])[0] for t in texts])
    together = LocalMiniLM(batch_size=8).embed_sync(texts)
    assert np.array_equal(alone, together)
    in_parallel = LocalMiniLM(batch_size=1)  # one batch per text, spread over the model's threads
    with ThreadPoolExecutor(3) as callers:
        calls = list(callers.map(in_parallel.embed_sync, [texts, texts[::-1], texts]))
    assert all(np.array_equal(v, alone) for v in (calls[0], calls[1][::-1], calls[2]))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_minilm_embeds_in_a_process_forked_after_it_ran(minilm: LocalMiniLM) -> None:
    """The model's threads are not copied into a forked child: a child that used the
    parent's pool waited forever for batches no thread would run."""
    texts = ["Marie Curie", "radium", "Polonium was discovered in 1898."]
    expected = minilm.embed_sync(texts)
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only with the parent's vectors
        os._exit(0 if np.array_equal(minilm.embed_sync(texts), expected) else 1)
    deadline = time.monotonic() + 60
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child did not finish embedding within 60 s")
    assert os.waitstatus_to_exitcode(done[1]) == 0
