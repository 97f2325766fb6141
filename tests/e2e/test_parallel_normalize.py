"""The sync normalizes on two cores by default, and a configured worker count is kept."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dlt
import pytest
from dlt.common.configuration import resolve_configuration
from dlt.normalize.configuration import NormalizeConfiguration

from pipelines import normalize_balance, parallelism


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


def test_tables_are_dealt_to_workers_by_their_work() -> None:
    sizes = {
        "_dlt_pipeline_state.a.0.typed-jsonl.gz": 1,
        "_platform_departures.b.0.typed-jsonl.gz": 30,  # sorts first: dlt's split moved by one
        "affiliations.c.0.parquet": 900,
        "event_attendees.d.0.typed-jsonl.gz": 400,
        "fiscal_documents.e.0.parquet": 5000,
        "lesson_comments.f.0.parquet": 4000,
        "subscriptions.g.0.typed-jsonl.gz": 1000,
        "subscriptions.h.1.typed-jsonl.gz": 200,  # a table's files stay together
    }
    groups = normalize_balance.balanced_groups(
        list(sizes), 2, lambda f: normalize_balance.work_of_file(sizes[f], f)
    )
    # the files dlt imports as they are count as no work: they join the group with less work
    assert groups == [
        ["subscriptions.g.0.typed-jsonl.gz", "subscriptions.h.1.typed-jsonl.gz"],
        [
            "event_attendees.d.0.typed-jsonl.gz",
            "_platform_departures.b.0.typed-jsonl.gz",
            "_dlt_pipeline_state.a.0.typed-jsonl.gz",
            "affiliations.c.0.parquet",
            "fiscal_documents.e.0.parquet",
            "lesson_comments.f.0.parquet",
        ],
    ]
    assert normalize_balance.balanced_groups(list(sizes)[:1], 2, lambda f: 1) == [list(sizes)[:1]]


def test_dlt_normalizes_with_the_balanced_split(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Through a real dlt normalize on two workers: dlt asks for the split, with the sizes of the package's
    files; the two large row tables go to different workers although a small table sorts first."""
    monkeypatch.setenv("NORMALIZE__WORKERS", "2")
    parallelism.parallel_normalize()
    seen: list[list[list[str]]] = []
    split = normalize_balance.balanced_groups

    def recording(files: Any, groups: int, work_of: Any) -> list[list[str]]:
        out = split(files, groups, work_of)
        seen.append([sorted({os.path.basename(f).split(".")[0] for f in group}) for group in out])
        return out

    monkeypatch.setattr(normalize_balance, "balanced_groups", recording)

    def rows(count: int) -> Any:
        return ({"id": i, "tags": [{"tag": f"t{i}"}]} for i in range(count))

    pipeline = dlt.pipeline(
        pipeline_name="balanced",
        destination=dlt.destinations.duckdb(str(tmp_path / "b.duckdb")),
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(
        [
            dlt.resource(rows(5), name="_a_small"),
            dlt.resource(rows(20_000), name="big_a"),
            dlt.resource(rows(15_000), name="big_b"),
            dlt.resource(rows(10), name="c_small"),
        ]
    ).raise_on_failed_jobs()
    [groups] = seen
    assert len(groups) == 2
    assert [group for group in groups if "big_a" in group] != [group for group in groups if "big_b" in group]
    with pipeline.sql_client() as client:
        assert client.execute_sql("select count(*) from big_a__tags")[0][0] == 20_000


def test_the_split_is_installed_only_over_the_dlt_it_wraps() -> None:
    assert normalize_balance._dlt_splits_as_wrapped()  # dlt 1.31, as pinned in pyproject.toml
