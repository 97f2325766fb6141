"""Ids that do not exist retire (issue 26): an id the API answers 404 for in `retire_after_not_found` runs
is no longer requested, is kept in `_platform_retired_ids` with when and why, and the summary says so. A
sale id retires in one pass (issue 53): its 404 confirmed by a second request later in the same run
(`tests/pipelines/sync/test_unknown_ids.py`)."""

from __future__ import annotations

import io
from typing import Any

import duckdb

from pipelines.cli.summary import print_summary
from pipelines.sync.coverage import HOW_TO_COMPLETE
from pipelines.sync.platform_pipeline import sync
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from sandbox.world.world import SyntheticWorld
from tests.pipelines.cli.test_cli import cli_env, run_cli
from tests.pipelines.sync.test_rescan import requests_by_operation
from tests.support.sync_helpers import E2E_SCALE, query, source_options

UNKNOWN_SALES = ["999000001", "999000002"]
UNKNOWN_EVENT = "00000000-0000-4000-8000-00000000dead"
RESOURCES = ["sales", "events", "enrollments", "deliveries"]


def retirement_options(sandbox: Any, **overrides: Any) -> dict[str, Any]:
    """Two real sales and two the API does not know, the world's events and one it does not know, a
    school with an unknown student and an unknown delivery beside its real ones."""
    twin = SyntheticWorld(3, E2E_SCALE)
    real = [twin.sales.sale_id(0), twin.sales.sale_id(1)]
    options = source_options(sandbox, sandbox.token(), rescan_hours=0, **overrides)
    school = options["schools"][0]
    options["schools"] = [
        {
            "team_slug": school["team_slug"],
            "student_slugs": [*school["student_slugs"], "nobody-here"],
            "delivery_ids": [*school["delivery_ids"], 987654],
        }
    ]
    return {
        **options,
        "sale_ids": [*real, *UNKNOWN_SALES],
        "event_ids": [*options["event_ids"], UNKNOWN_EVENT],
    }


def test_ids_the_api_does_not_know_retire_and_cost_nothing_after(sandbox, make_pipeline):
    pipeline = make_pipeline()
    options = retirement_options(sandbox)
    school = options["schools"][0]
    students, deliveries = len(school["student_slugs"]), len(school["delivery_ids"])
    events = len(options["event_ids"])
    every_run = {"event_details": events, "list_enrollments": students, "delivery_details": deliveries}
    runs = []
    for number in (1, 2, 3):
        sandbox.reset_stats()
        result = sync(pipeline, resources=RESOURCES, source_options=options)
        runs.append(result)
        requests = requests_by_operation(sandbox)
        # The two real sales every run (new, then re-verified: sales_reverify_share); the two unknown
        # ones twice in the first run (the 404, then its confirmation), which retires them (issue 53).
        assert requests == {"sale_details": 4 + 2 if number == 1 else 2, **every_run}, number
        retired_now = sorted(result.report.retired_now)
        expected = {1: [("sale", i) for i in UNKNOWN_SALES], 2: [], 3: others_retired(school["team_slug"])}
        assert retired_now == expected[number], number
        assert result.report.failed == {}
    assert {row["id"] for row in result.retired} == {key for _, key in expected_retired(school["team_slug"])}
    assert all(row["confirmations"] == (2 if row["kind"] == "sale" else 3) for row in result.retired)
    assert all(row["reason"] for row in result.retired)
    # When: the first run that got a 404 and the run that retired it, by their stamps (the API's clock:
    # the sandbox's is months behind ours), as `_platform_sync_runs.run_started_at`.
    first_run, third_run = (run.report.run_clock.stamp() for run in (runs[0], runs[2]))  # type: ignore[union-attr]
    assert max(first_run, third_run) < runs[0].report.sales_cycle.run_at  # ours: months later
    assert {row["kind"]: (row["first_not_found_at"], row["retired_at"]) for row in result.retired} == {
        "sale": (first_run, first_run),
        "event": (first_run, third_run),
        "student": (first_run, third_run),
        "delivery": (first_run, third_run),
    }

    out = io.StringIO()
    print_summary(result, out)
    assert (
        "retired ids (the API answers 404; no longer requested; table _platform_retired_ids): "
        "1 delivery, 1 event, 2 sale, 1 student (3 retired by this run)"
    ) in out.getvalue().splitlines()
    assert record_run(pipeline, outcome_rows(result, RESOURCES, run_started_at()), (), (), result.retired)
    # The sale ids are in the table since the load of the run that retired them (issue 53)
    table = query(pipeline, "select kind, id, confirmations from _platform_retired_ids where kind = 'sale'")
    assert sorted(table) == [("sale", key, 2) for key in UNKNOWN_SALES]

    # The fourth run asks only for what exists.
    sandbox.reset_stats()
    fourth = sync(pipeline, resources=RESOURCES, source_options=options)
    assert requests_by_operation(sandbox) == {
        "sale_details": 2,
        "event_details": events - 1,
        "list_enrollments": students - 1,
        "delivery_details": deliveries - 1,
    }
    assert fourth.report.retired_now == [] and len(fourth.retired) == 5
    assert sorted(row[0] for row in query(pipeline, "select id from sales")) == sorted(
        options["sale_ids"][:2]
    )
    # The other kinds, which the source state keeps, are copied into the table by the end of `sales`:
    # in the run that retired them at the latest by the next (here, the fourth) one.
    table = query(pipeline, "select kind, id, confirmations from _platform_retired_ids order by kind, id")
    assert table == [
        (kind, key, 2 if kind == "sale" else 3) for kind, key in sorted(expected_retired(school["team_slug"]))
    ]


def expected_retired(team_slug: str) -> list[tuple[str, str]]:
    return sorted([*others_retired(team_slug), *[("sale", sale_id) for sale_id in UNKNOWN_SALES]])


def others_retired(team_slug: str) -> list[tuple[str, str]]:
    """The unknown event, student and delivery: retired after `retire_after_not_found` (3) runs."""
    return [
        ("delivery", f"{team_slug}/987654"),
        ("event", UNKNOWN_EVENT),
        ("student", f"{team_slug}/nobody-here"),
    ]


def test_the_command_says_what_retired_and_how_complete_the_sales_are(sandbox, tmp_path):
    """`platform-sync sync` twice with an unknown configured sale id and retire_after_not_found = 2: both
    runs exit 0 (a retired id is no failure); the first retires the id (its 404 confirmed in the same
    run, issue 53) and says so in one warning line; the second says how many sales each channel names,
    and that coverage is partial without webhooks; the tables hold the same."""
    twin = SyntheticWorld(3, E2E_SCALE)
    options = source_options(
        sandbox, sandbox.token(), sale_ids=[twin.sales.sale_id(0), UNKNOWN_SALES[0]], retire_after_not_found=2
    )
    env = cli_env(tmp_path, options)
    first = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert (
        "retired ids (the API answers 404; no longer requested; table _platform_retired_ids): "
        "1 sale (1 retired by this run)"
    ) in first.stdout.splitlines()
    assert [line for line in first.stdout.splitlines() if "404" in line and line.startswith("warning:")] == [
        "warning: 1 sale id the API does not know (404): retired; see _platform_retired_ids"
    ]
    second = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    lines = second.stdout.splitlines()
    assert (
        "retired ids (the API answers 404; no longer requested; table _platform_retired_ids): "
        "1 sale (0 retired by this run)"
    ) in lines

    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as connection:
        coverage = dict(
            (row[0], row[1:])
            for row in connection.execute(
                "select channel, named, loaded, retired from platform_raw._platform_sales_coverage"
            ).fetchall()
        )
        retired = connection.execute(
            "select kind, id, confirmations from platform_raw._platform_retired_ids"
        ).fetchall()
        sales = connection.execute("select count(*) from platform_raw.sales").fetchone()[0]
    assert retired == [("sale", UNKNOWN_SALES[0], 2)]
    assert coverage["sale_ids"] == (2, 1, 1)  # one loaded, one retired
    assert coverage["webhooks"] == (0, 0, 0)
    named, loaded, gone = coverage["all"]
    assert (loaded, gone) == (sales, 1)
    channels = ", ".join(
        f"{name.replace('_', ' ')} {coverage[name][0]:,}"
        for name in (
            "subscriptions",
            "fiscal_documents",
            "event_attendees",
            "order_bumps",
            "webhooks",
            "sale_ids",
        )
    )
    assert (
        f"sales known: {loaded:,} of {named:,} named, 1 retired (unknown to the API); named by {channels}"
        in lines
    )
    assert (
        "sales coverage is partial: no webhook announcement is loaded, so a sale without subscription, "
        f"fiscal document or attendee is never found; {HOW_TO_COMPLETE}"
    ) in lines
