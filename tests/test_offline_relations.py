"""The offline extractor's relations: linked in a sentence's dependency tree, weighed by
repetition, capped per chunk."""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")

from lightrag_pg.config import DEFAULT_ENTITY_TYPES, Settings
from lightrag_pg.errors import ConfigurationError
from lightrag_pg.index.extract import NLPExtractor
from lightrag_pg.offline.nlp_extract import SpacyExtractor, load_spacy


@pytest.fixture(scope="module", autouse=True)
def _spacy() -> None:
    load_spacy()


def pairs(text: str, cap: int = 100) -> dict[frozenset[str], float]:
    result = SpacyExtractor(DEFAULT_ENTITY_TYPES, max_relations_per_chunk=cap).extract(text, chunk_id="c")
    return {frozenset({r.src, r.tgt}): r.weight for r in result.relations}


def test_nlp_relations_pair_entities_of_the_same_sentence() -> None:
    got = pairs(
        "Marie Curie worked in Paris. Albert Einstein, who taught physics at the University of "
        "Zurich for many years, admired the quiet gardens of Kyoto."
    )
    assert frozenset({"Marie Curie", "Paris"}) in got
    assert frozenset({"Albert Einstein", "University of Zurich"}) in got, "joined by 'taught'"
    assert frozenset({"Marie Curie", "Albert Einstein"}) not in got, "two sentences"
    kyoto = [p for p in got if "Kyoto" in p]
    assert len(kyoto) == 1, "a name far from the others is related to its nearest only"


def test_a_long_sentence_relates_each_name_to_its_nearest_only() -> None:
    """Relating every pair of a sentence made k(k-1)/2 relations of k names, most of them
    meaningless, and dropping the pairs far apart left 40% of the entities of HotpotQA
    passages without a relation, out of reach of a global query."""
    got = pairs(
        "Acme Robotics sold the robot to Globex Corporation, which shipped it to a museum in Oslo "
        "after the long winter of 2019."
    )
    assert set(got) == {
        frozenset({"Acme Robotics", "Globex Corporation"}),
        frozenset({"Globex Corporation", "Oslo"}),
    }


def test_coordinated_names_are_linked_to_what_they_share_through_the_first() -> None:
    got = pairs("In 1903 the Nobel Prize in Physics was awarded to Marie Curie and Pierre Curie.")
    assert got == {
        frozenset({"Marie Curie", "Pierre Curie"}): 1.0,
        frozenset({"Nobel Prize in Physics", "Marie Curie"}): 1.0,
    }


LOVELACE = (
    "Ada Lovelace worked with Charles Babbage. The Analytical Engine was designed by Charles "
    "Babbage. Ada Lovelace and Charles Babbage corresponded for years."
)


def test_repeated_cooccurrence_raises_the_weight() -> None:
    got = pairs(LOVELACE)
    assert got[frozenset({"Ada Lovelace", "Charles Babbage"})] == 2.0
    assert got[frozenset({"Analytical Engine", "Charles Babbage"})] == 1.0
    assert pairs(LOVELACE, cap=1) == {frozenset({"Ada Lovelace", "Charles Babbage"}): 2.0}, (
        "the pair linked in two sentences is the strongest"
    )


FOUNDERS = (
    "Alice Moreau, Bruno Keller, Carla Diaz, Dmitri Ivanov and Erin Walsh founded Acme Robotics in Lyon."
)


def test_relations_per_chunk_are_capped() -> None:
    everything = pairs(FOUNDERS)
    assert len(everything) == 6, "seven names of one sentence: six relations join them all"
    capped = SpacyExtractor(DEFAULT_ENTITY_TYPES, max_relations_per_chunk=4).extract(FOUNDERS, chunk_id="c")
    assert len(capped.relations) == 4
    assert {frozenset({r.src, r.tgt}) for r in capped.relations} <= set(everything)
    configured = NLPExtractor(Settings(nlp_max_relations_per_chunk=3))
    assert configured._impl.max_relations_per_chunk == 3
    assert len(configured._impl.extract(FOUNDERS, chunk_id="c").relations) == 3
    assert Settings().nlp_max_relations_per_chunk == 24
    with pytest.raises(ConfigurationError):
        Settings(nlp_max_relations_per_chunk=0)


def test_a_title_line_is_a_sentence_of_its_own() -> None:
    result = SpacyExtractor(DEFAULT_ENTITY_TYPES).extract(
        "Demon Dice\n\nDemon Dice is a dice game created by Lester Smith.", chunk_id="c"
    )
    names = [e.name for e in result.entities]
    assert "Demon Dice" in names and not any("Demon Dice Demon" in n for n in names)
    assert frozenset({"dice game", "Lester Smith"}) in {frozenset({r.src, r.tgt}) for r in result.relations}
