"""Community operations: top commented posts, members who commented (spec 4.14, 4.18)."""

from __future__ import annotations

from typing import Any

from sandbox.operation import Call, OperationDef, envelope
from sandbox.params import path_int
from sandbox.world.api import World

DEFAULT_DAYS = 30  # `days` is optional in the spec; 30 matches the client's `community_days` default
MAX_DAYS = 36500  # keeps `clock - days` inside datetime's range
TOP_POSTS = 5


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


OPERATIONS: list[OperationDef] = [
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
]
