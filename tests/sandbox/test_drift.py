"""Drift (issue 14): the sandbox departs from the spec on demand, deterministically, and reports exactly that.

The report (`GET /sandbox/departures`) is compared with an independent diff of every served record
against `spec_shapes` (`drift_checks.spec_departures`), over every read operation, at two seeds.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest

from sandbox import spec_shapes as shapes
from sandbox.drift import KINDS, TARGETS, sites
from sandbox.running import running_sandbox, running_sandbox_process
from tests.support.drift_checks import SHAPES, UNTOUCHABLE, all_items, as_rows, crawl, departing, diff_rows
from tests.support.sandbox_api import Api, assert_error

SCALE = 200
RATE = 0.05
Served = dict[str, list[tuple[str, dict[str, Any]]]]
Crawl = tuple[Served, list[dict[str, Any]]]


def crawl_sandbox(**options: Any) -> Crawl:
    """Read everything from a fresh sandbox with these options; the records and the departures report."""
    with running_sandbox(scale=SCALE, rate_limits=False, **options) as sandbox:
        api = Api(sandbox)
        try:
            served = crawl(api)
        finally:
            api.close()
        return served, sandbox.departures()


@pytest.fixture(scope="module", params=[1, 2], ids=["seed1", "seed2"])
def seeded(request: pytest.FixtureRequest) -> tuple[int, Crawl]:
    seed: int = request.param
    return seed, crawl_sandbox(seed=seed, drift=RATE)


@pytest.fixture
def drifted(seeded: tuple[int, Crawl]) -> Crawl:
    return seeded[1]


def test_the_drift_table_covers_every_read_operation() -> None:
    assert set(TARGETS) == set(SHAPES)


def test_without_drift_nothing_departs_and_nothing_is_reported(synthetic_sandbox: Any) -> None:
    api = Api(synthetic_sandbox)
    try:
        served = crawl(api)
    finally:
        api.close()
    assert all(records for records in served.values()), "every read operation served records"
    assert diff_rows(served) == set(), "the baseline sandbox sends only what the spec allows"
    assert synthetic_sandbox.departures() == []
    assert synthetic_sandbox._call("GET", f"{synthetic_sandbox.base_url}/sandbox/drift")["rate"] == 0


def test_the_report_is_exactly_what_was_served(drifted: Crawl) -> None:
    served, report = drifted
    assert len(report) == len(as_rows(report)), "one row per distinct departure"
    assert as_rows(report) == diff_rows(served)


def test_every_kind_occurs(drifted: Crawl) -> None:
    _, report = drifted
    assert set(Counter(row["kind"] for row in report)) == set(KINDS)


def test_a_share_of_the_records_departs_one_to_three_ways(drifted: Crawl) -> None:
    served, report = drifted
    total = sum(len(records) for records in served.values())
    departed = set(departing(served))
    assert 0.02 * total <= len(departed) <= 0.09 * total, (len(departed), total)
    per_record = Counter((row["operation"], row["record_id"]) for row in report)
    assert set(per_record) == departed
    assert set(per_record.values()) <= {1, 2, 3}
    # The big listings depart at about the rate; small ones (5 events) may not depart at all at 5%.
    for op in ("sale_details", "list_fiscal_documents", "list_lesson_comments"):
        assert any(o == op for o, _ in departed), op


def test_nested_departures_occur(drifted: Crawl) -> None:
    _, report = drifted
    paths = {row["path"] for row in report}
    assert any("." in path for path in paths)
    assert any(path.count(".") >= 2 or "[]." in path for path in paths), "departures inside nested objects"
    assert any(p.endswith((".value", ".currency")) or ".value." in p for p in paths), "in money objects"


def test_new_fields_are_few_names_at_fixed_places_as_an_api_adds_them(seeded: tuple[int, Crawl]) -> None:
    """An API adds a field under one name in one object: each family's records carry at most two new
    fields, at the places the seed chose, one of them nested where the shape nests objects."""
    seed, (_, report) = seeded
    for operation, target in TARGETS.items():
        added = sites.new_fields(target.schema, target.family, seed)
        assert 1 <= len(added) <= sites.NEW_FIELDS_PER_FAMILY, operation
        if len(sites.object_paths(target.schema)) > 1:
            assert any(path for path in added), f"{operation}: one new field is nested"
        expected = {f"{path}.{name}" if path else name for path, name in added.items()}
        new_paths = {
            row["path"] for row in report if row["operation"] == operation and row["kind"] == "unlisted_field"
        }
        assert new_paths <= expected, operation
    fiscal = {
        row["path"]
        for row in report
        if row["operation"] == "list_fiscal_documents" and row["kind"] == "unlisted_field"
    }
    assert fiscal, "the big listing carries its new fields"
    placements = {
        seed_: tuple(sites.new_fields(shapes.SALE, "sale_details", seed_).items()) for seed_ in range(1, 9)
    }
    assert len(set(placements.values())) > 1, "the seed chooses where fields are added"


def test_nested_sites_depart_at_a_high_rate() -> None:
    """Buyer address, ticket lots, recurrence dates, fiscal parties and sale items all get departures."""
    served, report = crawl_sandbox(seed=4, drift=1.0)
    paths = {(row["operation"], row["path"].split(".")[0], row["path"]) for row in report}
    prefixes = {
        ("sale_details", "buyer.address."),
        ("sale_details", "items[]."),
        ("event_details", "tickets[].lots[]."),
        ("list_subscriptions", "recurrence."),
        ("list_fiscal_documents", "source."),
        ("list_fiscal_documents", "destination."),
        ("list_fiscal_documents", "client."),
    }
    for op, prefix in prefixes:
        assert any(o == op and path.startswith(prefix) for o, _, path in paths), (op, prefix)
    # At rate 1 every record of every operation departs, and the report still equals the diff.
    for op, records in served.items():
        assert {rid for o, rid in departing(served) if o == op} == {rid for rid, _ in records}, op
    assert as_rows(report) == diff_rows(served)


def test_keys_and_sale_references_never_depart(drifted: Crawl) -> None:
    served, report = drifted
    for row in report:
        assert row["path"] not in UNTOUCHABLE.get(row["operation"], {"id"}), row
    for op in ("list_fiscal_documents",):
        assert all(record["document"]["id"] and record["sale"]["id"] for _, record in served[op])


def test_converted_timestamps_are_never_date_only_on_transfers() -> None:
    served, report = crawl_sandbox(seed=5, drift=1.0)
    transfer_dates = [r for r in report if r["operation"] == "list_transfers" and r["kind"] == "converted"]
    dates = [r["value"] for r in transfer_dates if r["path"] in ("requestedAt", "completedAt", "createdAt")]
    assert dates and all(isinstance(v, str) and len(v) > 10 for v in dates), dates
    # Elsewhere a converted timestamp takes each of the three forms.
    others = [r["value"] for r in report if r["kind"] == "converted" and r["operation"] != "list_transfers"]
    texts = [v for v in others if isinstance(v, str) and v[:4].isdigit() and v[4:5] == "-"]
    assert {len(v) == 10 for v in texts} == {True, False}
    assert {v[10] for v in texts if len(v) > 10} == {"T", " "}
    assert served


def test_the_cli_serves_with_drift() -> None:
    with running_sandbox_process(scale=50, rate_limits=False, drift=0.5, drift_seed=3) as sandbox:
        assert sandbox._call("GET", f"{sandbox.base_url}/sandbox/drift") == {
            "rate": 0.5,
            "seed": 3,
            "rates": {},
        }
        api = Api(sandbox)
        try:
            served = crawl(api)
        finally:
            api.close()
        report = sandbox.departures()
    assert report and as_rows(report) == diff_rows(served)


def test_same_seed_same_bodies_and_report(seeded: tuple[int, Crawl]) -> None:
    seed, first = seeded
    assert crawl_sandbox(seed=seed, drift=RATE) == first
    # The drift seed alone decides: another world seed's drift seed gives another drift of the same world.
    other_served, other_report = crawl_sandbox(seed=seed, drift=RATE, drift_seed=seed + 100)
    assert as_rows(other_report) != as_rows(first[1])
    assert as_rows(other_report) == diff_rows(other_served)


def _by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {record["id"]: record for record in records}


def test_a_record_departs_alike_by_list_by_detail_and_at_any_page_size() -> None:
    with running_sandbox(seed=6, scale=SCALE, rate_limits=False, drift=0.3) as sandbox:
        api = Api(sandbox)
        try:
            listed = _by_id(all_items(api, "/store/v1/subscriptions"))
            in_sevens = _by_id(all_items(api, "/store/v1/subscriptions", size=7))
            details = {sid: api.get(f"/store/v1/subscriptions/{sid}").json() for sid in listed}
            by_update = _by_id(all_items(api, "/store/v1/subscriptions", filterBy="update"))
        finally:
            api.close()
        report = sandbox.departures()
    assert listed == in_sevens == details == by_update
    departed = {r["record_id"] for r in report if r["operation"] == "list_subscriptions"}
    assert departed and departed == {
        r["record_id"] for r in report if r["operation"] == "subscription_details"
    }
    rows = Counter(tuple(sorted((k, str(v)) for k, v in r.items() if k != "operation")) for r in report)
    assert set(rows.values()) == {2}, "every subscription departure is reported under both operations"


def test_filters_and_paging_use_the_true_values() -> None:
    """A record whose `modifiedAt` is sent date-only is still served to a cursor past midnight of that day."""
    with running_sandbox(seed=7, scale=SCALE, rate_limits=False) as sandbox:
        api = Api(sandbox)
        try:
            event_id = sandbox.catalog()["events"][0]["id"]
            path = f"/events/v1/attendance-list/by-event/{event_id}"
            truth = _by_id(all_items(api, path))
            found = None
            for seed in range(1, 400):  # a drift seed under which some attendee's modifiedAt is date-only
                sandbox.set_drift(rate=1.0, seed=seed)
                sandbox.reset_departures()
                drifted = _by_id(all_items(api, path))
                found = next(
                    (
                        a
                        for a in drifted.values()
                        if isinstance(a.get("modifiedAt"), str) and len(a["modifiedAt"]) == 10
                    ),
                    None,
                )
                if found is not None:
                    break
            assert found is not None
            true_modified = truth[found["id"]]["modifiedAt"]
            assert not true_modified.startswith(found["modifiedAt"] + "T00:00:00.000")
            since = _by_id(all_items(api, path, modifiedAtGte=true_modified))
        finally:
            api.close()
    assert found["id"] in since and since[found["id"]]["modifiedAt"] == found["modifiedAt"]
    assert set(since) == {aid for aid, a in truth.items() if a["modifiedAt"] >= true_modified}


def test_drift_is_set_at_run_time_and_the_report_resets() -> None:
    with running_sandbox(seed=8, scale=SCALE, rate_limits=False) as sandbox:
        api = Api(sandbox)
        try:
            assert sandbox.set_drift(rate=0.5, seed=7) == {"rate": 0.5, "seed": 7, "rates": {}}
            sandbox.set_drift(rates={"list_products": 1.0})
            products = all_items(api, "/store/v1/products")
            report = sandbox.departures()
            assert {r["record_id"] for r in report} == {p["id"] for p in products}
            sandbox.reset_departures()
            assert sandbox.departures() == []
            assert_error(httpx.post(f"{sandbox.base_url}/sandbox/drift", json={"rate": 2}), 422)
            assert_error(httpx.post(f"{sandbox.base_url}/sandbox/drift", json={"rates": {"nope": 1}}), 422)
            sandbox.set_drift(rate=0.0, rates={})
            assert all_items(api, "/store/v1/products") == all_items(api, "/store/v1/products")
            all_items(api, "/course/v1/comments")
            assert sandbox.departures() == []
        finally:
            api.close()


def test_write_operations_and_the_envelope_never_drift() -> None:
    with running_sandbox(seed=9, scale=SCALE, rate_limits=False, drift=1.0) as sandbox:
        api = Api(sandbox)
        try:
            event = sandbox.catalog()["events"][0]
            body = {"eventId": event["id"], "ticketId": event["ticket_ids"][0], "name": "Ana Souza",
                    "document": "52998224725", "documentType": "cpf", "email": "ana@example.com",
                    "phone": "11987654321", "useStock": False}  # fmt: skip
            created = api.post("/events/v1/attendance-list/add-manually", body)
            page = api.get("/store/v1/financial/transfers", page=2, itemsPerPage=7).json()
        finally:
            api.close()
        report = sandbox.departures()
    assert created.status_code == 201 and created.json()["name"] == "Ana Souza"
    assert shapes.problems(created.json(), shapes.CREATED_ATTENDEE) == []
    assert {k: page[k] for k in ("page", "itemsPerPage")} == {"page": 2, "itemsPerPage": 7}
    assert list(page) == ["pages", "page", "itemsPerPage", "totalItems", "items"] and len(page["items"]) == 7
    assert {r["operation"] for r in report} == {"list_transfers"}
