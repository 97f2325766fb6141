"""The sandbox's world: `SyntheticWorld(seed, scale)`, a deterministic simulation of one seller's data.

Every record is derived on demand from its index (a generator keyed by a stable hash of
(seed, entity, index), never Python's salted `hash()`), so a million-sale world starts in a fraction of a
second and memory stays flat; only small sets (products, events, courses, schools, communities) and
bounded LRU caches are held. Records are plain dicts shaped as spec part 2; treat them as read-only
(nested objects may be shared between answers).

Proportions (N = scale = sales created before the initial clock 2026-06-01T00:00:00Z; history starts
2024-06-01; every stream keeps arriving at its historical rate after the initial clock):

| entity | count | notes |
|---|---|---|
| sales | N | roles by index, see sales.py (subscription first invoices, ticket sales, order bumps) |
| products | max(12, N/200) | ticket products, then subscription products, then one-off products |
| campaigns / partners / affiliations | 0-4 / 0-3 / 1-5 per product | built on first use |
| subscriptions | N/5 | `firstInvoiceId` = sale 5j + 2 |
| fiscal documents | ~60% of paid, non-free sales | emitted 10 min - 2 days after payment |
| events | min(365, max(3, N/4000)) over the history (+2 ahead) | 2-4 tickets, 1-3 lots each |
| attendees | one per paid ticket sale (~N/10) | plus manual additions (in-memory overlay) |
| transfers | max(24, N/30) | |
| lesson comments | max(60, N/2) | over min(8, 3 + N/200000) courses of 5-12 lessons |
| communities | 3, each with max(120, N/200) posts and max(20, N/300) members | |
| schools | 2, each with max(5, N/2000) students and 3-5 deliveries | |
| webhook origins | 6 | |

Pins: the first records of each kind are pinned to one enum value each (sale status path, payment detail,
subscription status and method, attendee status, fiscal status, transfer status, product type, ...), so
even a 50-sale world shows every enum value of spec parts 2 and 3; a pinned transient state is held.

Life histories (the state at clock T applies the events <= T; `updatedAt`/`modifiedAt` = last event):
- sale: processing (cards) or waitingPayment (pix, slips) -> paid (card: seconds; pix: minutes; slip: up
  to 3 days) | expired at the due date | canceled | canceled -> recovering -> paid or canceled (recovering
  status active/canceled) | duplicated | open -> expired after 7 days | scheduled -> paid | negotiated;
  8% of paid sales ask a refund (70% within 7 days, the rest within 28; waitingRefund) settled within 2
  days (refunded; 25% partial).
- subscription (subplan.py, subscriptions.py): awaitingPayment/trial/free -> upToDate at the first payment;
  renewal k due at p0 + k * period (30-day months) is paid within minutes, or awaited (awaitingPayment, up
  to 2 days) or late (up to 8 days); at renewal L (geometric churn) it is cancelled by the client, suspended
  by the producer, or defaults (late, defaulter after 10 days, canceled after 40); finite plans finish.
- fiscal document: new -> processing -> processed -> approved -> fileGenerated over ~10 days (or
  pending -> waitingDocument..., or deleted); a refund after emission cancels it.
- attendee: paid -> confirmed -> presence_confirmed (check-in around the event start); refunded when its
  sale is; 2% locked.
- transfer: pending -> inQueue -> inProcess -> awaitingBankReturn -> confirmed (most), or through
  registeringInvoices/awaitingTransfer/inProgress, or failed, returnedMessage, canceled, blocked.
- lesson comment: inModeration -> approved/rejected within 3 days; read, answered, fixed, favourited at
  their own times. Community posts gain comments (and likes) over 14 days.

Money is computed in integer cents and served as `cents / 100` floats, whose shortest repr is exactly the
2-decimal amount (so JSON numbers are exact); gross = net + fee + partners + affiliates + companyXFee +
installmentSettlementFee + others to the cent. `python -m sandbox.world.measure` prints build speeds.
"""

from .api import Listing, Record, World, WorldError
from .world import SyntheticWorld

__all__ = ["Listing", "Record", "SyntheticWorld", "World", "WorldError"]
