"""Subscriptions: the state of a plan (subplan.py) at clock T, and the subscription listings.

Renewal k falls due at d_k = p0 + k * period (p0: first payment). Most renewals are paid within
minutes; monthly and yearly ones are sometimes awaited (bank slip, up to two days) or late (up to eight
days). At renewal L the plan ends: cancelled by the client shortly before d_L, suspended by the
producer, or defaulted (late after a day, defaulter after ten, cancelled after forty). A finite plan
with F charges finishes at d_F. Only the renewals around T are expanded, so a state is O(1).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass
from typing import Literal

from .api import Record, WorldError
from .clock import DAY, HOUR, MINUTE, iso
from .listing import KeyListing, RangeListing, ScanCache
from .people import People
from .rng import MASK, UNIT, mix64
from .sales import DETAIL_METHOD, Sales
from .subplan import SubPlan
from .subscription_ids import SUBSCRIPTION_BASE, subscription_id
from .timeline import state_at

NEVER = 1 << 62
SUB_METHOD = {"creditCard": "creditcard", "bankslip": "bankslip", "pix": "pix"}
DELIVERIES = ("area_de_membros", "email", "telegram", "whatsapp", "comunidade")


@dataclass(slots=True)
class SubState:
    when: int
    status: str
    issued: int  # charges issued so far
    paid: int
    interruption: tuple[int, str, int, str, str, str] | None  # at, type, removeAccess, reason, origin, prev
    due: int  # current due date
    ends: int  # finishes at (planned end, or end of access)


def renewal(plan: SubPlan, p0: int, k: int) -> tuple[list[tuple[int, str]], int]:
    """Events of renewal k and when it is paid; the draw is per (plan, k) so no state is carried."""
    d = p0 + k * plan.period
    h = mix64(plan.rkey ^ (k & MASK))
    u = (h >> 11) * UNIT
    frac = (h & 0xFFFFF) / 0x100000
    if plan.period < 30 * DAY or u < 0.88:
        pay = d + int(frac * 10 * MINUTE)
        return [(pay, "upToDate")], pay
    if u < 0.97:
        pay = d + HOUR + int(frac * 47 * HOUR)
        return [(d, "awaitingPayment"), (pay, "upToDate")], pay
    pay = d + DAY + HOUR + int(frac * 7 * DAY)
    return [(d + DAY, "late"), (pay, "upToDate")], pay


def terminal_before(plan: SubPlan, d_end: int) -> int:
    """When a cancellation or suspension happens: 10% to 50% of a period before renewal L."""
    period = plan.period
    h = mix64(plan.rkey ^ 0xE4D)
    return d_end - period // 10 - int((h & 0xFFFFF) / 0x100000 * (period // 2 - period // 10))


# About one paid plan in eight changes its price once, at a renewal (an upgrade or a downgrade), as
# real subscriptions do; the change time is that renewal's payment, so `updatedAt` and the update
# scans show it without an event of its own.
PRICE_CHANGE_SHARE = 31  # of 256
PRICE_FACTORS = (0.8, 1.2, 1.5)


def last_normal_renewal(plan: SubPlan) -> int:
    """The last renewal before the plan finishes or ends (NEVER: it runs on)."""
    end, fin = plan.end, plan.finite
    if fin and (not end or fin <= end):
        return fin - 1
    return end - 1 if end else NEVER


def price_change(plan: SubPlan) -> tuple[int, int, float] | None:
    """(renewal k, when it is paid, price factor) of a plan whose price changes, if it does."""
    if plan.kind != "paid" or plan.held or plan.paid_at is None:
        return None
    h = mix64(plan.rkey ^ 0x9A1CE)
    if (h & 0xFF) >= PRICE_CHANGE_SHARE:
        return None
    k = 2 + (h >> 8) % 5
    if k > last_normal_renewal(plan):
        return None
    return k, renewal(plan, plan.paid_at, k)[1], PRICE_FACTORS[(h >> 16) % 3]


def price_at(plan: SubPlan, base_cents: int, t: int) -> int:
    """The plan's price in cents at time t."""
    change = price_change(plan)
    if change is None or t < change[1]:
        return base_cents
    return round(base_cents * change[2])


def last_change(plan: SubPlan, t: int) -> int:
    """`life(plan, t).when`, computed without building the state (update scans call it 200k times).

    Terminal events always follow every normal renewal's events (a cancellation comes at least 10% of a
    period before renewal L, renewals settle within 8 days on monthly and yearly plans and within
    minutes on shorter ones), so the latest event at or before t is found from the end.
    """
    c = plan.created
    if plan.kind == "free" or plan.held:
        return c
    p0 = plan.paid_at
    if p0 is None:
        return plan.fail_at if plan.fail_at <= t else c
    if t < p0:
        return c
    end, fin, period = plan.end, plan.finite, plan.period
    terminal: tuple[int, ...] = ()
    last_normal = last_normal_renewal(plan)
    if fin and (not end or fin <= end):
        terminal = (p0 + fin * period,)
    elif end:
        d_end = p0 + end * period
        term = plan.terminal
        if term in ("cancel", "suspend"):
            terminal = (terminal_before(plan, d_end),)
        else:
            terminal = (d_end + DAY, d_end + 10 * DAY, d_end + 40 * DAY)[
                : {"late": 1, "defaulter": 2}.get(term, 3)
            ]
    for when in reversed(terminal):
        if when <= t:
            return when
    k_hi = min((t - p0) // period, last_normal)
    for k in (k_hi, k_hi - 1):
        if k < 1:
            break
        for when, _ in reversed(renewal(plan, p0, k)[0]):
            if when <= t:
                return when
    return p0


def life(plan: SubPlan, t: int) -> SubState:
    c = plan.created
    initial = {"free": "free", "trial": "trial"}.get(plan.kind, "awaitingPayment")
    if plan.kind == "free":
        return SubState(c, "free", 1, 1, None, c, c + 3650 * DAY)
    if plan.held:
        return SubState(c, initial, 1, 0, None, c, c + 3650 * DAY)
    if plan.paid_at is None:
        f = plan.fail_at
        inter = (f, "cancel", f, "Pagamento não confirmado", "system", initial) if f <= t else None
        when, status = state_at([(c, initial), (f, "canceled")], t)
        return SubState(when, status, 1, 0, inter, c, f)
    p0, period = plan.paid_at, plan.period
    end = plan.end or NEVER
    fin = plan.finite or NEVER
    ev: list[tuple[int, str]] = [(c, initial), (p0, "upToDate")]
    inter = None
    if fin == end == NEVER:  # renews for ever: access runs to a far horizon
        last_normal, last_issued, ends = NEVER, NEVER, p0 + 3650 * DAY
    elif fin <= end:
        last_normal, last_issued, ends = fin - 1, fin - 1, p0 + fin * period
        ev.append((ends, "finished"))
    else:
        last_normal = end - 1
        d_end = p0 + end * period
        before = terminal_before(plan, d_end)
        term = plan.terminal
        last_issued = end if term in ("default", "late", "defaulter") else end - 1
        ends = d_end
        if term == "cancel":
            ev.append((before, "canceled"))
            inter = (before, "cancel", d_end, "Cancelado pelo assinante", "client", "upToDate")
        elif term == "suspend":
            ev.append((before, "suspended"))
            inter = (before, "suspend", before, "Suspensa pelo produtor", "producer", "upToDate")
            ends = before
        else:
            ev.append((d_end + DAY, "late"))
            if term != "late":
                ev.append((d_end + 10 * DAY, "defaulter"))
            if term == "default":
                ends = d_end + 40 * DAY
                ev.append((ends, "canceled"))
                inter = (ends, "cancel", ends, "Inadimplência", "system", "defaulter")
    n_due = (t - p0) // period if t >= p0 else 0
    k_hi = min(n_due, last_normal)
    paid = 1 if t >= p0 else 0
    for k in (k_hi - 1, k_hi):
        if k >= 1:
            events, pay = renewal(plan, p0, k)
            ev += events
            if k == k_hi:
                paid += (k_hi - 1) + (pay <= t)
    ev.sort()
    when, status = state_at(ev, t)
    if inter is not None and inter[0] > t:
        inter = None
    issued = 1 + min(n_due, last_issued)
    return SubState(when, status, issued, paid, inter, p0 + min(n_due, last_issued) * period, ends)


class Subscriptions:
    def __init__(self, sales: Sales, people: People):
        self.sales = sales
        self.people = people
        self.cache = ScanCache(16)

    def count_at(self, t: int) -> int:
        n = self.sales.count_at(t)
        return (n - 3) // 5 + 1 if n >= 3 else 0

    def created(self, j: int) -> int:
        return self.sales.stream.created(5 * j + 2)

    def first_created_at_or_after(self, t: int, count: int) -> int:
        return bisect_left(range(count), t, key=self.created)

    def updated(self, j: int, t: int) -> int:
        return life(self.sales.plan(j), t).when

    def listing(
        self, start: int | None, end: int | None, by: Literal["creation", "update"], t: int
    ) -> RangeListing | KeyListing[int]:
        count = self.count_at(t)
        build = self._builder(t)
        if by == "creation":
            lo = 0 if start is None else self.first_created_at_or_after(start, count)
            hi = count if end is None else self.first_created_at_or_after(end + 1, count)
            return RangeListing(lo, hi - lo, build)

        def scan() -> array[int]:
            a, b = start if start is not None else -NEVER, end if end is not None else NEVER
            stop = (
                count if end is None else self.first_created_at_or_after(end + 1, count)
            )  # updated >= created
            plan = self.sales.plan
            hits = []
            for j in range(stop):
                w = last_change(plan(j), t)
                if a <= w <= b:
                    hits.append((w, j))
            hits.sort()
            return array("q", [j for _, j in hits])

        keys = self.cache.get(("update", start, end, t), scan)
        return KeyListing(keys, build)

    def _builder(self, t: int):
        return lambda j: self.record(j, t)

    def index_of(self, subscription_id_: str, t: int) -> int:
        if not (subscription_id_.isascii() and subscription_id_.isdigit()):
            raise WorldError(422, "validation_error", "subscription id must be numeric")
        j = int(subscription_id_) - SUBSCRIPTION_BASE
        if not 0 <= j < self.count_at(t):
            raise WorldError(404, "not_found", "subscription not found")
        return j

    def record(self, j: int, t: int) -> Record:
        plan = self.sales.plan(j)
        st = life(plan, t)
        # the first invoice's buyer, product and price (unless the plan changed it since), without
        # building that sale
        buyer = self.people.get(self.sales.buyer_of(5 * j + 2))
        product = self.sales.catalog.subscriptions[plan.product]
        price = 0 if plan.kind == "free" else price_at(plan, product.price_cents, t)
        p0 = plan.paid_at if plan.paid_at is not None else plan.created
        inter = None
        if st.interruption is not None and st.status in ("canceled", "suspended"):
            at, kind, remove, reason, origin, prev = st.interruption
            inter = {
                "createdAt": iso(at),
                "type": kind,
                "removeAccessDate": iso(remove),
                "reason": reason,
                "origin": origin,
                "responsible": buyer.name if origin == "client" else origin,
                "previousStatus": prev,
            }
        final = p0 + (plan.finite - 1) * plan.period if plan.finite else st.ends
        fee = product.price_cents if plan.j % 7 == 0 else 0
        return {
            "id": subscription_id(j),
            "createdAt": iso(plan.created),
            "updatedAt": iso(st.when),
            "status": st.status,
            "firstInvoiceId": self.sales.sale_id(5 * j + 2),
            "isFinite": plan.finite > 0,
            "isUnlimitedInstallments": plan.finite == 0,
            "hasNegotiation": plan.negotiated and st.paid >= 2,
            "interruption": inter,
            "recurrence": {
                "startsAt": iso(p0),
                "nextDueDate": iso(st.due + plan.period),
                "currentDueDate": iso(st.due),
                "finalDueDate": iso(final),
                "finishesAt": iso(st.ends),
                "frequency": {"type": plan.freq, "value": 1},
            },
            "charges": {
                "total": plan.finite or st.issued,
                "current": st.issued,
                "paid": st.paid,
                "pending": st.issued - st.paid,
                "negotiated": 1 if plan.negotiated and st.paid >= 2 else 0,
            },
            "products": [
                {
                    "id": product.id,
                    "title": product.name,
                    "hasMembershipFee": fee > 0,
                    "membershipFee": {"currency": "BRL", "value": fee / 100},
                    "deliveries": list(DELIVERIES[: 1 + plan.j % 3]),
                }
            ],
            "payment": {
                "price": {"currency": "BRL", "value": price / 100},
                "method": SUB_METHOD.get(DETAIL_METHOD[plan.detail], "unknown"),
                "installments": 1,
            },
            "client": {
                "name": buyer.name,
                "email": buyer.email,
                "phone": {
                    "countryCode": buyer.country_code,
                    "areaCode": buyer.area_code,
                    "number": buyer.number,
                },
            },
        }
