"""Sales: who buys what, when, and the life of each invoice (created -> paid/expired/... -> refunds).

Sale i is created at `stream.created(i)` (N sales over the two years of history, then the same rate
on). Its role comes from its index, so other entities can point at sales by arithmetic:
i % 5 == 2 is the first invoice of subscription i // 5; i % 10 == 6 a ticket sale (one attendee);
i % 10 in (3, 8) may be a main sale whose order bump is i + 1; the rest are one-off sales.
The first few one-off sales are pinned to one status path each (and to one payment detail each) so
that even a 50-sale world shows every status, method and detail; pinned transient states are held.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from .clock import DAY, H0, HOUR, MINUTE, SECOND, T0
from .products import Catalog, ProductInfo
from .rng import Rng, Stream, Weighted, entity_key, record_key, unit_hash
from .subplan import SubPlan, make_plan

if TYPE_CHECKING:
    from .events import Events

SALE_BASE = 100_000_000
REGULAR, MAIN, BUMP, SUB, TICKET = range(5)

DETAIL_METHOD = {
    **{
        d: "creditCard"
        for d in (
            "creditCard",
            "amexCreditCard",
            "dinersCreditCard",
            "discoverCreditCard",
            "eloCreditCard",
            "hipercardCreditCard",
            "hiperCreditCard",
            "jcbCreditCard",
            "mastercardCreditCard",
            "unionpayCreditCard",
            "visaCreditCard",
            "pagdividido",
            "multipleCards",
        )
    },
    "bankslip": "bankslip",
    "cefBankslip": "bankslip",
    "pix": "pix",
    "automaticPix": "pix",
    "combinedPayment": "combinedPayment",
    "installmentBankslip": "installmentBankslip",
    "paypal": "eWallet",
    "platformBalance": "platformBalance",
    "unknown": "unknown",
}
DETAILS = tuple(DETAIL_METHOD)
DETAIL_W = Weighted(
    [
        ("visaCreditCard", 20),
        ("mastercardCreditCard", 18),
        ("eloCreditCard", 6),
        ("creditCard", 3),
        ("amexCreditCard", 2),
        ("hipercardCreditCard", 1.5),
        ("hiperCreditCard", 0.5),
        ("dinersCreditCard", 0.5),
        ("discoverCreditCard", 0.3),
        ("jcbCreditCard", 0.3),
        ("unionpayCreditCard", 0.2),
        ("multipleCards", 1.5),
        ("pagdividido", 0.5),
        ("pix", 23),
        ("automaticPix", 2),
        ("bankslip", 10),
        ("cefBankslip", 2),
        ("installmentBankslip", 2),
        ("combinedPayment", 1),
        ("paypal", 1.5),
        ("platformBalance", 1),
        ("unknown", 0.5),
    ]
)
# Payment method class -> (how it starts, delay to payment in ms (lo, hi), days to the due date)
CLASS_OF = {"bankslip": "slip", "installmentBankslip": "islip", "pix": "pix"}
START = {"card": "processing", "pix": "waitingPayment", "slip": "waitingPayment", "islip": "waitingPayment"}
PAY_DELAY = {
    "card": (5 * SECOND, 5 * MINUTE),
    "pix": (MINUTE, 2 * HOUR),
    "slip": (6 * HOUR, 3 * DAY - HOUR),
    "islip": (6 * HOUR, 3 * DAY - HOUR),
}
DUE_DAYS = {"card": 0, "pix": 1, "slip": 3, "islip": 3}
PATHS = {
    "card": Weighted(
        [
            ("PAID", 82),
            ("CANCELED", 9),
            ("RECOVERING_OK", 4),
            ("RECOVERING_FAIL", 2),
            ("DUPLICATED", 1),
            ("OPEN", 2),
        ]
    ),
    "pix": Weighted([("PAID", 80), ("EXPIRED", 15), ("DUPLICATED", 1), ("OPEN", 2), ("SCHEDULED", 2)]),
    "slip": Weighted([("PAID", 65), ("EXPIRED", 30), ("OPEN", 3), ("DUPLICATED", 2)]),
    "islip": Weighted([("PAID", 50), ("NEGOTIATED", 30), ("EXPIRED", 20)]),
}
# (path, refund, held state): one per sale status, recovering outcome and refund type.
STATUS_PINS = (
    ("PAID", None, None),
    ("PAID", "common", None),
    ("PAID", "partial", None),
    ("EXPIRED", None, None),
    ("CANCELED", None, None),
    ("RECOVERING_OK", None, "recovering"),
    ("RECOVERING_FAIL", None, None),
    ("OPEN", None, "open"),
    ("PAID", None, "processing"),
    ("PAID", None, "waitingPayment"),
    ("PAID", "common", "waitingRefund"),
    ("DUPLICATED", None, None),
    ("SCHEDULED", None, "scheduled"),
    ("NEGOTIATED", None, None),
)
ATTENDEE_PINS = ("paid", "confirmed", "presence_confirmed", "refunded", "locked")
# An upper bound of (payment date - creation date) over all paths, used to bound scans.
MAX_PAY_DELAY = 15 * DAY

Event3 = tuple[int, str, str]  # (time, status, recoveringStatus)


@dataclass(slots=True)
class SaleCore:
    i: int
    created: int
    role: int
    product: ProductInfo
    detail: str
    buyer: int  # person id
    events: list[Event3]
    due: int
    paid_at: int | None  # when it is paid (possibly in the future); None if never
    refund_req: int | None
    refund_at: int | None
    refund_partial: bool
    price: int  # unit price in cents (the product's unless a lot, an open price or a free plan says else)
    ticket: tuple[int, int, int] | None = None  # (event number, ticket number, lot number)
    sub_kind: str = ""  # "free", "trial" or "paid" for a subscription's first invoice

    @property
    def method(self) -> str:
        return DETAIL_METHOD[self.detail]


class Sales:
    def __init__(self, seed: int, scale: int, catalog: Catalog, events: Events):
        self.stream = Stream(seed, "sale", H0, T0, scale)
        self.catalog = catalog
        self.events = events
        self.pool = max(300, scale // 2)
        self.key = entity_key(seed, "sale")
        self.bump_key = entity_key(seed, "sale.bump")
        self.status_pins, self.detail_pins = self._pins()
        self.sub_key = entity_key(seed, "subscription")
        self.core = lru_cache(maxsize=8192)(self._core)
        self._count = (-1, 0)

    def plan(self, j: int) -> SubPlan:
        """The plan of subscription j (whose first invoice is sale 5j + 2)."""
        return make_plan(self.sub_key, self.stream, j, len(self.catalog.subscriptions))

    # -- roles -----------------------------------------------------------------------------------
    def is_main(self, i: int) -> bool:
        return i % 5 == 3 and (i == 3 or unit_hash(self.bump_key, i) < 0.25)

    def role(self, i: int) -> int:
        r = i % 10
        if r in (2, 7):
            return SUB
        if r == 6:
            return TICKET
        if r in (3, 8):
            return MAIN if self.is_main(i) else REGULAR
        if r in (4, 9) and self.is_main(i - 1):
            return BUMP
        return REGULAR

    def _pins(self) -> tuple[dict[int, tuple[str, str | None, str | None]], dict[int, str]]:
        status: dict[int, tuple[str, str | None, str | None]] = {}
        detail: dict[int, str] = {}
        i = 0
        while len(status) < len(STATUS_PINS) or len(detail) < len(DETAILS):
            role = self.role(i)
            if role == REGULAR and len(status) < len(STATUS_PINS):
                status[i] = STATUS_PINS[len(status)]
            if role in (REGULAR, MAIN) and len(detail) < len(DETAILS):
                detail[i] = DETAILS[len(detail)]
            i += 1
        return status, detail

    def sale_id(self, i: int) -> str:
        return str(SALE_BASE + i)

    def index_of(self, sale_id: str, t: int) -> int | None:
        """The index of a sale id visible at t, or None."""
        if not (sale_id.isascii() and sale_id.isdigit()):
            return None
        i = int(sale_id) - SALE_BASE
        return i if 0 <= i < self.count_at(t) else None

    def created(self, i: int) -> int:
        return self.core(i).created if self.role(i) == BUMP else self.stream.created(i)

    def count_at(self, t: int) -> int:
        """Sales created at or before t (a prefix of the indices: creation is monotone).

        An order bump is created one second after its main sale rather than in its own slot, so the
        stream's count is corrected at the boundary.
        """
        if self._count[0] == t:  # every sale lookup asks at the same clock: remember the last answer
            return self._count[1]
        n = self.stream.count_at(t)
        if self.role(n) == BUMP and self.core(n).created <= t:
            n += 1
        elif n > 0 and self.role(n - 1) == BUMP and self.core(n - 1).created > t:
            n -= 1
        self._count = (t, n)
        return n

    def buyer_of(self, i: int) -> int:
        """The buyer of sale i, cheaply: the first draw of its generator (a bump has its main's buyer)."""
        if self.role(i) == BUMP:
            i -= 1
        return 1 + Rng(record_key(self.key, i)).below(self.pool)

    # -- life ------------------------------------------------------------------------------------
    def _core(self, i: int) -> SaleCore:
        role = self.role(i)
        if role == BUMP:
            return self._bump(i)
        rng = Rng(record_key(self.key, i))
        c = self.stream.created(i)
        buyer = 1 + rng.below(self.pool)
        ticket = None
        refund: str | None = "maybe"
        held: str | None = None
        if role == SUB:
            return self._first_invoice(i, c, buyer, self.plan(i // 5))
        if role == TICKET:
            product, ticket, price = self.events.pick_for_sale(c, rng)
            detail = DETAIL_W.draw(rng.r())
            n = i // 10
            pin = ATTENDEE_PINS[n] if n < len(ATTENDEE_PINS) else None
            path = "PAID" if pin or rng.chance(0.88) else "FAIL"
            if pin:
                refund = "common" if pin == "refunded" else None
        else:
            product = rng.pick(self.catalog.singles)
            detail = self.detail_pins.get(i) or DETAIL_W.draw(rng.r())
            price = rng.between(1000, 50000) if product.payment_type == "open" else product.price_cents
            spin = self.status_pins.get(i)
            cls = CLASS_OF.get(DETAIL_METHOD[detail], "card")
            path, refund, held = spin if spin else (PATHS[cls].draw(rng.r()), "maybe", None)
        core = SaleCore(i, c, role, product, detail, buyer, [], c, None, None, None, False, price, ticket)
        self._life(core, path, refund, held, rng)
        return core

    def _life(self, core: SaleCore, path: str, refund: str | None, held: str | None, rng: Rng) -> None:
        """Fill in the events of a one-off or ticket sale from its path (see STATUS_PINS for paths)."""
        c, detail, price = core.created, core.detail, core.price
        cls = CLASS_OF.get(DETAIL_METHOD[detail], "card")
        if path == "FAIL":
            path = "CANCELED" if cls == "card" else "EXPIRED"
        due = c + DUE_DAYS[cls] * DAY
        ev: list[Event3] = [(c, START[cls], "inactive")]
        paid: int | None = None
        lo, hi = PAY_DELAY[cls]
        if path == "PAID":
            paid = c + rng.between(lo, hi)
        elif path == "EXPIRED":
            due = max(due, c + DAY)
            ev.append((due, "expired", "inactive"))
        elif path == "OPEN":
            ev = [(c, "open", "inactive"), (c + 7 * DAY, "expired", "inactive")]
        elif path == "CANCELED":
            ev.append((c + rng.between(5 * SECOND, 5 * MINUTE), "canceled", "inactive"))
        elif path in ("RECOVERING_OK", "RECOVERING_FAIL"):
            t1 = c + rng.between(5 * SECOND, 5 * MINUTE)
            t2 = t1 + rng.between(10 * MINUTE, 2 * HOUR)
            ev += [(t1, "canceled", "inactive"), (t2, "recovering", "active")]
            if path == "RECOVERING_OK":
                paid = t2 + rng.between(HOUR, 5 * DAY)
            else:
                ev.append((t2 + 7 * DAY, "canceled", "canceled"))
        elif path == "DUPLICATED":
            ev.append((c + rng.between(MINUTE, HOUR), "duplicated", "inactive"))
        elif path == "SCHEDULED":
            ev = [(c, "scheduled", "inactive")]
            paid = due = c + rng.between(DAY, 10 * DAY)
        elif path == "NEGOTIATED":
            ev.append((c + rng.between(DAY, 5 * DAY), "negotiated", "inactive"))
        req = done = None
        partial = False
        if paid is not None:
            ev.append((paid, "paid", "inactive"))
            if refund == "maybe":
                refund = (
                    None
                    if price == 0 or not rng.chance(0.08)
                    else "partial"
                    if rng.chance(0.25)
                    else "common"
                )
            if refund in ("common", "partial"):
                # most refunds come within the 7-day withdrawal right, the rest within the guarantee
                late = rng.chance(0.3)
                req = paid + (rng.between(7 * DAY, 28 * DAY) if late else rng.between(HOUR, 7 * DAY))
                done = req + rng.between(HOUR, 2 * DAY)
                partial = refund == "partial"
                ev += [(req, "waitingRefund", "inactive"), (done, "refunded", "inactive")]
        if held is not None:
            # A pinned transient state is held forever: cut the history where it is entered.
            k = next((n for n, e in enumerate(ev) if e[1] == held), None)
            ev = ev[: k + 1] if k is not None else [(c, held, "inactive")]
            if held != "waitingRefund":
                paid = None
            if done is not None and all(e[1] != "refunded" for e in ev):
                done = None
        core.events, core.due, core.paid_at = ev, due, paid
        core.refund_req, core.refund_at, core.refund_partial = req, done, partial

    def _first_invoice(self, i: int, c: int, buyer: int, plan: SubPlan) -> SaleCore:
        """A subscription's first invoice follows the subscription's plan (no refunds: plans cancel)."""
        product = self.catalog.subscriptions[plan.product]
        cls = CLASS_OF.get(DETAIL_METHOD[plan.detail], "card")
        price = 0 if plan.kind == "free" else product.price_cents
        if plan.kind == "free":
            ev: list[Event3] = [(c, "paid", "inactive")]
        elif plan.kind == "trial":
            ev = [(c, "scheduled", "inactive")]
        else:
            ev = [(c, START[cls], "inactive")]
        due = c + DUE_DAYS[cls] * DAY
        if plan.held:
            ev = [(c, "waitingPayment" if plan.held == "awaitingPayment" else "scheduled", "inactive")]
        elif plan.paid_at is not None and plan.kind != "free":
            ev.append((plan.paid_at, "paid", "inactive"))
        elif plan.paid_at is None:
            failed = "canceled" if cls == "card" or plan.kind == "trial" else "expired"
            ev.append((plan.fail_at, failed, "inactive"))
        if plan.kind == "trial":
            due = plan.fail_at or plan.paid_at or c
        return SaleCore(
            i,
            c,
            SUB,
            product,
            plan.detail,
            buyer,
            ev,
            due,
            plan.paid_at,
            None,
            None,
            False,
            price,
            None,
            plan.kind,
        )

    def _bump(self, i: int) -> SaleCore:
        """An order bump shares the main sale's buyer, payment and life; only product and price differ."""
        main = self.core(i - 1)
        rng = Rng(record_key(self.key, i))
        product = rng.pick(self.catalog.singles[: max(3, len(self.catalog.singles) // 2)])
        created = min(main.created + SECOND, self.stream.base(i + 1) - 1)
        created = max(created, self.stream.created(i - 1))
        ev = [(created, main.events[0][1], main.events[0][2])] + main.events[1:]
        price = product.price_cents if product.payment_type != "open" else 1990
        return SaleCore(
            i,
            created,
            BUMP,
            product,
            main.detail,
            main.buyer,
            ev,
            main.due,
            main.paid_at,
            main.refund_req,
            main.refund_at,
            main.refund_partial,
            price,
        )
