"""Issue 25, deletions of the parents the API cannot list: a configured event, student or delivery whose
request answers 404 has its rows marked deleted (the event's row and its attendees, the student's
enrollments, the delivery's row); one answering 403 or 503 marks nothing; one that comes back is cleared.
`GoneWorld` (sandbox/world/gone.py) on loopback, the real pipeline, real DuckDB, exact rows."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime

import pytest

from pipelines.cli.summary import print_summary
from pipelines.sync.platform_pipeline import sync
from sandbox.running import SandboxHandle, running_sandbox
from sandbox.world.gone import GoneWorld
from tests.support.sync_helpers import E2E_SCALE, E2E_TIME_SCALE, query, source_options

RESOURCES = ["events", "event_attendees", "enrollments", "deliveries"]
KEYS = {
    "events": "id",
    "event_attendees": "id",
    "enrollments": "team_slug || '/' || student_slug || '/' || course__name",
    "deliveries": "team_slug || '/' || cast(id as varchar)",
}


@pytest.fixture
def gone() -> Iterator[tuple[SandboxHandle, GoneWorld]]:
    world = GoneWorld(3, E2E_SCALE)
    with running_sandbox(seed=3, scale=E2E_SCALE, time_scale=E2E_TIME_SCALE, world=world) as handle:
        yield handle, world


def marks(pipeline) -> dict[str, dict[str, datetime]]:  # type: ignore[no-untyped-def]
    """Per table, the rows marked deleted: key -> `_platform_deleted_at`."""
    return {
        table: {
            str(k): at
            for k, at in query(pipeline, f"select {key}, _platform_deleted_at from {table}")
            if at is not None
        }
        for table, key in KEYS.items()
    }


def attendees_of(pipeline, event: str) -> set[str]:  # type: ignore[no-untyped-def]
    return {str(a) for (a,) in query(pipeline, f"select id from event_attendees where event_id = '{event}'")}


def clock_of(handle: SandboxHandle) -> datetime:
    return datetime.fromisoformat(handle.catalog()["clock"].replace("Z", "+00:00"))


def test_parents_answering_404_mark_their_rows_others_mark_nothing_and_a_return_clears(gone, make_pipeline):
    handle, world = gone
    options = source_options(handle, handle.token(), rescan_hours=0, max_retries=1)
    pipeline = make_pipeline()
    first = sync(pipeline, resources=RESOURCES, source_options=options)
    assert first.report.failed == {} and first.deleted == {}
    school = options["schools"][0]
    team = school["team_slug"]
    # the first event (by id) with attendees, the first student with enrollments, the first delivery
    event = query(pipeline, "select min(event_id) from event_attendees")[0][0]
    student = query(pipeline, f"select min(student_slug) from enrollments where team_slug = '{team}'")[0][0]
    delivery = school["delivery_ids"][0]
    attendees = attendees_of(pipeline, event)
    enrolled = f"select course__name from enrollments where student_slug = '{student}'"
    courses = {course for (course,) in query(pipeline, enrolled)}
    assert attendees and courses and event in options["event_ids"]
    parents = {("event", event), ("student", f"{team}/{student}"), ("delivery", f"{team}/{delivery}")}

    # Not gone, only unreadable: a 403 (tolerated: the event is warned about) and 503s (the enrollments
    # and deliveries fail after their one try): nothing is marked.
    world.answers = {("event", event): 403, ("student", f"{team}/{student}"): 503}
    world.answers[("delivery", f"{team}/{delivery}")] = 503
    unreadable = sync(pipeline, resources=RESOURCES, source_options=options)
    assert set(unreadable.report.failed) == {"enrollments", "deliveries"}
    assert unreadable.deleted == {}
    assert marks(pipeline) == {table: {} for table in KEYS}

    handle.advance(86_400)
    clock = clock_of(handle)
    world.answers = {parent: 404 for parent in parents}
    deleted = sync(pipeline, resources=RESOURCES, source_options=options)
    assert deleted.report.failed == {}
    expected = {
        "events": {event: clock},
        "event_attendees": dict.fromkeys(attendees, clock),
        "enrollments": {f"{team}/{student}/{course}": clock for course in courses},
        "deliveries": {f"{team}/{delivery}": clock},
    }
    assert marks(pipeline) == expected
    counts = {table: len(rows) for table, rows in expected.items()}
    assert deleted.deleted == counts
    out = io.StringIO()
    print_summary(deleted, out)
    listed = ", ".join(f"{table} {count}" for table, count in sorted(counts.items()))
    assert f"deleted: {listed} (records no longer on the platform;" in out.getvalue()

    # Still gone a day later: nothing newly marked, the first time kept.
    handle.advance(86_400)
    still = sync(pipeline, resources=RESOURCES, source_options=options)
    assert still.deleted == {} and marks(pipeline) == expected

    # Back: every mark is cleared, the attendees of the event too (its whole list is read again).
    world.answers = {}
    back = sync(pipeline, resources=RESOURCES, source_options=options)
    assert back.report.failed == {} and back.deleted == {}
    assert marks(pipeline) == {table: {} for table in KEYS}
    assert attendees_of(pipeline, event) >= attendees
