"""The deletion marking step (`pipelines/sync/deletions.py`) on a real DuckDB loaded by dlt: only a complete,
clean scan marks; the first time is kept; a product's children follow it."""

from __future__ import annotations

from datetime import UTC, datetime

import dlt

from pipelines.sync.deletions import mark_deletions
from sources.platform.models import Departure
from sources.platform.report import RunReport
from sources.platform.seen_keys import SeenKeys
from tests.support.sync_helpers import query

COLUMN = {"_platform_deleted_at": {"data_type": "timestamp", "timezone": True, "nullable": True}}
FIRST = datetime(2026, 6, 15, tzinfo=UTC)
LATER = datetime(2026, 6, 16, tzinfo=UTC)


def loaded(make_pipeline) -> dlt.Pipeline:
    pipeline = make_pipeline("marking")
    products = dlt.resource(
        [{"id": p, "name": f"product {p}"} for p in ("p1", "p2", "p3")],
        name="products",
        primary_key="id",
        write_disposition="merge",
        columns=COLUMN,
    )
    campaigns = dlt.resource(
        [{"product_id": p, "id": c} for p, c in (("p1", "c1"), ("p2", "c2"), ("p2", "c3"))],
        name="product_campaigns",
        primary_key=["product_id", "id"],
        write_disposition="merge",
        columns=COLUMN,
    )
    pipeline.run([products, campaigns])
    return pipeline


def marks(pipeline, table: str) -> dict[str, datetime | None]:
    key = "product_id || '/' || id" if table == "product_campaigns" else "id"
    return dict(query(pipeline, f"select {key}, _platform_deleted_at from {table} order by 1"))


def scanned(*keys: str) -> SeenKeys:
    return SeenKeys((k,) for k in keys)


def test_a_failed_skipped_or_quarantining_scan_marks_nothing(make_pipeline):
    pipeline = loaded(make_pipeline)
    for spoil in ("fail", "skip", "quarantine"):
        report = RunReport()
        report.scan_complete("products", scanned("p1"))
        if spoil == "fail":
            report.fail("products", "page 3 answered 500 six times")
        elif spoil == "skip":
            report.skip("products", "missing scope")
        else:
            report.departures.quarantine("products", "no key: id is missing", None, {"name": "x"}, str)
        assert mark_deletions(pipeline, report, FIRST) == {}
    assert set(marks(pipeline, "products").values()) == {None}


def test_a_complete_scan_marks_the_unseen_keeps_the_first_time_and_children_follow(make_pipeline):
    pipeline = loaded(make_pipeline)
    report = RunReport()
    report.scan_complete("products", scanned("p1", "p3"))
    report.departures.record("products", "p1", [Departure("status", "unlisted_value", "x")])  # no quarantine
    assert mark_deletions(pipeline, report, FIRST) == {"products": 1, "product_campaigns": 2}
    assert marks(pipeline, "products") == {"p1": None, "p2": FIRST, "p3": None}
    assert marks(pipeline, "product_campaigns") == {"p1/c1": None, "p2/c2": FIRST, "p2/c3": FIRST}

    again = RunReport()
    again.scan_complete("products", scanned("p1"))
    assert mark_deletions(pipeline, again, LATER) == {"products": 1}
    assert marks(pipeline, "products") == {"p1": None, "p2": FIRST, "p3": LATER}  # p2 keeps its first time


def test_parents_that_answered_404_mark_their_rows_unless_their_resource_failed_or_was_skipped(make_pipeline):
    pipeline = make_pipeline("parents")
    attendees = dlt.resource(
        [{"id": a, "event_id": e} for a, e in (("a1", "e1"), ("a2", "e1"), ("a3", "e2"))],
        name="event_attendees",
        primary_key="id",
        write_disposition="merge",
        columns=COLUMN,
    )
    deliveries = dlt.resource(
        [{"team_slug": "school", "id": d} for d in (700, 701)],
        name="deliveries",
        primary_key=["team_slug", "id"],
        write_disposition="merge",
        columns=COLUMN,
    )
    pipeline.run([attendees, deliveries])

    def gone() -> RunReport:
        report = RunReport()
        report.parent_gone("event_attendees", ("e1",))
        report.parent_gone("deliveries", ("school", "701"))
        report.parent_gone("enrollments", ("school", "ana"))  # never loaded: nothing to mark, no warning
        return report

    for spoil in ("fail", "skip"):
        report = gone()
        for resource in ("event_attendees", "deliveries", "enrollments"):
            (report.fail if spoil == "fail" else report.skip)(resource, "page 2 answered 503")
        assert mark_deletions(pipeline, report, FIRST) == {}
    assert query(pipeline, "select count(*) from event_attendees where _platform_deleted_at is not null") == [
        (0,)
    ]

    report = gone()
    assert mark_deletions(pipeline, report, FIRST) == {"event_attendees": 2, "deliveries": 1}
    assert report.warnings == []
    assert dict(query(pipeline, "select id, _platform_deleted_at from event_attendees")) == {
        "a1": FIRST,
        "a2": FIRST,
        "a3": None,
    }
    assert dict(query(pipeline, "select id, _platform_deleted_at from deliveries")) == {700: None, 701: FIRST}
    assert mark_deletions(pipeline, gone(), LATER) == {}  # already marked: the first time is kept
    assert dict(query(pipeline, "select id, _platform_deleted_at from deliveries")) == {700: None, 701: FIRST}
