"""The default DuckDB destination loads with a memory cap, under whatever the user configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.sync.platform_pipeline import make_pipeline


def _loaded_settings(tmp_path: Path) -> tuple[str, str, str]:
    pipeline = make_pipeline(pipelines_dir=tmp_path / "pipelines")
    pipeline.run([{"a": 1}], table_name="t")
    with pipeline.sql_client() as client:
        memory_limit, insertion_order = client.execute_sql(
            "select current_setting('memory_limit'), current_setting('preserve_insertion_order')::varchar"
        )[0]
    database = pipeline.destination_client().config.credentials.database  # type: ignore[attr-defined]
    return memory_limit, insertion_order, Path(database).name


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("DESTINATION__DUCKDB__CREDENTIALS", "DESTINATION__DUCKDB__CREDENTIALS__DATABASE"):
        monkeypatch.delenv(name, raising=False)


def test_default_file_with_the_memory_cap(tmp_path: Path) -> None:
    assert _loaded_settings(tmp_path) == ("122.0 MiB", "false", "platform_sync.duckdb")


def test_a_configured_path_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(tmp_path / "mine.duckdb"))
    assert _loaded_settings(tmp_path) == ("122.0 MiB", "false", "mine.duckdb")


def test_the_users_duckdb_settings_win(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS__DATABASE", str(tmp_path / "field.duckdb"))
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS__GLOBAL_CONFIG", '{"memory_limit": "1GB"}')
    assert _loaded_settings(tmp_path) == ("953.6 MiB", "false", "field.duckdb")


def test_load_jobs_run_one_at_a_time(tmp_path: Path) -> None:
    """DuckDB runs every job in this process under one memory limit: parallel jobs only compete for it."""
    pipeline = make_pipeline(pipelines_dir=tmp_path / "pipelines")
    assert pipeline.destination.capabilities().max_parallel_load_jobs == 1
