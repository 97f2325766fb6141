"""Ids that do not exist retire (issue 26): an id the API answers 404 for in `retire_after_not_found` runs
is no longer requested, is kept in `_platform_retired_ids` with when and why, and the summary says so."""

from __future__ import annotations

import io
from typing import Any

from pipelines.platform_pipeline import sync
from pipelines.runs import outcome_rows, record_run, run_started_at
from pipelines.summary import print_summary
from sandbox.world.world import SyntheticWorld
from tests.e2e.conftest import E2E_SCALE, query, source_options
from tests.e2e.test_rescan import requests_by_operation

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


def test_ids_the_api_does_not_know_retire_after_three_runs_and_cost_nothing_after(sandbox, make_pipeline):
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
        # The two real sales every run (new, then re-verified: sales_reverify_share), the two unknown
        # ones every run until they retire.
        assert requests == {"sale_details": 4, **every_run}, number
        retired_now = sorted(result.report.retired_now)
        assert retired_now == ([] if number < 3 else sorted(expected_retired(school["team_slug"])))
        assert result.report.failed == {}
    assert {row["id"] for row in result.retired} == {key for _, key in expected_retired(school["team_slug"])}
    assert all(row["confirmations"] == 3 and row["reason"] for row in result.retired)
    # When: the first run that got a 404 and the run that retired it, by their starts.
    first_run, third_run = (run.report.sales_cycle.run_at for run in (runs[0], runs[2]))
    assert {(row["first_not_found_at"], row["retired_at"]) for row in result.retired} == {
        (first_run, third_run)
    }

    out = io.StringIO()
    print_summary(result, out)
    assert (
        "retired ids (the API answers 404; no longer requested; table _platform_retired_ids): "
        "1 delivery, 1 event, 2 sale, 1 student (5 retired by this run)"
    ) in out.getvalue().splitlines()
    assert record_run(pipeline, outcome_rows(result, RESOURCES, run_started_at()), (), (), result.retired)
    table = query(pipeline, "select kind, id, confirmations from _platform_retired_ids order by kind, id")
    assert table == [(kind, key, 3) for kind, key in sorted(expected_retired(school["team_slug"]))]

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


def expected_retired(team_slug: str) -> list[tuple[str, str]]:
    return [
        ("delivery", f"{team_slug}/987654"),
        ("event", UNKNOWN_EVENT),
        *[("sale", sale_id) for sale_id in UNKNOWN_SALES],
        ("student", f"{team_slug}/nobody-here"),
    ]
