"""The offline model files are checked by SHA-256 before they are loaded (lightrag_pg.offline.model_files)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("spacy")
pytest.importorskip("onnxruntime")

from lightrag_pg.errors import ConfigurationError, ModelFileMismatch
from lightrag_pg.offline._spacy_text import load_spacy
from lightrag_pg.offline.keywords import offline_keywords
from lightrag_pg.offline.minilm import LocalMiniLM
from lightrag_pg.offline.model_files import (
    MODEL_DIR_ENV,
    PINNED,
    file_digest,
    minilm_model_path,
    minilm_tokenizer_path,
    spacy_model_path,
    verify_file,
    verify_spacy_model,
)


def _installed() -> dict[str, Path]:
    """Each pinned key and the installed file it names."""
    spacy_dir = spacy_model_path()
    files = {"minilm/model.onnx": minilm_model_path(), "minilm/tokenizer.json": minilm_tokenizer_path()}
    for key in PINNED:
        if key.startswith("en_core_web_sm/"):
            files[key] = spacy_dir / key.removeprefix("en_core_web_sm/")
    return files


def _model_dir(root: Path, tampered: str = "") -> Path:
    """A model directory of links to the installed files, ``tampered`` a changed copy."""
    for key, source in _installed().items():
        target = root / key
        target.parent.mkdir(parents=True, exist_ok=True)
        if key == tampered:
            data = bytearray(source.read_bytes())
            data[len(data) // 2] ^= 0x01
            target.write_bytes(bytes(data))
        else:
            target.symlink_to(source)
    return root


def test_the_installed_files_match_the_pinned_digests() -> None:
    files = _installed()
    assert set(files) == set(PINNED)
    for key, path in files.items():
        verify_file(path, key)


def test_the_spacy_pins_are_the_files_the_pipeline_is_built_from(tmp_path: Path) -> None:
    """Every file spaCy writes for the loaded pipeline (and so reads to build it) is pinned,
    but meta.json: the package's name and documentation."""
    load_spacy().to_disk(tmp_path)
    written = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    pinned = {k.removeprefix("en_core_web_sm/") for k in PINNED if k.startswith("en_core_web_sm/")}
    assert written - {"meta.json"} == pinned


def test_a_tampered_spacy_file_in_the_model_dir_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _model_dir(tmp_path, tampered="en_core_web_sm/ner/moves")
    monkeypatch.setenv(MODEL_DIR_ENV, str(root))
    bad = root / "en_core_web_sm/ner/moves"
    with pytest.raises(ModelFileMismatch) as caught:
        load_spacy()
    message = str(caught.value)
    assert str(bad) in message and PINNED["en_core_web_sm/ner/moves"] in message
    assert file_digest(bad) in message and "Reinstall" in message
    with pytest.raises(ModelFileMismatch):
        offline_keywords("Who maintains the Debian installer?")  # no silent fallback


def test_a_tampered_minilm_file_in_the_model_dir_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _model_dir(tmp_path, tampered="minilm/tokenizer.json")
    monkeypatch.setenv(MODEL_DIR_ENV, str(root))
    model = LocalMiniLM()
    with pytest.raises(ModelFileMismatch, match=r"minilm/tokenizer\.json"):
        model.load()
    with pytest.raises(ModelFileMismatch):
        model.truncate(["text"])
    with pytest.raises(ModelFileMismatch, match=PINNED["minilm/model.onnx"]):
        LocalMiniLM(model_path=root / "minilm/tokenizer.json").load()


def test_an_intact_model_dir_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _model_dir(tmp_path)
    monkeypatch.setenv(MODEL_DIR_ENV, str(root))
    assert minilm_model_path() == root / "minilm/model.onnx"
    assert minilm_tokenizer_path() == root / "minilm/tokenizer.json"
    assert spacy_model_path() == root / "en_core_web_sm"
    verify_spacy_model(spacy_model_path())
    model = LocalMiniLM()
    model.load()
    assert model.embed_sync(["pgvector"]).shape == (1, 384)


def test_a_model_dir_without_a_file_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "minilm").mkdir()
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    with pytest.raises(ConfigurationError, match=r"minilm/model\.onnx is missing from"):
        LocalMiniLM()
    with pytest.raises(ConfigurationError, match=r"en_core_web_sm/config\.cfg is missing"):
        load_spacy()


def test_the_old_variables_point_to_the_model_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIGHTRAG_PG_MINILM_ONNX", "/somewhere/model.onnx")
    with pytest.raises(ConfigurationError, match=MODEL_DIR_ENV):
        LocalMiniLM()


def test_a_file_is_hashed_once_per_path_size_and_mtime(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"one")
    first = file_digest(path)
    stat = path.stat()
    path.write_bytes(b"two")  # same size: only the modification time tells
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file_digest(path) == first, "remembered, not read again"
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert file_digest(path) != first
    shutil.rmtree(tmp_path)
    with pytest.raises(ConfigurationError, match="not found"):
        file_digest(path)
