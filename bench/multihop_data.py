"""Build the MuSiQue and HotpotQA development sets from a clone of HippoRAG's repository.

The sets are those ``SOURCE.md`` (beside them) describes: HippoRAG's question files
(``data/musique_train.json``, ``data/hotpotqa_train.json`` at commit
``3d95d255a8db0c1699b853cfb4fbe5056708162d``, 100 questions each, drawn from the
datasets' train splits) and, when the clone holds them, its 1,000-question files
(``data/musique.json``, ``data/hotpotqa.json``, the same record shapes), whose questions
follow the first 100. Each question brings its own paragraphs (MuSiQue's 20, gold and
distractors; HotpotQA's 10); the corpus is their union in question order, so the first
N passages hold the first questions whole. A question is
``{id, question, answer, ..., supporting_titles, supporting_passage_ids}``, the ids
0-based indices into the corpus (MuSiQue: its paragraphs marked supporting, matched by
title and text; HotpotQA: the paragraphs of its supporting-fact titles); a passage is
``{title, text}`` (HotpotQA's sentences joined).

The further questions can come from another repository holding records of the same shape
(``--dev-clone GITDIR --dev-commit SHA --dev-path musique=PATH --dev-path hotpotqa=PATH``;
a JSON array or JSON Lines): each file read is named with its commit and sha256 so
``SOURCE.md`` can record it. A further record must have the shape of its set (MuSiQue:
20 paragraphs, as many marked supporting as the question has hops; HotpotQA: every
supporting-fact title among its paragraphs), else the script stops.

Only MuSiQue and HotpotQA are read; the repositories' other multi-hop sets are left alone.
With ``--questions N`` (default: every question available) the first N questions are
written as ``<set>_<N>_questions.json`` and ``<set>_<N>_corpus.json``; the first 100 are
also written as ``<set>_train100_*.json``, checked against HippoRAG's own corpus file.
Usage: ``python bench/multihop_data.py --clone PATH/TO/HippoRAG.git [--out DIR] [--questions 300]
[--dev-clone GITDIR --dev-commit SHA --dev-path musique=PATH --dev-path hotpotqa=PATH]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COMMIT = "3d95d255a8db0c1699b853cfb4fbe5056708162d"
SETS: tuple[str, ...] = ("musique", "hotpotqa")
DEFAULT_OUT = Path("/work/shared/data/multihop")

Record = dict[str, Any]


def git_blob(clone: Path, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``commit`` of the clone (a git directory), or None if the
    clone does not hold its content."""
    spec = f"{commit}:{path}"
    check = subprocess.run(["git", "--git-dir", str(clone), "cat-file", "-e", spec], capture_output=True)
    if check.returncode:
        return None
    return subprocess.run(
        ["git", "--git-dir", str(clone), "show", spec], check=True, capture_output=True
    ).stdout


def git_json(clone: Path, commit: str, path: str) -> Any | None:
    """The JSON file ``path`` at ``commit`` of the clone, or None if the clone lacks it."""
    blob = git_blob(clone, commit, path)
    return None if blob is None else json.loads(blob)


def records_of(blob: bytes) -> list[Record]:
    """The records of a JSON array or of JSON Lines."""
    text = blob.decode("utf-8")
    if text.lstrip().startswith("["):
        records: list[Record] = json.loads(text)
        return records
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def shape_error(name: str, record: Record) -> str | None:
    """Why ``record`` is not a question of set ``name`` as HippoRAG's files hold them, or None."""
    try:
        if name == "musique":
            hops = len(record["question_decomposition"])
            gold = sum(bool(p["is_supporting"]) for p in record["paragraphs"])
            if len(record["paragraphs"]) != 20 or gold != hops or not record["question"]:
                return f"{len(record['paragraphs'])} paragraphs, {gold} supporting for {hops} hops"
            return None
        titles = {title for title, _ in record["context"]}
        missing = [t for t, _ in record["supporting_facts"] if t not in titles]
        if missing or not record["question"] or record["type"] not in ("bridge", "comparison"):
            return f"supporting titles not among its paragraphs: {missing}"
        return None
    except (KeyError, TypeError, ValueError) as error:
        return f"not a {name} record: {error!r}"


def paragraphs(name: str, record: Record) -> list[tuple[str, str, bool]]:
    """A question's own paragraphs: title, text and whether it is gold."""
    if name == "musique":
        return [(p["title"], p["paragraph_text"], bool(p["is_supporting"])) for p in record["paragraphs"]]
    gold = {title for title, _ in record["supporting_facts"]}
    return [(title, "".join(sentences), title in gold) for title, sentences in record["context"]]


def build(name: str, records: Sequence[Record]) -> tuple[list[Record], list[Record]]:
    """Questions and corpus of ``records`` (see the module docstring)."""
    index: dict[tuple[str, str], int] = {}
    for record in records:
        for title, text, _ in paragraphs(name, record):
            index.setdefault((title, text), len(index))
    corpus = [{"title": title, "text": text} for title, text in index]
    questions: list[Record] = []
    for record in records:
        own = paragraphs(name, record)
        if name == "musique":
            gold = [(t, x) for t, x, g in own if g]
            head = {k: record[k] for k in ("id", "question", "answer", "answer_aliases")}
        else:
            titles = list(dict.fromkeys(title for title, _ in record["supporting_facts"]))
            by_title = {t: (t, x) for t, x, _ in own}
            gold = [by_title[t] for t in titles if t in by_title]
            head = {"id": record["_id"], **{k: record[k] for k in ("question", "answer", "type", "level")}}
        ids = [index[g] for g in gold]
        questions.append({**head, "supporting_titles": [t for t, _ in gold], "supporting_passage_ids": ids})
    return questions, corpus


def corpus_file(name: str, raw: Any) -> list[Record]:
    """HippoRAG's corpus file as ``{title, text}`` passages (HotpotQA's is a title -> sentences map)."""
    if isinstance(raw, dict):
        return [{"title": title, "text": "".join(sentences)} for title, sentences in raw.items()]
    return [{"title": p["title"], "text": p["text"]} for p in raw]


def write(out: Path, stem: str, questions: list[Record], corpus: list[Record]) -> None:
    """``<stem>_questions.json`` and ``<stem>_corpus.json`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}_questions.json").write_text(json.dumps(questions, ensure_ascii=False, indent=1) + "\n")
    (out / f"{stem}_corpus.json").write_text(json.dumps(corpus, ensure_ascii=False, indent=1) + "\n")
    print(f"{stem}: {len(questions)} questions, {len(corpus)} passages -> {out}")


def dev_records(args: argparse.Namespace, name: str) -> list[Record] | None:
    """The set's further questions: from ``--dev-clone`` if its ``--dev-path`` names the set,
    else HippoRAG's ``data/<set>.json`` in ``--clone``; None if the clone lacks the file."""
    paths = dict(p.split("=", 1) for p in args.dev_path)
    clone, commit, path = args.clone, args.commit, f"data/{name}.json"
    if args.dev_clone and name in paths:
        clone, commit, path = args.dev_clone, args.dev_commit, paths[name]
    blob = git_blob(clone, commit, path)
    if blob is None:
        print(f"{name}: {path} is not in {clone} at {commit}; only the first 100 questions")
        return None
    records = records_of(blob)
    print(
        f"{name}: {len(records)} records from {path} at {commit}, sha256 {hashlib.sha256(blob).hexdigest()}"
    )
    return records


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clone", type=Path, required=True, help="git directory of HippoRAG's repository")
    parser.add_argument("--commit", default=COMMIT, help="commit to read (default the sets' first)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the sets are written")
    parser.add_argument("--questions", type=int, default=0, help="questions per set (default: all)")
    parser.add_argument("--dev-clone", type=Path, default=None, help="git directory of the further questions")
    parser.add_argument("--dev-commit", default="HEAD", help="commit of --dev-clone to read")
    parser.add_argument(
        "--dev-path", action="append", default=[], metavar="SET=PATH", help="a set's file in --dev-clone"
    )
    args = parser.parse_args(argv)
    unknown = [p for p in args.dev_path if p.split("=", 1)[0] not in SETS or "=" not in p]
    if unknown:
        parser.error(f"--dev-path takes SET=PATH with SET one of {', '.join(SETS)}: {unknown}")
    for name in SETS:
        train = git_json(args.clone, args.commit, f"data/{name}_train.json")
        if train is None:
            print(f"{name}: data/{name}_train.json is not in the clone", file=sys.stderr)
            return 1
        questions, corpus = build(name, train)
        raw_corpus = git_json(args.clone, args.commit, f"data/{name}_train_corpus.json")
        if raw_corpus is not None and corpus_file(name, raw_corpus) != corpus:
            print(f"{name}: the corpus built differs from data/{name}_train_corpus.json", file=sys.stderr)
            return 1
        write(args.out, f"{name}_train100", questions, corpus)
        dev = dev_records(args, name) or []
        seen = {r.get("id", r.get("_id")) for r in train}
        records = list(train) + [r for r in dev if r.get("id", r.get("_id")) not in seen]
        wanted = args.questions or len(records)
        if wanted > len(records):
            print(f"{name}: {wanted} questions asked, {len(records)} available")
        bad = [
            (r.get("id", r.get("_id")), e)
            for r in records[len(train) : wanted]
            if (e := shape_error(name, r))
        ]
        if bad:
            print(f"{name}: {len(bad)} records of another shape, first {bad[:3]}", file=sys.stderr)
            return 1
        if len(records) > len(train) or args.questions:
            write(args.out, f"{name}_{min(wanted, len(records))}", *build(name, records[:wanted]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
