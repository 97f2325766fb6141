"""Helpers for tests/sandbox/test_world*.py: the spec's enums, full listings, record collection at a clock."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sandbox.world import SyntheticWorld
from sandbox.world.api import Listing
from tests.support import spec_shapes as shapes

EPOCH_START = datetime(2000, 1, 1, tzinfo=UTC)
FAR = datetime(2100, 1, 1, tzinfo=UTC)

# The spec's shape of each kind of record `collect` gathers (its keys).
RECORD_SHAPES: dict[str, dict[str, Any]] = {
    "sale": shapes.SALE,
    "subscription": shapes.SUBSCRIPTION,
    "product": shapes.PRODUCT,
    "partner": shapes.PARTNER,
    "campaign": shapes.CAMPAIGN,
    "affiliation": shapes.AFFILIATION,
    "transfer": shapes.TRANSFER,
    "fiscal": shapes.FISCAL_DOCUMENT,
    "event": shapes.EVENT,
    "attendee": shapes.ATTENDEE,
    "comment": shapes.COMMENT,
    "delivery": shapes.DELIVERY,
}


def spec_enums(schema: Any, path: str) -> Iterator[tuple[str, set[Any]]]:
    """Every `Enum` field of a spec shape by dotted path, with None when nullable (arrays are not entered)."""
    nullable = isinstance(schema, shapes.Opt)
    if nullable:
        schema = schema.schema
    if isinstance(schema, shapes.Enum):
        yield path, set(schema) | ({None} if nullable else set())
    elif isinstance(schema, dict):
        for key, sub in schema.items():
            yield from spec_enums(sub, f"{path}.{key}")


# Spec parts 2 and 3, read from spec_shapes: every value must appear in a 50-sale world. Left out:
# `subscription.interruption.previousStatus` (the spec does not say an interruption can follow every status;
# the world interrupts up-to-date subscriptions only). Added: part 3's fiscal-document statuses (the
# record's shape has a string there).
ENUMS: dict[str, set[Any]] = {
    key: expected
    for kind, shape in RECORD_SHAPES.items()
    for key, expected in spec_enums(shape, kind)
    if key != "subscription.interruption.previousStatus"
} | {"fiscal.document.status": set(shapes.FISCAL_DOCUMENT_STATUSES)}


def to_datetime_iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def full(listing: Listing) -> list[dict[str, Any]]:
    return listing.page(0, len(listing))


def dig(record: Any, path: str) -> Any:
    for part in path.split("."):
        record = None if record is None else record.get(part)
    return record


def decimal(money: dict[str, Any]) -> Decimal:
    """A Money value as the JSON reader sees it (exact, at most 2 decimals)."""
    value = Decimal(json.dumps(money["value"]))
    assert value == value.quantize(Decimal("0.01")), money
    return value


def sales(world: SyntheticWorld) -> list[dict[str, Any]]:
    return [world.sale(str(100_000_000 + i)) for i in range(world.sales.count_at(world.now))]


def attendees(world: SyntheticWorld) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for ev in world.catalog()["events"]:
        for a in full(world.attendees(ev["id"])):
            yield ev, a


def collect(world: SyntheticWorld) -> dict[str, list[dict[str, Any]]]:
    """Every record the world serves at its clock, by kind (ENUMS keys' first part)."""
    cat = world.catalog()
    products = full(world.products())
    return {
        "sale": sales(world),
        "subscription": full(world.subscriptions(None, None, "creation")),
        "product": products,
        "partner": [p for pr in products for p in world.product_partners(pr["id"])],
        "campaign": [c for pr in products for c in world.product_campaigns(pr["id"])],
        "affiliation": full(world.affiliations(None)),
        "transfer": full(world.transfers()),
        "fiscal": full(world.fiscal_documents(EPOCH_START, FAR)),
        "event": [world.event(e["id"]) for e in cat["events"]],
        "attendee": [a for _, a in attendees(world)],
        "comment": full(world.lesson_comments()),
        "delivery": [world.delivery(s["team_slug"], d) for s in cat["schools"] for d in s["delivery_ids"]],
    }


def values(records: Iterable[dict[str, Any]], path: str) -> set[Any]:
    return {dig(r, path) for r in records}


def snapshot(world: SyntheticWorld) -> str:
    """A byte-level fingerprint of the world's answers (json of a sample of every listing)."""
    return json.dumps(collect(world), sort_keys=True, ensure_ascii=False)
