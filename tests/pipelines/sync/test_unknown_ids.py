"""Unknown sale ids retired in one pass (issue 53): a sale id the API answers 404 for is on probation, asked
again once the run's other sale ids were asked, within `unknown_ids_share` of `sales_max_requests`, and
retired by that second 404; the retired ids live in `_platform_retired_ids`, not in the state; one warning
line a run counts them; the ids the producers discover go before the configured ones.

Against the sandbox on loopback with rate limits 6,000 times faster than the real API's: they never bind,
so every count below is the same on any machine."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import dlt
import pytest

from pipelines.sync.companion import companion_pipeline
from pipelines.sync.platform_pipeline import sync
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from sandbox.running import SandboxHandle, running_sandbox
from sandbox.world.world import SyntheticWorld
from sources.platform import platform_source
from sources.platform.retired import RETIRED_COLUMNS, RETIRED_TABLE
from sources.platform_client.errors import ConfigurationError
from tests.pipelines.sync.test_rescan import requests_by_operation
from tests.support.sync_helpers import E2E_SCALE, query, source_options


@pytest.fixture(autouse=True)
def _one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs in one pass (`checkpoint_requests` 0). Known gap of runs in passes (docs/contracts.md,
    "Checkpoints"): an id answered 404 in one pass is not asked again by the run's later passes, and the
    probation's allowance is each pass's share; it is confirmed, and retired, by the next run."""
    monkeypatch.setenv("SYNC__CHECKPOINT_REQUESTS", "0")


FAST = 6000.0  # rate-limit windows of 10 ms: 30 sale details a minute become 3,000 a second
TWIN = SyntheticWorld(3, E2E_SCALE)  # the sandbox's world (seed 3), whose 400 sales are visible now
LINE = "sale ids the API does not know (404): retired; see _platform_retired_ids"


@pytest.fixture
def fast_sandbox() -> Iterator[SandboxHandle]:
    with running_sandbox(seed=3, scale=E2E_SCALE, time_scale=FAST) as handle:
        yield handle


def real_and_unknown(real: int, unknown: int) -> tuple[list[str], list[str], list[str]]:
    """`real` sale ids of the world and `unknown` ones outside it (900000000 and up), the real ones spread
    evenly among the others: (all, in configuration order; real; unknown)."""
    known = [TWIN.sales.sale_id(i) for i in range(real)]
    absent = [str(900_000_000 + i) for i in range(unknown)]
    step = (real + unknown) // real
    configured = list(absent)
    for position, sale_id in enumerate(known):
        configured.insert(position * step, sale_id)
    return configured, known, absent


def sale_details(sandbox: SandboxHandle) -> dict[str, int]:
    """This run's sale details by status code (`reset_stats` before the run)."""
    return dict(sandbox.stats()["operations"].get("sale_details", {}))


def state_size(pipeline: dlt.Pipeline) -> int:
    return (Path(pipeline.working_dir) / "state.json").stat().st_size


def unknown_id_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The warnings (log records) of the run that speak of sale ids the API answered 404 for."""
    return [
        record.getMessage()
        for record in caplog.records
        if record.levelno >= logging.WARNING and "404" in record.getMessage()
    ]


def retired_table(pipeline: dlt.Pipeline) -> list[tuple[Any, ...]]:
    return query(pipeline, f"select kind, id, confirmations from {RETIRED_TABLE} order by kind, id")


def test_ten_thousand_configured_ids_of_which_9900_unknown_are_retired_by_the_first_run(
    fast_sandbox, make_pipeline, caplog
):
    """The issue's world: 10,000 `sale_ids`, 9,900 the API does not know. The first run fetches the 100 real
    sales and retires the 9,900 (each asked twice: 9,900 confirmations, within 10% of a 100,000-request
    budget); the second asks only for the 100 sales it loaded. One warning line; a state of a few KB."""
    configured, real, unknown = real_and_unknown(100, 9_900)
    options = source_options(
        fast_sandbox,
        fast_sandbox.token(),
        sale_ids=configured,
        sales_max_requests=100_000,
        rate_limit_time_scale=FAST,
    )
    pipeline = make_pipeline()

    fast_sandbox.reset_stats()
    with caplog.at_level(logging.INFO):
        first = sync(pipeline, resources=["sales"], source_options=options)
    assert first.report.failed == {}
    assert sale_details(fast_sandbox) == {"200": 100, "404": 9_900 * 2}
    assert requests_by_operation(fast_sandbox) == {"sale_details": 10_000 + 9_900}
    assert sorted(row[0] for row in query(pipeline, "select id from sales")) == real
    assert sorted(key for kind, key in first.report.retired_now) == unknown
    assert retired_table(pipeline) == [("sale", sale_id, 2) for sale_id in unknown]
    assert first.report.warnings == [f"9,900 {LINE}"]
    assert unknown_id_lines(caplog) == [f"9,900 {LINE}"]
    assert {row["channel"]: (row["named"], row["loaded"], row["retired"]) for row in first.coverage}[
        "sale_ids"
    ] == (10_000, 100, 9_900)
    sales_state = pipeline.state["sources"]["platform"]["resources"]["sales"]
    assert sales_state["on_probation"] == {} and sales_state["pending"] == ""
    assert "sale" not in pipeline.state["sources"]["platform"].get("retired", {})
    assert state_size(pipeline) < 4_000

    caplog.clear()
    fast_sandbox.reset_stats()
    with caplog.at_level(logging.INFO):
        second = sync(pipeline, resources=["sales"], source_options=options)
    # the 100 known sales: the unsettled ones and the re-verification cycle; not one unknown id
    assert sale_details(fast_sandbox) == {"200": 100}
    assert second.report.retired_now == [] and second.report.warnings == []
    assert unknown_id_lines(caplog) == []
    assert len(second.retired) == 9_900
    assert state_size(pipeline) < 4_000


def test_what_the_share_cannot_confirm_waits_on_probation_and_retires_by_the_second_run(
    fast_sandbox, make_pipeline
):
    """1,000 `sale_ids`, 990 unknown, a budget of 2,000 and unknown_ids_share = 0.25 (500 requests a run):
    the first run asks each once and confirms 500; the second keeps 490 of its budget for the others on
    probation and retires them; the third asks only for the 10 real sales."""
    configured, real, unknown = real_and_unknown(10, 990)
    options = source_options(
        fast_sandbox,
        fast_sandbox.token(),
        sale_ids=configured,
        sales_max_requests=2_000,
        unknown_ids_share=0.25,
        rate_limit_time_scale=FAST,
    )
    pipeline = make_pipeline()

    fast_sandbox.reset_stats()
    first = sync(pipeline, resources=["sales"], source_options=options)
    assert sale_details(fast_sandbox) == {"200": 10, "404": 990 + 500}
    assert sorted(row[0] for row in query(pipeline, "select id from sales")) == real
    assert len(first.report.retired_now) == 500
    assert first.report.warnings == [
        f"500 {LINE}; 490 more sale ids answered 404 once and asked again in a later run before retiring "
        "(unknown_ids_share = 0.25 of the run's sale details)"
    ]
    # the 490 on probation: one text of ids in the sales state, 10 bytes and a newline each
    probation = pipeline.state["sources"]["platform"]["resources"]["sales"]["on_probation"]
    assert [len(ids.split("\n")) for ids in probation.values()] == [490]
    waiting = set(probation[next(iter(probation))].split("\n"))
    assert waiting | {key for _, key in first.report.retired_now} == set(unknown)
    assert state_size(pipeline) < 4_000 + 11 * 490

    fast_sandbox.reset_stats()
    second = sync(pipeline, resources=["sales"], source_options=options)
    assert sale_details(fast_sandbox) == {"200": 10, "404": 490}
    assert {key for _, key in second.report.retired_now} == waiting
    assert second.report.warnings == [f"490 {LINE}"]
    assert retired_table(pipeline) == [("sale", sale_id, 2) for sale_id in unknown]
    assert pipeline.state["sources"]["platform"]["resources"]["sales"]["on_probation"] == {}

    fast_sandbox.reset_stats()
    sync(pipeline, resources=["sales"], source_options=options)
    assert sale_details(fast_sandbox) == {"200": 10}


def test_the_sales_producers_discover_go_before_the_configured_unknown_ids(fast_sandbox, make_pipeline):
    """With 1,000 unknown `sale_ids` and a budget of 300, every sale the subscriptions name is fetched in
    the first run; the configured ids get what is left, and no confirmation (the budget is spent)."""
    _, _, unknown = real_and_unknown(1, 1_000)
    options = source_options(
        fast_sandbox,
        fast_sandbox.token(),
        sale_ids=unknown,
        sales_max_requests=300,
        rate_limit_time_scale=FAST,
    )
    pipeline = make_pipeline()
    fast_sandbox.reset_stats()
    result = sync(pipeline, resources=["subscriptions", "sales"], source_options=options)
    named = {row[0] for row in query(pipeline, "select first_invoice_id from subscriptions")}
    assert named and named <= {row[0] for row in query(pipeline, "select id from sales")}
    discovered = len(query(pipeline, "select id from sales"))
    assert sale_details(fast_sandbox) == {"200": discovered, "404": 300 - discovered}
    assert result.report.retired_now == []
    assert result.report.warnings == [
        f"{300 - discovered} sale ids answered 404 once and asked again in a later run before retiring "
        "(unknown_ids_share = 0.1 of the run's sale details)",
        f"{1_000 - (300 - discovered)} sale ids wait for the next run (the run's budget of 300 sale "
        "details was spent or requests failed; the summary's budget lines say how it was set)",
    ]


def write_old_state(pipeline: dlt.Pipeline, source_state: dict[str, Any]) -> None:
    """Put `source_state` into the pipeline's `platform` source state, as a version before issue 53 left it
    (a source of the same name whose one resource writes it)."""

    @dlt.source(name="platform")
    def old_version() -> Any:
        @dlt.resource(name="old_state")
        def old_state() -> Iterator[dict[str, int]]:
            dlt.current.source_state().update(source_state)
            yield {"written": 1}

        return old_state

    pipeline.run(old_version())


def recorded(pipeline: dlt.Pipeline, result: Any) -> bool:
    """`record_run` after a sync of `sales`, as the command line calls it."""
    return record_run(pipeline, outcome_rows(result, ["sales"], run_started_at()), (), (), result.retired)


def test_a_state_written_before_issue_53_is_migrated_and_a_full_refresh_forgets(fast_sandbox, make_pipeline):
    """A state that kept retired sale ids and counts in the source state, beside a `_platform_retired_ids`
    the runs table's pipeline wrote: the next run moves the retired id into the table (no request for
    it), confirms the counted one (one request) and retires it, and leaves neither in the state; a
    `--full-refresh` then forgets both, and the runs table still records."""
    real = TWIN.sales.sale_id(0)
    gone, counted = "900000001", "900000002"
    options = source_options(
        fast_sandbox,
        fast_sandbox.token(),
        sale_ids=[real, gone, counted],
        rate_limit_time_scale=FAST,
    )
    pipeline = make_pipeline()
    sync(pipeline, resources=["sales"], source_options={**options, "sale_ids": [real]})
    then = "2026-01-05T10:00:00+00:00"
    old_row = [then, "2026-01-07T10:00:00+00:00", 3, "sale_details answered 404 (not found)"]
    write_old_state(
        pipeline,
        {"retired": {"sale": {gone: old_row}}, "not_found": {"sale": {counted: [1, then, then]}}},
    )
    # the table as the runs table's pipeline replaced it after each sync before issue 53
    old_table = [
        {
            "kind": "sale",
            "id": gone,
            "first_not_found_at": then,
            "retired_at": old_row[1],
            "confirmations": 3,
            "reason": old_row[3],
        }
    ]
    old_writer = dlt.resource(
        old_table,
        name=RETIRED_TABLE,
        write_disposition="replace",
        primary_key=("kind", "id"),
        columns=RETIRED_COLUMNS,
    )
    runs_pipeline = companion_pipeline("platform_sync_runs", pipeline)
    runs_pipeline.run(old_writer, schema=dlt.Schema("platform_sync_runs"))

    fast_sandbox.reset_stats()
    migrated = sync(pipeline, resources=["sales"], source_options=options)
    assert sale_details(fast_sandbox) == {"200": 1, "404": 1}  # the real sale (re-verified), the counted id
    assert migrated.report.retired_now == [("sale", counted)]
    assert retired_table(pipeline) == [("sale", gone, 3), ("sale", counted, 2)]
    first_404 = query(pipeline, f"select first_not_found_at from {RETIRED_TABLE} where id = '{counted}'")
    assert first_404 == [(datetime.fromisoformat(then),)]  # its first 404, as the old state kept it
    source_state = pipeline.state["sources"]["platform"]
    assert "sale" not in source_state.get("retired", {}) and "sale" not in source_state.get("not_found", {})
    assert recorded(pipeline, migrated)

    fast_sandbox.reset_stats()
    sync(pipeline, resources=["sales"], source_options=options)
    assert sale_details(fast_sandbox) == {"200": 1}

    fast_sandbox.reset_stats()
    refreshed = sync(pipeline, resources=["sales"], full_refresh=True, source_options=options)
    # forgotten: each unknown id asked again, and retired again by its confirmation
    assert sale_details(fast_sandbox) == {"200": 1, "404": 4}
    assert sorted(refreshed.report.retired_now) == [("sale", gone), ("sale", counted)]
    assert retired_table(pipeline) == [("sale", gone, 2), ("sale", counted, 2)]
    assert recorded(pipeline, refreshed)  # the runs table's pipeline no longer writes the dropped table


@pytest.mark.parametrize("value", [0, 1, -0.1, 1.5, True, "a tenth"])
def test_unknown_ids_share_must_be_above_0_and_below_1(value):
    message = f"unknown_ids_share must be a number above 0 and below 1, e.g. 0.1 for a tenth; got {value!r}"
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        platform_source(base_url="http://127.0.0.1:9", access_token="unused", unknown_ids_share=value)
