"""Sale details: the only way to read sales is one request per id, at 30 requests a minute.

Ids arrive while the resources that discover them run (`store_sale_ids.py`), so the rate-limited sale
requests overlap with everything else instead of waiting for it.

Each run spends at most its budget of sale details (`run_budget.py`: a share of what the rate limit
allows between two runs, at most `sales_max_requests`), in this order: ids announced by webhooks since
the last run (table `webhook_events`, loaded by `platform-sync webhooks load`), ids left over from
earlier runs and those the warehouse names, the new ids the producers discover, then (once the producers
are done) sales whose status can still change (not final, or paid within the refund window), least
recently fetched first, then the configured `sale_ids` never loaded. Ids not fetched within the budget
are kept in the resource state, which dlt commits together with the loaded rows, so none is ever
forgotten (the configured ones are read from the configuration again).

Ids the API answered 404 for are on probation (`retired.py`): asked again last, after the re-verification
cycle, in at most `unknown_ids_share` of the budget per run (kept for them when earlier runs left some),
and retired by that second 404. One warning line a run counts them.

A share of the budget (`sales_reverify_share`) is kept for the re-verification cycle: the known sales
verified longest ago (`verified_at`, the start of the run that last fetched each), whatever their status,
so a change no rule foresees (a chargeback months after payment, an expired sale paid late) is loaded
within `ceil(known sales / that share)` runs. A known sale found changed has its fiscal documents read
again (`financial_followups.py`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import dlt

from sources.platform.fastpath.batches import Rows
from sources.platform.models import RecordValidationError, Sale
from sources.platform.report import SalesCycle
from sources.platform.resources.context import SourceContext, scope_message
from sources.platform.resources.store_sale_ids import (
    SaleIdQueue,
    SaleLedger,
    announced_sale_ids,
    drain,
    keep_pending_sale_ids,
    pending_sale_ids,
    unloaded_sale_ids,
)
from sources.platform.resources.stream import Stream
from sources.platform.retired import SaleRetirements
from sources.platform.run_budget import NEW_SALES, REVERIFY, UNKNOWN_IDS, budget_share, waiting_line
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import (
    AuthenticationError,
    MissingScopeError,
    NotFoundError,
    OperationDeferredError,
    PlatformError,
)

logger = logging.getLogger("platform_sync.source")

# The most sale details in flight, whatever the rate limit and the latency ask (`sales_concurrency` when
# higher): 30 a second at 300 ms is 9, and half again.
MOST_SALE_DETAILS_IN_FLIGHT = 16
VERIFIED_AT = "verified_at"  # column of `sales`: the start of the run that last fetched the sale
RUN_STARTED_KEY = "run_started_at"  # sales resource state: the start of the last run that read sales


class SaleFetcher:
    """Fetches sale details with bounded concurrency within a request budget.

    `reserve` requests of the budget (at most one per known sale) are kept for the re-verification cycle:
    the known sales verified longest ago (`SaleLedger.verify_order`), fetched once the urgent ids and the
    refresh candidates had the rest; what the cycle cannot use goes back to them.

    With `unknown` (`retired.SaleRetirements`), a 404 puts the id on probation and a second one retires
    it: the ids on probation are asked last, in at most `allowance` requests; `min(allowance, ids on
    probation at the start)` of them are kept from the others, so that the probation ends in a bounded
    number of runs however long the backlog."""

    def __init__(
        self,
        client: PlatformClient,
        budget: int,
        concurrency: int,
        on_planned: Callable[[int, bool], None] | None = None,
        reserve: int = 0,
        retired: frozenset[str] = frozenset(),
        unknown: SaleRetirements | None = None,
        allowance: int = 0,
        fetched: frozenset[str] = frozenset(),
    ) -> None:
        self.client = client
        self.budget = budget
        self.concurrency = concurrency
        self.reserve = reserve
        self.retired = retired  # ids the API does not know (`retired.py`): never requested
        self.unknown = unknown
        self.allowance = allowance if unknown is not None else 0
        self.spent = 0
        self.reverified = 0  # requests spent by the cycle alone
        self.probed = 0  # requests spent on ids on probation
        self.left_over: list[str] = []
        self.configured_left = 0  # configured ids the budget did not reach (asked again next run)
        # Ids the run's earlier passes requested (`SalePasses`): not asked again in this run.
        self.fetched = fetched
        self.requested: set[str] = set()  # the ids this fetcher requested
        # Told how many sale details this run makes, as far as it knows: fetched, in flight and
        # queued, within the budget (it grows while the producers discover ids).
        self.on_planned = on_planned

    def run(
        self,
        queue: SaleIdQueue,
        ledger: SaleLedger,
        carried_over: Iterable[str],
        configured: Iterable[str] = (),
        announced: Iterable[str] = (),
    ) -> Iterator[tuple[str, dict[str, Any] | None]]:
        """Yield (id, raw sale or None when not found); afterwards `self.left_over` holds unfetched ids.

        `announced` (by webhooks) come first, even on probation; then `carried_over` and the queue's ids;
        once the producers are done, the refresh candidates, then the `configured` ids."""
        unknown = self.unknown
        retired = self.retired | (unknown.retired if unknown is not None else set())
        seen: set[str] = set(self.fetched)
        urgent: deque[str] = deque()  # announced, carried over, discovered, and order bumps' main sales

        def want(sale_id: str) -> bool:
            if sale_id in seen or sale_id in retired:
                return False
            seen.add(sale_id)
            return True

        urgent.extend(i for i in announced if want(i))
        probation = deque(i for i in (unknown.probation if unknown is not None else ()) if want(i))
        urgent.extend(i for i in carried_over if want(i))
        later = deque(i for i in dict.fromkeys(configured) if i not in seen and i not in retired)
        refresh = deque(i for i in ledger.refresh_candidates if i not in seen and i not in retired)
        cycle = deque(i for i in ledger.verify_order if i not in retired and i not in self.fetched)
        reserve = min(self.reserve, len(cycle))
        kept = min(self.allowance, len(probation))  # for the ids on probation, from the others
        queue_open = True
        in_flight: dict[Future[dict[str, Any] | None], str] = {}
        most = max(self.concurrency, MOST_SALE_DETAILS_IN_FLIGHT)
        with ThreadPoolExecutor(most, thread_name_prefix="sale-details") as pool:
            while True:
                filled_closed = not queue_open
                # rate x latency, at least `sales_concurrency` (`PlatformClient.in_flight_wanted`)
                slots = self.client.in_flight_wanted("sale_details", self.concurrency, most)
                while len(in_flight) < slots and self.spent < self.budget:
                    if not queue_open and reserve > self.reverified:
                        while cycle and cycle[0] in seen:  # fetched this run already: verified
                            cycle.popleft()
                        if not cycle:
                            reserve = self.reverified  # the cycle is done: its share goes back
                    while later and later[0] in seen:  # discovered, or announced: fetched already
                        later.popleft()
                    kept_now = max(0, min(kept, self.probed + len(probation)) - self.probed)
                    sale_id, spent_on = self._next_id(
                        (urgent, later, refresh, cycle, probation), queue_open, reserve, kept_now
                    )
                    if sale_id is None:
                        break
                    seen.add(sale_id)
                    self.requested.add(sale_id)
                    self.spent += 1
                    self.reverified += spent_on == "cycle"
                    self.probed += spent_on == "probation"
                    in_flight[pool.submit(self._fetch, sale_id)] = sale_id
                if queue_open:
                    taken = queue.take(timeout=0.05 if in_flight else 0.5)
                    if taken is None:
                        queue_open = False
                    else:
                        urgent.extend(i for i in taken if i not in ledger.known and want(i))
                if self.on_planned is not None:
                    waiting = len(urgent) + len(later) + len(refresh) + reserve - self.reverified
                    confirming = min(len(probation), self.allowance - self.probed)
                    # the caller clips it to its budget; it may grow while the producers find ids
                    self.on_planned(self.spent + waiting + confirming, not queue_open)
                if not in_flight:
                    if queue_open or not filled_closed:
                        continue
                    break  # nothing could start with the producers done: the run's sale details are done
                done, _ = wait(in_flight, timeout=0.05, return_when=FIRST_COMPLETED)
                for future in done:
                    sale_id = in_flight.pop(future)
                    try:
                        sale = future.result()
                    except (AuthenticationError, MissingScopeError, OperationDeferredError):
                        # no sale can be fetched in this run any more: every id waits for the next
                        self.left_over.extend([sale_id, *in_flight.values(), *urgent])
                        raise
                    except PlatformError as exc:
                        logger.warning("sale %s not fetched this run, kept for the next: %s", sale_id, exc)
                        self.left_over.append(sale_id)
                        continue
                    if sale is None:
                        if unknown is not None and not unknown.not_found(sale_id):
                            probation.append(sale_id)  # its confirmation, once the others were asked
                        yield sale_id, None
                        continue
                    if unknown is not None:
                        unknown.found(sale_id)
                    main_sale_id = (sale.get("orderBump") or {}).get("mainSaleId")
                    if main_sale_id is not None and str(main_sale_id) not in ledger.known:
                        if want(str(main_sale_id)):
                            urgent.append(str(main_sale_id))
                    yield sale_id, sale
        # Whatever the budget did not reach waits for the next run; refresh candidates are re-derived, and
        # so are the configured ids (from the configuration) and those on probation (from their state).
        self.left_over.extend(urgent)
        self.configured_left = sum(1 for i in later if i not in seen)

    def _next_id(
        self,
        queues: tuple[deque[str], deque[str], deque[str], deque[str], deque[str]],
        queue_open: bool,
        reserve: int,
        kept: int,
    ) -> tuple[str | None, str]:
        """The next id to fetch, and whose share pays for it (`others`, `cycle`, `probation`). The urgent
        ids, the refresh candidates and the configured ids share the budget but the cycle's reserve and
        what is kept for the ids on probation (`kept`); all but the urgent ones wait for the producers to
        be done, and the ids on probation come after everything else, within `allowance`."""
        urgent, later, refresh, cycle, probation = queues
        cycle_kept = max(0, reserve - self.reverified)
        others_may = self.spent + cycle_kept + kept < self.budget
        if urgent and others_may:
            return urgent.popleft(), "others"
        if queue_open:
            return None, ""
        if refresh and others_may:
            return refresh.popleft(), "others"
        if later and others_may:
            return later.popleft(), "others"
        if cycle and self.reverified < reserve and self.spent + kept < self.budget:
            return cycle.popleft(), "cycle"
        if probation and self.probed < self.allowance and self.spent + cycle_kept < self.budget:
            return probation.popleft(), "probation"
        return None, ""

    def _fetch(self, sale_id: str) -> dict[str, Any] | None:
        try:
            sale: dict[str, Any] = self.client.request("sale_details", path_params={"id": sale_id})
        except NotFoundError:
            # one line a run counts them (`_read_sales`); the detail is for debugging
            logger.debug("sale %s is referenced but the API does not know it (404)", sale_id)
            return None
        return sale


def read_sales(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """Sale details of the ids the other resources discover, of those kept from earlier runs, of the
    sales that can still change and of the re-verification cycle, within the run's budget
    (`run_budget.py`)."""
    changed: list[str] = []  # known sales that differ from their loaded row
    try:
        yield from _read_sales(ctx, stream, changed)
    finally:
        ctx.report.changed_sales += len(changed)  # over the run's passes
        ctx.documents_due.close(changed)  # their fiscal documents are read again (`financial_followups.py`)


def _read_sales(ctx: SourceContext, stream: Stream, changed: list[str]) -> Iterator[Rows]:
    settings = ctx.settings
    ctx.report.configured_sale_ids = settings.sale_ids
    selected = dlt.current.source().resources.selected
    # The resources that discover sale ids and run in this extract: `take` ends once they all finished.
    ctx.sale_ids.expect(name for name in selected if name in ctx.streams and ctx.streams[name].sale_ids_at)
    state = dlt.current.resource_state()
    # A state that never read sales beside a loaded warehouse is a rebuild (`--full-refresh`, a
    # `refresh` or `dlt pipeline drop` of `sales`): the load replaces the table, so nothing in it counts
    # as known, and everything the warehouse named is asked for again (`unloaded_sale_ids`).
    rebuilding = RUN_STARTED_KEY not in state
    ledger = SaleLedger()
    if not rebuilding:
        ledger = SaleLedger.from_destination(
            settings.sales_refresh_days, settings.sales_recheck_hours, time.time()
        )
    # The sale ids the API does not know: retired (in the warehouse) or on probation (`retired.py`).
    unknown = SaleRetirements.for_run(state, ctx.retirements, rebuilding)
    # Sales that webhooks announced as changed come first, before the backlog (`store_sale_ids.py`).
    announced, announced_until = announced_sale_ids(state.get("webhooks_loaded_until"))
    if announced_until is not None:
        state["webhooks_loaded_until"] = announced_until
    # Left over, and named by the warehouse but not in `sales`: whatever lost them, they are the backlog.
    carried = [*pending_sale_ids(state), *unloaded_sale_ids(rebuilding)]
    # Configured and never loaded: asked after the ids the producers discover and the refresh candidates.
    configured = [i for i in settings.sale_ids if i not in ledger.known]
    if missing := ctx.missing_scopes(stream):
        keep_pending_sale_ids(state, [*announced, *carried, *drain(ctx.sale_ids, ledger.known)])
        ctx.report.skip(stream.name, scope_message(stream, missing))
        return
    # The run's sale details and the cycle's share of them (`run_budget.py`).
    budget, reserve = ctx.budget.sale_details.per_run, ctx.budget.reverify
    passes = ctx.report.sale_passes  # a run in passes: this one within its checkpoint (`SalePasses`)
    cycle = passes.cycle if passes is not None and passes.cycle is not None else None
    if cycle is None:
        cycle = SalesCycle(reserve, ctx.snapshot_at)
    ctx.report.sales_cycle = cycle
    state[RUN_STARTED_KEY] = cycle.run_at.isoformat()
    on_planned = _planned_within(ctx.report.plan_sale_details, 0, budget)
    if passes is not None:
        passes.cycle = cycle
        run_budget = budget
        schedule = ctx.client.schedule(stream.operation)  # the limit's pace, for a pass of a minute
        budget, reserve = passes.plan(
            budget,
            reserve,
            lambda pass_budget: budget_share(settings.sales_reverify_share, pass_budget),
            per_minute=schedule.per_second * 60 if schedule is not None else 0.0,
        )
        on_planned = _planned_within(ctx.report.plan_sale_details, passes.spent, run_budget)
    fetcher = SaleFetcher(
        ctx.client,
        budget,
        settings.sales_concurrency,
        on_planned,
        reserve=reserve,
        unknown=unknown,
        allowance=budget_share(settings.unknown_ids_share, budget),
        fetched=frozenset(passes.fetched) if passes is not None else frozenset(),
    )
    verified = {VERIFIED_AT: ctx.snapshot_at}
    page: Rows = []
    page_ids: list[str] = []  # the ids of `page`: pending for the next run until dlt has the page
    try:
        for sale_id, sale in fetcher.run(ctx.sale_ids, ledger, carried, configured, announced):
            cycle.reverified = fetcher.reverified
            if sale is None:  # the API does not know it: on probation, or retired by this second 404
                continue
            try:
                page.extend(ctx.parse(stream, [sale], verified))
                page_ids.append(sale_id)
            except RecordValidationError as exc:  # strict: keep the id for a later run rather than lose it
                fetcher.left_over.append(sale_id)
                ctx.report.fail(stream.name, str(exc))
                continue
            if ledger.changed(sale):
                changed.append(sale_id)
            if len(page) >= 100:
                yield page
                page, page_ids = [], []
        if page:
            yield page
            page, page_ids = [], []
        yield from unknown.table_items(ctx.retirements, rebuilding, stream.name)
    except PlatformError:
        # A token revoked mid-run (or any failure of the fetcher) must not drop the sales fetched so far:
        # they are handed to dlt before the error goes on to `guarded`, which reports it; so are the ids
        # retired so far.
        fetcher.left_over.extend(drain(ctx.sale_ids, ledger.known))
        if page:
            rows, page, page_ids = page, [], []
            yield rows
        yield from unknown.table_items(ctx.retirements, rebuilding, stream.name)
        raise
    finally:
        cycle.reverified = fetcher.reverified + (passes.reverified if passes is not None else 0)
        # Whatever was fetched but not handed over (the extract stopped this generator) waits as pending.
        keep_pending_sale_ids(state, [*fetcher.left_over, *page_ids])
        unknown.keep(state)
        if passes is not None:
            passes.passed(fetcher.requested, budget, fetcher.spent, reserve, fetcher.reverified)
        spent = ctx.report.spent
        spent.spend(NEW_SALES, fetcher.spent - fetcher.reverified - fetcher.probed)
        spent.spend(REVERIFY, fetcher.reverified)
        spent.spend(UNKNOWN_IDS, fetcher.probed)
    if line := unknown.summary_line(settings.unknown_ids_share):
        ctx.report.warn(line)
    waiting = len(fetcher.left_over) + fetcher.configured_left
    if passes is not None:
        passes.waiting = waiting  # said once the run's last pass is done (`pipelines/sync/checkpoints.py`)
    elif waiting:
        ctx.report.warn(waiting_line(waiting, budget))


def _planned_within(
    plan: Callable[[int, bool], None], done: int, run_budget: int
) -> Callable[[int, bool], None]:
    """The progress display's total: the sale details the run knows it will make, within its budget (the
    earlier passes' and what this one has ahead, the next passes' included). A pass's own budget clipped
    it: the demo's progress said "0m03s left" of a pass while the run had minutes of passes to go (issue
    51: the ETA is the run's). `final`: the producers of sale ids are done, so it grows no more."""
    return lambda ahead, final: plan(done + min(max(run_budget - done, 0), ahead), final)


SALES = Stream(
    "sales",
    "sale_details",
    Sale,
    ("id",),
    "merge",
    read=read_sales,
    extra_columns={VERIFIED_AT: {"data_type": "timestamp", "timezone": True, "nullable": True}},
    description="Sale details of every sale id discovered, new ones and those that can change.",
    newest_by="updated_at",
)
