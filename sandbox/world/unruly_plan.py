"""Which records of an unruly world break the sync's rules, and when (docs/contracts.md part 2).

Every choice is a pure function of the world's seed and the record's index: candidates are ranked by a
splitmix64 hash keyed by (seed, behaviour) and the first `max(minimum, ceil(share * n))` are taken, so
even a small world shows every behaviour. Moves fall at `T0 + 1 h` to `T0 + HORIZON` (the first twenty
days of scheduled syncs meet them all); nothing differs from the default world before its move, except
the `-03:00` notation, which is served from the start.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING

from .clock import DAY, HOUR, T0, iso
from .rng import entity_key, mix64
from .sales import REGULAR, SUB
from .subplan import SubPlan
from .subscriptions import last_normal_renewal, life, renewal

if TYPE_CHECKING:
    from .world import SyntheticWorld

HORIZON = 20 * DAY
OFFSET = -3 * HOUR  # the `-03:00` notation: the same instant, written in Brasília time

# (share, minimum) of the candidates each behaviour takes
SHARES: dict[str, tuple[float, int]] = {
    "deleted_products": (0.1, 1),
    "deleted_affiliations": (0.05, 1),
    "deleted_transfers": (0.03, 1),
    "deleted_comments": (0.03, 1),
    "chargebacks": (0.05, 3),
    "late_slips": (0.1, 3),
    "future_subscriptions": (0.02, 2),
    "late_renewals": (0.1, 3),
    "offsets": (0.05, 0),
}
CHARGEBACK_AGE = (20 * DAY, 150 * DAY)  # paid this long before T0: 20 to 170 days old at the chargeback
LATE_SLIP_AGE = 365 * DAY  # expired at most this long before T0
LATE_SLIP_METHODS = ("bankslip", "installmentBankslip", "pix")
FUTURE_AHEAD = (14 * DAY, 35 * DAY)  # how far ahead of the clock a future `updatedAt` is
RENEWAL_DELAY = (DAY, 3 * DAY)  # a delayed renewal is paid this long after its due date


def ranked(key: int, candidates: Iterable[int], share: float, minimum: int) -> list[int]:
    """The chosen candidates (ascending): the `max(minimum, ceil(share * n))` lowest by hash."""
    pool = list(candidates)
    n = min(len(pool), max(minimum, math.ceil(share * len(pool))))
    return sorted(sorted(pool, key=lambda c: mix64(key ^ c))[:n])


def offset_iso(value: str) -> str:
    """`2026-06-01T00:00:00.000Z` as `2026-05-31T21:00:00.000-03:00` (a value in another form stays)."""
    from datetime import datetime

    from .clock import to_ms

    if not value.endswith("Z"):
        return value
    ms = to_ms(datetime.fromisoformat(value))
    return iso(ms + OFFSET)[:-1] + "-03:00"


class UnrulyPlan:
    """The unruly choices of one world, each computed on first use."""

    def __init__(self, world: SyntheticWorld):
        self.w = world
        self.keys = {name: entity_key(world.seed, f"unruly.{name}") for name in SHARES}
        self._offset_keys: dict[str, int] = {}

    def _pick(self, name: str, candidates: Iterable[int]) -> list[int]:
        share, minimum = SHARES[name]
        return ranked(self.keys[name], candidates, share, minimum)

    def moment(self, name: str, n: int) -> int:
        """When record n's move of this behaviour happens: in [T0 + 1 h, T0 + HORIZON)."""
        return T0 + HOUR + mix64(self.keys[name] ^ (n + 0x5EED)) % (HORIZON - HOUR)

    def _timed(self, name: str, chosen: Iterable[int]) -> dict[int, int]:
        return {n: self.moment(name, n) for n in chosen}

    # -- deletions (keys: product index, affiliation id, transfer index, comment id) ------------------
    @cached_property
    def deleted_products(self) -> dict[str, int]:
        """Product id -> when it disappears (one-off products only: tickets and plans keep theirs)."""
        singles = self.w.catalog_.singles
        chosen = self._pick("deleted_products", (p.index for p in singles))
        products = self.w.catalog_.products
        return {products[k].id: self.moment("deleted_products", k) for k in chosen}

    @cached_property
    def deleted_affiliations(self) -> dict[str, int]:
        """Affiliation id -> when it disappears (affiliations of products that stay)."""
        gone = self.deleted_products
        ids = [int(a["id"]) for a in self.w.catalog_.affiliations() if a["product"]["id"] not in gone]
        chosen = self._pick("deleted_affiliations", ids)
        return {str(n): t for n, t in self._timed("deleted_affiliations", chosen).items()}

    @cached_property
    def deleted_transfers(self) -> dict[str, int]:
        """Transfer id -> when it disappears (transfers that exist at T0)."""
        transfers = self.w.transfers_
        chosen = self._pick("deleted_transfers", range(transfers.stream.count_at(T0)))
        return {transfers.record(k, T0)["id"]: self.moment("deleted_transfers", k) for k in chosen}

    @cached_property
    def deleted_comments(self) -> dict[int, int]:
        """Lesson comment id -> when it disappears (comments that exist at T0)."""
        courses = self.w.courses
        chosen = self._pick("deleted_comments", range(courses.stream.count_at(T0)))
        return {courses.record(c, T0)["id"]: self.moment("deleted_comments", c) for c in chosen}

    # -- sales -------------------------------------------------------------------------------------
    @cached_property
    def chargebacks(self) -> dict[int, int]:
        """Sale index -> when a card sale paid 20-150 days before T0 (one-off, with a fiscal document)
        is charged back: the sale turns `refunded`, its fiscal document `canceled`."""
        sales, fiscal = self.w.sales, self.w.fiscal
        lo, hi = T0 - CHARGEBACK_AGE[1], T0 - CHARGEBACK_AGE[0]

        def eligible(i: int) -> bool:
            if sales.role(i) != REGULAR or i in sales.status_pins or i in fiscal.pins:
                return False
            core = sales.core(i)
            return (
                core.method == "creditCard"
                and core.paid_at is not None
                and lo <= core.paid_at <= hi
                and core.refund_req is None
                and core.price > 0
                and fiscal.life(i) is not None
            )

        first = sales.stream.first_at_or_after(lo - 15 * DAY)
        candidates = [i for i in range(first, sales.count_at(hi)) if eligible(i)]
        return self._timed("chargebacks", self._pick("chargebacks", candidates))

    @cached_property
    def late_slips(self) -> dict[int, int]:
        """Sale index -> when a bank-slip or pix sale that expired in the year before T0 is paid after
        all (one-off sales and subscriptions' first invoices; the subscription stays canceled)."""
        sales = self.w.sales

        def eligible(i: int) -> bool:
            if sales.role(i) not in (REGULAR, SUB) or i in sales.status_pins:
                return False
            core = sales.core(i)
            last_when, last_status, _ = core.events[-1]
            return (
                core.detail == "bankslip"
                and last_status == "expired"
                and T0 - LATE_SLIP_AGE <= last_when < T0
            )

        first = sales.stream.first_at_or_after(T0 - LATE_SLIP_AGE - 15 * DAY)
        candidates = [i for i in range(first, sales.count_at(T0)) if eligible(i)]
        return self._timed("late_slips", self._pick("late_slips", candidates))

    # -- subscriptions -----------------------------------------------------------------------------
    @cached_property
    def late_renewals(self) -> frozenset[int]:
        """Monthly subscriptions (index j) whose renewals from T0 on are paid 1-3 days after they fall due."""
        subs, plan = self.w.subs, self.w.sales.plan

        def eligible(j: int) -> bool:
            p = plan(j)
            if p.kind != "paid" or p.held or p.paid_at is None or p.period != 30 * DAY or p.paid_at >= T0:
                return False
            last = last_normal_renewal(p)
            return last >= 1 and p.paid_at + last * p.period >= T0 and life(p, T0).status == "upToDate"

        return frozenset(self._pick("late_renewals", [j for j in range(subs.count_at(T0)) if eligible(j)]))

    @cached_property
    def future_subscriptions(self) -> dict[int, tuple[int, int]]:
        """Subscription j -> (when, the future `updatedAt` it gets then: 14-35 days ahead of that)."""
        count = self.w.subs.count_at(T0)
        chosen = self._pick("future_subscriptions", (j for j in range(count) if j not in self.late_renewals))
        out: dict[int, tuple[int, int]] = {}
        for j in chosen:
            at = self.moment("future_subscriptions", j)
            lo, hi = FUTURE_AHEAD
            out[j] = (at, at + lo + mix64(self.keys["future_subscriptions"] ^ ~j) % (hi - lo))
        return out

    def renewal_due(self, j: int, p: SubPlan, t: int) -> tuple[int, int] | None:
        """(due date, delayed payment) of subscription j's latest renewal at t, if it is a delayed one."""
        if j not in self.late_renewals or p.paid_at is None or t < p.paid_at:
            return None
        k = min((t - p.paid_at) // p.period, last_normal_renewal(p))
        if k < 1:
            return None
        due = p.paid_at + k * p.period
        if due < T0 or len(renewal(p, p.paid_at, k)[0]) != 1:  # only renewals paid at once are delayed
            return None
        lo, hi = RENEWAL_DELAY
        return due, due + lo + mix64(self.keys["late_renewals"] ^ (j << 16) ^ k) % (hi - lo)

    def offset(self, kind: str, number: int) -> bool:
        """Whether a record (kind: products, affiliations, subscriptions, sales; its numeric id) writes
        its timestamps with `-03:00`."""
        key = self._offset_keys.get(kind)
        if key is None:
            key = self._offset_keys[kind] = entity_key(self.w.seed, f"unruly.offsets.{kind}")
        return mix64(key ^ number) < SHARES["offsets"][0] * 2.0**64
