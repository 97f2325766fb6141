"""Fresh as the budget allows (issue 47), against a world that breaks the old rule: whole lists far larger
than 20 requests (pages of 5), moving under every walk (the `reorder` fault), changing every hour (new
transfers, comments answered and read). After every hourly run, each table the plan promises "read every
run" (computed here from the settings and the recorded costs, never from the run's result) equals the
API, and the cost recorded for a scan is its distinct pages, not the pages read again because the list
moved."""

from __future__ import annotations

import math
from datetime import timedelta

from pipelines.sync.platform_pipeline import sync
from sources.platform.rescan import SCAN_COSTS_KEY
from tests.pipelines.sync.test_freshness import COMMENTS, listed, source_state
from tests.pipelines.sync.test_sync import assert_warehouse_matches_api
from tests.support.api_truth import ApiTruth
from tests.support.scan_budget import plans
from tests.support.sync_helpers import query, source_options

PAGE = 5  # records a page: the lists of the small world have dozens of pages


def test_hourly_runs_read_every_list_the_budget_allows_and_each_equals_the_api(sandbox, make_pipeline):
    pipeline = make_pipeline()
    options = source_options(sandbox, sandbox.token(), items_per_page=PAGE, run_interval_hours=1)
    truth = ApiTruth(sandbox.base_url, options["access_token"])
    before = listed(truth)
    for hour in range(3):
        if hour:
            sandbox.advance(3600)  # the world grows and changes for an hour
        sandbox.set_faults("reorder=1")  # every list moves under the walk (again: a new spec re-arms it)
        result = sync(pipeline, source_options=options)
        moves = sandbox.stats()["faults"].get("reorder", 0)
        sandbox.set_faults(None)
        assert moves >= 5, f"only {moves} listings moved"
        assert result.report.failed == {} and result.report.skipped == {}, result.report.failed

        costs = source_state(pipeline)[SCAN_COSTS_KEY]
        every_run = {name for name, one in plans(costs, options).items() if one.interval == timedelta(0)}
        assert {"lesson_comments", "transfers"} <= every_run
        assert not set(result.report.not_due) & every_run
        # the scan's cost is its distinct pages (each walked twice, the list having moved): the pages of
        # each configured course's list, one more where it grew during the walk
        pages = [math.ceil(len(truth.ids(COMMENTS, courseId=c)) / PAGE) for c in options["course_ids"]]
        assert costs["lesson_comments"] > 20
        assert sum(pages) <= costs["lesson_comments"] <= sum(pages) + len(pages)
        # every table read every run is the world's, flags and statuses included
        assert_warehouse_matches_api(pipeline, sandbox, options["access_token"])
        transfers, comment_flags = listed(truth)
        assert dict(query(pipeline, "select id, status from transfers")) == {
            i: s for i, (s,) in transfers.items()
        }
        loaded = query(pipeline, "select id, is_answered, is_read, status from lesson_comments")
        assert {str(i): tuple(rest) for i, *rest in loaded} == comment_flags
        for name in every_run:
            assert result.report.scans[name].promise == "read every run"
    assert listed(truth) != before, "the world moved during the soak"
