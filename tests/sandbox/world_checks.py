"""Helpers for test_world.py: the spec's enums, full listings and record collection at a clock."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sandbox.world import SyntheticWorld
from sandbox.world.api import Listing

EPOCH_START = datetime(2000, 1, 1, tzinfo=UTC)
FAR = datetime(2100, 1, 1, tzinfo=UTC)

# Spec parts 2 and 3: every value must appear in a 50-sale world.
ENUMS: dict[str, set[Any]] = {
    "sale.status": {
        "open",
        "processing",
        "paid",
        "canceled",
        "waitingRefund",
        "refunded",
        "duplicated",
        "expired",
        "recovering",
        "waitingPayment",
        "scheduled",
        "negotiated",
    },
    "sale.recoveringStatus": {"inactive", "active", "canceled"},
    "sale.payment.method": {
        "bankslip",
        "creditCard",
        "pix",
        "combinedPayment",
        "installmentBankslip",
        "eWallet",
        "platformBalance",
        "unknown",
    },
    "sale.payment.detail": {
        "bankslip",
        "cefBankslip",
        "creditCard",
        "amexCreditCard",
        "dinersCreditCard",
        "discoverCreditCard",
        "eloCreditCard",
        "hipercardCreditCard",
        "hiperCreditCard",
        "jcbCreditCard",
        "mastercardCreditCard",
        "unionpayCreditCard",
        "visaCreditCard",
        "pagdividido",
        "multipleCards",
        "pix",
        "automaticPix",
        "combinedPayment",
        "installmentBankslip",
        "paypal",
        "platformBalance",
        "unknown",
    },
    "sale.product.type": {"digital", "physical", "service", "ticket", "ecommerce", "package", "project"},
    "sale.product.billingType": {"recurrence", "single", "free", "other", "unknown"},
    "sale.refund.type": {"common", "partial"},
    "subscription.status": {
        "upToDate",
        "awaitingPayment",
        "late",
        "canceled",
        "defaulter",
        "suspended",
        "trial",
        "finished",
        "free",
    },
    "subscription.interruption.type": {"cancel", "suspend"},
    "subscription.recurrence.frequency.type": {"daily", "weekly", "monthly", "yearly"},
    "subscription.payment.method": {"bankslip", "creditcard", "pix", "unknown"},
    "product.type": {"digital", "physical", "service", "ticket", "ecommerce", "package", "project"},
    "product.status": {"active", "inactive"},
    "product.moderation": {"new", "approved", "pending", "refused"},
    "product.payment.type": {"oneTime", "subscription", "free", "open"},
    "partner.commission.type": {"percentage", "value"},
    "affiliation.status": {"approved", "canceled", "pending", "removed"},
    "transfer.status": {
        "confirmed",
        "canceled",
        "returnedMessage",
        "pending",
        "awaitingBankReturn",
        "inProgress",
        "blocked",
        "awaitingTransfer",
        "inProcess",
        "inQueue",
        "failed",
        "registeringInvoices",
    },
    "transfer.bankAccount.type": {"checkingAccount", "savingsAccount", None},
    "event.type": {"presential", "online", "live"},
    "attendee.status": {"confirmed", "locked", "presence_confirmed", "paid", "refunded"},
    "attendee.documentType": {"cpf", "passport"},
    "fiscal.document.status": {
        "new",
        "pending",
        "waitingDocument",
        "canceled",
        "processed",
        "approved",
        "fileGenerated",
        "processing",
        "deleted",
    },
    "comment.status": {"approved", "rejected", "inModeration"},
    "comment.type": {"html", "text"},
    "delivery.platform": {"platform", "externalA", "externalB", "externalC", "externalD", "api"},
}


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
