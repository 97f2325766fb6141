"""Pydantic models of every shape the platform's API returns (spec part 2), the row parser and the dlt
column hints derived from them.

- ``parse_record(Model, raw, departures=[...])`` -> row dict to load (API keys, typed values, extras kept);
  what departs from the spec is loaded as faithfully as its columns allow and listed (``tolerant.py``)
- ``columns_for(Model)`` / ``nested_hints_for(Model)`` -> dlt ``columns`` / ``nested_hints`` of a resource
- ``ENUMS`` -> allowed values of every enumeration, keyed like ``"sale.status"``
"""

from __future__ import annotations

from .auth import Token, TokenCredential, TokenUser
from .common import (
    TIMESTAMP_FORMS,
    Amount,
    ApiModel,
    CodeDescription,
    DateOrTimestamp,
    DecimalValue,
    FreeMap,
    IdName,
    Money,
    Timestamp,
    Uuid,
    parse_decimal,
    parse_timestamp,
)
from .community import CommunityMember, CommunityPost
from .course import LessonComment
from .enums import ENUMS
from .events import Attendee, EventAddress, Geolocation, Lot, ManualAttendee, Ticket, TicketedEvent
from .financial import BankAccount, FiscalDocument, Transfer
from .hints import TablePath, child_tables_for, columns_for, enum_columns, nested_hints_for
from .parse import (
    DepartingRecord,
    Problem,
    RecordValidationError,
    parse_page_leniently,
    parse_page_strictly,
    parse_record,
    register_resource,
)
from .school import Delivery, Enrollment
from .store import (
    Affiliation,
    Campaign,
    Partner,
    Product,
    Sale,
    SaleItem,
    SaleParty,
    Subscription,
    SubscriptionProduct,
)
from .tolerant import KINDS, Departure
from .webhook import WebhookEvent, WebhookOrigin

# The tables of the source's resources are named by their declarations (`resources/__init__.py`).
register_resource("token", Token)
register_resource("manual_attendee", ManualAttendee)

__all__ = [
    "DepartingRecord",
    "ENUMS",
    "KINDS",
    "TIMESTAMP_FORMS",
    "Affiliation",
    "Amount",
    "ApiModel",
    "Attendee",
    "BankAccount",
    "Campaign",
    "CodeDescription",
    "CommunityMember",
    "CommunityPost",
    "DateOrTimestamp",
    "DecimalValue",
    "Departure",
    "Delivery",
    "Enrollment",
    "EventAddress",
    "FiscalDocument",
    "FreeMap",
    "Geolocation",
    "IdName",
    "LessonComment",
    "Lot",
    "ManualAttendee",
    "Money",
    "Partner",
    "Problem",
    "Product",
    "RecordValidationError",
    "Sale",
    "SaleItem",
    "SaleParty",
    "Subscription",
    "SubscriptionProduct",
    "TablePath",
    "Ticket",
    "TicketedEvent",
    "Timestamp",
    "Token",
    "TokenCredential",
    "TokenUser",
    "Transfer",
    "Uuid",
    "WebhookEvent",
    "WebhookOrigin",
    "child_tables_for",
    "columns_for",
    "enum_columns",
    "nested_hints_for",
    "parse_decimal",
    "parse_page_leniently",
    "parse_page_strictly",
    "parse_record",
    "parse_timestamp",
    "register_resource",
]
