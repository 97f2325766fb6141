"""The plan of subscription j, drawn once from its own generator and cheap enough to scan 200k of.

Its first invoice is sale 5j + 2; the plan fixes that invoice's outcome too (sales.py reads it), so the
subscription and its first sale always agree. A plan is the whole life history in a few numbers:
period, finite charge count F, the renewal L at which it ends and how (cancel, suspend, default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .clock import DAY, MINUTE, SECOND
from .rng import Stream, Weighted, record_key, step

SUB_STATUS_PINS = (
    "upToDate",
    "awaitingPayment",
    "late",
    "canceled",
    "defaulter",
    "suspended",
    "trial",
    "finished",
    "free",
)
SUB_DETAIL_PINS = ("visaCreditCard", "bankslip", "pix", "paypal")
SUB_DETAIL_W = Weighted(
    [
        ("visaCreditCard", 35),
        ("mastercardCreditCard", 30),
        ("eloCreditCard", 5),
        ("pix", 12),
        ("bankslip", 12),
        ("paypal", 3),
        ("unknown", 3),
    ]
)
FREQ_W = Weighted([("monthly", 75), ("yearly", 12), ("weekly", 9), ("daily", 4)])
FREQ_DAYS = {"daily": 1, "weekly": 7, "monthly": 30, "yearly": 365}  # months are 30 days here
HAZARD = {"daily": 0.004, "weekly": 0.015, "monthly": 0.06, "yearly": 0.3}  # churn per period
LOG_SURVIVAL = {f: math.log(1.0 - h) for f, h in HAZARD.items()}
TERMINAL_W = Weighted([("cancel", 55), ("default", 30), ("suspend", 15)])
PAY_DELAY = {
    "card": (5 * SECOND, 5 * MINUTE),
    "pix": (MINUTE, 2 * 3600 * SECOND),
    "slip": (6 * 3600 * SECOND, 3 * DAY - 3600 * SECOND),
}
CLASS = {"pix": "pix", "bankslip": "slip"}
# Pinned plans: (terminal renewal L, terminal kind, finite charges F, held state)
PINNED = {
    "upToDate": (0, "", 0, ""),
    "awaitingPayment": (0, "", 0, "awaitingPayment"),
    "late": (1, "late", 0, ""),
    "canceled": (2, "cancel", 0, ""),
    "defaulter": (1, "defaulter", 0, ""),
    "suspended": (1, "suspend", 0, ""),
    "trial": (0, "", 0, "trial"),
    "finished": (0, "", 2, ""),
    "free": (0, "", 0, ""),
}


def pay_class(detail: str) -> str:
    if detail in ("pix", "automaticPix"):
        return "pix"
    if detail in ("bankslip", "cefBankslip"):
        return "slip"
    return "card"


@dataclass(slots=True)
class SubPlan:
    j: int
    created: int
    kind: str  # "free", "trial" or "paid"
    detail: str  # payment detail of the first invoice
    product: int  # index into the catalogue's subscription products
    held: str  # a pinned state held forever, or ""
    paid_at: int | None  # first charge paid (None: it failed at fail_at, or is held)
    fail_at: int
    freq: str
    period: int  # ms
    finite: int  # F charges in all (0: unlimited)
    end: int  # L: the renewal at which the plan ends (0: never)
    terminal: str  # "cancel", "suspend", "default"; pinned "late"/"defaulter" hold that state
    negotiated: bool
    rkey: int  # key of the per-renewal delay draws


INV16 = 1.0 / 65536


def make_plan(key: int, stream: Stream, j: int, n_products: int) -> SubPlan:
    # One mixed hash and two cheap steps, sliced into bit fields: a plan is built for every
    # subscription in an update scan, so it must cost a few microseconds.
    h1 = record_key(key, j)
    h2 = step(h1)
    h3 = step(h2)
    created = stream.created(5 * j + 2)
    pin = SUB_STATUS_PINS[j] if j < len(SUB_STATUS_PINS) else ""
    detail = SUB_DETAIL_PINS[j] if j < len(SUB_DETAIL_PINS) else SUB_DETAIL_W.table[h1 & 1023]
    u = ((h1 >> 16) & 0xFFFF) * INV16
    kind = "free" if u < 0.03 else "trial" if u < 0.11 else "paid"
    freq = FREQ_W.table[(h1 >> 32) & 1023]
    if pin:  # pinned plans reach their state within the history: weekly, yearly and daily among them
        kind = pin if pin in ("free", "trial") else "paid"
        freq = {0: "weekly", 2: "yearly", 5: "daily"}.get(j, "monthly")
    product = (h1 >> 48) % n_products
    finite = 3 + (h2 >> 16) % 10 if (h2 & 0xFFFF) * INV16 < 0.2 else 0
    # periods survived before the end: geometric with the frequency's churn hazard
    life = 1 + int(math.log(1.0 - ((h2 >> 32) & 0xFFFF) * INV16) / LOG_SURVIVAL[freq])
    terminal = TERMINAL_W.table[(h2 >> 48) & 1023]
    negotiated = (h3 & 0xFFFF) * INV16 < 0.05
    ok = ((h3 >> 16) & 0xFFFF) * INV16 < 0.93
    cls = pay_class(detail)
    lo, hi = PAY_DELAY[cls]
    delay = lo + int(((h3 >> 32) & 0xFFFF) * INV16 * (hi - lo))
    held = ""
    end = life
    if pin:
        end, terminal, finite, held = PINNED[pin]
        ok = True
    paid_at: int | None = None
    if kind == "free":
        paid_at, fail_at = created, created
    elif kind == "trial":
        fail_at = created + (7 if delay % 2 else 14) * DAY
        paid_at = fail_at if ok and held != "trial" else None
        if held == "trial":
            fail_at = 0
    else:
        fail_at = created + (
            5 * SECOND + (h3 >> 48) * 4 if cls == "card" else (1 if cls == "pix" else 3) * DAY
        )
        paid_at = created + delay if ok and held != "awaitingPayment" else None
        if held == "awaitingPayment":
            fail_at = 0
    period = FREQ_DAYS[freq] * DAY
    return SubPlan(
        j,
        created,
        kind,
        detail,
        product,
        held,
        paid_at,
        fail_at,
        freq,
        period,
        finite,
        end,
        terminal,
        negotiated,
        h3 ^ 0x5EED,
    )
