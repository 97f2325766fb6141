"""What the readers of one source instance share (`SourceContext`), and the walk of a whole paged list.

Every reader yields one batch per page (its rows, or the Arrow table a helper process packed them into:
`fastpath/`), so nothing larger than a page is held in memory (except the small per-product snapshots,
which must be complete before they replace a table). `SourceContext.pages` is the road of a page to the
reader (`page_stage.py`) for every reader of a paged list, whatever its lists (`page_lists.py`: one, date
windows, or a fan of one list per parent): the reader gets batches, already shown to its cursor by its
rule and offered to `sales`.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import dlt

from sources.platform.cursor import Cursor
from sources.platform.departures import FUTURE_KIND
from sources.platform.extraction import (
    sales_selected,
    selected_resources,
)
from sources.platform.fastpath.batches import Batch, Rows, values_at
from sources.platform.fastpath.interleave import fan_out
from sources.platform.fastpath.offload import PageDecoder
from sources.platform.models import Departure
from sources.platform.page_stage import PageRoad, packed
from sources.platform.records import RecordReader
from sources.platform.report import RunReport
from sources.platform.resources.financial_followups import DocumentFollowUps
from sources.platform.resources.page_lists import Extra, Keep, PageList, as_lists, list_batches
from sources.platform.resources.store_sale_ids import (
    SaleIdQueue,
    SaleLedger,
    keep_pending_sale_ids,
    pending_sale_ids,
)
from sources.platform.resources.stream import Stream
from sources.platform.retired import Retirements
from sources.platform.run_budget import RunBudget
from sources.platform.runclock import RUN_STAMPS_KEY
from sources.platform.settings import SourceSettings
from sources.platform_client.client import PlatformClient
from sources.platform_client.operations import OPERATIONS_BY_NAME

# The most lists of one reader walked at once, whatever the operation's rule asks (`pages`).
MOST_WALKS_AT_ONCE = 16


@dataclass
class SourceContext:
    """What the readers of one source instance share: one client, the settings, the run's report."""

    client: PlatformClient
    settings: SourceSettings
    report: RunReport
    sale_ids: SaleIdQueue
    snapshot_at: datetime
    records: RecordReader
    streams: Mapping[str, Stream]  # the source's resources by name (`resources/__init__.py`)
    budget: RunBudget  # the run's requests by purpose (`run_budget.py`), the same in every pass
    decoder: PageDecoder | None = None  # helper processes for the pages of large flat lists
    # (id, due date) of the loaded subscriptions that may be due for a renewal re-read (`store_renewals.py`).
    renewals: Sequence[tuple[str, datetime]] = ()
    _finished: set[str] = field(default_factory=set)
    # Sales found changed, from `sales` to `fiscal_documents` (`financial_followups.py`).
    documents_due: DocumentFollowUps = field(default_factory=DocumentFollowUps)
    # Ids the API answers 404 for, counted across runs until they retire (`retired.py`).
    retirements: Retirements = field(init=False)
    _pending_sales: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _known_sales: set[str] | None = None  # the destination's sale ids, read when first needed
    # (source state key, resource) waiting for the run's stamp to be known (`note_stamp`).
    _stamp_notes: list[tuple[str, str]] = field(default_factory=list)

    def cursor(self, state: MutableMapping[str, Any], key: str, stream: Stream, path: str) -> Cursor:
        """An incremental cursor bounded by the run's clocks (`cursor.py`); a record whose `path` (API
        keys joined by `.`) is in the future is recorded as an `in_the_future` departure."""
        clock = self.report.run_clock

        def on_future(record_id: Any, value: datetime) -> None:
            departure = Departure(path, FUTURE_KIND, value.isoformat())
            self.report.departures.record(stream.name, record_id, [departure])

        return Cursor(state, key, clock, on_future, self.lookback())

    def run_stamp(self) -> datetime:
        """The run's one stamp (`runclock.RunClock.stamp`): ours, or the API's when the clocks disagree
        beyond the tolerance; `snapshot_at` (ours) where the source has no run clock."""
        clock = self.report.run_clock
        return self.snapshot_at if clock is None else clock.stamp()

    def note_stamp(self, key: str, resource: str) -> None:
        """Write the run's stamp for `resource` into the source state's table `key`, once the stamp can be
        told: after the run's first answer (a resource that finished before any, having asked nothing,
        waits for it or for the last selected resource to finish, `finished`), so that a resource done
        early never fixes the run's stamp to our clock while the API's disagrees."""
        with self._lock:
            self._stamp_notes.append((key, resource))
        clock = self.report.run_clock
        if clock is None or clock.server.first is not None or selected_resources() is None:
            self._write_stamps()

    def _write_stamps(self) -> None:
        with self._lock:
            notes = list(self._stamp_notes)
            self._stamp_notes.clear()
        if notes:
            stamp, state = self.run_stamp().isoformat(), dlt.current.source_state()
            for key, resource in notes:
                state.setdefault(key, {})[resource] = stamp

    def lookback(self) -> timedelta:
        return timedelta(minutes=self.settings.cursor_lookback_minutes)

    def parse(self, stream: Stream, items: Iterable[Any], extra: Mapping[str, Any] | None = None) -> Rows:
        """The rows of a page's records (`records.RecordReader`)."""
        return [row for row, _ in self.records.read(stream, items, extra)]

    def __post_init__(self) -> None:
        # One for the run: a copy of this context (`rescan.py` counts a scan's requests through one)
        # shares the report's, and with it the lock over the state's counts.
        if self.report.retirements is None:
            self.report.retirements = Retirements(
                self.settings.retire_after_not_found, self.snapshot_at, stamp=self.run_stamp
            )
        self.retirements = self.report.retirements

    def pages(
        self,
        stream: Stream,
        params: Mapping[str, Any] | Sequence[Mapping[str, Any] | PageList] | None = None,
        *,
        path_params: Mapping[str, Any] | None = None,
        extra: Extra | None = None,
        cursor: Cursor | None = None,
        cursor_at: tuple[str, ...] | None = None,
        id_at: tuple[str, ...] = ("id",),
        keep: Keep = "all",
        distinct: bool = False,
        announce: bool = False,
        offer_sale_ids: bool = True,
        parallel: int = 1,
        depth: int = 1,
        helpers: bool = True,
        as_sent: bool = False,
        tolerated: tuple[type[BaseException], ...] = (),
        on_end: Callable[[Any, BaseException | None], None] | None = None,
        read_ids: set[str] | None = None,
    ) -> Iterator[Batch]:
        """The batches of a paged list's pages, or of several lists (one per mapping of `params` or
        `page_lists.PageList`: a date window, or a parent's list in a fan), up to `parallel` walked at
        once with `depth` pages waiting (`fastpath.interleave.fan_out`); whichever process decoded each
        page (`page_stage.py`; helpers only when `arrow_pages` is on).

        Each batch is looked at once, here (`page_lists.list_batches`): shown to its list's cursor by the
        rule `keep` (`"all"`: every row, the cursor shown the newest at `cursor_at`, the rows whose field
        there departed last; `"new"`: only the rows new at the cursor's boundary, `records.new_rows`);
        then its sale ids are offered to `sales` (`offer_sale_ids`). `announce`: the first page's total
        sizes the progress display's bar. `distinct`: each record at most once (`walking.py`).

        A list's walk that fails with a `tolerated` error ends alone, the others go on; `on_end(parent,
        error)` is told when each list's walk ends (error None: read to its end), in the reader's thread.

        Decoded here, never by a helper: with `helpers` off (lists no helper ever decoded, kept so that
        their rows, state and the benchmark's figures stay as they were: `enrollments`, the products'
        index walk), under the `"new"` rule, with columns told per page, and with `as_sent` (the records
        as the API sent them, not read as rows: a list walked as an index of parents; no cursor, no sale
        ids). `read_ids` gathers the ids of every row read under `"new"`, new or not."""
        lists = as_lists(params, path_params, extra, cursor)
        here = not helpers or as_sent or keep == "new" or any(callable(one.extra) for one in lists)
        decoder = self.decoder if self.settings.arrow_pages and not here else None
        tolerant = not self.settings.strict
        walks = []
        for index, one in enumerate(lists):  # the roads are made here, in the reader's thread
            road = PageRoad(
                self.client,
                stream,
                decoder,
                tolerant=tolerant,
                extra=one.fixed_extra(),
                cursor=cursor_at,
            )
            walks.append((index, functools.partial(road.walk, one.params, one.path_params, distinct)))
        # More lists at once than `parallel` when the operation's rule asks more (its rate x latency: many
        # small lists of one page each are that many requests); their requests pass its gate all the same.
        at_once = (
            functools.partial(self.client.in_flight_wanted, stream.operation, parallel, MOST_WALKS_AT_ONCE)
            if parallel > 1
            else parallel
        )
        first = True
        for item in fan_out(walks, at_once, depth, tolerated):
            one = lists[item.parent]
            if item.page is None:  # the list's walk ended
                if on_end is not None:
                    on_end(one.parent, item.error)
                continue
            if announce and first:  # the list's size, for the progress display's bar
                self.report.announce_rows(stream.name, item.page.total_items)
                first = False
            batches = list_batches(
                self.records,
                self.report.departures,
                stream,
                item.page,
                one,
                cursor_at=cursor_at,
                id_at=id_at,
                keep=keep,
                as_sent=as_sent,
                read_ids=read_ids,
            )
            for batch in batches:
                if offer_sale_ids and not as_sent:
                    self.offer_sale_ids(stream, batch)
                yield batch

    def pack(self, stream: Stream, pages: Iterable[Batch]) -> Iterator[Batch]:
        """The pages as Arrow tables where the stream's model is flat and `arrow_pages` is on, else as they
        are (`page_stage.packed`)."""
        return packed(stream, pages) if self.settings.arrow_pages else iter(pages)

    def finished(self, resource: str) -> None:
        """Note that a resource's reader is done; once all selected ones are, the helpers stop (they would
        only hold memory through normalize and load); the last one writes the stamps still waiting
        (`note_stamp`: no answer in the whole run, the stamp is ours)."""
        selected = selected_resources()
        with self._lock:
            self._stamp_notes.append((RUN_STAMPS_KEY, resource))  # the next run's floor (`runclock.py`)
            self._finished.add(resource)
            done = selected is not None and selected <= self._finished
        if done:
            self._write_stamps()
            if self.decoder is not None:
                self.decoder.close()

    def missing_scopes(self, stream: Stream) -> list[str]:
        granted = self.settings.granted_scopes
        if granted is None:
            return []
        return [scope for scope in OPERATIONS_BY_NAME[stream.operation].scopes if scope not in granted]

    def offer_sale_ids(self, stream: Stream, batch: Batch) -> None:
        """Hand the sale ids of a batch to `sales` (`Stream.sale_ids_at`)."""
        path = stream.sale_ids_at
        if not path:
            return
        if sales_selected():
            self.sale_ids.offer(values_at(batch, path))
        else:
            self._keep_sale_ids_pending(values_at(batch, path))

    def _keep_sale_ids_pending(self, ids: Iterable[Any]) -> None:
        """An extract without `sales` (`--resources event_attendees`) moves its producers' cursors past
        the sales they reference: the ids the destination does not hold yet join `sales`' pending ids
        (`commit_pending_sales`), committed with this extract, so the next run with `sales` fetches them."""
        with self._lock:
            if self._known_sales is None:
                self._known_sales = set(SaleLedger.from_destination(0, 0, time.time()).known)
            self._pending_sales.update(str(i) for i in ids if i not in (None, ""))

    def commit_pending_sales(self) -> None:
        """Write the ids kept by `_keep_sale_ids_pending` into `sales`' state, once per producer (sorting
        the whole list on every page was quadratic: minutes at a million fiscal documents)."""
        with self._lock:  # producers end in their own threads: one read-modify-write at a time
            fresh, self._pending_sales = self._pending_sales, set()
            fresh.difference_update(self._known_sales or ())
            if fresh:
                sales = dlt.current.source_state().setdefault("resources", {}).setdefault("sales", {})
                fresh.update(pending_sale_ids(sales))
                keep_pending_sale_ids(sales, fresh)


def scope_message(stream: Stream, missing: list[str]) -> str:
    return (
        f"the token was not granted the scope {', '.join(missing)} that {stream.name} needs "
        f"({stream.operation}); authorize the application again with it and run `platform-sync auth`"
    )


def read_all(
    ctx: SourceContext,
    stream: Stream,
    params: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Iterator[Batch]:
    """Full scan of a paged list: the reader of the whole lists, and the walk of several readers."""
    return ctx.pages(stream, dict(params or {}), extra=extra, announce=True)
