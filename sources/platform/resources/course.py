"""Course: the courses' lesson comments (spec 4.19)."""

from __future__ import annotations

from collections.abc import Iterator

from sources.platform.fastpath.batches import Batch
from sources.platform.models import LessonComment
from sources.platform.resources.context import SourceContext, read_all
from sources.platform.resources.stream import Stream


def read_lesson_comments(ctx: SourceContext, stream: Stream) -> Iterator[Batch]:
    """All comments, or those of the configured courses (then stamped with their `course_id`, which the
    API's comment does not carry)."""
    if not ctx.settings.course_ids:
        yield from read_all(ctx, stream)
    for course_id in ctx.settings.course_ids:
        yield from read_all(ctx, stream, {"courseId": course_id}, {"course_id": course_id})


LESSON_COMMENTS = Stream(
    "lesson_comments",
    "list_lesson_comments",
    LessonComment,
    ("id",),
    "merge",
    read=read_lesson_comments,
    extra_columns={"course_id": {"data_type": "bigint", "nullable": True}},
    description="Lesson comments, read whole (as often as the budget allows; flags change), merged on id.",
    full_scan=True,
    created_at="createdAt",
    marks_deletions=True,  # when read whole, without `course_ids` (`rescan.marks_deletions`)
)
