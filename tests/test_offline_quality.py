"""The offline extractor's precision and recall on the hand-labelled paragraphs stay above a floor.

The floors are the figures measured when the rules were written (bench/extractor.py:
names 0.92 / 0.90, names with types 0.78 / 0.76) minus a margin of about 0.05; the
extractor before those rules scored 0.70 / 0.72 and 0.41 / 0.42.
"""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")

from bench.extractor import LABELS, evaluate, load_labels, match_key, score_paragraph, spacy_extract, total

pytestmark = pytest.mark.slow

FLOOR_NAME_PRECISION = 0.87
FLOOR_NAME_RECALL = 0.85
FLOOR_TYPED_PRECISION = 0.72
FLOOR_TYPED_RECALL = 0.71


def test_labelled_set_is_well_formed() -> None:
    paragraphs = load_labels(LABELS)
    assert len(paragraphs) >= 30
    assert len({p.id for p in paragraphs}) == len(paragraphs)
    for p in paragraphs:
        keys = [k for g in p.entities for k in g.keys]
        assert len(keys) == len(set(keys)), f"{p.id}: two entities share a name"
        assert not set(keys) & p.optional, f"{p.id}: an entity is also optional"
        assert all(g.types for g in p.entities)


def test_scoring_forgives_simple_variants() -> None:
    assert match_key("The HNSW indexes") == match_key("HNSW index")
    assert match_key("pgvector's") == match_key("pgvector")
    assert match_key("key-value store") == match_key("Key value store")
    paragraph = load_labels(LABELS)[0]
    first = paragraph.entities[0]
    perfect = score_paragraph(paragraph, [(g.names[0], sorted(g.types)[0]) for g in paragraph.entities], 0.0)
    assert perfect.counts.precision_typed == perfect.counts.recall_typed == 1.0
    wrong = score_paragraph(paragraph, [(first.names[0], "NoSuchType"), ("write", "Concept")], 0.0)
    assert (wrong.counts.tp, wrong.counts.tp_typed, wrong.counts.extracted) == (1, 0, 2)


def test_extractor_precision_and_recall_stay_above_the_floor() -> None:
    counts = total(evaluate(load_labels(LABELS), spacy_extract()))
    assert counts.precision >= FLOOR_NAME_PRECISION, counts
    assert counts.recall >= FLOOR_NAME_RECALL, counts
    assert counts.precision_typed >= FLOOR_TYPED_PRECISION, counts
    assert counts.recall_typed >= FLOOR_TYPED_RECALL, counts
