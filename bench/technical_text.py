"""Junk entities of the offline extractor on technical text: this project's README.md and docs/*.md.

Each file is cut into chunks as the pipeline cuts it (1,200 tokens, 100 overlapping) and each
chunk extracted offline; entities are merged by name (the type the most chunks gave). An
entity is junk when a reader would not keep it; the rule, the first clause that applies:

* code punctuation: one of `` ` ( ) { } [ ] < > = | ; $ \\ * " @ # ``, ``::``, ``->``, ``→``,
  ``++``, ``&&`` or ", " (a list or a clause glued into a name);
* a path or URL: ``://``, a word starting with ``/``, ``./`` or ``~``, ``/`` before a
  lower-case word, or a file extension (``.py``, ``.md``, ``.toml``, ...);
* a SQL keyword written in capitals (``GRANT``, ``EXISTS``, ``NULL``, ...);
* a commit hash (7 to 40 hex digits with a digit and a letter);
* a command line: starting with a command (``lightrag-pg``, ``pip``, ``python``, ``git``,
  ...) and a space, or holding an option (``--limit``);
* a figure: a number with a thousands separator, ``×`` or ``%``, a bare number of 3 digits,
  or a trailing unit (``8.4 GB``);
* a sentence fragment: a name of several words starting or ending with a function word
  ("GB without", "With the");
* a person type on a non-person: typed Person and not a person's name (two to four
  capitalised words, or one of the corpus's one-word names of people);
* an organization or location type on a code word (lower case, an underscore or a digit).

Usage: ``python bench/technical_text.py [--root DIR] [--json FILE]``; ``--root`` reads the
corpus from another tree (to measure two versions of the extractor on the same text, run
each version with its own ``PYTHONPATH`` and the same ``--root``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lightrag_pg.config import DEFAULT_ENTITY_TYPES
from lightrag_pg.index.chunking import chunk_text
from lightrag_pg.llm.tokenizer import get_tokenizer
from lightrag_pg.offline.nlp_extract import SpacyExtractor

ROOT = Path(__file__).resolve().parents[1]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


SQL = _words(
    """SELECT INSERT UPDATE DELETE FROM WHERE JOIN GRANT REVOKE CREATE ALTER DROP EXISTS TABLE INDEX
    SCHEMA VALUES RETURNING LIMIT ORDER GROUP BY ON AS AND OR NOT NULL WITH UNION USING SET BEGIN COMMIT
    ROLLBACK CASCADE EXECUTE FUNCTION TRIGGER USAGE PRIVILEGES ALL INTO LATERAL DISTINCT HAVING EXPLAIN
    ANALYZE VACUUM COPY TRUNCATE PRIMARY KEY REFERENCES CONSTRAINT DEFAULT SEQUENCE VIEW MATCH RETURN
    MERGE OPTIONAL UNWIND CALL OWNER ROLE LOGIN"""
)
COMMANDS = sorted(
    _words(
        "lightrag-pg alembic apt-get cd createdb curl docker export git make mypy pip psql pytest python ruff"
    )
    | {"sudo", "uvicorn"}
)
FUNCTION_WORDS = _words(
    "the a an of in on to and or not like without with what which that this for by as at from is are be"
)
EXTENSION = re.compile(
    r"\.(?:py|md|sql|json|jsonl|toml|sh|cfg|txt|ya?ml|html?|js|ts|css|png|gz|whl|log|ini|csv|xlsx|graphml)\b"
)
PERSON_NAME = re.compile(r"[A-Z][a-z]+(?:[ -][A-Z][a-z]+){1,3}")
ONE_WORD_PEOPLE = frozenset({"Curie", "Robert", "Alice", "Bob", "Morse"})
"""The one-word names of people in the corpus (its examples, and Morse of "Morse code")."""


def junk_reason(name: str, kind: str) -> str:
    """Why a reader would call the entity junk, "" if not (the module docstring's rule)."""
    words = name.split()
    if re.search(r'[`(){}\[\]<>=|;$\\*"@#]|::|->|→|\+\+|&&|, ', name):
        return "code punctuation"
    if "://" in name or re.search(r"(^|\s)[~./]|/[a-z0-9_.-]+(\s|$)", name) or EXTENSION.search(name):
        return "path or URL"
    if any(word in SQL for word in words if word.isupper()):
        return "SQL keyword"
    if any(re.fullmatch(r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}", word) for word in words):
        return "commit hash"
    if any(name.startswith(command + " ") for command in COMMANDS) or re.search(r"(^|\s)--?[a-z]", name):
        return "command line"
    if re.search(r"\d,\d{3}|\d\s*[×%]|(^|\s)\d{3}(?!\d)|(^|\s)\d+(\.\d+)?\s*(ms|s|MB|GB|KiB|kB)$", name):
        return "figure"
    if len(words) > 1 and (words[0].lower() in FUNCTION_WORDS or words[-1].lower() in FUNCTION_WORDS):
        return "sentence fragment"
    if kind == "Person" and not PERSON_NAME.fullmatch(name) and name not in ONE_WORD_PEOPLE:
        return "person type on a non-person"
    if kind in ("Organization", "Location") and (name.islower() or "_" in name or re.search(r"\d", name)):
        return f"{kind.lower()} type on a code word"
    return ""


def measure(root: Path) -> dict[str, Any]:
    """Extract the corpus under ``root``; every entity with its type, files and junk reason."""
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    tokenizer = get_tokenizer("o200k_base")
    extractor = SpacyExtractor(DEFAULT_ENTITY_TYPES)
    types: dict[str, Counter[str]] = defaultdict(Counter)
    sources: dict[str, set[str]] = defaultdict(set)
    chunks = relations = 0
    started = time.perf_counter()
    for path in files:
        for chunk in chunk_text(
            path.read_text(encoding="utf-8"), tokenizer, chunk_token_size=1200, overlap=100
        ):
            chunks += 1
            result = extractor.extract(chunk.content, chunk_id=str(chunks), file_path=path.name)
            relations += len(result.relations)
            for entity in result.entities:
                types[entity.name][entity.entity_type] += 1
                sources[entity.name].add(path.name)
    seconds = time.perf_counter() - started
    entities = []
    for name, counts in types.items():
        kind = max(counts, key=lambda t: (counts[t], t))
        entities.append(
            {"name": name, "type": kind, "junk": junk_reason(name, kind), "files": sorted(sources[name])}
        )
    junk = [e for e in entities if e["junk"]]
    return {
        "files": len(files),
        "chunks": chunks,
        "entities": len(entities),
        "junk": len(junk),
        "share": round(len(junk) / max(len(entities), 1), 4),
        "by_reason": dict(Counter(str(e["junk"]) for e in junk).most_common()),
        "relations": relations,
        "seconds": round(seconds, 1),
        "junk_entities": junk,
        "all_entities": entities,
    }


def main() -> None:
    """Print the share of junk entities and the list; ``--json`` writes every entity."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="where README.md and docs/ are")
    parser.add_argument("--json", type=Path, default=None, help="write the figures and entities here")
    args = parser.parse_args()
    figures = measure(args.root)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, ensure_ascii=False), encoding="utf-8")
    print(
        f"{figures['files']} files, {figures['chunks']} chunks, {figures['entities']} entities, "
        f"{figures['relations']} relations, {figures['seconds']} s"
    )
    print(f"junk: {figures['junk']} ({figures['share']:.1%})")
    for reason, count in figures["by_reason"].items():
        names = [f"{e['name']} ({e['type']})" for e in figures["junk_entities"] if e["junk"] == reason]
        print(f"  {reason} {count}: {'; '.join(names)}")


if __name__ == "__main__":
    main()
