"""The spec's part 2 shapes and part 3 enums as tables, written from the spec (not from the world's code).

Used by the tests (contract shapes) and by the drift injector (`sandbox/drift`), which departs from these
shapes on purpose. Nothing here may come from `sources/`: this is an independent reading of the spec.

A schema is a JSON type name, `Opt(schema)` (nullable), `Enum(...)`, a dict (an object whose keys must
all be present; extra keys are allowed) or a one-element list (an array of that schema).

`check.py` reads a value against a schema (`problems`); `store.py` holds the store's shapes and enums,
`other_areas.py` those of events, school, community, course comments, webhooks and carts.
"""

from __future__ import annotations

from sandbox.spec_shapes.check import DT, OBJ, URL, UUID, B, Enum, N, Opt, S, problems
from sandbox.spec_shapes.other_areas import (
    ADDRESS,
    ATTENDEE,
    CART,
    CART_ITEM,
    COMMENT,
    CREATED_ATTENDEE,
    DELIVERY,
    ENROLLMENT,
    EVENT,
    LOT,
    MEMBER,
    POST,
    WEBHOOK_ORIGIN,
)
from sandbox.spec_shapes.store import (
    AFFILIATION,
    ATTENDEE_STATUSES,
    CAMPAIGN,
    CODE,
    FISCAL_DOCUMENT,
    FISCAL_DOCUMENT_STATUSES,
    MONEY,
    PARTNER,
    PERSON,
    PRODUCT,
    PRODUCT_TYPES,
    SALE,
    SALE_STATUSES,
    SUBSCRIPTION,
    SUBSCRIPTION_STATUSES,
    TRANSFER,
    TRANSFER_STATUSES,
)

__all__ = [
    "ADDRESS",
    "AFFILIATION",
    "ATTENDEE",
    "ATTENDEE_STATUSES",
    "B",
    "CAMPAIGN",
    "CART",
    "CART_ITEM",
    "CODE",
    "COMMENT",
    "CREATED_ATTENDEE",
    "DELIVERY",
    "DT",
    "ENROLLMENT",
    "EVENT",
    "Enum",
    "FISCAL_DOCUMENT",
    "FISCAL_DOCUMENT_STATUSES",
    "LOT",
    "MEMBER",
    "MONEY",
    "N",
    "OBJ",
    "Opt",
    "PARTNER",
    "PERSON",
    "POST",
    "PRODUCT",
    "PRODUCT_TYPES",
    "S",
    "SALE",
    "SALE_STATUSES",
    "SUBSCRIPTION",
    "SUBSCRIPTION_STATUSES",
    "TRANSFER",
    "TRANSFER_STATUSES",
    "URL",
    "UUID",
    "WEBHOOK_ORIGIN",
    "problems",
]
