"""What checking the offline model files by SHA-256 costs, against loading the models.

In one process: the first check of each model's files (each read and hashed: the
first run may read from disk, later runs from the page cache), a second check (the
digest remembered by path, size and modification time), and the load the check
precedes (the ONNX session and tokenizer; the spaCy pipeline; their libraries imported
before). Times are medians of
``--runs`` (the digest cache is cleared between runs). Usage: ``python bench/model_files.py``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import onnxruntime  # noqa: F401  (imported before the loads are timed)
import spacy  # noqa: F401
import tokenizers  # noqa: F401

from lightrag_pg.offline import model_files
from lightrag_pg.offline._spacy_text import _load_pipeline
from lightrag_pg.offline.minilm import _load_runtime


def _ms(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    """Print the check's cost per model and its ratio to the model's load."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    onnx, tokenizer = model_files.minilm_model_path(), model_files.minilm_tokenizer_path()
    spacy_dir = model_files.spacy_model_path()

    def check_minilm() -> None:
        model_files.verify_file(onnx, "minilm/model.onnx")
        model_files.verify_file(tokenizer, "minilm/tokenizer.json")

    def check_spacy() -> None:
        model_files.verify_spacy_model(spacy_dir)

    spacy_files = [spacy_dir / k.split("/", 1)[1] for k in model_files.PINNED if k.startswith("en_core")]
    sizes = {
        "MiniLM": onnx.stat().st_size + tokenizer.stat().st_size,
        "spaCy": sum(p.stat().st_size for p in spacy_files),
    }
    checks = {"MiniLM": check_minilm, "spaCy": check_spacy}
    first: dict[str, float] = {}
    cold: dict[str, list[float]] = {name: [] for name in checks}
    warm: dict[str, list[float]] = {name: [] for name in checks}
    for run in range(args.runs):
        model_files._digests.clear()
        for name, check in checks.items():
            elapsed = _ms(check)
            if run == 0:
                first[name] = elapsed
            cold[name].append(elapsed)
            warm[name].append(_ms(check))
    loads = {
        "MiniLM": _ms(lambda: _load_runtime(str(onnx), str(tokenizer))),
        "spaCy": _ms(lambda: _load_pipeline(str(spacy_dir))),
    }
    print("| model | MB | first check ms | check ms (median) | second check ms | load ms | check / load |")
    print("|---|---|---|---|---|---|---|")
    for name in checks:
        check_ms = statistics.median(cold[name])
        print(
            f"| {name} | {sizes[name] / 1e6:.1f} | {first[name]:.1f} | {check_ms:.1f} | "
            f"{statistics.median(warm[name]):.3f} | {loads[name]:.0f} | {check_ms / loads[name]:.1%} |"
        )


if __name__ == "__main__":
    main()
