"""School, community and course reads (spec parts 2.14 to 2.18)."""

from __future__ import annotations

from .common import ApiModel, Timestamp
from .enums import CommentStatus, CommentType, DeliveryPlatform


class EnrollmentCourse(ApiModel):
    name: str


class Enrollment(ApiModel):
    createdAt: str  # the spec types it as a string: kept as the API sends it
    certificateUrl: str | None = None
    progress: float  # percent
    course: EnrollmentCourse


class Delivery(ApiModel):
    id: int
    name: str
    platform: DeliveryPlatform
    platformProductId: str
    platformOfferId: str | None = None
    isActive: bool
    isSubscription: bool
    autoRemoveAccess: bool
    tags: list[str]
    endsAfter: int  # access time in days


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


class LessonComment(ApiModel):
    id: int
    text: str
    isRead: bool
    isFavorite: bool
    isFixed: bool
    isAnswered: bool
    createdAt: Timestamp
    status: CommentStatus
    type: CommentType
    author: str
    lessonId: int
