"""School, community, course and webhook operations (spec 4.3, 4.4, 4.9, 4.14, 4.18, 4.19)."""

from __future__ import annotations

from typing import Any

from sandbox.operation import Call, OperationDef, envelope
from sandbox.params import path_int
from sandbox.world.api import World

COMMENT_STATUSES = ("approved", "rejected", "inModeration")
DEFAULT_DAYS = 30  # `days` is optional in the spec; 30 matches the client's `community_days` default
MAX_DAYS = 36500  # keeps `clock - days` inside datetime's range
TOP_POSTS = 5


def list_enrollments(world: World, call: Call) -> Any:
    paging = call.query.paging()
    call.query.done()
    return envelope(world.enrollments(call.path["teamSlug"], call.path["studentSlug"]), paging)


def list_webhook_origins(world: World, call: Call) -> Any:
    return world.webhook_origins()


def delivery_details(world: World, call: Call) -> Any:
    return world.delivery(call.path["slug"], path_int("deliveryId", call.path["deliveryId"]))


def _days(call: Call) -> int:
    days = call.query.integer("days", default=DEFAULT_DAYS)
    if days is not None and days > MAX_DAYS:
        call.query.errors.append({"field": "days", "message": f"must be at most {MAX_DAYS}"})
    return days or DEFAULT_DAYS


def top_commented_posts(world: World, call: Call) -> Any:
    community_id = path_int("communityId", call.path["communityId"])
    days = _days(call)
    call.query.done()
    return {"items": world.top_commented_posts(community_id, days)[:TOP_POSTS]}


def list_community_commenters(world: World, call: Call) -> Any:
    community_id = path_int("communityId", call.path["communityId"])
    paging = call.query.paging()
    days = _days(call)
    call.query.done()
    return envelope(world.community_commenters(community_id, days), paging)


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
        "list_enrollments",
        "GET",
        "/school/v1/producer/teams/{teamSlug}/students/{studentSlug}/enrollments",
        ("school_student_read",),
        list_enrollments,
    ),
    # Spec 4.4 documents 201 for this read; the sandbox answers what the spec documents.
    OperationDef("list_webhook_origins", "GET", "/webhook/v1/origin", (), list_webhook_origins, 201),
    OperationDef(
        "delivery_details",
        "GET",
        "/school/v1/producer/teams/{slug}/deliveries/{deliveryId}",
        ("school_delivery_read",),
        delivery_details,
    ),
    OperationDef(
        "top_commented_posts",
        "GET",
        "/community/v1/posts/community/{communityId}/top/commented",
        ("community_read_posts",),
        top_commented_posts,
    ),
    OperationDef(
        "list_community_commenters",
        "GET",
        "/community/v1/members/community/{communityId}/comments",
        ("community_read_members",),
        list_community_commenters,
    ),
    OperationDef(
        "list_lesson_comments", "GET", "/course/v1/comments", ("course_comments_read",), list_lesson_comments
    ),
]
