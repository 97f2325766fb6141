"""The re-verification cycle of known sales: its share of the budget, its order, and what it gives back."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from sources.platform.resources.store_sale_ids import SaleLedger
from sources.platform.resources.store_sales import SaleFetcher
from sources.platform.run_budget import budget_share
from tests.sources.platform.resources.test_sales_fetcher import FakeSalesClient, closed_queue, run, sale

T0 = datetime(2026, 6, 1, tzinfo=UTC)


def loaded(
    sale_id: str, verified_hours_ago: float | None, load_id: str = "100", status: str = "paid"
) -> tuple:
    """A `sales` row as the ledger reads it: (id, status, paid_at, updated_at, load id, verified_at)."""
    verified = None if verified_hours_ago is None else T0 - timedelta(hours=verified_hours_ago)
    return (sale_id, status, T0 - timedelta(days=400), T0 - timedelta(days=300), load_id, verified)


def test_the_ledger_orders_known_sales_by_their_last_verification() -> None:
    rows = [
        loaded("a", 1),
        loaded("b", 48),
        loaded("c", None, load_id="50"),  # loaded before `verified_at` existed: its load time
        loaded("d", 48),  # a tie: by id
        loaded("e", None, load_id="1e12"),
    ]
    ledger = SaleLedger.from_rows(rows, refresh_days=30, recheck_hours=0, now=T0.timestamp())
    assert ledger.verify_order == ["c", "b", "d", "a", "e"]
    assert ledger.refresh_candidates == []  # paid long ago: no rule re-checks them


def test_a_sale_has_changed_when_its_status_or_update_time_differs() -> None:
    ledger = SaleLedger.from_rows([loaded("a", 1)], 30, 0, T0.timestamp())
    updated = (T0 - timedelta(days=300)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert not ledger.changed({"id": "a", "status": "paid", "updatedAt": updated})
    assert ledger.changed({"id": "a", "status": "refunded", "updatedAt": updated})
    assert ledger.changed({"id": "a", "status": "paid", "updatedAt": "2026-05-31T00:00:00.000Z"})
    assert not ledger.changed({"id": "new", "status": "paid", "updatedAt": updated})  # not known


@pytest.mark.parametrize(
    ("share", "budget", "reserve"),
    [(0.1, 5000, 500), (0.1, 20, 2), (0.25, 7, 2), (0.01, 10, 1), (0, 10, 0), (0.5, 1, 0), (0.9, 2, 1)],
)
def test_the_cycle_keeps_the_ceiling_of_its_share(share: float, budget: int, reserve: int) -> None:
    assert budget_share(share, budget) == reserve


def test_new_ids_get_the_budget_but_the_reserve_which_goes_to_the_sales_verified_longest_ago() -> None:
    known = [f"k{i}" for i in range(6)]
    new = [f"n{i}" for i in range(10)]
    client = FakeSalesClient({i: sale(i) for i in known + new})
    ledger = SaleLedger(known=set(known), verify_order=known, refresh_candidates=["k5"])
    fetcher = SaleFetcher(client, budget=10, concurrency=1, reserve=3)  # type: ignore[arg-type]
    fetched = run(fetcher, closed_queue(*new), ledger, [])
    # 7 new ids (the budget but the reserve), no refresh candidate (the others' share is spent), then
    # the three verified longest ago; the three new ids left wait for the next run.
    assert fetched == [*new[:7], "k0", "k1", "k2"]
    assert fetcher.reverified == 3 and fetcher.spent == 10
    assert sorted(fetcher.left_over) == new[7:]


def test_refresh_candidates_come_before_the_cycle_which_skips_what_the_run_fetched() -> None:
    known = ["k0", "k1", "k2", "k3"]
    client = FakeSalesClient({i: sale(i) for i in known})
    ledger = SaleLedger(known=set(known), verify_order=known, refresh_candidates=["k0", "k2"])
    fetcher = SaleFetcher(client, budget=10, concurrency=1, reserve=2)  # type: ignore[arg-type]
    assert run(fetcher, closed_queue(), ledger, []) == ["k0", "k2", "k1", "k3"]
    assert fetcher.reverified == 2 and fetcher.left_over == []


def test_a_cycle_with_nothing_left_to_verify_gives_its_share_back() -> None:
    known = ["k0", "k1"]
    new = [f"n{i}" for i in range(8)]
    client = FakeSalesClient({i: sale(i) for i in known + new})
    ledger = SaleLedger(known=set(known), verify_order=known, refresh_candidates=["k1"])
    fetcher = SaleFetcher(client, budget=8, concurrency=1, reserve=4)  # type: ignore[arg-type]
    fetched = run(fetcher, closed_queue(*new), ledger, [])
    # The reserve is at most the known sales (2): 6 new ids; k1 is a refresh candidate the others'
    # share cannot reach, so the cycle verifies k0 and k1, then nothing is left to verify.
    assert fetched == [*new[:6], "k0", "k1"]
    assert fetcher.reverified == 2 and sorted(fetcher.left_over) == new[6:]


def test_retired_ids_are_never_requested() -> None:
    client = FakeSalesClient({"1": sale("1")})
    fetcher = SaleFetcher(client, budget=10, concurrency=1, retired=frozenset({"2", "3"}))  # type: ignore[arg-type]
    assert run(fetcher, closed_queue("2", "1"), SaleLedger(), ["3"]) == ["1"]
    assert client.requested == ["1"]


def test_every_known_sale_is_verified_within_the_cycle_the_settings_promise() -> None:
    """Runs of a fixed budget against 23 known sales that no rule re-checks and 5 new ids a run (2 of
    them fetched, the others lost to this test): with a reserve of 4, every sale known at a run's
    start was fetched within the last ceil(known / 4) runs, whatever the backlog."""
    known = [f"k{i:02d}" for i in range(23)]
    verified = dict.fromkeys(known, 0)  # sale -> the run that last fetched it
    sales = {i: sale(i) for i in known}
    for number in range(1, 13):
        new = [f"n{number}-{i}" for i in range(5)]
        sales.update({i: sale(i) for i in new})
        order = sorted(verified, key=lambda i: (verified[i], i))
        ledger = SaleLedger(known=set(verified), verify_order=order)
        fetcher = SaleFetcher(FakeSalesClient(sales), budget=6, concurrency=1, reserve=4)  # type: ignore[arg-type]
        for sale_id in run(fetcher, closed_queue(*new), ledger, []):
            verified[sale_id] = number
        assert fetcher.reverified == 4
        cycle = math.ceil(len(ledger.known) / 4)
        assert max(number - verified[i] for i in ledger.known) < cycle, number
    assert len(verified) == 23 + 2 * 12
