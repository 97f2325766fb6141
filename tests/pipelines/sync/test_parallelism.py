"""The sync normalizes on two cores by default, and a configured worker count is kept."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dlt
import pytest
from dlt.common.configuration import resolve_configuration
from dlt.normalize.configuration import NormalizeConfiguration

from pipelines.sync import parallelism


def _normalize_workers() -> int:
    # partial: the storage folders dlt fills in when it runs are not needed to read `workers`
    config = resolve_configuration(NormalizeConfiguration(), sections=("normalize",), accept_partial=True)
    return config.workers or 1


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 2), (16, 2), (None, 1)])
def test_one_worker_per_core_at_most_two(cores: int | None, workers: int) -> None:
    assert parallelism.default_normalize_workers(cores) == workers


def test_defaults_where_not_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NORMALIZE__WORKERS", raising=False)
    parallelism.parallel_normalize()
    assert _normalize_workers() == parallelism.default_normalize_workers(os.cpu_count())


def test_configured_values_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMALIZE__WORKERS", "3")
    parallelism.parallel_normalize()
    assert _normalize_workers() == 3


def test_dlt_normalizes_on_two_workers_from_its_public_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Through a real dlt normalize on the two workers the default asks for: every row and child row
    arrives, with dlt splitting the files itself (no split of ours: issue 28)."""
    monkeypatch.setenv("NORMALIZE__WORKERS", "2")
    parallelism.parallel_normalize()

    def rows(count: int) -> Any:
        return ({"id": i, "tags": [{"tag": f"t{i}"}]} for i in range(count))

    pipeline = dlt.pipeline(
        pipeline_name="two_workers",
        destination=dlt.destinations.duckdb(str(tmp_path / "b.duckdb")),
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(
        [
            dlt.resource(rows(5), name="_a_small"),
            dlt.resource(rows(2_000), name="big_a"),
            dlt.resource(rows(1_500), name="big_b"),
        ]
    ).raise_on_failed_jobs()
    with pipeline.sql_client() as client:
        counts = {
            table: client.execute_sql(f"select count(*) from {table}")[0][0]
            for table in ("_a_small", "big_a", "big_a__tags", "big_b", "big_b__tags")
        }
    assert counts == {
        "_a_small": 5,
        "big_a": 2_000,
        "big_a__tags": 2_000,
        "big_b": 1_500,
        "big_b__tags": 1_500,
    }
