"""Sale ids on probation in the budgeted fetcher (issue 53): where each kind of id comes in the run, the
share the ids on probation may take (`allowance`), the part of it kept from the others when earlier runs
left some, and the 404 that retires (`retired.SaleRetirements`)."""

from __future__ import annotations

from datetime import UTC, datetime

from sources.platform.resources.store_sale_ids import SaleLedger
from sources.platform.resources.store_sales import SaleFetcher
from sources.platform.retired import SaleRetirements
from tests.sources.platform.resources.test_sales_fetcher import FakeSalesClient, closed_queue, sale

T0 = datetime(2026, 6, 1, tzinfo=UTC)
EARLIER = "2026-05-31T00:00:00+00:00"  # the stamp of an earlier run's first 404


def unknown_ids(probation: tuple[str, ...] = (), confirmations: int = 2) -> SaleRetirements:
    return SaleRetirements(set(), dict.fromkeys(probation, EARLIER), lambda: T0, confirmations=confirmations)


def test_each_kind_of_id_has_its_turn_and_the_ids_on_probation_come_last() -> None:
    """Announced (even on probation), carried over, discovered; once the producers are done, the refresh
    candidates, the configured ids, the cycle; then the ids on probation, those of earlier runs first."""
    client = FakeSalesClient({i: sale(i) for i in ["c1", "q1", "k1", "k2"]})
    ledger = SaleLedger(known={"k1", "k2"}, refresh_candidates=["k1"], verify_order=["k2", "k1"])
    unknown = unknown_ids(("p1", "a1"))
    fetcher = SaleFetcher(client, budget=20, concurrency=1, reserve=1, unknown=unknown, allowance=5)  # type: ignore[arg-type]
    found = [
        sale_id
        for sale_id, got in fetcher.run(
            closed_queue("q1"), ledger, ["c1"], configured=["x1"], announced=["a1"]
        )
        if got is not None
    ]
    # a1 was on probation: its 404 retires it; x1's first 404 puts it on probation, its confirmation last
    assert client.requested == ["a1", "c1", "q1", "k1", "x1", "k2", "p1", "x1"]
    assert found == ["c1", "q1", "k1", "k2"]
    assert unknown.retired_now == ["a1", "p1", "x1"] and unknown.probation == {}
    assert (fetcher.spent, fetcher.reverified, fetcher.probed) == (8, 1, 2)


def test_the_ids_on_probation_take_at_most_their_allowance() -> None:
    client = FakeSalesClient({})
    unknown = unknown_ids()
    configured = [f"u{i}" for i in range(10)]
    fetcher = SaleFetcher(client, budget=100, concurrency=1, unknown=unknown, allowance=3)  # type: ignore[arg-type]
    assert [i for i, got in fetcher.run(closed_queue(), SaleLedger(), [], configured) if got] == []
    assert client.requested == [*configured, "u0", "u1", "u2"]
    assert unknown.retired_now == ["u0", "u1", "u2"]
    assert unknown.probation == dict.fromkeys(configured[3:], T0.isoformat())
    assert fetcher.configured_left == 0 and fetcher.left_over == []


def test_the_allowance_is_kept_from_the_others_for_the_ids_earlier_runs_left_on_probation() -> None:
    new = [f"n{i}" for i in range(10)]
    client = FakeSalesClient({i: sale(i) for i in new})
    unknown = unknown_ids(tuple(f"p{i}" for i in range(5)))
    fetcher = SaleFetcher(client, budget=6, concurrency=1, unknown=unknown, allowance=3)  # type: ignore[arg-type]
    found = [i for i, got in fetcher.run(closed_queue(*new), SaleLedger(), []) if got]
    assert found == new[:3] and client.requested == [*new[:3], "p0", "p1", "p2"]
    assert sorted(fetcher.left_over) == new[3:]
    assert unknown.retired_now == ["p0", "p1", "p2"] and list(unknown.probation) == ["p3", "p4"]


def test_with_retire_after_not_found_1_the_first_404_retires_a_sale_id() -> None:
    client = FakeSalesClient({})
    unknown = unknown_ids(confirmations=1)
    fetcher = SaleFetcher(client, budget=10, concurrency=1, unknown=unknown, allowance=5)  # type: ignore[arg-type]
    list(fetcher.run(closed_queue(), SaleLedger(), [], ["u0"]))
    assert client.requested == ["u0"] and unknown.retired_now == ["u0"] and unknown.probation == {}


def test_the_ids_on_probation_are_kept_as_one_text_per_run_of_their_first_404() -> None:
    unknown = unknown_ids(("p2", "p1"))
    assert not unknown.not_found("n1") and unknown.not_found("p1")
    state: dict[str, dict[str, str]] = {}
    unknown.keep(state)
    assert state == {"on_probation": {EARLIER: "p2", T0.isoformat(): "n1"}}
