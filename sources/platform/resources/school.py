"""School: the schools' enrollments and deliveries (spec 4.3, 4.9)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sources.platform.fastpath.batches import Rows
from sources.platform.fastpath.interleave import FAN_PAGES_WAITING, FAN_WALKS_AT_ONCE, fan_out
from sources.platform.models import Delivery, Enrollment
from sources.platform.resources.context import SourceContext
from sources.platform.resources.stream import TEXT_KEY, Stream
from sources.platform_client.errors import NotFoundError
from sources.platform_client.paging import Page


def read_enrollments(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """The enrollments of each configured student of each school (the API cannot list students), several
    students' lists at once (`fan_out`). A student answering 404 has its enrollments marked deleted after
    the load (`pipelines/deletions.py`); its next complete list, if it comes back, clears them by merge."""
    students = [
        (school.team_slug, student)
        for school in ctx.settings.schools
        for student in school.student_slugs
        # a student the API does not know (`retired.py`) is not asked for again
        if not ctx.retirements.is_retired("student", f"{school.team_slug}/{student}")
    ]

    def walk(team_slug: str, student: str) -> Callable[[], Iterator[Page]]:
        path = {"teamSlug": team_slug, "studentSlug": student}
        return lambda: ctx.client.paginate(stream.operation, path_params=path)

    walks = [((team_slug, student), walk(team_slug, student)) for team_slug, student in students]
    for item in fan_out(walks, FAN_WALKS_AT_ONCE, FAN_PAGES_WAITING, (NotFoundError,)):
        team_slug, student = item.parent
        key = f"{team_slug}/{student}"
        if item.page is not None:
            yield ctx.parse(stream, item.page.items, {"team_slug": team_slug, "student_slug": student})
        elif item.error is not None:
            ctx.report.warn(f"student {student} of school {team_slug} was not found: {item.error}")
            ctx.retirements.not_found("student", key, str(item.error))
            ctx.report.parent_gone(stream.name, (team_slug, student))
        else:
            ctx.retirements.found("student", key)


def read_deliveries(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """The configured deliveries of each school, one request each. A delivery answering 404 has its row
    marked deleted after the load (`pipelines/deletions.py`)."""
    for school in ctx.settings.schools:
        for delivery_id in school.delivery_ids:
            key = f"{school.team_slug}/{delivery_id}"
            if ctx.retirements.is_retired("delivery", key):  # the API does not know it (`retired.py`)
                continue
            path = {"slug": school.team_slug, "deliveryId": delivery_id}
            try:
                delivery = ctx.client.request(stream.operation, path_params=path)
            except NotFoundError as exc:
                ctx.report.warn(f"delivery {delivery_id} of school {school.team_slug} was not found: {exc}")
                ctx.retirements.not_found("delivery", key, str(exc))
                ctx.report.parent_gone(stream.name, (school.team_slug, str(delivery_id)))
                continue
            ctx.retirements.found("delivery", key)
            yield ctx.parse(stream, [delivery], {"team_slug": school.team_slug})


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
