"""The run's budget on the real sync (issue 47): the sale details of a run are a share of what their rate
limit allows between two runs, at most `sales_max_requests`; the re-verification cycle is its share of
that; the summary says how the budget was set and what the run spent per purpose.

Against the sandbox on loopback, its rate-limit windows 6,000 times shorter than the real API's. The
budget is arithmetic on the settings (`details_budget_share`, the rate, the time scale and the interval),
not on the clock, so every count below is the same on any machine."""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from pipelines.cli.summary import print_summary
from pipelines.sync.platform_pipeline import sync
from pipelines.sync.runs import record_run
from sandbox.running import SandboxHandle, running_sandbox
from sources.platform.rescan import SCAN_COSTS_KEY
from sources.platform.run_budget import (
    HEADS,
    NEW_SALES,
    RENEWAL_READS,
    RETRIES,
    REVERIFY,
    THE_REST,
    UNKNOWN_IDS,
    WHOLE_SCANS,
    split_line,
)
from tests.pipelines.sync.test_rescan import requests_by_operation
from tests.support.cli import cli_env, run_cli
from tests.support.sync_helpers import E2E_SCALE, query, source_options

FAST = 6000.0
SHARE = 0.00001  # of 30 x 6,000 a minute for one hour: 108 sale details a run
BUDGET = 108
RESERVE = math.ceil(0.1 * BUDGET)  # sales_reverify_share 0.1: 11


@pytest.fixture
def fast_sandbox() -> Iterator[SandboxHandle]:
    with running_sandbox(seed=3, scale=E2E_SCALE, time_scale=FAST) as handle:
        yield handle


def options(sandbox: SandboxHandle) -> dict[str, object]:
    return source_options(
        sandbox,
        sandbox.token(),
        rate_limit_time_scale=FAST,
        rate_limits={"sale_details": 30},
        details_budget_share=SHARE,
        run_interval_hours=1,
    )


def summary(result: object) -> list[str]:
    out = io.StringIO()
    print_summary(result, out)  # type: ignore[arg-type]
    return out.getvalue().splitlines()


@pytest.mark.parametrize("checkpoint", ["0", "50"])
def test_the_sale_details_of_a_run_are_its_budget_and_the_summary_splits_its_requests(
    fast_sandbox: SandboxHandle, make_pipeline, monkeypatch: pytest.MonkeyPatch, checkpoint: str
) -> None:
    """400 sales to find and a budget of 108: each run asks 108 sale details, in one pass or in passes
    of 50 (the budget is the run's, not each pass's); the second run keeps 11 of them for the cycle."""
    monkeypatch.setenv("SYNC__CHECKPOINT_REQUESTS", checkpoint)
    pipeline = make_pipeline()
    fast_sandbox.reset_stats()
    first = sync(pipeline, source_options=options(fast_sandbox))
    asked = requests_by_operation(fast_sandbox)
    assert asked["sale_details"] == BUDGET
    assert len(query(pipeline, "select id from sales")) == BUDGET
    total = sum(first.requests.values())
    asked.pop("token_exchange")  # the test's own, for the run's token
    assert first.requests == asked  # every try the client made, as the API counted them
    costs = pipeline.state["sources"]["platform"][SCAN_COSTS_KEY]
    # Nothing moved under the walks: the whole scans spent what they cost, the sale details the budget,
    # none of it on the cycle (no sale was known); the rest is the incremental lists and windows.
    split = first.report.requests_by_purpose()
    # a try the loopback connection failed (seen in CI under load) is a retry, apart from its purpose
    retries = first.report.retries
    assert split == {
        WHOLE_SCANS: sum(costs.values()),
        HEADS: 0,
        NEW_SALES: BUDGET,
        REVERIFY: 0,
        UNKNOWN_IDS: 0,
        RENEWAL_READS: 0,
        RETRIES: retries,
        THE_REST: total - sum(costs.values()) - BUDGET - retries,
    }
    lines = summary(first)
    assert split_line(split) in lines
    assert (
        f"  sale details: {BUDGET} sale_details (1e-05 x 30/min x 6000 (rate_limit_time_scale) x 1 h = "
        f"{BUDGET}; sales_max_requests = 5,000; the budget binds); of them {RESERVE} for the re-verification "
        f"cycle (sales_reverify_share), up to {RESERVE} for unknown ids (unknown_ids_share), the rest for "
        "new and changed sales"
    ) in lines
    assert any(line.startswith("budget: runs 1 h apart (run_interval_hours)") for line in lines)
    assert any(f"the run's budget of {BUDGET} sale details was spent" in w for w in first.report.warnings)

    fast_sandbox.reset_stats()
    second = sync(pipeline, source_options=options(fast_sandbox))
    assert requests_by_operation(fast_sandbox)["sale_details"] == BUDGET
    split = second.report.requests_by_purpose()
    assert (split[NEW_SALES], split[REVERIFY]) == (BUDGET - RESERVE, RESERVE)
    assert len(query(pipeline, "select id from sales")) == 2 * BUDGET - RESERVE
    sales = next(row for row in second.freshness if row["table_name"] == "sales")
    # the cycle at this schedule, by the same interval the budget was set by
    runs = math.ceil(sales["known_records"] / RESERVE)
    assert (sales["reverify_cycle_runs"], sales["reverify_cycle_days"]) == (runs, runs / 24)
    assert sales["stale_within_hours"] == runs


def test_the_command_prints_the_budget_and_the_split_and_exits_0(
    fast_sandbox: SandboxHandle, tmp_path
) -> None:
    """`platform-sync sync` itself: the budget binds (its ids wait for the next run, which is no failure),
    and stdout says how it was set and what the run spent on what."""
    env = cli_env(tmp_path, options(fast_sandbox))
    env["SYNC__CHECKPOINT_REQUESTS"] = "0"
    fast_sandbox.reset_stats()
    result = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert requests_by_operation(fast_sandbox)["sale_details"] == BUDGET
    lines = result.stdout.splitlines()
    split = next(line for line in lines if line.startswith("requests by purpose: "))
    assert f"{NEW_SALES} {BUDGET}, {REVERIFY} 0, {UNKNOWN_IDS} 0, {RENEWAL_READS} 0, {RETRIES} 0" in split
    assert (
        "budget: runs 1 h apart (run_interval_hours); each operation's requests between two runs, at its "
        "rate limit, are shared out:" in lines
    )
    assert any(line.startswith(f"  sale details: {BUDGET} sale_details (") for line in lines)
    assert any(line.startswith("  renewal re-reads: 200 subscription_details (") for line in lines)
    assert any(f"the run's budget of {BUDGET} sale details was spent" in line for line in lines)
    assert "Traceback" not in result.stderr


def test_the_interval_is_measured_from_the_run_records_failed_runs_included(
    fast_sandbox: SandboxHandle, make_pipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four runs recorded a day apart in `_platform_sync_runs`, two of them failed (their state never
    committed, so the source state knows none of them): the next run's budget is a daily one."""
    monkeypatch.setenv("SYNC__CHECKPOINT_REQUESTS", "0")
    pipeline = make_pipeline()
    settings = {**options(fast_sandbox), "run_interval_hours": 0}
    sync(pipeline, resources=["products"], source_options=settings)
    now = datetime.now(UTC)
    rows = [
        {
            "run_started_at": now - timedelta(days=days),
            "resource": "sales",
            "status": "failed" if days % 2 else "loaded",
            "message": "",
            "requests": 0,
            "our_started_at": now - timedelta(days=days),
            "clock_skew_seconds": None,
        }
        for days in (4, 3, 2, 1)
    ]
    assert record_run(pipeline, rows)
    result = sync(pipeline, resources=["products"], source_options=settings)
    budget = result.report.budget
    assert budget is not None and budget.interval == timedelta(days=1)
    assert budget.interval_from == "the median gap between the last 5 runs' starts, from _platform_sync_runs"
    # a day of 30 sale details a minute at 6,000 times the pace, 0.00001 of it: 2,592
    assert budget.sale_details.per_run == 2592


def test_retries_are_split_apart_from_what_they_repeated(
    fast_sandbox: SandboxHandle, make_pipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """5% of the answers are 5xx: each purpose still counts its requests once, the tries that repeated
    one are `retries`, and the whole adds up to what the API answered."""
    monkeypatch.setenv("SYNC__CHECKPOINT_REQUESTS", "0")
    pipeline = make_pipeline()
    fast_sandbox.reset_stats()
    fast_sandbox.set_faults("error=0.05")
    try:
        result = sync(pipeline, source_options=options(fast_sandbox))
    finally:
        fast_sandbox.set_faults(None)
    assert result.report.failed == {}
    answered = fast_sandbox.stats()["operations"]
    answered.pop("token_exchange")
    split = result.report.requests_by_purpose()
    failed_answers = sum(n for answers in answered.values() for code, n in answers.items() if code >= "500")
    assert split[RETRIES] == result.report.retries == failed_answers > 0
    assert answered["sale_details"]["200"] == split[NEW_SALES] == BUDGET
    assert sum(split.values()) == sum(sum(answers.values()) for answers in answered.values())
