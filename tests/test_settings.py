"""Settings validation: bounds tied to PostgreSQL limits and helpful errors for unknown names."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lightrag_pg import LightRAG
from lightrag_pg.config import (
    BTREE_MAX_KEY_BYTES,
    MAX_ENTITY_NAME_LENGTH,
    MAX_ID_BYTES,
    Settings,
)
from lightrag_pg.errors import ConfigurationError


def test_widest_index_row_fits_the_btree_limit() -> None:
    # doc_relations (doc_id, src, tgt): 8-byte tuple header, 4-byte varlena headers.
    widest = 8 + (4 + MAX_ID_BYTES) + 2 * (4 + 4 * MAX_ENTITY_NAME_LENGTH)
    assert widest <= BTREE_MAX_KEY_BYTES
    assert Settings().max_entity_name_length <= MAX_ENTITY_NAME_LENGTH


def test_max_entity_name_length_above_the_index_limit_is_refused() -> None:
    assert Settings(max_entity_name_length=MAX_ENTITY_NAME_LENGTH).max_entity_name_length == 270
    for value in (MAX_ENTITY_NAME_LENGTH + 1, 3000):
        expected = f"max_entity_name_length={value} is too long: at most 270"
        with pytest.raises(ConfigurationError, match=expected):
            Settings(max_entity_name_length=value)


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("chunk_token_sizes", "chunk_token_size"),
        ("chunk_size", "chunk_token_size"),
        ("cosine_treshold", "cosine_threshold"),
        ("llm_maxasync", "llm_max_async"),
    ],
)
def test_unknown_setting_suggests_the_nearest(name: str, suggestion: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_kwargs(**{name: 1})
    assert str(info.value) == f"unknown setting '{name}' (did you mean {suggestion}?)"


def test_unknown_setting_without_a_near_name() -> None:
    with pytest.raises(ConfigurationError) as info:
        Settings.from_kwargs(zzz=1)
    assert str(info.value) == "unknown setting 'zzz'"


def test_several_unknown_settings_are_all_named() -> None:
    with pytest.raises(ConfigurationError, match=r"'chunk_size'.*'zzz'"):
        Settings.from_kwargs(zzz=1, chunk_size=2)


def test_upstream_working_dir_is_explained() -> None:
    with pytest.raises(ConfigurationError) as info:
        LightRAG(working_dir="./rag_storage")
    message = str(info.value)
    assert "working_dir" in message and "PostgreSQL" in message
    assert "dsn=" in message and "LIGHTRAG_PG_DSN" in message and "workspace=" in message


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("chunk_token_size", 0, "must be a positive integer"),
        ("llm_max_async", True, "must be a positive integer"),
        ("max_retries", -1, "must be an integer >= 0"),
        ("pool_acquire_timeout", "30", "must be positive seconds"),
        ("extractor", "spacy", "must be 'llm' or 'nlp'"),
        ("tokenizer_name", 3, "should be a valid string"),
        ("enable_llm_cache", "yes", "should be a valid boolean"),
        ("entity_types", (), "must not be empty"),
    ],
)
def test_each_field_is_checked_by_its_declared_type(name: str, value: object, problem: str) -> None:
    """Settings are declared once (a pydantic dataclass): a value of the wrong type or out of
    bounds is a ConfigurationError naming the field, as the hand-written checks said."""
    with pytest.raises(ConfigurationError, match=f"{name}.*{problem}|{problem}.*{name}") as info:
        Settings(**{name: value})
    assert name in str(info.value)


def test_settings_convert_only_the_lenient_inputs() -> None:
    settings = Settings(data_dir="/tmp/x", entity_types=["A", "B"], llm_deadline=5)
    assert settings.data_dir == Path("/tmp/x") and settings.entity_types == ("A", "B")
    assert settings.llm_deadline == 5.0 and isinstance(settings.llm_deadline, float)
    assert (
        dataclasses.replace(settings, chunk_token_size=50, chunk_overlap_token_size=0).chunk_token_size == 50
    )
    with pytest.raises(ConfigurationError, match="chunk_overlap_token_size"):
        dataclasses.replace(settings, chunk_token_size=50)


def test_server_settings_are_declared_once_too() -> None:
    from lightrag_pg.server.settings import ConversionLimits, ServerSettings

    settings = ServerSettings(input_dir="/tmp/in", cors_origins=["http://a"])
    assert settings.input_dir == Path("/tmp/in") and settings.cors_origins == ("http://a",)
    assert type(settings.default_workspace).__name__ == "WorkspaceName"
    for bad, problem in [
        ({"port": "80"}, "port"),
        ({"max_workspaces": 0}, "max_workspaces must be a positive integer"),
        ({"shutdown_timeout": -1}, "shutdown_timeout must be positive seconds"),
        ({"zzz": 1}, "unknown setting 'zzz'"),
    ]:
        with pytest.raises(ConfigurationError, match=problem):
            ServerSettings(**bad)
    with pytest.raises(ConfigurationError, match="unknown setting 'speed'"):
        ConversionLimits(speed=1)
