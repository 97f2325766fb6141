"""What a departure puts in a record: unlisted enum values, unlisted fields, converted and broken values.

Every value here is deterministic given the `random.Random` handed in (seeded from the drift seed and the
record's identity) and never personal: new enum values are realistic product words, new fields carry
scores, codes and flags, never a name, e-mail or document.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sandbox import spec_shapes as shapes


def _enum(shape: Any, *path: str) -> tuple[str, ...]:
    """The values the spec lists for the enumeration at `path` in `shape` (nullable or not)."""
    for key in path:
        shape = shape.schema[key] if isinstance(shape, shapes.Opt) else shape[key]
    return tuple(shape.schema if isinstance(shape, shapes.Opt) else shape)


# Values the real API could start sending tomorrow, per enumeration of spec parts 2 and 3 (keyed by the
# set of values the spec lists, so an enum shared by two fields gets the same new values in both).
_NEW_VALUES: dict[tuple[str, ...], tuple[str, ...]] = {
    tuple(shapes.SALE_STATUSES): ("chargeback", "partiallyRefunded", "inDispute"),
    _enum(shapes.SALE, "recoveringStatus"): ("paused",),
    _enum(shapes.SALE, "payment", "method"): ("applePay", "googlePay", "automaticPix"),
    _enum(shapes.SALE, "payment", "detail"): ("applePay", "googlePay", "nubankCreditCard"),
    tuple(shapes.PRODUCT_TYPES): ("membership", "community", "bundle"),
    _enum(shapes.SALE, "product", "billingType"): ("installments", "donation"),
    _enum(shapes.SALE, "refund", "type"): ("chargeback",),
    tuple(shapes.SUBSCRIPTION_STATUSES): ("paused", "pendingCancellation"),
    _enum(shapes.SUBSCRIPTION, "interruption", "type"): ("pause",),
    _enum(shapes.SUBSCRIPTION, "recurrence", "frequency", "type"): ("quarterly", "semiannual"),
    _enum(shapes.SUBSCRIPTION, "payment", "method"): ("paypal", "automaticPix"),
    _enum(shapes.PRODUCT, "status"): ("archived", "blocked"),
    _enum(shapes.PRODUCT, "moderation"): ("underReview",),
    _enum(shapes.PRODUCT, "payment", "type"): ("donation", "installments"),
    _enum(shapes.PARTNER, "commission", "type"): ("fixed", "tiered"),
    _enum(shapes.AFFILIATION, "status"): ("blocked", "expired"),
    tuple(shapes.TRANSFER_STATUSES): ("reversed", "scheduled", "onHold"),
    _enum(shapes.TRANSFER, "bankAccount", "type"): ("paymentAccount", "salaryAccount"),
    _enum(shapes.EVENT, "type"): ("hybrid",),
    _enum(shapes.ATTENDEE, "documentType"): ("rg", "cnpj"),
    tuple(shapes.ATTENDEE_STATUSES): ("transferred", "canceled", "waitlisted"),
    _enum(shapes.DELIVERY, "platform"): ("externalE", "webhook"),
    _enum(shapes.COMMENT, "status"): ("deleted", "spam"),
    _enum(shapes.COMMENT, "type"): ("markdown",),
}
for _listed, _new in _NEW_VALUES.items():  # a "new" value the spec lists would not be a departure
    assert not set(_listed) & set(_new), (_listed, _new)


def unlisted_value(listed: tuple[str, ...], rng: random.Random) -> str:
    """A value the spec does not list for this enumeration."""
    return rng.choice(_NEW_VALUES[tuple(listed)])


def has_unlisted_values(listed: tuple[str, ...]) -> bool:
    return tuple(listed) in _NEW_VALUES


_GEOHASH = "0123456789bcdefghjkmnpqrstuvwxyz"

# Unlisted fields: each name always carries one JSON type, so a warehouse column that grows from it
# keeps one type whichever record brought it.
_NEW_FIELDS: tuple[tuple[str, Callable[[random.Random], Any]], ...] = (
    ("riskScore", lambda rng: rng.randrange(0, 1000) / 10),
    ("geoHash", lambda rng: "".join(rng.choice(_GEOHASH) for _ in range(7))),
    ("externalReference", lambda rng: f"ref-{rng.getrandbits(32):08x}"),
    ("isTest", lambda rng: rng.random() < 0.5),
    ("schemaVersion", lambda rng: rng.randrange(2, 6)),
    ("region", lambda rng: rng.choice(("sa-east-1", "us-east-1", "eu-west-1"))),
    ("channel", lambda rng: rng.choice(("web", "app", "api"))),
    ("legacyCode", lambda rng: f"L{rng.randrange(10**5):05d}"),
)


NEW_FIELD_NAMES = tuple(name for name, _ in _NEW_FIELDS)
_MAKERS = dict(_NEW_FIELDS)


def new_field_value(name: str, rng: random.Random) -> Any:
    """A value for the unlisted field `name` (one of `NEW_FIELD_NAMES`), always of the same JSON type."""
    return _MAKERS[name](rng)


def convert_number(value: int | float) -> str:
    """`12.5` -> `"12.5"`, `3` -> `"3"`: the number as JSON text, read back without loss."""
    return repr(value)


def convert_boolean(value: bool, rng: random.Random) -> int | str:
    """`True` -> `1` or `"true"`."""
    if rng.random() < 0.5:
        return int(value)
    return "true" if value else "false"


def convert_datetime(value: str, rng: random.Random, date_only: bool) -> str:
    """A UTC timestamp written without its zone (`T` or a space), or as its date alone."""
    moment = _parse(value)
    forms = ["T", " "] + (["date"] if date_only else [])
    form = rng.choice(forms)
    if form == "date":
        return moment.strftime("%Y-%m-%d")
    text = moment.strftime(f"%Y-%m-%d{form}%H:%M:%S")
    # Keep the milliseconds when there are any: the conversion must not lose anything but the zone.
    return text + (f".{moment.microsecond // 1000:03d}" if moment.microsecond else "")


def unconvertible(kind: str) -> str:
    """Text that no reading turns into the documented type."""
    return {shapes.N: "n/a", shapes.DT: "", shapes.B: "maybe"}[kind]


def _parse(value: str) -> datetime:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is None:  # date-only transfer dates are midnight UTC
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
