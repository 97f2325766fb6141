"""Issue 25, the source side, against the sandbox's unruly world (seed 1, scale 200: the moments below are
what that seeded world plays, `tests/sandbox/test_unruly.py`): a future-dated `updatedAt` does not blind
the subscriptions cursor, a renewal due is read again by id, deleted records are marked (and their
children with them) only by complete scans. Real pipeline, real DuckDB, exact rows and requests."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from pipelines.cli.summary import print_summary
from pipelines.sync.platform_pipeline import sync
from sandbox.running import SandboxHandle, running_sandbox
from sources.platform_client.operations import OPERATIONS
from tests.support.api_truth import ApiTruth
from tests.support.sync_helpers import E2E_TIME_SCALE, query, source_options

T0 = datetime(2026, 6, 1, tzinfo=UTC)
FUTURE_SUBSCRIPTION = "200000015"  # updatedAt jumps to 2026-07-21T05:32:08.749Z at 2026-06-19T09:13:43Z
RENEWED_SUBSCRIPTION = "200000017"  # due 2026-06-09T20:53:56.629Z, updatedAt moves at 2026-06-12T12:46Z
DELETED_PRODUCT = "4100008"  # leaves the product list at 2026-06-14T09:26:51.954Z
WHOLE_LISTS = {
    "products": "/store/v1/products",
    "affiliations": "/store/v1/affiliates",
    "transfers": "/store/v1/financial/transfers",
    "lesson_comments": "/course/v1/comments",
}


@pytest.fixture
def unruly() -> Iterator[SandboxHandle]:
    with running_sandbox(seed=1, scale=200, time_scale=E2E_TIME_SCALE, unruly=True) as handle:
        yield handle


def move_to(sandbox: SandboxHandle, when: str) -> datetime:
    """Advance the world's clock to `when` (from wherever it is: the runs never move it)."""
    target = datetime.fromisoformat(when)
    clock = datetime.fromisoformat(sandbox.catalog()["clock"].replace("Z", "+00:00"))
    sandbox.advance((target - clock).total_seconds())
    return target


def deleted(pipeline, table: str, key: str = "id") -> dict[str, datetime]:
    return {
        str(k): at
        for k, at in query(pipeline, f"select {key}, _platform_deleted_at from {table}")
        if at is not None
    }


def test_a_future_updated_at_loads_is_reported_and_does_not_blind_the_cursor(unruly, make_pipeline):
    token = unruly.token()
    pipeline = make_pipeline()
    options = source_options(unruly, token)
    first = sync(pipeline, source_options=options)
    clock = move_to(unruly, "2026-06-20T00:00:00+00:00")
    second = sync(pipeline, source_options=options)

    future = dict(query(pipeline, "select id, updated_at from subscriptions"))[FUTURE_SUBSCRIPTION]
    assert future == datetime(2026, 7, 21, 5, 32, 8, 749000, tzinfo=UTC)  # loaded as the API sends it
    cursor = pipeline.state["sources"]["platform"]["resources"]["subscriptions"]["updated_at"]
    assert datetime.fromisoformat(cursor["value"]) <= clock  # never past the API's clock
    ahead = {
        s["id"]
        for s in ApiTruth(unruly.base_url, token).subscriptions()
        if datetime.fromisoformat(s["updatedAt"]) > clock + timedelta(minutes=5)
    }
    assert FUTURE_SUBSCRIPTION in ahead
    [(path, kind, records, example)] = query(
        pipeline,
        "select field_path, kind, records, example_record_id from _platform_departures "
        # the second run's loads (its passes): after the first run's last
        f"where resource = 'subscriptions' and _dlt_load_id > '{first.load_info.loads_ids[-1]}'",
    )
    assert (path, kind, records, example in ahead) == ("updatedAt", "in_the_future", len(ahead), True)
    out = io.StringIO()
    print_summary(second, out)
    assert "subscriptions: updatedAt was later than the API's clock" in out.getvalue()

    # ten days on: every subscription that changed in them arrives (a cursor at 2026-07-21 would see none)
    day_before = clock
    move_to(unruly, "2026-06-30T00:00:00+00:00")
    sync(pipeline, source_options=options)
    truth = {s["id"]: s for s in ApiTruth(unruly.base_url, token).subscriptions()}
    changed = [
        i
        for i, s in truth.items()
        if day_before < datetime.fromisoformat(s["updatedAt"]) < T0.replace(month=7)
    ]
    assert changed, "the world changes some subscriptions in those days"
    loaded = {
        i: (status, at)
        for i, status, at in query(pipeline, "select id, status, updated_at from subscriptions")
    }
    assert loaded == {i: (s["status"], datetime.fromisoformat(s["updatedAt"])) for i, s in truth.items()}


def test_a_no_change_run_loads_nothing_despite_the_lookback(unruly, make_pipeline):
    options = source_options(unruly, unruly.token())
    pipeline = make_pipeline()
    sync(pipeline, source_options=options)
    move_to(unruly, "2026-06-05T00:00:00+00:00")
    sync(pipeline, source_options=options)
    again = sync(pipeline, source_options=options)
    assert (again.rows.get("subscriptions", 0), again.rows.get("event_attendees", 0)) == (0, 0)


def test_a_renewal_due_is_read_again_by_id_once(unruly, make_pipeline):
    options = source_options(unruly, unruly.token())
    pipeline = make_pipeline()
    sync(pipeline, source_options=options)
    move_to(unruly, "2026-06-09T00:00:00+00:00")
    sync(pipeline, source_options=options)
    before = dict(query(pipeline, "select id, charges__current from subscriptions"))[RENEWED_SUBSCRIPTION]
    clock = move_to(unruly, "2026-06-10T00:00:00+00:00")
    due = {
        str(i)
        for (i,) in query(
            pipeline,
            "select id from subscriptions where _platform_read_at < recurrence__next_due_date "
            f"and recurrence__next_due_date <= '{clock.isoformat()}'",
        )
    }
    assert RENEWED_SUBSCRIPTION in due
    unruly.reset_stats()
    sync(pipeline, source_options=options)
    by_operation = unruly.stats()["operations"]
    assert by_operation["subscription_details"] == {"200": len(due)}
    row = query(
        pipeline,
        "select charges__current, recurrence__current_due_date, _platform_read_at from subscriptions "
        f"where id = '{RENEWED_SUBSCRIPTION}'",
    )
    assert row == [(before + 1, datetime(2026, 6, 9, 20, 53, 56, 630000, tzinfo=UTC), clock)]

    unruly.reset_stats()
    sync(pipeline, source_options=options)  # read after their due date: not read again
    assert "subscription_details" not in unruly.stats()["operations"]


def test_deleted_records_are_marked_with_their_children_and_cleared_never_by_a_partial_scan(
    unruly, make_pipeline
):
    token = unruly.token()
    # lesson comments read as one whole list (not per course): only then can a deleted one be marked
    options = {**source_options(unruly, token), "rescan": True, "course_ids": []}
    pipeline = make_pipeline()
    sync(pipeline, source_options=options)
    assert all(not deleted(pipeline, table) for table in WHOLE_LISTS)

    clock = move_to(unruly, "2026-06-15T00:00:00+00:00")
    # products cannot be read (their scope is missing): they, their campaigns and partners mark nothing
    every_scope = {scope for operation in OPERATIONS for scope in operation.scopes}
    without_products = sync(
        pipeline,
        source_options={
            **options,
            "access_token": unruly.token(sorted(every_scope - {"store_products_read"})),
        },
    )
    assert {"products", "product_campaigns", "product_partners"} <= set(without_products.report.skipped)
    assert not deleted(pipeline, "products") and not deleted(pipeline, "product_campaigns", "product_id")

    marked = sync(pipeline, source_options=options)
    truth = ApiTruth(unruly.base_url, token)
    gone = {
        table: set(map(str, (k for (k,) in query(pipeline, f"select id from {table}")))) - truth.ids(path)
        for table, path in WHOLE_LISTS.items()
    }
    assert DELETED_PRODUCT in gone["products"] and all(gone.values())
    assert {table: set(deleted(pipeline, table)) for table in WHOLE_LISTS} == gone
    assert set(deleted(pipeline, "transfers").values()) == {clock}  # the run's start by the API's clock
    campaigns = query(pipeline, "select product_id, _platform_deleted_at is not null from product_campaigns")
    assert {p for p, flagged in campaigns if flagged} == {DELETED_PRODUCT}
    assert {p for p, flagged in campaigns if p == DELETED_PRODUCT} == {DELETED_PRODUCT}
    children = {
        t: sum(
            1
            for p, flagged in query(pipeline, f"select product_id, _platform_deleted_at is not null from {t}")
            if flagged
        )
        for t in ("product_campaigns", "product_partners")
    }
    # each complete scan marks its own table: the run without products marked the other lists
    others = {t: len(k) for t, k in gone.items() if t != "products"}
    assert without_products.deleted == others
    assert all(children.values())
    assert marked.deleted == {"products": len(gone["products"]), **children}
    out = io.StringIO()
    print_summary(without_products, out)
    listed = ", ".join(f"{t} {n}" for t, n in sorted(others.items()))
    assert f"deleted: {listed} (records no longer on the platform;" in out.getvalue()

    move_to(unruly, "2026-06-16T00:00:00+00:00")
    again = sync(pipeline, source_options=options)
    assert all(t not in again.deleted for t in ("products", "product_campaigns", "product_partners"))
    assert set(deleted(pipeline, "products").values()) == {clock}  # the first time is kept


def test_the_command_reports_deletions_future_records_and_the_clocks(unruly, tmp_path):
    """The real `platform-sync sync`: exit 0 (a departure or a deletion is no failure), and the summary
    names what was marked deleted, the record in the future and the API's clock behind ours."""
    from tests.pipelines.cli.test_cli import cli_env, run_cli

    options = {**source_options(unruly, unruly.token()), "course_ids": [], "rescan": True}
    env = cli_env(tmp_path, options)
    first = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "deleted:" not in first.stdout
    move_to(unruly, "2026-06-20T00:00:00+00:00")
    second = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    lines = second.stdout.splitlines()
    [deletions] = [line for line in lines if line.startswith("deleted: ")]
    assert deletions.startswith("deleted: affiliations ") and " products 1," in deletions
    assert any(line.startswith("clock: the API's clock is ") and "behind ours" in line for line in lines)
    assert any(
        line.strip().startswith("subscriptions: updatedAt was later than the API's clock") for line in lines
    )
    assert "Traceback" not in second.stdout + second.stderr
