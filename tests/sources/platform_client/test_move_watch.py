"""The signs of a moving list (`walking.MoveWatch`) count every record of a page, also those a helper
process set apart beside its Arrow table (`fastpath.page_decoding.DecodedPage`): a page of 100 records
of which one departed from the spec is a whole page, not a list that moved."""

from __future__ import annotations

import pyarrow as pa

from sources.platform.fastpath.page_decoding import DecodedPage
from sources.platform_client.paging import Page
from sources.platform_client.walking import MoveWatch


def table(ids: range) -> pa.Table:
    return pa.table({"id": list(ids)})


def test_rows_set_apart_by_a_helper_count_as_records_of_their_page():
    watch = MoveWatch()
    watch.watch(Page([{"id": i} for i in range(100)], 1, 3, 250, 100), zero_based=False)
    apart = DecodedPage(table(range(100, 199)), 2, 3, 250, 100, leftover=[{"id": 199}])
    watch.watch(apart, zero_based=False)
    departed = DecodedPage(table(range(200, 249)), 3, 3, 250, 100, cursor_departed=[{"id": 249}])
    watch.watch(departed, zero_based=False)
    assert watch.verdict(numbering_consistent=True) is None


def test_a_page_short_of_a_record_is_still_a_list_that_moved():
    watch = MoveWatch()
    watch.watch(Page([{"id": i} for i in range(100)], 1, 3, 250, 100), zero_based=False)
    watch.watch(DecodedPage(table(range(100, 199)), 2, 3, 250, 100), zero_based=False)
    assert watch.verdict(numbering_consistent=True) == "page 2 held 99 records where 100 were announced"
