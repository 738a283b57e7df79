"""Precision and recall of the offline (spaCy) extractor on a hand-labelled set of paragraphs.

The labels are ``bench/data/extractor/labels.jsonl`` (see the README next to
them): per paragraph the entities a careful reader would put in a knowledge
graph, each with its acceptable types and aliases, plus an ``optional`` list of
names that count neither for nor against the extractor.

Scoring, per paragraph, over the extractor's distinct entity names:

* a name matching a labelled entity (its name or an alias) is a true positive;
  matching an optional name it is ignored; otherwise it is a false positive;
* recall counts the labelled entities matched by at least one extracted name;
* the typed figures also need the extracted type to be one of the entity's types.

Names match after :func:`match_key`: case-insensitive, a leading "the"/"a"/"an"
and a possessive "'s" dropped, hyphens, underscores and whitespace runs read as
one space, and a plural ending of the last word (-ies, -es after s/x/ch/sh, -s)
reduced to the singular. Figures are micro-averaged over all paragraphs.

Run: ``python bench/extractor.py [--verbose] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LABELS = Path(__file__).resolve().parent / "data" / "extractor" / "labels.jsonl"

_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_POSSESSIVE = re.compile(r"['’]s\b|(?<=s)['’](?=\s|$)")
_SEPARATORS = re.compile(r"[\s\-_]+")


def match_key(name: str) -> str:
    """The form two names must share to match (see the module docstring)."""
    key = _SEPARATORS.sub(" ", _POSSESSIVE.sub("", name.lower())).strip()
    key = _ARTICLE.sub("", key)
    head, _, last = key.rpartition(" ")
    if len(last) > 3 and last.endswith("ies"):
        last = last[:-3] + "y"
    elif len(last) > 3 and last.endswith(("ses", "xes", "ches", "shes")):
        last = last[:-2]
    elif len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is")):
        last = last[:-1]
    return f"{head} {last}".strip()


@dataclass(frozen=True)
class Gold:
    """One labelled entity: its names (name first, then aliases) and acceptable types."""

    names: tuple[str, ...]
    types: frozenset[str]

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(match_key(n) for n in self.names)


@dataclass(frozen=True)
class Paragraph:
    """A labelled paragraph."""

    id: str
    source: str
    text: str
    entities: tuple[Gold, ...]
    optional: frozenset[str]


def load_labels(path: Path = LABELS) -> list[Paragraph]:
    """The labelled paragraphs of ``path`` (JSON lines)."""
    out: list[Paragraph] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        golds = []
        for ent in row["entities"]:
            types = ent["type"] if isinstance(ent["type"], list) else [ent["type"]]
            golds.append(Gold(names=(ent["name"], *ent.get("aliases", ())), types=frozenset(types)))
        out.append(
            Paragraph(
                id=row["id"],
                source=row["source"],
                text=row["text"],
                entities=tuple(golds),
                optional=frozenset(match_key(n) for n in row.get("optional", ())),
            )
        )
    return out


@dataclass
class Counts:
    """True positives, extracted (optional names excluded) and labelled entities."""

    tp: int = 0
    tp_typed: int = 0
    found: int = 0
    found_typed: int = 0
    extracted: int = 0
    gold: int = 0

    def add(self, other: Counts) -> None:
        for name in ("tp", "tp_typed", "found", "found_typed", "extracted", "gold"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def precision(self) -> float:
        return self.tp / self.extracted if self.extracted else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.gold if self.gold else 1.0

    @property
    def precision_typed(self) -> float:
        return self.tp_typed / self.extracted if self.extracted else 1.0

    @property
    def recall_typed(self) -> float:
        return self.found_typed / self.gold if self.gold else 1.0


@dataclass
class ParagraphResult:
    """The scoring of one paragraph, with its mistakes for ``--verbose``."""

    counts: Counts
    seconds: float
    false_positives: list[str] = field(default_factory=list)
    wrong_types: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)


def score_paragraph(
    paragraph: Paragraph, extracted: Sequence[tuple[str, str]], seconds: float
) -> ParagraphResult:
    """Score one paragraph's extracted (name, type) pairs against its labels."""
    result = ParagraphResult(counts=Counts(gold=len(paragraph.entities)), seconds=seconds)
    counts = result.counts
    by_key = {}
    for gold in paragraph.entities:
        for key in gold.keys:
            by_key.setdefault(key, gold)
    found: set[Gold] = set()
    found_typed: set[Gold] = set()
    seen: set[str] = set()
    for name, etype in extracted:
        key = match_key(name)
        if key in seen:
            continue
        seen.add(key)
        gold = by_key.get(key)
        if gold is None:
            if key not in paragraph.optional:
                counts.extracted += 1
                result.false_positives.append(f"{name} ({etype})")
            continue
        counts.extracted += 1
        counts.tp += 1
        found.add(gold)
        if etype in gold.types:
            counts.tp_typed += 1
            found_typed.add(gold)
        else:
            result.wrong_types.append(f"{name} ({etype}, want {'/'.join(sorted(gold.types))})")
    counts.found = len(found)
    counts.found_typed = len(found_typed)
    result.missed = [g.names[0] for g in paragraph.entities if g not in found]
    return result


Extract = Callable[[str], list[tuple[str, str]]]


def spacy_extract() -> Extract:
    """The offline extractor with the default entity types, warmed up."""
    from lightrag_pg.config import DEFAULT_ENTITY_TYPES
    from lightrag_pg.offline.nlp_extract import SpacyExtractor

    extractor = SpacyExtractor(DEFAULT_ENTITY_TYPES)

    def run(text: str) -> list[tuple[str, str]]:
        result = extractor.extract(text, chunk_id="bench", file_path="bench")
        return [(e.name, e.entity_type) for e in result.entities]

    run("Marie Curie worked at the University of Paris.")
    return run


def evaluate(paragraphs: Sequence[Paragraph], extract: Extract) -> list[ParagraphResult]:
    """Run ``extract`` on every paragraph (timed) and score it."""
    results = []
    for paragraph in paragraphs:
        start = time.perf_counter()
        extracted = extract(paragraph.text)
        results.append(score_paragraph(paragraph, extracted, time.perf_counter() - start))
    return results


def total(results: Sequence[ParagraphResult]) -> Counts:
    """The micro-averaged counts of ``results``."""
    counts = Counts()
    for r in results:
        counts.add(r.counts)
    return counts


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _row(label: str, c: Counts) -> str:
    return (
        f"{label:<10} {c.gold:>5} {c.extracted:>5}   "
        f"{c.precision:6.3f} {c.recall:6.3f} {_f1(c.precision, c.recall):6.3f}   "
        f"{c.precision_typed:6.3f} {c.recall_typed:6.3f} {_f1(c.precision_typed, c.recall_typed):6.3f}"
    )


def summary(paragraphs: Sequence[Paragraph], results: Sequence[ParagraphResult]) -> dict[str, Any]:
    """Figures as a dictionary (``--json``)."""
    c = total(results)
    times = [r.seconds * 1000 for r in results]
    return {
        "paragraphs": len(paragraphs),
        "labelled": c.gold,
        "extracted": c.extracted,
        "name": {"precision": round(c.precision, 4), "recall": round(c.recall, 4)},
        "name_type": {"precision": round(c.precision_typed, 4), "recall": round(c.recall_typed, 4)},
        "ms_per_paragraph": {
            "median": round(statistics.median(times), 2),
            "mean": round(statistics.mean(times), 2),
        },
        "load_average": list(os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--verbose", action="store_true", help="list each paragraph's mistakes")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    paragraphs = load_labels(args.labels)
    results = evaluate(paragraphs, spacy_extract())
    if args.json:
        print(json.dumps(summary(paragraphs, results), indent=2))
        return
    if args.verbose:
        for p, r in zip(paragraphs, results, strict=True):
            print(f"{p.id}: P {r.counts.precision:.2f} R {r.counts.recall:.2f}")
            for label, items in (("extra", r.false_positives), ("type", r.wrong_types), ("missed", r.missed)):
                if items:
                    print(f"  {label}: {'; '.join(items)}")
    head = f"{'':<10} {'gold':>5} {'found':>5}   {'name P':>6} {'R':>6} {'F1':>6}"
    print(f"{head}   {'typed P':>6} {'R':>6} {'F1':>6}")
    groups: dict[str, list[ParagraphResult]] = {}
    for p, r in zip(paragraphs, results, strict=True):
        groups.setdefault(p.id.split("-")[0], []).append(r)
    for name, rs in groups.items():
        print(_row(name, total(rs)))
    print(_row("all", total(results)))
    times = [r.seconds * 1000 for r in results]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{len(paragraphs)} paragraphs, {statistics.median(times):.1f} ms median, "
        f"{statistics.mean(times):.1f} ms mean per paragraph (load average {load})"
    )


if __name__ == "__main__":
    main()
