"""The sync normalizes on two cores by default, and a configured worker count is kept."""

from __future__ import annotations

import os

import pytest
from dlt.common.configuration import resolve_configuration
from dlt.normalize.configuration import NormalizeConfiguration

from pipelines import parallelism


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
