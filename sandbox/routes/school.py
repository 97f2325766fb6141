"""School operations: a student's enrollments, a school's deliveries (spec 4.3, 4.9)."""

from __future__ import annotations

from typing import Any

from sandbox.operation import Call, OperationDef, envelope
from sandbox.params import path_int
from sandbox.world.api import World


def list_enrollments(world: World, call: Call) -> Any:
    paging = call.query.paging()
    call.query.done()
    return envelope(world.enrollments(call.path["teamSlug"], call.path["studentSlug"]), paging)


def delivery_details(world: World, call: Call) -> Any:
    return world.delivery(call.path["slug"], path_int("deliveryId", call.path["deliveryId"]))


OPERATIONS: list[OperationDef] = [
    OperationDef(
        "list_enrollments",
        "GET",
        "/school/v1/producer/teams/{teamSlug}/students/{studentSlug}/enrollments",
        ("school_student_read",),
        list_enrollments,
    ),
    OperationDef(
        "delivery_details",
        "GET",
        "/school/v1/producer/teams/{slug}/deliveries/{deliveryId}",
        ("school_delivery_read",),
        delivery_details,
    ),
]
