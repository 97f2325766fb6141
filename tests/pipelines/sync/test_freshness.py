"""Fresh as the budget allows: each full scan read as often as its cost, its operation's rate and the
interval between runs allow (`scan_budget.py`), sales that can change re-checked every run within the
budget, and `_platform_freshness` saying how fresh each table is and may be."""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import dlt
import duckdb
import pendulum

from pipelines.sync.platform_pipeline import sync
from sandbox.running import running_sandbox
from sandbox.world.world import SyntheticWorld
from sources.platform.rescan import LAST_SCANS_KEY, SCAN_COSTS_KEY
from sources.platform.resources import FULL_SCANS, STREAMS
from sources.platform.settings import FINAL_SALE_STATUSES
from tests.pipelines.cli.test_cli import cli_env, run_cli
from tests.pipelines.sync.test_rescan import first_sync, requests_by_operation, synced
from tests.pipelines.sync.test_sync import assert_warehouse_matches_api
from tests.support.api_truth import ApiTruth
from tests.support.scan_budget import FANS_WAIT, plans, read_every_run, share_that_fits
from tests.support.sync_helpers import E2E_SCALE, ids, query, source_options

FANS = frozenset(name for name in FULL_SCANS if STREAMS[name].fans_out)  # one request per parent
TRANSFERS = "/store/v1/financial/transfers"
COMMENTS = "/course/v1/comments"


def source_state(pipeline: dlt.Pipeline) -> dict[str, Any]:
    return dict(pipeline.state.get("sources", {}).get("platform", {}))


def expected_scan_costs(first_run: dict[str, int]) -> dict[str, int]:
    """What each full scan requests, from the sandbox's count of the first run's requests: its own
    operation, and for the product snapshots the product pages they walk too (three walks in all)."""
    pages_of_products = first_run["list_products"] // 3
    costs = {name: first_run[STREAMS[name].operation] for name in FULL_SCANS}
    costs["products"] = pages_of_products
    for fan in ("product_campaigns", "product_partners"):
        costs[fan] += pages_of_products
    return costs


def test_the_budget_decides_which_full_scans_are_read_every_run(sandbox, make_pipeline):
    pipeline = make_pipeline()
    default = source_options(sandbox, sandbox.token(), run_interval_hours=1)
    first = first_sync(sandbox, pipeline, default)
    costs = expected_scan_costs(first)
    assert source_state(pipeline)[SCAN_COSTS_KEY] == costs
    # The share of the budget at which the whole lists of this world fit an hour and the fans do not
    # (asserted below from the settings, not from the run).
    options = {**default, "scan_budget_share": share_that_fits(costs, default, set(FULL_SCANS) - FANS)}

    cheap = read_every_run(costs, options)
    assert cheap and FANS - cheap and cheap == set(FULL_SCANS) - FANS
    waiting = plans(costs, options)
    assert all(waiting[name].interval > timedelta(0) for name in FANS)

    again, requests = synced(sandbox, pipeline, **options)
    assert set(again.report.not_due) == set(FULL_SCANS) - cheap
    expected = Counter({STREAMS[name].operation: costs[name] for name in cheap})
    assert requests == dict(expected)
    scans = source_state(pipeline)[LAST_SCANS_KEY]
    assert {name for name in FULL_SCANS if scans[name] != scans["product_campaigns"]} == cheap
    for name in FANS:  # the promise printed is the plan's
        assert waiting[name].promise in again.report.not_due[name]

    # At the default share, every full scan of this world fits an hour's budget: all are read again.
    assert read_every_run(costs, default) == set(FULL_SCANS)
    everything, requests = synced(sandbox, pipeline, **default)
    assert everything.report.not_due == {}
    assert requests == first  # the same requests as the first run's full scans

    # An interval the user set for one resource wins over its cost.
    overridden, requests = synced(sandbox, pipeline, **options, rescan_hours_by_resource={"transfers": 6})
    assert requests.get("list_transfers") == 1 and "transfers" in overridden.report.not_due  # its tail
    assert "its tail read" in overridden.report.not_due["transfers"]
    assert_warehouse_matches_api(pipeline, sandbox, options["access_token"])


def sales_that_can_change(pipeline: dlt.Pipeline, refund_days: int = 30) -> set[str]:
    """Loaded sales whose status is not final, or paid within the refund window (measured back from
    the newest update the API has shown): what a run must check again, budget permitting."""
    final = ", ".join(f"'{status}'" for status in sorted(FINAL_SALE_STATUSES))
    rows = query(
        pipeline,
        f"select id from sales where status not in ({final}) and (status <> 'paid' or paid_at >= "
        f"(select max(updated_at) from sales) - interval {refund_days} day)",
    )
    return {row[0] for row in rows}


def by_id(items: list[dict[str, Any]], *fields: str) -> dict[str, tuple[Any, ...]]:
    return {str(item["id"]): tuple(item[f] for f in fields) for item in items}


def hours_that_move(seed: int, scale: int, days: int = 90) -> tuple[int, int]:
    """Whole hours after the world's start whose next hour changes a transfer (created or a new status),
    and a later one whose next hour changes a lesson comment: read from a twin of the sandbox's world,
    so the test knows the changes in advance without trusting anything the pipeline computes. (In a
    small world the two rarely fall in the same hour.)"""
    twin = SyntheticWorld(seed, scale)

    def snapshot() -> tuple[dict[str, Any], dict[str, Any]]:
        transfers, comments = twin.transfers(), twin.lesson_comments()
        return (
            by_id(transfers.page(0, len(transfers)), "status"),
            by_id(comments.page(0, len(comments)), "isAnswered", "isRead", "status"),
        )

    hours: list[int] = []
    before = snapshot()
    for hour in range(days * 24):
        twin.advance(3600)
        after = snapshot()
        which = 0 if not hours else 1
        if after[which] != before[which]:
            hours.append(hour)
            if len(hours) == 2:
                return hours[0], hours[1]
        before = after
    raise AssertionError(f"no hour of {days} days moves both transfers and lesson comments")


def listed(truth: ApiTruth) -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        by_id(list(truth.pages(TRANSFERS)), "status"),
        by_id(list(truth.pages(COMMENTS)), "isAnswered", "isRead", "status"),
    )


def assert_an_hourly_run_is_exact(
    sandbox, pipeline: dlt.Pipeline, options: dict[str, Any], moved: int
) -> None:
    """Move the world one hour and sync: every table equals the API, with exactly the requests due."""
    truth = ApiTruth(sandbox.base_url, options["access_token"])
    before = listed(truth)
    can_change = sales_that_can_change(pipeline)
    sales_before = set(ids(pipeline, "sales"))
    costs = source_state(pipeline)[SCAN_COSTS_KEY]

    sandbox.advance(3600)  # the world moves one hour; our clock does not: no `rescan_hours` passes
    after = listed(truth)
    assert after[moved] != before[moved], "the twin said this hour changes the table"

    sandbox.reset_stats()
    hourly = sync(pipeline, source_options=options)
    requests = requests_by_operation(sandbox)  # before the checks below ask the API themselves
    assert hourly.report.failed == {} and hourly.report.skipped == {}
    assert set(hourly.report.not_due) == FANS

    transfers, comments = after
    assert dict(query(pipeline, "select id, status from transfers")) == {
        i: s for i, (s,) in transfers.items()
    }
    loaded_comments = query(pipeline, "select id, is_answered, is_read, status from lesson_comments")
    assert {str(row[0]): tuple(row[1:]) for row in loaded_comments} == comments
    assert_warehouse_matches_api(pipeline, sandbox, options["access_token"])  # sales at their status

    new_sales = set(ids(pipeline, "sales")) - sales_before
    # Every sale-details request went to a new sale or to one that could change, each once.
    assert requests.pop("sale_details") == len(new_sales) + len(can_change)
    assert requests == {
        "list_subscriptions": 1,
        "list_fiscal_documents": 1,
        "list_attendees": len(sandbox.catalog()["events"]),
        **{STREAMS[name].operation: costs[name] for name in FULL_SCANS if name not in FANS},
    }


def test_an_hourly_run_brings_every_new_and_changed_transfer_comment_and_sale(sandbox, make_pipeline):
    transfer_hour, comment_hour = hours_that_move(3, E2E_SCALE)
    sandbox.advance(transfer_hour * 3600)
    pipeline = make_pipeline()
    # The rules alone decide which known sales are fetched again: the re-verification cycle, which
    # would fetch every known sale of this small world on every run, is tested in test_reverify.py.
    options = source_options(sandbox, sandbox.token(), sales_reverify_share=0, **FANS_WAIT)
    first_sync(sandbox, pipeline, options)
    assert_an_hourly_run_is_exact(sandbox, pipeline, options, moved=0)

    sandbox.advance((comment_hour - transfer_hour - 1) * 3600)
    sync(pipeline, source_options=options)
    assert_an_hourly_run_is_exact(sandbox, pipeline, options, moved=1)


def test_the_freshness_table_says_what_each_run_read_and_what_waits(tmp_path):
    with running_sandbox(seed=2, scale=300, time_scale=600) as sandbox:
        options = source_options(
            sandbox,
            sandbox.token(),
            rate_limit_time_scale=600,
            sales_max_requests=20,
            **FANS_WAIT,  # the fans wait six hours, the lists are read every run
        )
        env = cli_env(tmp_path, options)
        first = run_cli(["sync", "--no-progress"], env, tmp_path)
        assert first.returncode == 0, first.stdout + first.stderr
        # The runs are stamped with the API's clock (the world's, months behind ours: docs/contracts.md,
        # "Clocks"), which stands still between requests: ten seconds pass on it, as on a real API's.
        world_clock = datetime.fromisoformat(sandbox.advance(10).replace("Z", "+00:00"))
        second = run_cli(["sync", "--no-progress"], env, tmp_path)
        assert second.returncode == 0, second.stdout + second.stderr

    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as connection:
        columns = [
            "table_name", "refresh", "last_read_at", "last_full_scan_at", "last_scan_requests",
            "next_full_scan_after", "not_fetched", "not_fetched_minutes", "not_fetched_runs", "checked_at",
        ]  # fmt: skip
        rows = connection.execute(
            f"select {', '.join(columns)} from platform_raw._platform_freshness order by table_name"
        ).fetchall()
        runs = connection.execute(
            "select distinct run_started_at from platform_raw._platform_sync_runs order by 1"
        ).fetchall()
    table = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    assert set(table) == set(STREAMS)  # one row per table, merged: the second run replaced the first's
    second_run = runs[-1][0]
    # the API's time (its `Date` has whole seconds), not ours
    assert world_clock - timedelta(seconds=1) <= second_run < world_clock + timedelta(minutes=5)
    for name, row in table.items():
        # Every table was read to its end by the second run (the fans: by the first, not due since).
        started = row["last_read_at"]
        assert started is not None and abs((started - second_run).total_seconds()) < 60, name
        assert row["checked_at"] >= started
        if name in FULL_SCANS:
            assert row["last_scan_requests"] > 0 and row["last_full_scan_at"] is not None
    fan = table["product_campaigns"]
    assert fan["refresh"] == "full scan, read every 6 h (rescan_hours_by_resource)"
    assert fan["last_scan_requests"] > 10
    assert fan["next_full_scan_after"] == fan["last_full_scan_at"] + timedelta(hours=6)
    assert fan["last_read_at"] == fan["last_full_scan_at"] < table["transfers"]["last_full_scan_at"]
    transfers = table["transfers"]
    assert transfers["refresh"] == "full scan, read every run" and transfers["next_full_scan_after"] is None
    assert table["subscriptions"]["refresh"] == "incremental"

    # 20 sale details a run, 2 of them kept for re-verifying known sales (sales_reverify_share 0.1): the
    # rest of the discovered sales wait, counted, with the time they take at 18 a run.
    sales = table["sales"]
    assert sales["not_fetched"] > 20
    assert sales["not_fetched_runs"] == math.ceil(sales["not_fetched"] / (20 - 2))
    assert sales["not_fetched_minutes"] == sales["not_fetched"] / 30  # sale_details: 30 a minute
    assert all(row["not_fetched"] == 0 for name, row in table.items() if name != "sales")

    summary = second.stdout
    assert "freshness (table _platform_freshness):" in summary
    waiting = pendulum.duration(minutes=math.ceil(sales["not_fetched"] / 30)).in_words(locale="en")
    assert (
        f"  sales: {sales['not_fetched']:,} discovered records not fetched yet: {waiting} of requests at "
        f"the rate limit, {sales['not_fetched_runs']} more runs at the run's budget of sale details"
    ) in summary.splitlines()
    assert "full scans read every run (requests a scan): products (" in summary
