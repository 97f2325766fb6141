"""End to end: the sandbox on loopback, the real pipeline, a real DuckDB. Exact rows, requests, states."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import pytest

from pipelines.sync.platform_pipeline import sync
from sandbox.running import running_sandbox
from sandbox.world import SyntheticWorld
from sources.platform.rescan import SCAN_COSTS_KEY
from sources.platform.resources import FULL_SCANS, STREAMS
from sources.platform.resources.store_sale_ids import pending_sale_ids
from sources.platform_client.operations import OPERATIONS
from tests.support.api_truth import ApiTruth
from tests.support.scan_budget import read_every_run
from tests.support.sync_helpers import ids, query, source_options

LISTED = {
    "products": "/store/v1/products",
    "affiliations": "/store/v1/affiliates",
    "transfers": "/store/v1/financial/transfers",
}


def assert_no_duplicates(pipeline, table: str, key: str = "id") -> None:
    counts = Counter(ids(pipeline, table, key))
    assert [k for k, n in counts.items() if n > 1] == []


def assert_warehouse_matches_api(pipeline, sandbox, token: str) -> None:
    truth = ApiTruth(sandbox.base_url, token)
    catalog = sandbox.catalog()
    event_ids = [e["id"] for e in catalog["events"]]
    for table, path in LISTED.items():
        assert set(ids(pipeline, table)) == truth.ids(path), table
        assert_no_duplicates(pipeline, table)

    subscriptions = {s["id"]: s for s in truth.subscriptions()}
    loaded = dict(query(pipeline, "select id, status from subscriptions"))
    assert loaded == {i: s["status"] for i, s in subscriptions.items()}
    assert_no_duplicates(pipeline, "subscriptions")

    documents = {d["document"]["id"]: d["document"]["status"] for d in truth.fiscal_documents()}
    assert dict(query(pipeline, "select document__id, document__status from fiscal_documents")) == documents

    attendees = {a["id"]: a["status"] for a in truth.attendees(event_ids)}
    assert dict(query(pipeline, "select id, status from event_attendees")) == attendees
    assert_no_duplicates(pipeline, "event_attendees")

    sales = truth.reachable_sales(event_ids)
    loaded_sales = dict(query(pipeline, "select id, status from sales"))
    assert loaded_sales == {i: s["status"] for i, s in sales.items()}
    assert_no_duplicates(pipeline, "sales")
    items = query(pipeline, "select count(*) from sales__items")[0][0]
    assert items == sum(len(s["items"]) for s in sales.values())

    comments = truth.ids("/course/v1/comments")
    assert set(ids(pipeline, "lesson_comments")) == comments
    assert set(ids(pipeline, "events")) == set(event_ids)


def test_full_sync_holds_exactly_what_the_api_serves(sandbox, make_pipeline):
    token = sandbox.token()
    pipeline = make_pipeline()
    result = sync(pipeline, source_options=source_options(sandbox, token))
    assert result.report.failed == {} and result.report.skipped == {}
    assert_warehouse_matches_api(pipeline, sandbox, token)
    # Fiscal documents were read in date windows, several at a time: the cursor is the newest emission
    # date of them all, with the documents stamped with it.
    documents = ApiTruth(sandbox.base_url, token).fiscal_documents()
    newest = max(datetime.fromisoformat(d["document"]["emissionDate"]) for d in documents)
    at_newest = sorted(
        d["document"]["id"]
        for d in documents
        if datetime.fromisoformat(d["document"]["emissionDate"]) == newest
    )
    state = pipeline.state["sources"]["platform"]["resources"]["fiscal_documents"]["emission_date"]
    assert (datetime.fromisoformat(state["value"]), state["ids"]) == (newest, at_newest)
    # money is exact and typed
    gross = query(pipeline, "select typeof(gross_gain__value), typeof(paid_at) from sales limit 1")[0]
    assert gross[0].startswith("DECIMAL") and gross[1] == "TIMESTAMP WITH TIME ZONE"


def test_second_run_brings_exactly_the_changes_with_few_requests(sandbox, make_pipeline):
    token = sandbox.token()
    pipeline = make_pipeline()
    options = source_options(sandbox, token)
    sync(pipeline, source_options=options)

    sandbox.reset_stats()
    unchanged = sync(pipeline, source_options=options)
    requests = sandbox.stats()
    assert unchanged.rows.get("subscriptions", 0) == 0
    assert unchanged.rows.get("event_attendees", 0) == 0
    by_operation = requests["operations"]
    assert sum(by_operation["list_subscriptions"].values()) == 1
    assert sum(by_operation["list_attendees"].values()) == len(options["event_ids"])
    # the incremental reads, and the full scans the budget reads every run; the others are not due
    # (tests/pipelines/sync/test_freshness.py has the exact counts)
    costs = pipeline.state["sources"]["platform"][SCAN_COSTS_KEY]
    cheap = read_every_run(costs, options)
    assert cheap
    incremental = {"list_subscriptions", "list_attendees", "list_fiscal_documents"}
    assert set(by_operation) - {"sale_details"} == incremental | {STREAMS[name].operation for name in cheap}
    assert set(unchanged.report.not_due) == set(FULL_SCANS) - cheap and not unchanged.is_partial

    sales_before = len(ids(pipeline, "sales"))
    sandbox.advance(3 * 86400)
    # Three days on, every full scan is due; our clock did not move with the world's, so `rescan` says it.
    changed = sync(pipeline, source_options={**options, "rescan": True})
    assert changed.rows.get("subscriptions", 0) > 0
    assert_warehouse_matches_api(pipeline, sandbox, token)
    assert len(ids(pipeline, "sales")) > sales_before  # new sales were discovered


def test_missing_scope_skips_only_its_resources(sandbox, make_pipeline):
    every_scope = {scope for operation in OPERATIONS for scope in operation.scopes}
    scopes = sorted(every_scope - {"store_financial_read"})
    token = sandbox.token(scopes)
    pipeline = make_pipeline()
    result = sync(pipeline, source_options=source_options(sandbox, token))
    assert set(result.report.skipped) == {"transfers", "fiscal_documents"}
    assert "store_financial_read" in result.report.skipped["transfers"]
    assert result.is_partial
    assert result.rows["products"] > 0 and result.rows["subscriptions"] > 0 and result.rows["sales"] > 0


def test_snapshot_tables_survive_a_run_that_cannot_read_them(sandbox, make_pipeline):
    """The product snapshots (campaigns and partners, merged on (product_id, id) since issue 25 so that a
    deleted product's children are marked, not dropped) keep their rows when a later run skips or fails
    them, and such a run marks none of them deleted."""
    pipeline = make_pipeline()
    options = source_options(sandbox, sandbox.token())
    sync(pipeline, source_options=options)
    snapshot = {t: query(pipeline, f"select _dlt_id from {t} order by 1") for t in ("product_campaigns",)}
    assert snapshot["product_campaigns"]

    every_scope = {scope for operation in OPERATIONS for scope in operation.scopes}
    without_products = sorted(every_scope - {"store_products_read"})
    skipped = sync(
        pipeline,
        resources=["product_campaigns"],
        source_options={**options, "access_token": sandbox.token(without_products), "rescan": True},
    )
    assert set(skipped.report.skipped) == {"product_campaigns"}
    sandbox.set_faults("error=1.0")
    failed = sync(
        pipeline,
        resources=["product_campaigns"],
        source_options={**options, "rescan": True, "max_retries": 1},
    )
    sandbox.set_faults(None)
    assert set(failed.report.failed) == {"product_campaigns"}
    assert {t: query(pipeline, f"select _dlt_id from {t} order by 1") for t in snapshot} == snapshot
    assert (skipped.deleted, failed.deleted) == ({}, {})
    assert query(
        pipeline, "select count(*) from product_campaigns where _platform_deleted_at is not null"
    ) == [(0,)]

    # and the next run that reads them loads them again, whole
    sync(pipeline, resources=["product_campaigns"], source_options={**options, "rescan": True})
    replaced = query(pipeline, "select _dlt_id from product_campaigns order by 1")
    assert len(replaced) == len(snapshot["product_campaigns"])
    assert not set(replaced) & set(snapshot["product_campaigns"])
    assert pipeline.default_schema.tables["product_campaigns"]["write_disposition"] == "merge"


@pytest.mark.parametrize("faults", ["error=0.15,seed=5", "drop=0.08,truncate=0.08,seed=6"])
def test_injected_faults_end_exact(sandbox, make_pipeline, faults):
    token = sandbox.token()
    pipeline = make_pipeline()
    sandbox.set_faults(faults)
    result = sync(pipeline, source_options=source_options(sandbox, token, max_retries=10))
    sandbox.set_faults(None)
    assert result.report.failed == {}
    assert_warehouse_matches_api(pipeline, sandbox, token)


def test_sale_budget_carries_unfetched_ids_over_to_the_next_runs(sandbox, make_pipeline):
    token = sandbox.token()
    pipeline = make_pipeline()
    options = source_options(sandbox, token, sales_max_requests=70)
    first = sync(pipeline, source_options=options)
    assert first.requests["sale_details"] == 70
    pending = pending_sale_ids(pipeline.state["sources"]["platform"]["resources"]["sales"])
    assert pending and len(set(ids(pipeline, "sales")) & set(pending)) == 0
    for _ in range(10):
        sync(pipeline, source_options=options)
        if not pending_sale_ids(pipeline.state["sources"]["platform"]["resources"]["sales"]):
            break
    assert_warehouse_matches_api(pipeline, sandbox, token)


def test_full_refresh_reloads_everything_from_scratch(sandbox, make_pipeline):
    token = sandbox.token()
    pipeline = make_pipeline()
    options = source_options(sandbox, token)
    sync(pipeline, resources=["products", "subscriptions"], source_options=options)
    refreshed = sync(
        pipeline, resources=["products", "subscriptions"], full_refresh=True, source_options=options
    )
    assert refreshed.rows["subscriptions"] == len(ApiTruth(sandbox.base_url, token).subscriptions())
    assert_no_duplicates(pipeline, "subscriptions")
    assert_no_duplicates(pipeline, "products")


def sales_that_change(seed: int, scale: int, seconds: float) -> dict[str, tuple[str, str]]:
    """Sales whose status changes when the world advances by `seconds`: (before, after) by id.

    Read from a twin of the sandbox's world (same seed and scale), so the test knows in advance which
    sales the pipeline must see change, without trusting anything the pipeline computes.
    """
    twin = SyntheticWorld(seed, scale)
    sale_ids = [twin.sales.sale_id(i) for i in range(scale)]
    before = {sale_id: twin.sale(sale_id)["status"] for sale_id in sale_ids}
    twin.advance(seconds)
    after = {sale_id: twin.sale(sale_id)["status"] for sale_id in sale_ids}
    return {i: (before[i], after[i]) for i in sale_ids if before[i] != after[i]}


def test_sales_that_change_status_are_fetched_again(make_pipeline):
    seed, scale, week = 1, 3000, 7 * 86400
    changing = sales_that_change(seed, scale, week)
    assert len(changing) >= 3, "the world should refund or settle some sales within a week"
    with running_sandbox(seed=seed, scale=scale, time_scale=600) as sandbox:
        options = source_options(sandbox, sandbox.token(), sale_ids=sorted(changing), sales_recheck_hours=0)
        pipeline = make_pipeline()
        sync(pipeline, resources=["sales"], source_options=options)
        assert dict(query(pipeline, "select id, status from sales")) == {
            i: b for i, (b, _) in changing.items()
        }
        sandbox.advance(week)
        sync(pipeline, resources=["sales"], source_options=options)
        assert dict(query(pipeline, "select id, status from sales")) == {
            i: a for i, (_, a) in changing.items()
        }
        refunded = [i for i, (_, after) in changing.items() if after == "refunded"]
        if refunded:
            assert query(
                pipeline,
                f"select count(*) from sales where id in {tuple(refunded) + ('',)} "
                "and refund__refunded_at is not null",
            )[0][0] == len(refunded)
