"""Course: lesson comments (spec part 2.18)."""

from __future__ import annotations

from .common import ApiModel, Timestamp
from .enums import CommentStatus, CommentType


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
