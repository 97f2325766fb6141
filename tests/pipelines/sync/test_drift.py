"""End to end against an API that departs from its spec (the sandbox's drift): every record lands, the
values that did not depart are exact, and the departures table holds exactly what the sandbox sent.

Each test syncs two sandboxes of the same world, one drifting and one exact, and compares the warehouses.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest
from dlt.common.normalizers.naming.snake_case import NamingConvention

from pipelines.sync.checkpoints import Checkpoints
from pipelines.sync.platform_pipeline import SyncResult, sync
from sandbox.running import SandboxHandle, running_sandbox
from sources.platform.models import KINDS
from sources.platform.resources import STREAMS
from tests.support.sync_helpers import E2E_SCALE, E2E_TIME_SCALE, source_options
from tests.support.warehouses import rows_by_record

DRIFT = 0.03
RESOURCE_OF = {stream.operation: name for name, stream in STREAMS.items()}
NAMING = NamingConvention()
Served = list[dict[str, Any]]


@contextmanager
def _world(seed: int, drift: float) -> Iterator[SandboxHandle]:
    with running_sandbox(seed=seed, scale=E2E_SCALE, time_scale=E2E_TIME_SCALE, drift=drift) as handle:
        yield handle


def _pipeline(tmp_path: Path, name: str) -> dlt.Pipeline:
    return dlt.pipeline(
        pipeline_name=name,
        destination=dlt.destinations.duckdb(str(tmp_path / f"{name}.duckdb")),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def _sync(pipeline: dlt.Pipeline, handle: SandboxHandle, checkpoint: int = 0) -> SyncResult:
    """One sync; in one pass unless `checkpoint` (the load's files are the run's, `load_info`)."""
    options = source_options(handle, handle.token())
    return sync(pipeline, source_options=options, checkpoints=Checkpoints(checkpoint))


def test_a_run_in_passes_records_each_departure_with_the_pass_that_loaded_its_record(tmp_path: Path) -> None:
    """Checkpoints of 30 sale details: the sales fetched by the later passes bring their departures into
    their own loads; over the run's loads, every departure the API served is recorded once."""
    pipeline = _pipeline(tmp_path, "passes")
    with _world(3, DRIFT) as drifting:
        result = _sync(pipeline, drifting, checkpoint=30)
        served = drifting.departures()
    assert result.extra["checkpoints"] > 2
    assert _recorded(pipeline) == _expected(served)
    loads = _query(
        pipeline, "select count(distinct _dlt_load_id) from _platform_departures where resource = 'sales'"
    )
    assert loads[0][0] > 1  # the later passes' sales departures are in their own loads


@pytest.mark.parametrize("seed", [3, 11])
def test_a_drifting_api_loses_nothing_and_every_departure_is_recorded(tmp_path: Path, seed: int) -> None:
    drifted, reference = _pipeline(tmp_path, "drifted"), _pipeline(tmp_path, "reference")
    with _world(seed, DRIFT) as drifting, _world(seed, 0.0) as exact:
        first = _sync(drifted, drifting)
        served = drifting.departures()
        _sync(reference, exact)

        assert first.report.failed == {} and first.report.skipped == {} and not first.is_partial
        assert first.report.departures.quarantined() == []
        assert _recorded(drifted) == _expected(served)
        assert {d["kind"] for d in served} == set(KINDS) - {"malformed", "unloadable_name", "mended"}
        assert first.report.departures.summary()  # the run's summary says so
        _assert_one_parquet_file_per_flat_table(first)
        _assert_same_data(drifted, reference, served)
        _assert_cursors_not_ahead(drifted, reference)

        # a day later, the next incremental runs bring the same changes into both
        for handle in (drifting, exact):
            handle.advance(86_400)
        drifting.reset_departures()
        second = _sync(drifted, drifting)
        _sync(reference, exact)
        assert not second.is_partial
        _assert_same_data(drifted, reference, served + drifting.departures())


def _assert_one_parquet_file_per_flat_table(result: SyncResult) -> None:
    """Rows with fields the spec does not list are packed with their table (`fastpath/new_fields.py`):
    each flat table is loaded from one file, as on exact pages; the departures in the run's format too."""
    files: Counter[tuple[str, str]] = Counter()
    for package in result.load_info.load_packages:
        for job in package.jobs["completed_jobs"]:
            files[(job.job_file_info.table_name, job.job_file_info.file_format)] += 1
    flat = [name for name, stream in STREAMS.items() if stream.columnar_layout() is not None]
    assert {name: files[(name, "parquet")] for name in flat} == dict.fromkeys(flat, 1)
    departures = {fmt for (table, fmt) in files if table.startswith("_platform_departures")}
    assert departures == {"parquet"}


def _recorded(pipeline: dlt.Pipeline) -> dict[tuple[str, str, str], int]:
    # one row per resource, field path and kind per load; a run in passes loads each pass's own records
    rows = _query(
        pipeline,
        "select resource, field_path, kind, sum(records) from _platform_departures group by all",
    )
    return {(resource, path, kind): int(records) for resource, path, kind, records in rows}


def _expected(served: Served) -> dict[tuple[str, str, str], int]:
    records: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for departure in served:
        resource = RESOURCE_OF[departure["operation"]]
        records[(resource, departure["path"], departure["kind"])].add(departure["record_id"])
    return {key: len(ids) for key, ids in records.items()}


def _assert_same_data(drifted: dlt.Pipeline, reference: dlt.Pipeline, served: Served) -> None:
    """Every record of the reference is in the drifted warehouse and none more; every value that did not
    depart is equal; the child rows of a record that did not depart at all are equal."""
    departed: dict[tuple[str, str], set[str]] = defaultdict(set)
    for departure in served:
        departed[(RESOURCE_OF[departure["operation"]], departure["record_id"])].add(departure["path"])
    ours, theirs = (rows_by_record(_path(p), latest_snapshot_only=True) for p in (drifted, reference))
    assert ours.keys() == theirs.keys()
    for table, records in theirs.items():
        resource = table.split("__")[0]
        if "__" in table:  # a child table: the rows of each record that did not depart at all
            # (in the reference's columns: the drifted table has those of the unlisted fields too)
            columns = {column for rows in records.values() for row in rows for column, _ in row}
            for record_id in records.keys() | ours[table].keys():
                if not departed.get((resource, record_id)):
                    mine = Counter(
                        tuple(c for c in row if c[0] in columns) for row in ours[table].get(record_id, [])
                    )
                    assert mine == Counter(records.get(record_id, [])), (table, record_id)
            continue
        assert records.keys() == ours[table].keys(), table
        for record_id, rows in records.items():
            paths = departed.get((resource, record_id), set())
            [(their_row)] = rows
            [(our_row)] = ours[table][record_id]
            mine, other = dict(our_row), dict(their_row)
            for column, value in other.items():
                if not _departed(column, paths):
                    assert mine.get(column) == value, (table, record_id, column)


def _departed(column: str, paths: set[str]) -> bool:
    for path in paths:
        if "[]" in path:
            continue
        prefix = "__".join(NAMING.normalize_path(part) for part in path.split("."))
        if column == prefix or column.startswith(prefix + "__"):
            return True
    return False


def _assert_cursors_not_ahead(drifted: dlt.Pipeline, reference: dlt.Pipeline) -> None:
    """A departed cursor value never moves a cursor: the drifted run's cursors are at most the exact run's."""
    ours, theirs = _cursors(drifted), _cursors(reference)
    assert ours.keys() == theirs.keys()
    for name, value in theirs.items():
        assert ours[name] <= value, name


def _cursors(pipeline: dlt.Pipeline) -> dict[str, datetime]:
    resources = pipeline.state["sources"]["platform"]["resources"]
    cursors = {
        "subscriptions": resources["subscriptions"]["updated_at"]["value"],
        "fiscal_documents": resources["fiscal_documents"]["emission_date"]["value"],
    }
    for event_id, cursor in resources["event_attendees"]["modified_at"].items():
        cursors[f"attendees {event_id}"] = cursor["value"]
    return {name: datetime.fromisoformat(value) for name, value in cursors.items()}


def _path(pipeline: dlt.Pipeline) -> str:
    return str(pipeline.destination_client().config.credentials.database)  # type: ignore[attr-defined]


def _query(pipeline: dlt.Pipeline, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(_path(pipeline), read_only=True) as connection:
        connection.execute("set schema 'platform_raw'")
        return connection.execute(sql).fetchall()
