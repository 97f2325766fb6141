"""The lists a reader asks `SourceContext.pages` for, and what a page of one becomes for the reader.

A reader names its lists (`PageList`: one per date window, event, student or community, each with its
path and query, the columns its rows get and its own cursor, if any) and how its cursor keeps rows
(`Keep`); `SourceContext.pages` walks them and hands each page here (`list_batches`), in the reader's
thread, once: the page's batches, already shown to the list's cursor.

Two cursor rules, as the readers had them before they shared the road:

- `"all"` (fiscal documents): every row loads; the cursor is shown each batch's newest rows
  (`fastpath.batches.observe_newest`, a table's too); the rows whose cursor field departed from the spec
  come last, loaded and never shown to it.
- `"new"` (subscriptions, attendees): only the rows new at the cursor's boundary load, shown to it one by
  one (`records.new_rows`); a row whose cursor field departed loads in its place in the page, never
  shown to it. The rule looks at rows one by one, so its pages are decoded in this process
  (`SourceContext.pages` gives their road no helpers; no helper ever decoded those lists).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sources.platform.cursor import Cursor
from sources.platform.fastpath.batches import Batch, observe_newest
from sources.platform.fastpath.page_decoding import DecodedPage
from sources.platform.page_stage import page_batches
from sources.platform.records import DepartureSink, RecordReader, new_rows
from sources.platform.resources.stream import Stream

# The columns the rows of a list get besides the record's: fixed, or told when the reader takes each page
# (a time read after the run's first answer, when the API's clock is known); the latter only for pages
# decoded in this process (a helper would add them when it decodes the page, in the fetch thread).
Extra = Mapping[str, Any] | Callable[[], Mapping[str, Any]]
Keep = Literal["all", "new"]


@dataclass(frozen=True)
class PageList:
    """One paged list of a stream's operation: its query and path, the columns its rows get, the cursor
    its batches are shown to (None: no cursor), and the parent it is the list of (`parent`: what
    `SourceContext.pages` names to its `on_end` when the list's walk ends)."""

    params: Mapping[str, Any] | None = None
    path_params: Mapping[str, Any] | None = None
    extra: Extra | None = None
    cursor: Cursor | None = None
    parent: Any = None

    def fixed_extra(self) -> Mapping[str, Any] | None:
        """The columns known before a page is fetched (what a helper adds); None if told per page."""
        return None if callable(self.extra) else self.extra

    def columns(self) -> Mapping[str, Any] | None:
        """The columns the rows of the page taken now get."""
        return self.extra() if callable(self.extra) else self.extra


def as_lists(
    params: Mapping[str, Any] | Sequence[Mapping[str, Any] | PageList] | None,
    path_params: Mapping[str, Any] | None,
    extra: Extra | None,
    cursor: Cursor | None,
) -> list[PageList]:
    """The lists of a `SourceContext.pages` call: one per `PageList`, or per mapping of query parameters
    (with the call's path, columns and cursor)."""
    if params is None or isinstance(params, Mapping):
        return [PageList(params, path_params, extra, cursor)]
    return [one if isinstance(one, PageList) else PageList(one, path_params, extra, cursor) for one in params]


def list_batches(
    records: RecordReader,
    departures: DepartureSink,
    stream: Stream,
    page: DecodedPage,
    one: PageList,
    *,
    cursor_at: tuple[str, ...] | None,
    id_at: tuple[str, ...],
    keep: Keep,
    as_sent: bool = False,
    read_ids: set[str] | None = None,
) -> list[Batch]:
    """The batches of a page of list `one`, shown to its cursor by the rule `keep` (module docstring).

    `as_sent`: the records as the API sent them, not read as the stream's rows (a list walked as an
    index of parents); `read_ids`: the ids of every row read, new at the cursor or not, are added to it."""
    if as_sent:
        return [page.items]
    extra, cursor = one.columns(), one.cursor
    if keep == "new":
        if cursor is None or cursor_at is None or len(cursor_at) != 1 or not isinstance(page.items, list):
            raise ValueError(f"{stream.name}: the 'new' rule needs a cursor on a top-level field, rows")
        tracked = records.read(stream, page.items, extra, cursor_at)
        if read_ids is not None:
            read_ids.update(str(row["id"]) for row, _ in tracked)
        return [new_rows(cursor, tracked, cursor_at[0])]
    batches, departed = page_batches(records, departures, stream, page, extra, cursor_at)
    if read_ids is not None:
        raise ValueError(f"{stream.name}: read_ids is told under the 'new' rule only")
    if cursor is not None and cursor_at is not None:
        for batch in batches:
            observe_newest(cursor, batch, cursor_at, id_at)
    if departed:
        batches.append(departed)
    return batches
