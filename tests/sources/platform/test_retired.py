"""Counting 404s across runs (`sources/platform/retired.py`), in the source state of real dlt runs: one count
per run however many resources ask, a successful answer forgets the count, the last confirmation retires."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dlt

from sources.platform.retired import Retirements, retired_ids, retired_rows

T0 = datetime(2026, 6, 1, tzinfo=UTC)


def run(pipeline: dlt.Pipeline, number: int, steps: Callable[[Retirements], None]) -> Retirements:
    """One run of a source named like ours whose only resource applies `steps` to the run's counts."""
    retirements = Retirements(after=3, run_at=T0 + timedelta(days=number))

    @dlt.source(name="platform")
    def source() -> Any:
        @dlt.resource(name="probe")
        def probe() -> Iterator[dict[str, int]]:
            steps(retirements)
            yield {"run": number}

        return probe

    pipeline.run(source())
    return retirements


def state(pipeline: dlt.Pipeline) -> dict[str, Any]:
    return dict(pipeline.state["sources"]["platform"])


def test_a_run_counts_once_a_success_forgets_and_the_third_run_retires(tmp_path: Path) -> None:
    pipeline = dlt.pipeline(
        pipeline_name="retire_check",
        destination=dlt.destinations.duckdb(str(tmp_path / "w.duckdb")),
        pipelines_dir=str(tmp_path / "pipelines"),
    )

    def twice_unknown(retirements: Retirements) -> None:  # two resources asked in one run
        assert not retirements.not_found("event", "e1", "404 a")
        assert not retirements.not_found("event", "e1", "404 b")
        assert not retirements.not_found("sale", "s1", "404 c")

    run(pipeline, 1, twice_unknown)
    assert state(pipeline)["not_found"] == {
        "event": {"e1": [1, (T0 + timedelta(days=1)).isoformat(), (T0 + timedelta(days=1)).isoformat()]},
        "sale": {"s1": [1, (T0 + timedelta(days=1)).isoformat(), (T0 + timedelta(days=1)).isoformat()]},
    }
    run(pipeline, 2, twice_unknown)
    assert state(pipeline)["not_found"]["event"]["e1"][0] == 2

    def found_then_unknown(retirements: Retirements) -> None:
        retirements.found("sale", "s1")  # the API knows it after all: its count starts over
        assert retirements.not_found("event", "e1", "404 third")  # the third run with a 404 retires

    third = run(pipeline, 3, found_then_unknown)
    assert third.retired_now == [("event", "e1")]
    assert retired_ids(state(pipeline), "event") == {"e1"} and retired_ids(state(pipeline), "sale") == set()
    assert state(pipeline)["not_found"] == {"event": {}, "sale": {}}
    assert retired_rows(state(pipeline)) == [
        {
            "kind": "event",
            "id": "e1",
            "first_not_found_at": T0 + timedelta(days=1),
            "retired_at": T0 + timedelta(days=3),
            "confirmations": 3,
            "reason": "404 third",
        }
    ]

    def is_retired(retirements: Retirements) -> None:
        assert retirements.is_retired("event", "e1") and not retirements.is_retired("sale", "s1")

    run(pipeline, 4, is_retired)
