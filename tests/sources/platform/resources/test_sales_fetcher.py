"""The sale-id hand-off and the budgeted sale fetcher: priorities, budget, left-overs, order bumps."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from sources.platform.resources.store_sale_ids import (
    SaleIdQueue,
    SaleLedger,
    drain,
    keep_pending_sale_ids,
    pending_sale_ids,
)
from sources.platform.resources.store_sales import SaleFetcher
from sources.platform_client.errors import NotFoundError, ServerError


class FakeSalesClient:
    """Answers `sale_details` from a dict; records the order of requests."""

    def __init__(self, sales: dict[str, dict[str, Any]], failing: frozenset[str] = frozenset()) -> None:
        self.sales = sales
        self.failing = failing
        self.requested: list[str] = []
        self._lock = threading.Lock()

    def in_flight_wanted(self, operation_name: str, least: int, most: int) -> int:
        """No rate limit, no latency measured: the configured number (`PlatformClient.in_flight_wanted`)."""
        return least

    def request(self, operation_name: str, path_params: dict[str, Any]) -> dict[str, Any]:
        assert operation_name == "sale_details"
        sale_id = path_params["id"]
        with self._lock:
            self.requested.append(sale_id)
        if sale_id in self.failing:
            raise ServerError("sale_details answered 503 after 6 tries", operation="sale_details", status=503)
        if sale_id not in self.sales:
            raise NotFoundError("sale not found", operation="sale_details", status=404)
        return self.sales[sale_id]


def sale(sale_id: str, main: int | None = None) -> dict[str, Any]:
    return {"id": sale_id, "orderBump": {"has": main is not None, "isMainSale": False, "mainSaleId": main}}


def closed_queue(*ids: str) -> SaleIdQueue:
    queue = SaleIdQueue()
    queue.offer(ids)
    queue.expect(["subscriptions"])
    queue.finish("subscriptions")
    return queue


def run(fetcher: SaleFetcher, queue: SaleIdQueue, ledger: SaleLedger, carried: list[str]) -> list[str]:
    return [sale_id for sale_id, found in fetcher.run(queue, ledger, carried) if found is not None]


def test_queue_ends_only_when_every_expected_producer_finished() -> None:
    queue = SaleIdQueue()
    queue.offer(["1", None, "", "2"])
    queue.expect(["subscriptions", "fiscal_documents"])
    assert queue.take(timeout=0.01) == ["1", "2"]
    queue.finish("subscriptions")
    assert queue.take(timeout=0.01) == []
    queue.offer([3])
    queue.finish("fiscal_documents")
    assert queue.take(timeout=0.01) == ["3"]
    assert queue.take(timeout=0.01) is None


def test_queue_is_closed_at_once_when_no_producer_is_selected() -> None:
    queue = SaleIdQueue()
    queue.expect([])
    assert queue.take(timeout=5) is None


def test_carried_over_and_new_ids_come_before_refresh_and_known_ids_are_not_refetched() -> None:
    client = FakeSalesClient({i: sale(i) for i in ["1", "2", "3", "4", "5"]})
    ledger = SaleLedger(known={"4", "5"}, refresh_candidates=["5"])
    fetcher = SaleFetcher(client, budget=10, concurrency=1)  # type: ignore[arg-type]
    fetched = run(fetcher, closed_queue("2", "4", "3", "2"), ledger, carried=["1"])
    assert fetched == ["1", "2", "3", "5"]
    assert client.requested == ["1", "2", "3", "5"]
    assert fetcher.left_over == []


def test_budget_keeps_unfetched_new_ids_for_the_next_run() -> None:
    client = FakeSalesClient({str(i): sale(str(i)) for i in range(10)})
    fetcher = SaleFetcher(client, budget=3, concurrency=2)  # type: ignore[arg-type]
    fetched = run(fetcher, closed_queue(*[str(i) for i in range(10)]), SaleLedger(), carried=[])
    assert len(fetched) == 3 and fetcher.spent == 3
    assert sorted(fetched + fetcher.left_over) == sorted(str(i) for i in range(10))


def test_order_bump_main_sale_is_fetched_in_the_same_run() -> None:
    client = FakeSalesClient({"10": sale("10", main=9), "9": sale("9")})
    fetcher = SaleFetcher(client, budget=5, concurrency=1)  # type: ignore[arg-type]
    assert run(fetcher, closed_queue("10"), SaleLedger(), carried=[]) == ["10", "9"]


def test_unknown_sale_is_skipped_and_a_failing_one_is_kept() -> None:
    client = FakeSalesClient({"1": sale("1")}, failing=frozenset({"2"}))
    fetcher = SaleFetcher(client, budget=5, concurrency=1)  # type: ignore[arg-type]
    assert run(fetcher, closed_queue("1", "2", "3"), SaleLedger(), carried=[]) == ["1"]
    assert fetcher.left_over == ["2"]


def test_drain_collects_every_unknown_id_until_the_producers_finish() -> None:
    queue = SaleIdQueue()
    queue.expect(["event_attendees"])
    queue.offer(["1", "2"])

    def finish_later() -> None:
        queue.offer(["3"])
        queue.finish("event_attendees")

    threading.Timer(0.05, finish_later).start()
    assert drain(queue, known={"2"}) == ["1", "3"]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_ids_arriving_while_fetching_are_all_fetched(concurrency: int) -> None:
    client = FakeSalesClient({str(i): sale(str(i)) for i in range(40)})
    queue = SaleIdQueue()
    queue.expect(["subscriptions"])

    def produce() -> None:
        for start in range(0, 40, 10):
            queue.offer(str(i) for i in range(start, start + 10))
        queue.finish("subscriptions")

    threading.Thread(target=produce).start()
    fetcher = SaleFetcher(client, budget=100, concurrency=concurrency)  # type: ignore[arg-type]
    assert sorted(run(fetcher, queue, SaleLedger(), carried=[]), key=int) == [str(i) for i in range(40)]


def test_ledger_refreshes_unsettled_sales_and_rechecks_paid_ones_at_most_once_per_interval() -> None:
    from datetime import UTC, datetime, timedelta

    newest = datetime(2026, 6, 1, tzinfo=UTC)
    now = 1_800_000_000.0
    day = 86400
    rows = [
        ("waiting", "waitingPayment", None, newest, str(now - 60)),  # unsettled: every run
        ("recent-paid-old-check", "paid", newest - timedelta(days=3), newest, str(now - 2 * day)),
        ("recent-paid-new-check", "paid", newest - timedelta(days=3), newest, str(now - 3600)),
        ("old-paid", "paid", newest - timedelta(days=40), newest, str(now - 9 * day)),
        ("refunded", "refunded", newest - timedelta(days=3), newest, str(now - 9 * day)),
    ]
    ledger = SaleLedger.from_rows(rows, refresh_days=30, recheck_hours=24, now=now)
    assert ledger.known == {row[0] for row in rows}
    assert ledger.refresh_candidates == ["recent-paid-old-check", "waiting"]  # least recently fetched first
    every_run = SaleLedger.from_rows(rows, refresh_days=30, recheck_hours=0, now=now)
    assert every_run.refresh_candidates == ["recent-paid-old-check", "recent-paid-new-check", "waiting"]


def test_pending_sale_ids_are_kept_as_one_sorted_text_and_read_from_either_form() -> None:
    state: dict[str, Any] = {}
    assert pending_sale_ids(state) == []
    keep_pending_sale_ids(state, ["300", "100", "", "200", "100", 400])
    assert state == {"pending": "100\n200\n300\n400"}
    assert pending_sale_ids(state) == ["100", "200", "300", "400"]
    keep_pending_sale_ids(state, [])
    assert state == {"pending": ""} and pending_sale_ids(state) == []
    # a state written by an earlier version holds a list
    assert pending_sale_ids({"pending": ["b", "a", "b"]}) == ["a", "b"]
