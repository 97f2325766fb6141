"""A load that does not fit DuckDB's memory limit is loaded again with more instead of failing the run."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest
from dlt.destinations.impl.duckdb.configuration import DuckDbCredentials

from pipelines.sync.load_memory import CEILING_MB, run_within_memory

ROWS, COLUMNS = 10_000, 120


@dlt.resource(name="wide", primary_key="id", write_disposition="merge")
def _wide() -> Any:
    for start in range(0, ROWS, 5_000):
        yield [
            {"id": i, **{f"field_{c}": f"value {i} {c}" for c in range(COLUMNS)}}
            for i in range(start, start + 5_000)
        ]


def _pipeline(tmp_path: Path, limit: str) -> dlt.Pipeline:
    credentials = DuckDbCredentials(str(tmp_path / "wide.duckdb"))
    credentials.global_config = {"memory_limit": limit, "preserve_insertion_order": False, "threads": 1}
    return dlt.pipeline(
        "wide",
        destination=dlt.destinations.duckdb(credentials=credentials, max_parallel_load_jobs=1),
        dataset_name="raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def test_a_merge_too_wide_for_the_memory_limit_loads_with_twice_the_limit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOAD__RAISE_ON_MAX_RETRIES", "1")  # dlt retries a failed job 5 times by default
    pipeline = _pipeline(tmp_path, "8MB")
    with pytest.raises(Exception, match="(?i)out of memory"):  # what dlt alone does with this limit
        pipeline.run(_wide(), loader_file_format="parquet")
    pipeline.drop_pending_packages()
    with caplog.at_level(logging.WARNING, logger="platform_sync.pipeline"):
        info = run_within_memory(pipeline, _wide(), loader_file_format="parquet")
    assert not info.has_failed_jobs
    assert "loading the pending package again with 16MB" in caplog.text  # then more, as needed
    with duckdb.connect(str(tmp_path / "wide.duckdb"), read_only=True) as connection:
        count, distinct = connection.execute("select count(*), count(distinct id) from raw.wide").fetchone()  # type: ignore[misc]
    assert count == distinct == ROWS
    assert CEILING_MB >= 1024
