"""The heads of lists sent newest first (issue 47, `sources/platform/heads.py`): a run in which the budget
does not read such a list whole reads its first pages until a record its last scan saw, so new records
are in the table every run; the order is checked on every read, never assumed (the sandbox's own lists
are oldest first; `newest_first` serves them as a server we did not write might); lists sent oldest first
have their tails read instead, from the page the last read ended on."""

from __future__ import annotations

from typing import Any

from pipelines.sync.platform_pipeline import sync
from sources.platform.freshness import freshness_lines
from sources.platform.heads import HEADS_KEY, TAILS_KEY
from tests.pipelines.sync.test_freshness import COMMENTS, TRANSFERS, source_state
from tests.support.api_truth import ApiTruth
from tests.support.sync_helpers import ids, source_options

PAGE = 5
NEWEST_FIRST = "newest_first=list_lesson_comments+list_transfers"


def options_of(sandbox: Any) -> dict[str, Any]:
    # the comments read as one list (not per course); the whole lists wait for rescan_hours (the budget
    # does not read them), so only their heads can bring what is new
    return source_options(
        sandbox,
        sandbox.token(),
        course_ids=[],
        items_per_page=PAGE,
        scan_budget_share=0,
        run_interval_hours=1,
    )


def advance_until_new(sandbox: Any, truth: ApiTruth, path: str, known: set[str]) -> set[str]:
    """Move the world an hour at a time until `path` lists a record not in `known`; the new ids."""
    for _ in range(24 * 30):
        sandbox.advance(3600)
        new = truth.ids(path) - known
        if new:
            return new
    raise AssertionError(f"nothing new at {path} in 30 days")


def test_a_list_sent_newest_first_brings_its_new_records_every_run(sandbox, make_pipeline):
    sandbox.set_faults(NEWEST_FIRST)
    pipeline = make_pipeline()
    options = options_of(sandbox)
    truth = ApiTruth(sandbox.base_url, options["access_token"])
    first = sync(pipeline, source_options=options)
    assert first.report.failed == {} and first.report.not_due == {}
    heads = source_state(pipeline)[HEADS_KEY]
    assert set(heads) == {"lesson_comments", "transfers"}  # both seen sorted newest first

    known = truth.ids(COMMENTS)
    new = advance_until_new(sandbox, truth, COMMENTS, known)
    pages = -(-len(known | new) // PAGE)
    sandbox.reset_stats()
    second = sync(pipeline, source_options=options)
    requests = sandbox.stats()["operations"]["list_lesson_comments"]
    assert second.report.failed == {}
    assert "its head read" in second.report.not_due["lesson_comments"]
    assert (
        "new rows every run, changes: read every 6 h (rescan_hours)"
        in second.report.not_due["lesson_comments"]
    )
    assert set(ids(pipeline, "lesson_comments")) == known | new  # every new comment, none lost
    assert sum(requests.values()) < pages / 2  # the head, not the list
    assert set(ids(pipeline, "transfers")) == truth.ids(TRANSFERS)
    assert source_state(pipeline)[HEADS_KEY]["lesson_comments"] > heads["lesson_comments"]
    # the summary says the promise: new rows every run, changes with the whole scans
    (line,) = [line for line in freshness_lines(second.freshness) if "lesson_comments" in line]
    assert line.startswith("full scans new rows every run, changes: read every 6 h (rescan_hours)")


def test_a_list_sent_oldest_first_brings_its_new_records_every_run_by_its_tail(sandbox, make_pipeline):
    pipeline = make_pipeline()  # the sandbox's own order: oldest first
    options = options_of(sandbox)
    truth = ApiTruth(sandbox.base_url, options["access_token"])
    sync(pipeline, source_options=options)
    state = source_state(pipeline)
    assert state.get(HEADS_KEY, {}) == {}
    tails = state[TAILS_KEY]
    assert set(tails) == {"lesson_comments", "transfers"}  # both seen sorted oldest first
    known = truth.ids(COMMENTS)
    pages = -(-len(known) // PAGE)
    assert tails["lesson_comments"]["first"] == 1 and tails["lesson_comments"]["last"] == pages

    # nothing new: one request, the page the last read ended on
    sandbox.reset_stats()
    quiet = sync(pipeline, source_options=options)
    operations = sandbox.stats()["operations"]
    assert operations["list_lesson_comments"] == operations["list_transfers"] == {"200": 1}
    assert "its tail read" in quiet.report.not_due["lesson_comments"]

    new = advance_until_new(sandbox, truth, COMMENTS, known)
    now = -(-len(known | new) // PAGE)
    sandbox.reset_stats()
    second = sync(pipeline, source_options=options)
    requests = sandbox.stats()["operations"]["list_lesson_comments"]
    assert second.report.failed == {}
    assert "its tail read" in second.report.not_due["lesson_comments"]
    assert set(ids(pipeline, "lesson_comments")) == known | new  # every new comment, none lost
    # the page the last read ended on, the new ones, and the one before if that page held only the
    # known newest record (a record older than it ends the read)
    assert now - pages + 1 <= sum(requests.values()) <= now - pages + 2
    tail = source_state(pipeline)[TAILS_KEY]["lesson_comments"]
    assert tail["last"] == now and tail["newest"] > tails["lesson_comments"]["newest"]
    assert set(ids(pipeline, "transfers")) == truth.ids(TRANSFERS)
    (line,) = [line for line in freshness_lines(second.freshness) if "lesson_comments" in line]
    assert line.startswith("full scans new rows every run, changes: read every 6 h (rescan_hours)")


def test_a_list_no_longer_sorted_is_left_to_its_whole_scans(sandbox, make_pipeline):
    pipeline = make_pipeline()
    options = options_of(sandbox)
    sync(pipeline, source_options=options)
    assert "lesson_comments" in source_state(pipeline)[TAILS_KEY]
    # the oldest records move to the end as a walk goes past the first page: the tail read sees them
    # out of order, stops, and forgets the order; the next run reads nothing until the whole scan
    sandbox.set_faults("reorder=3")
    moved = sync(pipeline, source_options=options)
    assert moved.report.failed == {}
    assert "lesson_comments" not in source_state(pipeline)[TAILS_KEY]
    sandbox.set_faults(None)
    sandbox.reset_stats()
    after = sync(pipeline, source_options=options)
    assert "list_lesson_comments" not in sandbox.stats()["operations"]
    assert "tail read" not in after.report.not_due["lesson_comments"]
    assert "new rows every run" not in after.report.not_due["lesson_comments"]

    # read whole again (`rescan`), sent newest first now: its head is read from then on
    sandbox.set_faults(NEWEST_FIRST)
    third = sync(pipeline, source_options={**options, "rescan": True})
    assert third.report.not_due == {}
    assert set(source_state(pipeline)[HEADS_KEY]) == {"lesson_comments", "transfers"}
    assert "lesson_comments" not in source_state(pipeline)[TAILS_KEY]
