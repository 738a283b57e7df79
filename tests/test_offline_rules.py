"""The offline extractor's rules: label mapping and typing, filtering, variant merging, relations."""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")

from lightrag_pg.config import DEFAULT_ENTITY_TYPES
from lightrag_pg.offline.nlp_extract import SpacyExtractor, load_spacy, merge_key
from lightrag_pg.offline.nlp_lexicon import NER_TYPES
from lightrag_pg.offline.nlp_mentions import is_plausible_name
from lightrag_pg.types import Extraction


@pytest.fixture(scope="module")
def extractor() -> SpacyExtractor:
    load_spacy()
    return SpacyExtractor(DEFAULT_ENTITY_TYPES)


def _types(result: Extraction) -> dict[str, str]:
    return {e.name: e.entity_type for e in result.entities}


def test_spacy_labels_map_onto_the_entity_types() -> None:
    assert NER_TYPES["ORG"] == "Organization"
    assert NER_TYPES["PERSON"] == "Person"
    assert {NER_TYPES[label] for label in ("GPE", "LOC", "FAC")} == {"Location"}
    assert NER_TYPES["PRODUCT"] == "Artifact"
    assert NER_TYPES["EVENT"] == "Event"
    assert not {"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL"} & NER_TYPES.keys()
    assert set(NER_TYPES.values()) <= set(DEFAULT_ENTITY_TYPES)


def test_companies_people_and_places_are_typed_from_the_text(extractor: SpacyExtractor) -> None:
    text = (
        "Acme Robotics builds warehouse robots in Gothenburg. Its chief executive, Lena Holm, signed a "
        "contract with Nordic Freight to automate the company's warehouse in Oslo. In 2020 Spotify bought "
        "the podcast network Gimlet Media. Spotify was founded in Stockholm."
    )
    types = _types(extractor.extract(text, chunk_id="c"))
    assert types["Acme Robotics"] == "Organization"
    assert types["Nordic Freight"] == "Organization"
    assert types["Gimlet Media"] == "Organization"
    assert types["Spotify"] == "Organization"
    assert types["Lena Holm"] == "Person"
    assert types["Gothenburg"] == types["Oslo"] == types["Stockholm"] == "Location"


def test_software_is_an_artifact(extractor: SpacyExtractor) -> None:
    text = (
        "APT is the Advanced Package Tool. synaptic is a graphical package manager. "
        "lightrag_pg keeps its vectors in PostgreSQL with pgvector, and spaCy finds the names."
    )
    types = _types(extractor.extract(text, chunk_id="c"))
    assert types["synaptic"] == "Artifact"
    assert types["lightrag_pg"] == types["pgvector"] == types["spaCy"] == "Artifact"
    assert "Artifact" in {types.get("APT"), types.get("Advanced Package Tool")}
    assert len({"APT", "Advanced Package Tool"} & types.keys()) == 1, "an acronym joins its full name"


def test_terms_are_typed_by_their_head_noun(extractor: SpacyExtractor) -> None:
    text = (
        "Local mode searches the entity vectors. The index layer reads the workspace_info table. "
        "A gleaning pass asks for entities the first pass missed. Hybrid mode runs both."
    )
    types = _types(extractor.extract(text, chunk_id="c"))
    assert types["local mode"] == types["hybrid mode"] == types["gleaning pass"] == "Method"
    assert types["entity vector"] == "Data"
    assert types["index layer"] == "Artifact"
    assert types["workspace_info table"] == "Data"


def test_unconfigured_types_fall_back_to_concept(extractor: SpacyExtractor) -> None:
    narrow = SpacyExtractor(("Person", "Concept"))
    result = narrow.extract("Marie Curie moved to Paris and read about pgvector.", chunk_id="c")
    assert _types(result) == {"Marie Curie": "Person", "Paris": "Concept", "pgvector": "Concept"}


def test_verbs_generic_nouns_and_links_are_not_entities(extractor: SpacyExtractor) -> None:
    text = (
        "Users write the status of every file to the system, and the system finds the vector. "
        "Several packages, etc., are listed at https://www.debian.org/ports/ and in /usr/share/doc/apt-doc/. "
        "Send mail to debian-user-request@lists.debian.org in March."
    )
    names = {e.name.lower() for e in extractor.extract(text, chunk_id="c").entities}
    assert not names & {
        "write",
        "status",
        "vector",
        "find",
        "user",
        "users",
        "system",
        "file",
        "package",
        "march",
    }
    assert not [n for n in names if "://" in n or "@" in n or n.startswith("/") or n in ("etc", "doc")]


@pytest.mark.parametrize(
    ("name", "plausible"),
    [
        ("PostgreSQL", True),
        ("o200k_base", True),
        ("GNU/Linux", True),
        ("https://www.debian.org", False),
        ("debian-user@lists.debian.org", False),
        ("/etc/apt/sources.list", False),
        ("x>=2", False),
        ("etc", False),
        ("A", False),
    ],
)
def test_plausible_names(name: str, plausible: bool) -> None:
    assert is_plausible_name(name) is plausible


def test_merge_key_forgives_case_plurals_possessives_and_hyphens() -> None:
    assert merge_key("HNSW indexes") == merge_key("HNSW index") == merge_key("hnsw index")
    assert merge_key("pgvector's") == merge_key("pgvector")
    assert merge_key("key-value store") == merge_key("key value store")
    assert merge_key("ATARIs") == merge_key("ATARI")
    assert merge_key("libraries") == merge_key("library")
    assert merge_key("physics") != merge_key("physic")
    assert merge_key("Debian") != merge_key("Debian Project")


def test_name_variants_merge_into_one_entity(extractor: SpacyExtractor) -> None:
    text = (
        "The Free Software Foundation (FSF) wrote the GNU tools. The FSF's lawyers checked them. "
        "pgvector's iterative scan returns rows; pgvector is fast. The HNSW index is built per workspace, "
        "and HNSW indexes are rebuilt after a restore. Marie Curie met Pierre Curie; Curie taught physics."
    )
    names = [e.name for e in extractor.extract(text, chunk_id="c").entities]
    assert len(names) == len({merge_key(n) for n in names})
    assert "Free Software Foundation" in names and "FSF" not in names
    assert names.count("pgvector") == 1 and "pgvector's" not in names
    assert len([n for n in names if merge_key(n) == "hnsw index"]) == 1
    assert "Curie" not in names and {"Marie Curie", "Pierre Curie"} <= set(names)


def test_relations_join_entities_of_one_sentence_with_the_words_between(extractor: SpacyExtractor) -> None:
    text = "Acme Robotics builds warehouse robots in Gothenburg. Nordic Freight hired Lena Holm."
    result = extractor.extract(text, chunk_id="c")
    pairs = {frozenset({r.src, r.tgt}): r for r in result.relations}
    assert pairs[frozenset({"Acme Robotics", "warehouse robot"})].keywords == "build"
    assert pairs[frozenset({"Nordic Freight", "Lena Holm"})].keywords == "hire"
    assert frozenset({"Acme Robotics", "Lena Holm"}) not in pairs, "different sentences"
    assert all(r.description in text for r in result.relations)
    assert extractor.extract(text, chunk_id="c") == result


def test_a_name_never_runs_across_a_heading_into_its_paragraph(extractor: SpacyExtractor) -> None:
    text = "# Chunking\n\nA document is split into chunks before extraction. Chunks overlap by 100 tokens."
    names = [e.name for e in extractor.extract(text, chunk_id="c").entities]
    assert names and not [name for name in names if "." in name or "\n" in name], names


def test_two_merge_keys_under_one_name_make_no_self_relation(extractor: SpacyExtractor) -> None:
    # a Markdown table of sizes: two "GB" merge keys came out under the one name "GB",
    # whose pair was a relation from GB to itself and failed the whole document
    table = (
        "| | 100k entities | 300k entities |\n|---|---:|---:|\n"
        "| workspace tables (heap + TOAST) | 1.31 GB | 3.93 GB |\n"
        "| workspace indexes | 0.90 GB | 2.71 GB |\n"
        "| of which the three HNSW indexes | 0.84 GB | 2.52 GB |\n"
        "| `relation_vectors` + its HNSW index | 1.19 GB | 3.52 GB |\n"
        "| AGE graph (label tables + indexes) | 0.28 GB | 0.84 GB |\n"
    )
    result = extractor.extract(table, chunk_id="c1")
    pairs = [(r.src, r.tgt) for r in result.relations]
    assert all(src != tgt for src, tgt in pairs), pairs
    assert len({frozenset(p) for p in pairs}) == len(pairs)


def test_a_name_after_a_line_break_keeps_its_first_word(extractor: SpacyExtractor) -> None:
    # "here.\n\nAlice" was one word starting with a dot, a path: "Alice Smith" came out "Smith"
    text = "Some text here.\n\nAlice Smith maintains the Acme Robotics deployment guide."
    names = [e.name for e in extractor.extract(text, chunk_id="c").entities]
    assert "Alice Smith" in names and "Smith" not in names, names
