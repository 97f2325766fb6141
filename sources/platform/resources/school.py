"""School: the schools' enrollments and deliveries (spec 4.3, 4.9)."""

from __future__ import annotations

from collections.abc import Iterator

from sources.platform.fastpath.batches import Batch, Rows
from sources.platform.fastpath.interleave import FAN_PAGES_WAITING, FAN_WALKS_AT_ONCE
from sources.platform.models import Delivery, Enrollment
from sources.platform.resources.context import SourceContext
from sources.platform.resources.page_lists import PageList
from sources.platform.resources.stream import TEXT_KEY, Stream
from sources.platform_client.errors import NotFoundError


def read_enrollments(ctx: SourceContext, stream: Stream) -> Iterator[Batch]:
    """The enrollments of each configured student of each school (the API cannot list students), several
    students' lists at once (`SourceContext.pages`). A student answering 404 has its enrollments marked
    deleted after the load (`pipelines/deletions.py`); its next complete list, if it comes back, clears
    them by merge."""
    students = [
        (school.team_slug, student)
        for school in ctx.settings.schools
        for student in school.student_slugs
        # a student the API does not know (`retired.py`) is not asked for again
        if not ctx.retirements.is_retired("student", f"{school.team_slug}/{student}")
    ]

    def ended(parent: tuple[str, str], error: BaseException | None) -> None:
        team_slug, student = parent
        key = f"{team_slug}/{student}"
        if error is None:  # the student's list was read to its end
            ctx.retirements.found("student", key)
            return
        ctx.report.warn(f"student {student} of school {team_slug} was not found: {error}")
        ctx.retirements.not_found("student", key, str(error))
        ctx.report.parent_gone(stream.name, (team_slug, student))

    lists = [
        PageList(
            path_params={"teamSlug": team_slug, "studentSlug": student},
            extra={"team_slug": team_slug, "student_slug": student},
            parent=(team_slug, student),
        )
        for team_slug, student in students
    ]
    # Decoded in this process (`helpers=False`), as these lists always were: a helper would pack the
    # flat enrollments into tables, which changes their batches and the benchmark's figures.
    yield from ctx.pages(
        stream,
        lists,
        parallel=FAN_WALKS_AT_ONCE,
        depth=FAN_PAGES_WAITING,
        helpers=False,
        tolerated=(NotFoundError,),
        on_end=ended,
    )


def read_deliveries(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """The configured deliveries of each school, one request each. A delivery answering 404 has its row
    marked deleted after the load (`pipelines/deletions.py`)."""
    # the API does not know a retired one (`retired.py`); the others several at once
    wanted = [
        (school.team_slug, delivery_id)
        for school in ctx.settings.schools
        for delivery_id in school.delivery_ids
        if not ctx.retirements.is_retired("delivery", f"{school.team_slug}/{delivery_id}")
    ]
    answers = ctx.client.each(stream.operation, wanted, lambda k: {"slug": k[0], "deliveryId": k[1]})
    for (team_slug, delivery_id), answer in answers:
        key = f"{team_slug}/{delivery_id}"
        try:
            delivery = answer.result()
        except NotFoundError as exc:
            ctx.report.warn(f"delivery {delivery_id} of school {team_slug} was not found: {exc}")
            ctx.retirements.not_found("delivery", key, str(exc))
            ctx.report.parent_gone(stream.name, (team_slug, str(delivery_id)))
            continue
        ctx.retirements.found("delivery", key)
        yield ctx.parse(stream, [delivery], {"team_slug": team_slug})


ENROLLMENTS = Stream(
    "enrollments",
    "list_enrollments",
    Enrollment,
    ("team_slug", "student_slug", "course__name"),
    "merge",
    read=read_enrollments,
    extra_columns={"team_slug": TEXT_KEY, "student_slug": TEXT_KEY},
    description="Enrollments of the configured students of each school, every rescan_hours.",
    full_scan=True,
    fans_out=True,
    gone_by=("team_slug", "student_slug"),
)
DELIVERIES = Stream(
    "deliveries",
    "delivery_details",
    Delivery,
    ("team_slug", "id"),
    "merge",
    read=read_deliveries,
    extra_columns={"team_slug": TEXT_KEY},
    description="Configured deliveries of each school, every rescan_hours.",
    full_scan=True,
    fans_out=True,
    gone_by=("team_slug", "id"),
)
