"""Entity names that link passages: the same person is the same row in every text."""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")

from lightrag_pg.config import DEFAULT_ENTITY_TYPES
from lightrag_pg.offline.nlp_extract import SpacyExtractor


@pytest.fixture(scope="module")
def extractor() -> SpacyExtractor:
    return SpacyExtractor(DEFAULT_ENTITY_TYPES)


def names(extractor: SpacyExtractor, text: str) -> list[str]:
    return [e.name for e in extractor.extract(text, chunk_id="c").entities]


def test_a_surname_said_more_often_does_not_rename_the_full_name(extractor: SpacyExtractor) -> None:
    """A biography says "Curie" more often than "Marie Curie"; another passage only says
    "Marie Curie". Both must be the row "Marie Curie", or no walk links them."""
    biography = (
        "Marie Curie\n\nMarie Curie (born 1867) was a Polish physicist. Curie won the Nobel Prize. "
        "Curie died in 1934. Curie was French."
    )
    other = "Radium\n\nRadium was discovered by Marie Curie in Paris."
    assert "Marie Curie" in names(extractor, biography)
    assert "Curie" not in names(extractor, biography)
    assert "Marie Curie" in names(extractor, other)


def test_a_quoted_nickname_is_part_of_one_name(extractor: SpacyExtractor) -> None:
    titled = (
        'Dick Humbert\n\nRichard Elmer "Dick" Humbert (December 31, 1918 - May 23, 2007) was an '
        "American football end. He played for the Philadelphia Eagles."
    )
    found = names(extractor, titled)
    assert "Dick Humbert" in found and not {"Dick", "Richard Elmer", "Humbert"} & set(found), found
    untitled = 'David "Tarw" Jones (1881-1933) was a Welsh rugby union player.'
    found = names(extractor, untitled)
    assert "David Jones" in found and not {"David", "Tarw", "Jones"} & set(found), found


def test_a_month_and_a_number_is_a_date_not_a_name(extractor: SpacyExtractor) -> None:
    """A capitalised run took in the number after it, so "July 2011" and "August 20" were
    entities of their own: one more vector per date, in most HotpotQA passages."""
    text = "The film was released in July 2011 by Warner Bros. Its sequel opened on August 20, 2013."
    found = names(extractor, text)
    assert not [n for n in found if n.startswith(("July", "August"))], found
    assert "Theresa May" in names(extractor, "Theresa May visited Paris in May 2010.")
