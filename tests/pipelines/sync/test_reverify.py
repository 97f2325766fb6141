"""Exact on day ninety (issue 25): changes no rule foresees (late chargebacks, expired sales paid late)
reach the warehouse within the re-verification cycle that the settings promise, and the fiscal
documents of a changed sale follow it whatever their age. Against the sandbox's unruly world."""

from __future__ import annotations

import io
import math
from datetime import datetime
from typing import Any

import dlt

from pipelines.cli.summary import print_summary
from pipelines.sync.coverage import HOW_TO_COMPLETE
from pipelines.sync.platform_pipeline import sync
from sandbox.running import running_sandbox
from sources.platform.resources.financial_followups import DUE_KEY
from tests.pipelines.sync.test_rescan import requests_by_operation
from tests.support.api_truth import ApiTruth
from tests.support.sync_helpers import E2E_TIME_SCALE, query, source_options

BUDGET, SHARE = 60, 0.5
RESERVE = math.ceil(BUDGET * SHARE)  # 30 sale details a run for the cycle (docs/contracts.md part 3)
DOCUMENTS = "/store/v1/financial/buyer/fiscal-documents"


def loaded_sales(pipeline: dlt.Pipeline) -> dict[str, tuple[Any, ...]]:
    rows = query(pipeline, "select id, status, updated_at, verified_at from sales")
    return {str(row[0]): tuple(row[1:]) for row in rows}


def api_status(truth: ApiTruth, sale_ids: list[str]) -> dict[str, str]:
    return {sale_id: truth.get(f"/store/v1/sales/{sale_id}")["status"] for sale_id in sale_ids}


def loaded_documents(pipeline: dlt.Pipeline) -> dict[str, tuple[str, str]]:
    rows = query(pipeline, "select document__id, sale__id, document__status from fiscal_documents")
    return {str(row[0]): (str(row[1]), str(row[2])) for row in rows}


def sales_row(result: Any) -> dict[str, Any]:
    return next(row for row in result.freshness if row["table_name"] == "sales")


def test_changes_no_rule_foresees_are_loaded_within_the_cycle(make_pipeline):
    with running_sandbox(seed=3, scale=300, time_scale=E2E_TIME_SCALE, unruly=True) as sandbox:
        pipeline = make_pipeline()
        options = source_options(sandbox, sandbox.token())
        sync(pipeline, source_options=options)  # every sale the channels name is loaded
        sandbox.advance(20 * 86400)  # every unruly move has happened; the world stands still after
        truth = ApiTruth(sandbox.base_url, options["access_token"])
        known = sorted(loaded_sales(pipeline))
        cycle = {**options, "sales_max_requests": BUDGET, "sales_reverify_share": SHARE}
        runs = math.ceil(len(known) / RESERVE)  # the promise, from the settings and the known sales
        assert runs >= 3, "a cycle of a few runs, so that its bound shows"

        starts: list[datetime] = []
        stale_after_first: set[str] = set()
        for number in range(runs):
            before = loaded_sales(pipeline)
            sandbox.reset_stats()
            result = sync(pipeline, source_options=cycle)
            requests = requests_by_operation(sandbox)
            assert result.report.failed == {}, result.report.failed
            after = loaded_sales(pipeline)
            starts.append(result.report.sales_cycle.run_at)
            row = sales_row(result)
            # The cycle's figures, as the freshness table states them, are the warehouse's.
            assert row["reverify_per_run"] == RESERVE
            assert row["known_records"] == len(after)
            assert row["reverify_cycle_runs"] == math.ceil(len(after) / RESERVE)
            assert row["oldest_verified_at"] == min(verified for *_, verified in after.values())
            assert row["reverified"] == RESERVE  # known sales outnumber the share every run
            assert requests["sale_details"] <= BUDGET
            # The known sales whose row changed are exactly those the run counted as changed, and each
            # cost one read of its fiscal documents by `saleId` beside the lag window's pages.
            changed = {i for i in before if after[i][:2] != before[i][:2]}
            assert result.report.changed_sales == len(changed)
            state = pipeline.state["sources"]["platform"]["resources"].get("fiscal_documents", {})
            assert state.get(DUE_KEY, "") == ""  # every due sale's documents were read
            documents = loaded_documents(pipeline)
            for sale_id in changed:
                served = {
                    str(d["document"]["id"]): d["document"]["status"] for d in follow_up(truth, sale_id)
                }
                assert {i: documents[i][1] for i in served} == served, sale_id
            if number == 0:
                stale_after_first = {
                    i for i, status in api_status(truth, known).items() if after[i][0] != status
                }

        # Changes no rule foresees were there, and the first run of the cycle did not catch them all.
        assert stale_after_first
        # Within the promised runs every sale known at the start was verified again, and is exact.
        final = loaded_sales(pipeline)
        assert all(final[i][2] >= starts[0] for i in known)
        assert {i: final[i][0] for i in known} == api_status(truth, known)
        # Every fiscal document is as the API serves it, the old ones of late chargebacks included.
        served_documents = {
            str(d["document"]["id"]): (str(d["sale"]["id"]), d["document"]["status"])
            for d in truth.fiscal_documents()
        }
        assert loaded_documents(pipeline) == served_documents

        out = io.StringIO()
        print_summary(result, out)
        lines = out.getvalue().splitlines()
        row = sales_row(result)
        days = row["reverify_cycle_days"]
        assert (
            f"  sales: every known sale ({row['known_records']:,}) re-checked at least every "
            f"{row['reverify_cycle_runs']} runs (about {days:.3g} days at this schedule), {RESERVE} a run "
            f"(sales_reverify_share); {RESERVE} re-verified this run; oldest verification "
            f"{row['oldest_verified_at']:%Y-%m-%d %H:%M} UTC"
        ) in lines
        assert any(line.startswith("sales coverage is partial: no webhook announcement") for line in lines)
        assert any(line.endswith(HOW_TO_COMPLETE) for line in lines)


def follow_up(truth: ApiTruth, sale_id: str) -> list[dict[str, Any]]:
    return list(truth.pages(DOCUMENTS, startDate="2000-01-01", endDate="2100-01-01", saleId=sale_id))


def test_the_documents_of_a_changed_sale_wait_in_state_for_a_run_that_reads_them(make_pipeline):
    """A run of `sales` alone finds the late chargebacks and keeps their sales due in the fiscal
    documents' state (committed with the sales); the next run of `fiscal_documents` alone reads each of
    them by `saleId` and empties it: every document then equals the API."""
    with running_sandbox(seed=3, scale=300, time_scale=E2E_TIME_SCALE, unruly=True) as sandbox:
        pipeline = make_pipeline()
        options = source_options(sandbox, sandbox.token())
        sync(pipeline, source_options=options)
        sandbox.advance(20 * 86400)
        truth = ApiTruth(sandbox.base_url, options["access_token"])
        before = loaded_sales(pipeline)

        sales_only = sync(pipeline, resources=["sales"], source_options=options)  # the cycle: all known
        after = loaded_sales(pipeline)
        changed = sorted(i for i in before if after[i][:2] != before[i][:2])
        assert changed and sales_only.report.changed_sales == len(changed)
        state = pipeline.state["sources"]["platform"]["resources"]["fiscal_documents"]
        assert state[DUE_KEY] == "\n".join(changed)
        served = {
            str(d["document"]["id"]): (str(d["sale"]["id"]), d["document"]["status"])
            for d in truth.fiscal_documents()
        }
        assert loaded_documents(pipeline) != served  # the cancelled documents are older than the lag

        sandbox.reset_stats()
        sync(pipeline, resources=["fiscal_documents"], source_options=options)
        with_due = requests_by_operation(sandbox)["list_fiscal_documents"]
        assert pipeline.state["sources"]["platform"]["resources"]["fiscal_documents"][DUE_KEY] == ""
        assert loaded_documents(pipeline) == served
        # One request by `saleId` for each due sale (one page each, even without documents: a slip paid
        # late has none), beside the lag window's pages that a run with nothing due makes alike.
        sandbox.reset_stats()
        sync(pipeline, resources=["fiscal_documents"], source_options=options)
        assert with_due == requests_by_operation(sandbox)["list_fiscal_documents"] + len(changed)
