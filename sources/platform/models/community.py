"""Community: top commented posts and the members who commented (spec parts 2.16, 2.17)."""

from __future__ import annotations

from .common import ApiModel, Timestamp


class PostMember(ApiModel):
    id: int
    email: str


class PostSpace(ApiModel):
    id: int
    name: str


class CommunityPost(ApiModel):
    id: int
    title: str
    createdAt: Timestamp
    updatedAt: Timestamp
    totalComments: int
    totalLikes: int
    member: PostMember
    space: PostSpace
    tags: list[str]


class MemberPost(ApiModel):
    id: int
    title: str


class CommunityMember(ApiModel):
    id: int
    name: str
    email: str
    posts: list[MemberPost]
