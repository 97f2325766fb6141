"""Sale details: the only way to read sales is one request per id, at 30 requests a minute.

Ids arrive while the resources that discover them run (`sale_ids.py`), so the rate-limited sale
requests overlap with everything else instead of waiting for it.

Each run spends at most `sales_max_requests` requests, in this order: ids announced by webhooks since
the last run (table `webhook_events`, loaded by `platform-sync webhooks load`), ids left over from
earlier runs, new ids, then sales whose status can still change (not final, or paid within the refund
window), least recently fetched first. Ids not fetched within the budget are kept in the resource state, which
dlt commits together with the loaded rows, so none is ever forgotten.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import dlt

from sources.platform import models
from sources.platform.fastpath.batches import Rows
from sources.platform.models import RecordValidationError
from sources.platform.resources.context import SourceContext, scope_message
from sources.platform.resources.sale_ids import (
    SaleIdQueue,
    SaleLedger,
    announced_sale_ids,
    drain,
    keep_pending_sale_ids,
    pending_sale_ids,
)
from sources.platform.resources.stream import Stream
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import (
    AuthenticationError,
    MissingScopeError,
    NotFoundError,
    PlatformError,
)

logger = logging.getLogger("platform_sync.source")


class SaleFetcher:
    """Fetches sale details with bounded concurrency within a request budget."""

    def __init__(
        self,
        client: PlatformClient,
        budget: int,
        concurrency: int,
        on_planned: Callable[[int], None] | None = None,
    ) -> None:
        self.client = client
        self.budget = budget
        self.concurrency = concurrency
        self.spent = 0
        self.left_over: list[str] = []
        # Told how many sale details this run makes, as far as it knows: fetched, in flight and
        # queued, within the budget (it grows while the producers discover ids).
        self.on_planned = on_planned

    def run(
        self, queue: SaleIdQueue, ledger: SaleLedger, carried_over: Iterable[str]
    ) -> Iterator[tuple[str, dict[str, Any] | None]]:
        """Yield (id, raw sale or None when not found); afterwards `self.left_over` holds unfetched ids."""
        seen: set[str] = set()
        urgent: deque[str] = deque()  # carried over, configured, and order bumps' main sales

        def want(sale_id: str) -> bool:
            if sale_id in seen:
                return False
            seen.add(sale_id)
            return True

        urgent.extend(i for i in carried_over if want(i))
        refresh = deque(i for i in ledger.refresh_candidates if i not in seen)
        queue_open = True
        in_flight: dict[Future[dict[str, Any] | None], str] = {}
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="sale-details") as pool:
            while True:
                while len(in_flight) < self.concurrency and self.spent < self.budget:
                    sale_id = self._next_id(urgent, refresh, queue_open)
                    if sale_id is None:
                        break
                    self.spent += 1
                    in_flight[pool.submit(self._fetch, sale_id)] = sale_id
                if queue_open:
                    taken = queue.take(timeout=0.05 if in_flight else 0.5)
                    if taken is None:
                        queue_open = False
                    else:
                        urgent.extend(i for i in taken if i not in ledger.known and want(i))
                if self.on_planned is not None:
                    self.on_planned(min(self.budget, self.spent + len(urgent) + len(refresh)))
                if not in_flight:
                    if queue_open:
                        continue
                    if self.spent >= self.budget or not (urgent or refresh):
                        break
                    continue
                done, _ = wait(in_flight, timeout=0.05, return_when=FIRST_COMPLETED)
                for future in done:
                    sale_id = in_flight.pop(future)
                    try:
                        sale = future.result()
                    except (AuthenticationError, MissingScopeError):
                        self.left_over.extend([sale_id, *in_flight.values(), *urgent])
                        raise
                    except PlatformError as exc:
                        logger.warning("sale %s not fetched this run, kept for the next: %s", sale_id, exc)
                        self.left_over.append(sale_id)
                        continue
                    if sale is not None:
                        main_sale_id = (sale.get("orderBump") or {}).get("mainSaleId")
                        if main_sale_id is not None and str(main_sale_id) not in ledger.known:
                            if want(str(main_sale_id)):
                                urgent.append(str(main_sale_id))
                    yield sale_id, sale
        # Whatever the budget did not reach waits for the next run; refresh candidates are re-derived.
        self.left_over.extend(urgent)

    def _next_id(self, urgent: deque[str], refresh: deque[str], queue_open: bool) -> str | None:
        if urgent:
            return urgent.popleft()
        if not queue_open and refresh:
            return refresh.popleft()
        return None

    def _fetch(self, sale_id: str) -> dict[str, Any] | None:
        try:
            sale: dict[str, Any] = self.client.request("sale_details", path_params={"id": sale_id})
        except NotFoundError:
            logger.warning("sale %s is referenced but the API does not know it: skipped", sale_id)
            return None
        return sale


def read_sales(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """Sale details of the ids the other resources discover, of those kept from earlier runs and of the
    sales that can still change, within `sales_max_requests`."""
    settings = ctx.settings
    selected = dlt.current.source().resources.selected
    # The resources that discover sale ids and run in this extract: `take` ends once they all finished.
    ctx.sale_ids.expect(name for name in selected if name in ctx.streams and ctx.streams[name].sale_ids_at)
    state = dlt.current.resource_state()
    ledger = SaleLedger.from_destination(
        settings.sales_refresh_days, settings.sales_recheck_hours, time.time()
    )
    # Sales that webhooks announced as changed come first, before the backlog (`sale_ids.py`).
    announced, announced_until = announced_sale_ids(state.get("webhooks_loaded_until"))
    if announced_until is not None:
        state["webhooks_loaded_until"] = announced_until
    carried = [
        *announced,
        *pending_sale_ids(state),
        *(i for i in settings.sale_ids if i not in ledger.known),
    ]
    if missing := ctx.missing_scopes(stream):
        keep_pending_sale_ids(state, [*carried, *drain(ctx.sale_ids, ledger.known)])
        ctx.report.skip(stream.name, scope_message(stream, missing))
        return
    fetcher = SaleFetcher(
        ctx.client, settings.sales_max_requests, settings.sales_concurrency, ctx.report.plan_sale_details
    )
    page: Rows = []
    page_ids: list[str] = []  # the ids of `page`: pending for the next run until dlt has the page
    try:
        for sale_id, sale in fetcher.run(ctx.sale_ids, ledger, carried):
            if sale is None:
                continue
            try:
                page.extend(ctx.parse(stream, [sale]))
                page_ids.append(sale_id)
            except RecordValidationError as exc:  # strict: keep the id for a later run rather than lose it
                fetcher.left_over.append(sale_id)
                ctx.report.fail(stream.name, str(exc))
            if len(page) >= 100:
                yield page
                page, page_ids = [], []
        if page:
            yield page
            page, page_ids = [], []
    except PlatformError:
        # A token revoked mid-run (or any failure of the fetcher) must not drop the sales fetched so far:
        # they are handed to dlt before the error goes on to `guarded`, which reports it.
        fetcher.left_over.extend(drain(ctx.sale_ids, ledger.known))
        if page:
            rows, page, page_ids = page, [], []
            yield rows
        raise
    finally:
        # Whatever was fetched but not handed over (the extract stopped this generator) waits as pending.
        keep_pending_sale_ids(state, [*fetcher.left_over, *page_ids])
    if fetcher.left_over:
        ctx.report.warn(
            f"{len(fetcher.left_over)} sale ids wait for the next run "
            f"(sales_max_requests = {settings.sales_max_requests} was reached or requests failed)"
        )


SALES = Stream(
    "sales",
    "sale_details",
    models.Sale,
    ("id",),
    "merge",
    read=read_sales,
    description="Sale details of every sale id discovered, new ones and those that can change.",
    newest_by="updated_at",
)
