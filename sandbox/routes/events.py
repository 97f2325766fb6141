"""Event ticketing operations (spec 4.6, 4.7, 4.7b)."""

from __future__ import annotations

from typing import Any

from sandbox.errors import validation_error
from sandbox.operation import Call, OperationDef, envelope
from sandbox.params import BodyCheck
from sandbox.world.api import World

ATTENDEE_STATUSES = ("confirmed", "locked", "presence_confirmed", "paid", "refunded")


def event_details(world: World, call: Call) -> Any:
    return world.event(call.path["id"])


def list_attendees(world: World, call: Call) -> Any:
    q = call.query
    paging = q.paging()
    gte, lte = q.date("modifiedAtGte"), q.date("modifiedAtLte")
    order = q.enum("order", ("asc", "desc"), default="asc")
    status = q.enum("status", ATTENDEE_STATUSES)
    search, ticket_id = q.string("search"), q.string("tickets")
    # `tags`, `attendanceSituation` and the query `id` are accepted and ignored: the world has no tag
    # ids or attendance situations, and the path id is the one that counts.
    q.done()
    if gte is not None and lte is not None and gte > lte:
        raise validation_error([{"field": "modifiedAtGte", "message": "must not be after modifiedAtLte"}])
    listing = world.attendees(
        call.path["id"],
        modified_gte=gte,
        modified_lte=lte,
        status=status,
        search=search,
        order="desc" if order == "desc" else "asc",
        ticket_id=ticket_id,
    )
    return envelope(listing, paging)


def add_attendee(world: World, call: Call) -> Any:
    assert call.body is not None
    check = BodyCheck()
    # The spec marks no field optional; the world needs these five to decide anything.
    for name in ("eventId", "ticketId", "name", "document"):
        check.field(call.body, name, "string", required=True)
    document_type = check.field(call.body, "documentType", "string", required=True)
    if document_type is not None and document_type not in ("cpf", "passport"):
        check.fail("documentType", "must be one of cpf, passport")
    check.field(call.body, "email", "string")
    check.field(call.body, "phone", "string")
    check.field(call.body, "useStock", "boolean")
    check.done()
    return world.add_attendee(call.body)


OPERATIONS: list[OperationDef] = [
    OperationDef("event_details", "GET", "/events/v1/events/{id}", ("events_read",), event_details),
    OperationDef(
        "list_attendees", "GET", "/events/v1/attendance-list/by-event/{id}", ("events_read",), list_attendees
    ),
    OperationDef(
        "add_attendee",
        "POST",
        "/events/v1/attendance-list/add-manually",
        ("events_read", "events_write"),
        add_attendee,
        201,
        True,
    ),
]
