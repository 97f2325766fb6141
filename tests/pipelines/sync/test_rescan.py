"""Full-scan resources: a cheap one is read every run, an expensive one only every `rescan_hours`;
exact requests, tables, state. The interval tests make every scan expensive (`INTERVAL_ONLY`)."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import dlt
import pendulum
import pytest

from pipelines.cli.summary import print_summary
from pipelines.sync.platform_pipeline import SyncResult, sync
from sources.platform import platform_source
from sources.platform.rescan import LAST_SCANS_KEY, is_due
from sources.platform.resources import FULL_SCANS, STREAMS
from sources.platform_client.errors import ConfigurationError
from tests.pipelines.cli.test_cli import cli_env, run_cli, warehouse
from tests.pipelines.sync.test_sync import assert_warehouse_matches_api
from tests.support.api_truth import ApiTruth
from tests.support.sync_helpers import ids, query, source_options

# What the full scans request: their own operations, and the product listing the product snapshots walk.
FULL_SCAN_OPERATIONS = frozenset(STREAMS[name].operation for name in FULL_SCANS)
INCREMENTAL_OPERATIONS = frozenset({"list_subscriptions", "list_attendees", "list_fiscal_documents"})

# A run in which no full scan is due still reads the tail of the transfers, a list sent oldest first
# (`heads.py`): one request when nothing is new (the comments are read per course here: no tail)
TAIL_ONLY = {"list_transfers": 1}


# With no scan cheap enough to be read every run, every full scan waits for `rescan_hours`.
INTERVAL_ONLY = {"scan_budget_share": 0}


def requests_by_operation(sandbox) -> dict[str, int]:
    return {name: sum(answers.values()) for name, answers in sandbox.stats()["operations"].items()}


def full_scan_requests(sandbox) -> dict[str, int]:
    return {name: n for name, n in requests_by_operation(sandbox).items() if name in FULL_SCAN_OPERATIONS}


def loaded_rows(pipeline: dlt.Pipeline) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the full-scan tables by its dlt id and load id: a row read again gets new ones."""
    return {
        table: sorted(query(pipeline, f"select _dlt_id, _dlt_load_id from {table}")) for table in FULL_SCANS
    }


def last_scans(pipeline: dlt.Pipeline) -> dict[str, str]:
    return dict(pipeline.state.get("sources", {}).get("platform", {}).get(LAST_SCANS_KEY, {}))


def first_sync(sandbox, pipeline: dlt.Pipeline, options: dict[str, Any]) -> dict[str, int]:
    """A complete first run; returns the requests its full scans made."""
    sandbox.reset_stats()
    result = sync(pipeline, source_options=options)
    assert result.report.failed == {} and result.report.skipped == {} and result.report.not_due == {}
    assert set(last_scans(pipeline)) == set(FULL_SCANS)
    return full_scan_requests(sandbox)


def synced(sandbox, pipeline: dlt.Pipeline, **options: Any) -> tuple[SyncResult, dict[str, int]]:
    sandbox.reset_stats()
    result = sync(pipeline, source_options=options)
    assert result.report.failed == {} and result.report.skipped == {}
    return result, full_scan_requests(sandbox)


def test_a_second_run_reads_no_full_scan_and_leaves_their_tables_untouched(sandbox, make_pipeline):
    pipeline = make_pipeline()
    options = source_options(sandbox, sandbox.token(), **INTERVAL_ONLY)
    first_sync(sandbox, pipeline, options)
    before, scans_before = loaded_rows(pipeline), last_scans(pipeline)
    assert all(before.values()), "every full-scan table holds rows, the replaced snapshots included"
    transfers_before = query(pipeline, "select * exclude (_dlt_id, _dlt_load_id) from transfers order by id")

    again, requests = synced(sandbox, pipeline, **options)
    # transfers, a list sent oldest first, have their tail read: the page the last read ended on
    assert requests == TAIL_ONLY
    assert set(requests_by_operation(sandbox)) - {"sale_details"} == INCREMENTAL_OPERATIONS | set(TAIL_ONLY)
    after = loaded_rows(pipeline)
    assert {table: after[table] for table in after if table != "transfers"} == {
        table: before[table] for table in before if table != "transfers"
    }
    # the tail's page merged again: the same records, the same values
    transfers_after = query(pipeline, "select * exclude (_dlt_id, _dlt_load_id) from transfers order by id")
    assert transfers_after == transfers_before
    assert last_scans(pipeline) == scans_before
    assert set(again.report.not_due) == set(FULL_SCANS)
    assert not again.is_partial

    last = pendulum.parse(scans_before["products"])
    assert isinstance(last, datetime)
    summary = io.StringIO()
    print_summary(again, summary)
    assert (
        f"products: not due (last full scan {last:%Y-%m-%d %H:%M} UTC, "
        f"next after {last + timedelta(hours=6):%Y-%m-%d %H:%M} UTC; read every 6 h (rescan_hours))"
    ) in summary.getvalue().splitlines()
    assert "PARTIAL" not in summary.getvalue()


def test_a_resource_is_read_again_once_its_interval_has_passed(sandbox, make_pipeline):
    pipeline = make_pipeline()
    options = source_options(sandbox, sandbox.token(), **INTERVAL_ONLY)
    full = first_sync(sandbox, pipeline, options)
    pages_of_products = full["list_products"] // 3  # products, then campaigns and partners walk them too

    overridden, requests = synced(
        sandbox, pipeline, **options, rescan_hours_by_resource={"products": 0, "webhook_origins": 0}
    )
    assert requests == {"list_products": pages_of_products, "list_webhook_origins": 1, **TAIL_ONLY}
    assert set(overridden.report.not_due) == set(FULL_SCANS) - {"products", "webhook_origins"}

    # The interval counts from the start of the run that last scanned: with half the time since the
    # latest of them as the interval, every full scan is due, and with one hour more, none is.
    latest = max(datetime.fromisoformat(at) for at in last_scans(pipeline).values())
    half = (datetime.now(UTC) - latest).total_seconds() / 2 / 3600
    _, not_yet = synced(sandbox, pipeline, **options, rescan_hours=1 + 2 * half)
    assert not_yet == TAIL_ONLY
    everything_due, requests = synced(sandbox, pipeline, **options, rescan_hours=half)
    assert requests == full
    assert everything_due.report.not_due == {}
    assert_warehouse_matches_api(pipeline, sandbox, options["access_token"])


def test_rescan_full_refresh_and_a_dropped_table_read_the_full_scans_now(sandbox, make_pipeline):
    pipeline = make_pipeline()
    options = source_options(sandbox, sandbox.token())
    full = first_sync(sandbox, pipeline, options)

    forced, requests = synced(sandbox, pipeline, **options, rescan=True)
    assert requests == full and forced.report.not_due == {}

    sandbox.reset_stats()
    refreshed = sync(pipeline, full_refresh=True, source_options=options)
    assert full_scan_requests(sandbox) == full and refreshed.report.not_due == {}

    # A table dropped with its resource is read again, whatever its last scan says.
    sandbox.reset_stats()
    pipeline.run(platform_source(**options).with_resources("transfers"), refresh="drop_resources")
    assert full_scan_requests(sandbox) == {"list_transfers": full["list_transfers"]}
    truth = ApiTruth(sandbox.base_url, options["access_token"])
    assert set(ids(pipeline, "transfers")) == truth.ids("/store/v1/financial/transfers")


def test_a_scan_that_fails_mid_way_is_not_recorded_and_runs_again(sandbox, make_pipeline):
    pipeline = make_pipeline()
    options = source_options(sandbox, sandbox.token(), **INTERVAL_ONLY)
    sandbox.set_faults("revoke_after=2")  # the second request answers 401: after the first page
    sandbox.reset_stats()
    failed = sync(pipeline, resources=["lesson_comments"], source_options=options)
    sandbox.set_faults(None)
    assert set(failed.report.failed) == {"lesson_comments"}
    assert requests_by_operation(sandbox) == {"list_lesson_comments": 2}
    assert (
        0
        < len(ids(pipeline, "lesson_comments"))
        < len(ApiTruth(sandbox.base_url, sandbox.token()).ids("/course/v1/comments"))
    )
    assert last_scans(pipeline) == {}

    options["access_token"] = sandbox.token()  # the revoked token stays revoked
    sandbox.reset_stats()
    again = sync(pipeline, resources=["lesson_comments"], source_options=options)
    assert again.report.failed == {} and again.report.not_due == {}
    scanned = requests_by_operation(sandbox)["list_lesson_comments"]
    assert scanned > 2
    assert set(last_scans(pipeline)) == {"lesson_comments"}
    assert set(ids(pipeline, "lesson_comments")) == ApiTruth(sandbox.base_url, options["access_token"]).ids(
        "/course/v1/comments"
    )

    sandbox.reset_stats()
    fresh = sync(pipeline, resources=["lesson_comments"], source_options=options)
    assert set(fresh.report.not_due) == {"lesson_comments"} and sandbox.stats()["total"] == 0


def test_the_command_line_skips_what_is_not_due_and_rescan_reads_it(tmp_path):
    from sandbox.running import running_sandbox

    with running_sandbox(seed=2, scale=100, time_scale=600) as sandbox:
        options = source_options(sandbox, sandbox.token(), rate_limit_time_scale=600, **INTERVAL_ONLY)
        env = cli_env(tmp_path, options)
        sandbox.reset_stats()
        first = run_cli(["sync", "--no-progress"], env, tmp_path)
        assert first.returncode == 0, first.stdout + first.stderr
        full = full_scan_requests(sandbox)
        assert set(full) == FULL_SCAN_OPERATIONS

        sandbox.reset_stats()
        second = run_cli(["sync", "--no-progress"], env, tmp_path)
        assert second.returncode == 0, second.stdout + second.stderr
        assert full_scan_requests(sandbox) == TAIL_ONLY
        not_due = [line for line in second.stdout.splitlines() if ": not due (last full scan " in line]
        assert sorted(line.split(":")[0] for line in not_due) == sorted(FULL_SCANS)
        assert "--rescan" in second.stdout

        sandbox.reset_stats()
        rescanned = run_cli(["sync", "--no-progress", "--rescan"], env, tmp_path)
        assert rescanned.returncode == 0, rescanned.stdout + rescanned.stderr
        assert full_scan_requests(sandbox) == full
        assert "not due" not in rescanned.stdout
        assert_warehouse_matches_api(warehouse(tmp_path), sandbox, env["SOURCES__PLATFORM__ACCESS_TOKEN"])


def test_a_bad_rescan_override_fails_on_the_command_line_before_any_request(tmp_path):
    from sandbox.running import running_sandbox

    with running_sandbox(seed=2, scale=50) as sandbox:
        options = {**source_options(sandbox, sandbox.token()), "rescan_hours_by_resource": {"prodcts": 1}}
        sandbox.reset_stats()
        result = run_cli(["sync"], cli_env(tmp_path, options), tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "rescan_hours_by_resource: 'prodcts' is not a full-scan resource" in result.stderr
        assert sandbox.stats()["total"] == 0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"rescan_hours_by_resource": {"salez": 2}}, "'salez' is not a full-scan resource"),
        ({"rescan_hours_by_resource": {"subscriptions": 2}}, "'subscriptions' is not a full-scan resource"),
        ({"rescan_hours_by_resource": {"products": -1}}, "rescan_hours_by_resource.products must be"),
        ({"rescan_hours_by_resource": ["products"]}, "rescan_hours_by_resource must be a table"),
        ({"rescan_hours": -0.5}, "rescan_hours must be a number of at least 0, got -0.5"),
        ({"rescan_hours": float("nan")}, "rescan_hours must be at most 876000 hours (a century), got nan"),
        ({"rescan_hours_by_resource": {"events": 1e9}}, "rescan_hours_by_resource.events must be at most"),
    ],
)
def test_bad_rescan_settings_raise_a_configuration_error_naming_them(override, message):
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        platform_source(base_url="http://127.0.0.1:9", access_token="unused", **override)


def test_due_exactly_at_the_interval_and_when_the_clock_went_back():
    last = datetime(2026, 11, 22, 20, 10, tzinfo=UTC)
    six = timedelta(hours=6)
    assert not is_due(last, six, last)
    assert not is_due(last, six, last + six - timedelta(microseconds=1))
    assert is_due(last, six, last + six)
    assert is_due(last, six, last - timedelta(seconds=1))  # a clock set back is no reason to trust the scan
    assert is_due(last, timedelta(0), last)  # 0: every run
