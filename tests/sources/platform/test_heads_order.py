"""How a read decides that a list is sorted by creation (`sources/platform/heads.ListOrder`), newest or
oldest first: checked page by page, a walk made again from the first page allowed a few times, never
assumed; a tail read's pages come last first."""

from __future__ import annotations

from datetime import UTC, date, datetime

from sources.platform.heads import MAX_RESTARTS, ListOrder, ScanOrder, as_moment
from sources.platform.resources import STREAMS

COMMENTS = STREAMS["lesson_comments"]


def page(*days: int | None) -> list[dict[str, object]]:
    return [{"createdAt": None if day is None else f"2026-01-{day:02d}T00:00:00Z"} for day in days]


def watch(
    *pages: list[dict[str, object]],
    known: datetime | None = None,
    newest_first: bool = True,
    backwards: bool = False,
) -> ListOrder:
    order = ListOrder(COMMENTS, newest_first, known, backwards)
    for one in pages:
        order.see(one)
    return order


def oldest_first(*pages: list[dict[str, object]], known: datetime | None = None) -> ListOrder:
    return watch(*pages, known=known, newest_first=False)


def test_pages_newest_first_are_sorted_and_the_newest_is_kept() -> None:
    order = watch(page(9, 8, 8), page(7, None, 5), page(5, 1))
    assert order.sorted and order.newest == datetime(2026, 1, 9, tzinfo=UTC) and order.records == 8


def test_oldest_first_or_a_record_out_of_place_is_not_sorted() -> None:
    assert not watch(page(1, 2, 3)).sorted
    assert not watch(page(9, 8), page(7, 8)).sorted
    assert not watch(*(page(day) for day in range(1, 10))).sorted  # pages of one, oldest first


def test_a_walk_made_again_from_the_head_is_allowed_a_few_times() -> None:
    assert watch(page(9, 8), page(7, 6), page(10, 9), page(8, 7)).sorted  # the list moved: from page 1
    restarts = [page(9, 8) for _ in range(MAX_RESTARTS + 2)]
    assert not watch(*restarts).sorted
    assert not watch(page(9, 8), page(7, 6), page(8, 7)).sorted  # back up, but not to the head


def test_a_record_older_than_the_known_newest_ends_a_head_read() -> None:
    known = datetime(2026, 1, 5, tzinfo=UTC)
    assert not watch(page(9, 8, 5), known=known).reached_known  # as new as the known one: read on
    assert watch(page(9, 8), page(5, 4), known=known).reached_known


def test_creation_times_in_the_forms_the_api_sends() -> None:
    assert as_moment("2026-01-02") == datetime(2026, 1, 2, tzinfo=UTC)  # date-only (transfers)
    assert as_moment(date(2026, 1, 2)) == datetime(2026, 1, 2, tzinfo=UTC)
    naive = datetime(2026, 1, 2, 3)  # noqa: DTZ001 (a naive time is what this line tests)
    assert as_moment(naive) == datetime(2026, 1, 2, 3, tzinfo=UTC)
    assert as_moment("not a date") is None and as_moment(None) is None and as_moment(17) is None


def test_pages_oldest_first_are_sorted_the_other_way() -> None:
    order = oldest_first(page(1, 2, 2), page(3, None, 5), page(5, 9))
    assert order.sorted and order.newest == datetime(2026, 1, 9, tzinfo=UTC) and order.records == 8
    assert not oldest_first(page(3, 2, 1)).sorted
    assert not oldest_first(page(1, 2), page(3, 4), page(2, 5)).sorted  # back, but not to the oldest
    assert not oldest_first(*(page(day) for day in range(9, 0, -1))).sorted  # pages of one, newest first
    assert oldest_first(page(1, 2), page(3, 4), page(0, 1), page(2, 3)).sorted  # made again from page 1


def test_a_complete_scan_watches_both_orders() -> None:
    scan = ScanOrder(COMMENTS)
    for one in (page(1, 2), page(3, 4)):
        scan.see(one)
    assert scan.oldest_first.sorted and not scan.newest_first.sorted
    same = ScanOrder(COMMENTS)
    same.see(page(4, 4))
    assert same.oldest_first.sorted and same.newest_first.sorted  # one time: both (newest first wins)


def test_a_tail_read_takes_the_pages_last_first_and_ends_at_a_known_record() -> None:
    known = datetime(2026, 1, 5, tzinfo=UTC)

    def tail(*pages: list[dict[str, object]]) -> ListOrder:
        return watch(*pages, known=known, newest_first=False, backwards=True)

    assert tail(page(8, 9), page(6, 7)).sorted and not tail(page(8, 9), page(6, 7)).reached_known
    ended = tail(page(8, 9), page(4, 6))
    assert ended.sorted and ended.reached_known and ended.newest == datetime(2026, 1, 9, tzinfo=UTC)
    assert tail(page(8, 9), page(7, 8)).sorted  # a record that moved back a page comes twice: in order
    assert not tail(page(8, 9), page(7, 10)).sorted  # a page before that holds a newer record
    assert not tail(page(9, 8)).sorted  # newest first within a page
