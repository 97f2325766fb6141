"""Course operations: lesson comments (spec 4.19)."""

from __future__ import annotations

from typing import Any

from sandbox.operation import Call, OperationDef, envelope
from sandbox.world.api import World

COMMENT_STATUSES = ("approved", "rejected", "inModeration")


def list_lesson_comments(world: World, call: Call) -> Any:
    q = call.query
    paging = q.paging(required=True)  # spec 8.4: both page and itemsPerPage are required here
    course_id = q.integer("courseId", minimum=0)
    lesson_id = q.integer("lessonId", minimum=0)
    status = q.enum("status", COMMENT_STATUSES)
    flags = {name: q.boolean(name) for name in ("favorite", "answered", "read", "fixed")}
    email = q.string("email")
    q.done()
    listing = world.lesson_comments(
        course_id=course_id, lesson_id=lesson_id, status=status, email=email, **flags
    )
    return envelope(listing, paging)


OPERATIONS: list[OperationDef] = [
    OperationDef(
        "list_lesson_comments", "GET", "/course/v1/comments", ("course_comments_read",), list_lesson_comments
    ),
]
