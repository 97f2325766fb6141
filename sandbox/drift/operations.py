"""The read operations that drift: each one's spec shape, record identity and untouchable paths.

The identity of a record is the key of the table it lands in, as text (parts joined by `/`, path
parameters first): the drift of a record is a function of it, and the departures report names it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sandbox import spec_shapes as shapes
from sandbox.drift.sites import Rules

Record = dict[str, Any]
KeyFunction = Callable[[Record, Mapping[str, str]], str | None]
# How the records sit in an answer: a paged envelope or `{"items": [...]}`, a JSON array, one record.
Layout = Literal["items", "array", "record"]


@dataclass(frozen=True)
class Target:
    schema: dict[str, Any]
    layout: Layout
    key: KeyFunction
    rules: Rules
    # Operations answering the same records share a family, so a record departs alike in each.
    family: str


def _field(*path: str) -> KeyFunction:
    def key(record: Record, params: Mapping[str, str]) -> str | None:
        value: Any = record
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        return None if value is None or isinstance(value, dict | list) else str(value)

    return key


def _under(*params: str, field: KeyFunction) -> KeyFunction:
    """The record's key prefixed by path parameters: `P001/C3`, `team/student/Course name`, `11/42`."""

    def key(record: Record, path: Mapping[str, str]) -> str | None:
        own = field(record, path)
        if own is None:
            return None
        return "/".join([*(_normal(path[p]) for p in params), own])

    return key


def _normal(param: str) -> str:
    # Integer path parameters (community ids) are named by their value: `011` and `11` are one community.
    return str(int(param)) if param.isdigit() else param


def _rules(*protected: str, nullable: tuple[str, ...] = (), date_only: bool = True) -> Rules:
    return Rules(frozenset(protected), frozenset(nullable), date_only)


_ID = _field("id")
_SUBSCRIPTION_RULES = _rules("id", "firstInvoiceId", nullable=("interruption",))

TARGETS: dict[str, Target] = {
    "list_products": Target(shapes.PRODUCT, "items", _ID, _rules("id"), "list_products"),
    "list_product_campaigns": Target(
        shapes.CAMPAIGN, "array", _under("id", field=_ID), _rules("id"), "list_product_campaigns"
    ),
    "list_product_partners": Target(
        shapes.PARTNER, "array", _under("id", field=_ID), _rules("id"), "list_product_partners"
    ),
    "list_affiliations": Target(shapes.AFFILIATION, "items", _ID, _rules("id"), "list_affiliations"),
    # Spec part 1: the transfer dates may be date-only, so a date-only transfer date is no departure.
    "list_transfers": Target(shapes.TRANSFER, "items", _ID, _rules("id", date_only=False), "list_transfers"),
    # Contracts part 1: `interruption` is null unless the subscription was suspended or canceled.
    "list_subscriptions": Target(shapes.SUBSCRIPTION, "items", _ID, _SUBSCRIPTION_RULES, "subscriptions"),
    "subscription_details": Target(shapes.SUBSCRIPTION, "record", _ID, _SUBSCRIPTION_RULES, "subscriptions"),
    # `orderBump.mainSaleId` names another sale: sales are discovered through it, like `firstInvoiceId`.
    "sale_details": Target(shapes.SALE, "record", _ID, _rules("id", "orderBump.mainSaleId"), "sale_details"),
    "list_fiscal_documents": Target(
        shapes.FISCAL_DOCUMENT,
        "items",
        _field("document", "id"),
        _rules("document.id", "sale.id"),
        "list_fiscal_documents",
    ),
    "event_details": Target(shapes.EVENT, "record", _ID, _rules("id"), "event_details"),
    # Contracts part 1: `checkinDate` is null until check-in.
    "list_attendees": Target(
        shapes.ATTENDEE, "items", _ID, _rules("id", "invoiceId", nullable=("checkinDate",)), "list_attendees"
    ),
    "list_enrollments": Target(
        shapes.ENROLLMENT,
        "items",
        _under("teamSlug", "studentSlug", field=_field("course", "name")),
        _rules("course.name"),
        "list_enrollments",
    ),
    "delivery_details": Target(
        shapes.DELIVERY, "record", _under("slug", field=_ID), _rules("id"), "delivery_details"
    ),
    "top_commented_posts": Target(
        shapes.POST, "items", _under("communityId", field=_ID), _rules("id"), "top_commented_posts"
    ),
    "list_community_commenters": Target(
        shapes.MEMBER, "items", _under("communityId", field=_ID), _rules("id"), "list_community_commenters"
    ),
    "list_lesson_comments": Target(shapes.COMMENT, "items", _ID, _rules("id"), "list_lesson_comments"),
    "list_webhook_origins": Target(shapes.WEBHOOK_ORIGIN, "array", _ID, _rules("id"), "list_webhook_origins"),
}
