"""A rebuild keeps every sale (issue 48): `sync --full-refresh`, a dropped `sales` table and a deleted
working folder, each on a loaded warehouse, end with the sales a fresh sync of the same world holds.

The API cannot list sales: a sale is known only because another table names it. A rebuild that lost the
sales of the names it did not rediscover would lose them for good (the producers' cursors are past them).
"""

from __future__ import annotations

import shutil

import duckdb
import pytest

from pipelines.sync.platform_pipeline import sync
from sources.platform import platform_source
from tests.support.api_truth import ApiTruth
from tests.support.sync_helpers import query, source_options


def sales(pipeline) -> dict[str, tuple[str, str]]:
    return {row[0]: (row[1], row[2]) for row in query(pipeline, "select id, status, updated_at from sales")}


def reachable(sandbox, options) -> dict[str, tuple[str, str]]:
    truth = ApiTruth(sandbox.base_url, options["access_token"])
    event_ids = [e["id"] for e in sandbox.catalog()["events"]]
    return {i: s["status"] for i, s in truth.reachable_sales(event_ids).items()}


def statuses(pipeline) -> dict[str, str]:
    return {sale_id: status for sale_id, (status, _) in sales(pipeline).items()}


def test_a_full_refresh_ends_with_every_sale_of_a_fresh_sync(sandbox, make_pipeline):
    options = source_options(sandbox, sandbox.token())
    pipeline = make_pipeline()
    sync(pipeline, source_options=options)
    expected = reachable(sandbox, options)
    assert statuses(pipeline) == expected and len(expected) > 100

    refreshed = sync(pipeline, full_refresh=True, source_options=options)
    assert refreshed.report.failed == {}
    assert statuses(pipeline) == expected
    # Nothing is left waiting: the refresh fetched every sale it rediscovered.
    state = pipeline.state["sources"]["platform"]["resources"]["sales"]
    assert not state.get("pending")


# The documented way to change the privacy settings is a full refresh under the new ones.
PRIVACY_ON = {"privacy": {"emails": "hash", "names": "hash"}, "privacy_key": "k" * 32}


@pytest.mark.parametrize("changed", [{}, PRIVACY_ON], ids=["same settings", "privacy settings changed"])
def test_a_full_refresh_past_the_budget_drains_the_backlog_in_the_next_runs(sandbox, make_pipeline, changed):
    options = source_options(sandbox, sandbox.token())
    pipeline = make_pipeline()
    sync(pipeline, source_options=options)
    expected = reachable(sandbox, options)
    budget = len(expected) // 3 + 1
    options = {**options, **changed}

    sync(pipeline, full_refresh=True, source_options={**options, "sales_max_requests": budget})
    first = statuses(pipeline)
    assert 0 < len(first) <= budget and set(first) <= set(expected)
    runs = 1
    while statuses(pipeline) != expected and runs < 6:
        sync(pipeline, source_options={**options, "sales_max_requests": budget})
        runs += 1
    assert statuses(pipeline) == expected
    # At the budget's pace: a third of the sales a run (the cycle's share aside), not one run more.
    assert runs <= 4


def test_a_dropped_sales_table_is_filled_again_by_the_next_run(sandbox, make_pipeline):
    options = source_options(sandbox, sandbox.token())
    pipeline = make_pipeline()
    sync(pipeline, source_options=options)
    expected = reachable(sandbox, options)

    pipeline.run(platform_source(**options).with_resources("sales"), refresh="drop_resources")
    # The drop's own run fetched what its budget allowed, and kept nothing of the dropped table
    assert set(statuses(pipeline)) <= set(expected)
    sync(pipeline, source_options=options)
    assert statuses(pipeline) == expected


def test_sales_deleted_from_the_warehouse_by_hand_are_fetched_again(sandbox, make_pipeline):
    options = source_options(sandbox, sandbox.token())
    pipeline = make_pipeline()
    sync(pipeline, source_options=options)
    expected = reachable(sandbox, options)
    path = pipeline.destination_client().config.credentials.database  # type: ignore[attr-defined]
    with duckdb.connect(path) as connection:
        connection.execute(
            "delete from platform_raw.sales "
            "where id in (select id from platform_raw.sales order by id limit 25)"
        )
    assert len(statuses(pipeline)) == len(expected) - 25

    again = sync(pipeline, source_options=options)
    assert statuses(pipeline) == expected
    assert again.report.failed == {}


def test_a_deleted_working_folder_keeps_every_sale(sandbox, make_pipeline):
    options = source_options(sandbox, sandbox.token())
    pipeline = make_pipeline()
    sync(pipeline, source_options=options)
    expected = reachable(sandbox, options)
    working_dir = pipeline.working_dir
    shutil.rmtree(working_dir)

    restored = make_pipeline()
    sync(restored, source_options=options)
    assert statuses(restored) == expected
    sync(restored, full_refresh=True, source_options=options)
    assert statuses(restored) == expected
