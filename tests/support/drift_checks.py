"""Helpers for tests/sandbox/test_drift.py: read every record of every read operation, and diff records
against the spec.

`spec_departures` is written from `spec_shapes` and the contract alone, not from `sandbox.drift`: it is
the independent judge of what the sandbox says it injected.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tests.support import spec_shapes as shapes
from tests.support.sandbox_api import Api

# The read operations, their spec shape and the contract's exceptions to it.
SHAPES: dict[str, dict[str, Any]] = {
    "list_products": shapes.PRODUCT,
    "list_product_campaigns": shapes.CAMPAIGN,
    "list_product_partners": shapes.PARTNER,
    "list_affiliations": shapes.AFFILIATION,
    "list_transfers": shapes.TRANSFER,
    "list_subscriptions": shapes.SUBSCRIPTION,
    "subscription_details": shapes.SUBSCRIPTION,
    "sale_details": shapes.SALE,
    "list_fiscal_documents": shapes.FISCAL_DOCUMENT,
    "event_details": shapes.EVENT,
    "list_attendees": shapes.ATTENDEE,
    "list_enrollments": shapes.ENROLLMENT,
    "delivery_details": shapes.DELIVERY,
    "top_commented_posts": shapes.POST,
    "list_community_commenters": shapes.MEMBER,
    "list_lesson_comments": shapes.COMMENT,
    "list_webhook_origins": shapes.WEBHOOK_ORIGIN,
}
# Contracts part 1: nulls the sandbox sends by documented choice.
CONTRACT_NULLS = {"list_subscriptions": {"interruption"}, "subscription_details": {"interruption"},
                  "list_attendees": {"checkinDate"}}  # fmt: skip
# Never departed: record keys and sale references (the brief's list, plus order bumps' main sale id).
UNTOUCHABLE = {
    "list_subscriptions": {"id", "firstInvoiceId"},
    "subscription_details": {"id", "firstInvoiceId"},
    "sale_details": {"id", "orderBump.mainSaleId"},
    "list_fiscal_documents": {"document", "document.id", "sale", "sale.id"},
    "list_attendees": {"id", "invoiceId"},
    "list_enrollments": {"course", "course.name"},
}
CANONICAL = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
NUMBER_TEXT = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")

Row = tuple[str, str, str, str, Any]  # operation, record id, path, kind, value


def spec_departures(operation: str, record: dict[str, Any]) -> set[tuple[str, str, Any]]:
    """(path, kind, value) of every way `record` departs from its operation's spec shape."""
    found: set[tuple[str, str, Any]] = set()
    _walk(record, SHAPES[operation], "", operation, found)
    return found


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(value: Any, schema: Any, path: str, op: str, out: set[tuple[str, str, Any]]) -> None:
    if isinstance(schema, shapes.Opt):
        if value is None:
            return
        schema = schema.schema
    if value is None:
        if path not in CONTRACT_NULLS.get(op, set()):
            out.add((path, "null", None))
        return
    if isinstance(schema, dict):
        for key in value:
            if key not in schema:
                out.add((_join(path, key), "unlisted_field", None))
        for key, sub in schema.items():
            if key in value:
                _walk(value[key], sub, _join(path, key), op, out)
            elif _join(path, key) not in CONTRACT_NULLS.get(op, set()):
                out.add((_join(path, key), "missing", None))
    elif isinstance(schema, list):
        for item in value:
            _walk(item, schema[0], path + "[]", op, out)
    elif isinstance(schema, shapes.Enum):
        if value not in schema:
            out.add((path, "unlisted_value", value))
    elif schema == shapes.N and not (isinstance(value, int | float) and not isinstance(value, bool)):
        kind = "converted" if isinstance(value, str) and NUMBER_TEXT.fullmatch(value) else "unconvertible"
        out.add((path, kind, value))
    elif schema == shapes.B and not isinstance(value, bool):
        kind = "converted" if value in (0, 1, "true", "false") else "unconvertible"
        out.add((path, kind, value))
    elif schema == shapes.DT and not _canonical_datetime(value, op):
        kind = (
            "converted"
            if isinstance(value, str) and shapes.problems(value, shapes.DT) == []
            else "unconvertible"
        )
        out.add((path, kind, value))


def _canonical_datetime(value: Any, op: str) -> bool:
    """What the sandbox sends without drift: UTC with milliseconds and Z; date-only on transfers (spec 1)."""
    if not isinstance(value, str):
        return False
    return bool(CANONICAL.fullmatch(value) or (op == "list_transfers" and DATE_ONLY.fullmatch(value)))


def all_items(api: Api, path: str, size: int = 100, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    page = 1
    while True:
        response = api.get(path, page=page, itemsPerPage=size, **params)
        assert response.status_code == 200, response.text
        body = response.json()
        items += body["items"]
        if page >= body["pages"]:
            return items
        page += 1


WINDOW = {"startDate": "2020-01-01", "endDate": "2030-01-01"}


def crawl(api: Api) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Every record of every read operation as (record id, record), the ids computed from the outside."""
    catalog = api.sandbox.catalog()
    served: dict[str, list[tuple[str, dict[str, Any]]]] = {op: [] for op in SHAPES}

    def add(op: str, records: list[dict[str, Any]], prefix: str = "", key: Any = None) -> None:
        for r in records:
            served[op].append((prefix + str(key(r) if key else r["id"]), r))

    products = all_items(api, "/store/v1/products")
    add("list_products", products)
    for product in catalog["products"]:
        pid = product["id"]
        add("list_product_campaigns", api.get(f"/store/v1/products/{pid}/campaigns").json(), f"{pid}/")
        add("list_product_partners", api.get(f"/store/v1/products/{pid}/partners").json(), f"{pid}/")
    add("list_affiliations", all_items(api, "/store/v1/affiliates"))
    add("list_transfers", all_items(api, "/store/v1/financial/transfers"))
    subscriptions = all_items(api, "/store/v1/subscriptions")
    add("list_subscriptions", subscriptions)
    add("subscription_details", [api.get(f"/store/v1/subscriptions/{s['id']}").json() for s in subscriptions])
    documents = all_items(api, "/store/v1/financial/buyer/fiscal-documents", **WINDOW)
    add("list_fiscal_documents", documents, key=lambda d: d["document"]["id"])
    sale_ids = sorted({d["sale"]["id"] for d in documents} | {s["firstInvoiceId"] for s in subscriptions})
    add("sale_details", [api.get(f"/store/v1/sales/{sale_id}").json() for sale_id in sale_ids])
    for event in catalog["events"]:
        add("event_details", [api.get(f"/events/v1/events/{event['id']}").json()])
        add("list_attendees", all_items(api, f"/events/v1/attendance-list/by-event/{event['id']}"))
    for school in catalog["schools"]:
        team = school["team_slug"]
        for student in school["student_slugs"]:
            enrollments = all_items(api, f"/school/v1/producer/teams/{team}/students/{student}/enrollments")
            add("list_enrollments", enrollments, f"{team}/{student}/", key=lambda e: e["course"]["name"])
        for delivery_id in school["delivery_ids"]:
            delivery = api.get(f"/school/v1/producer/teams/{team}/deliveries/{delivery_id}").json()
            add("delivery_details", [delivery], f"{team}/")
    for community in catalog["communities"]:
        cid = community["id"]
        top = api.get(f"/community/v1/posts/community/{cid}/top/commented", days=3650)
        if top.status_code == 200:
            add("top_commented_posts", top.json()["items"], f"{cid}/")
        members = all_items(api, f"/community/v1/members/community/{cid}/comments", days=3650)
        add("list_community_commenters", members, f"{cid}/")
    add("list_lesson_comments", all_items(api, "/course/v1/comments"))
    origins = api.get("/webhook/v1/origin")
    assert origins.status_code == 201
    add("list_webhook_origins", origins.json())
    return served


def diff_rows(served: dict[str, list[tuple[str, dict[str, Any]]]]) -> set[Row]:
    """The report the sandbox should give for these records, found by diffing them against the spec."""
    return {
        (op, record_id, path, kind, value)
        for op, records in served.items()
        for record_id, record in records
        for path, kind, value in spec_departures(op, record)
    }


def as_rows(report: list[dict[str, Any]]) -> set[Row]:
    return {(r["operation"], r["record_id"], r["path"], r["kind"], r["value"]) for r in report}


def departing(served: dict[str, list[tuple[str, dict[str, Any]]]]) -> Iterator[tuple[str, str]]:
    """(operation, record id) of every served record that departs from the spec."""
    for op, records in served.items():
        for record_id, record in records:
            if spec_departures(op, record):
                yield op, record_id
