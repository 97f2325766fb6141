"""`UnrulyWorld`: the synthetic world, plus moves that break the sync's rules (docs/contracts.md part 2).

Opt-in (`running_sandbox(unruly=True)`, `platform-sync sandbox --unruly`): the default world is not
touched. What differs is chosen in `unruly_plan.py` and applied here to the records the default world
builds, so filters and paging see the served values:

- `deleted_product`: a one-off product leaves the product list; its campaigns, partners and
  affiliations answer 404 (by product id) or leave the affiliation list.
- `deleted_affiliation`, `deleted_transfer`, `deleted_lesson_comment`: a record leaves its list.
- `late_chargeback`: a card sale paid 20-150 days before T0 turns `refunded` (`updatedAt` moves, a
  `refund` of the whole total); its fiscal document turns `canceled` (emission date unchanged).
- `late_slip`: a bank-slip sale that expired turns `paid` (`paidAt` = `updatedAt` = that moment).
- `future_updated_at`: a subscription's `updatedAt` jumps 14-35 days ahead of the clock and stays
  there until the clock catches up (its other fields move as before).
- `renewal_before_update`: a renewal moves `charges.current`/`total`/`pending` and `recurrence` at its
  due date, while `updatedAt`, `status`, `charges.paid` and the price wait for the payment 1-3 days on.
- `offset_timestamps`: 5% of products, affiliations, subscriptions and sales write their timestamps with
  `-03:00` (same instant).

None of these moves is announced by webhook.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from .api import Listing, Record, WorldError
from .clock import DAY, iso
from .finance import FISCAL_BASE
from .listing import KeyListing, RecordListing, ScanCache
from .sales import SALE_BASE
from .subscription_ids import SUBSCRIPTION_BASE
from .subscriptions import NEVER, last_change
from .unruly_plan import UnrulyPlan, offset_iso
from .world import SyntheticWorld, _ms_ceil, _ms_floor

CHARGEBACK_MOTIVE = "Chargeback: compra contestada pelo titular do cartão"
TIME_FIELDS = {
    "products": ("createdAt", "updatedAt"),
    "affiliations": ("requestedAt", "approvedAt", "updatedAt", "createdAt"),
    "subscriptions": ("createdAt", "updatedAt"),
    "sales": ("createdAt", "updatedAt", "paidAt", "dueDate"),
}


class MappedListing:
    """Another listing's pages, each record passed through `serve`."""

    def __init__(self, base: Listing, serve: Callable[[Record], Record]):
        self.base = base
        self.serve = serve

    def __len__(self) -> int:
        return len(self.base)

    def page(self, offset: int, limit: int) -> list[Record]:
        return [self.serve(r) for r in self.base.page(offset, limit)]


def _all(listing: Listing) -> list[Record]:
    return listing.page(0, len(listing))


class UnrulyWorld(SyntheticWorld):
    """The same world as `SyntheticWorld(seed, scale)`, with the moves of the module docstring."""

    def __init__(self, seed: int = 1, scale: int = 1000):
        super().__init__(seed, scale)
        self.unruly = UnrulyPlan(self)
        self.filtered = ScanCache(32)

    # -- helpers -----------------------------------------------------------------------------------
    def _gone(self, deleted: dict[Any, int], key: Any) -> bool:
        at = deleted.get(key)
        return at is not None and at <= self.now

    def _noted(self, kind: str, record: Record) -> Record:
        """The record with its timestamps in `-03:00` if it is one of the offset ones."""
        if not self.unruly.offset(kind, int(record["id"])):
            return record
        out = dict(record)
        for name in TIME_FIELDS[kind]:
            if isinstance(out.get(name), str):
                out[name] = offset_iso(out[name])
        return out

    def _kept(
        self, query: tuple[Any, ...], listing: Callable[[], Listing], keep: Callable[[Record], bool]
    ) -> Listing:
        """The records of a listing that `keep` keeps (built once per query and clock)."""
        records = self.filtered.get((*query, self.now), lambda: [r for r in _all(listing()) if keep(r)])
        return RecordListing(records)

    # -- store: deletions and notation -------------------------------------------------------------
    def catalog(self) -> dict[str, Any]:
        out = super().catalog()
        out["products"] = [
            p for p in out["products"] if not self._gone(self.unruly.deleted_products, p["id"])
        ]
        return out

    def _product(self, product_id: str) -> Any:
        if self._gone(self.unruly.deleted_products, product_id):
            raise WorldError(404, "not_found", f"product {product_id} not found")
        return super()._product(product_id)

    def products(self) -> Listing:
        deleted = self.unruly.deleted_products
        return RecordListing(
            [
                self._noted("products", p.record)
                for p in self.catalog_.products
                if not self._gone(deleted, p.id)
            ]
        )

    def affiliations(self, product_ids: Sequence[str] | None) -> Listing:
        base = super().affiliations(product_ids)  # 404 on a deleted product id
        plan = self.unruly
        return RecordListing(
            [
                self._noted("affiliations", a)
                for a in _all(base)
                if not self._gone(plan.deleted_products, a["product"]["id"])
                and not self._gone(plan.deleted_affiliations, a["id"])
            ]
        )

    def transfers(self) -> Listing:
        deleted = self.unruly.deleted_transfers
        return self._kept(("transfers",), super().transfers, lambda r: not self._gone(deleted, r["id"]))

    def lesson_comments(
        self,
        course_id: int | None = None,
        lesson_id: int | None = None,
        status: str | None = None,
        favorite: bool | None = None,
        answered: bool | None = None,
        read: bool | None = None,
        fixed: bool | None = None,
        email: str | None = None,
    ) -> Listing:
        args = (course_id, lesson_id, status, favorite, answered, read, fixed, email)
        deleted = self.unruly.deleted_comments
        return self._kept(
            ("comments", *args),
            lambda: super(UnrulyWorld, self).lesson_comments(*args),
            lambda r: not self._gone(deleted, r["id"]),
        )

    # -- sales and fiscal documents ----------------------------------------------------------------
    def sale(self, sale_id: str) -> Record:
        return self._sale(super().sale(sale_id))

    def _sale(self, record: Record) -> Record:
        i, t = int(record["id"]) - SALE_BASE, self.now
        charged = self.unruly.chargebacks.get(i)
        if charged is not None and charged <= t:
            when = iso(charged)
            record = {
                **record,
                "status": "refunded",
                "updatedAt": when,
                "refund": {
                    "type": "common",
                    "value": record["total"],
                    "partialValue": {"currency": "BRL", "value": 0.0},
                    "refundedAt": when,
                    "requestedAt": when,
                    "motive": CHARGEBACK_MOTIVE,
                    "requesterName": None,
                },
            }
        paid = self.unruly.late_slips.get(i)
        if paid is not None and paid <= t:
            when = iso(paid)
            record = {
                **record,
                "status": "paid",
                "recoveringStatus": "inactive",
                "updatedAt": when,
                "paidAt": when,
                "creditDate": iso(paid + 2 * DAY),
            }
        return self._noted("sales", record)

    def fiscal_documents(
        self,
        start: datetime,
        end: datetime,
        status: str | None = None,
        name: str | None = None,
        email: str | None = None,
        sale_id: str | None = None,
        product_id: str | None = None,
        document_id: str | None = None,
    ) -> Listing:
        def base() -> Listing:
            return super(UnrulyWorld, self).fiscal_documents(
                start, end, None, name, email, sale_id, product_id, document_id
            )

        if status is None:
            return MappedListing(base(), self._fiscal)
        query = ("fiscal", start, end, status, name, email, sale_id, product_id, document_id)
        records = self.filtered.get(
            (*query, self.now),
            lambda: [d for d in map(self._fiscal, _all(base())) if d["document"]["status"] == status],
        )
        return RecordListing(records)

    def _fiscal(self, record: Record) -> Record:
        charged = self.unruly.chargebacks.get(int(record["document"]["id"]) - FISCAL_BASE)
        if charged is None or charged > self.now:
            return record
        return {**record, "document": {**record["document"], "status": "canceled"}}

    # -- subscriptions -----------------------------------------------------------------------------
    def _special(self, j: int) -> bool:
        return j in self.unruly.late_renewals or j in self.unruly.future_subscriptions

    def sub_updated(self, j: int, t: int) -> int:
        """The served `updatedAt` (ms) of subscription j at t."""
        p = self.sales.plan(j)
        when = last_change(p, t)
        due = self.unruly.renewal_due(j, p, t)
        if due is not None:
            when = self.sub_updated(j, due[0] - 1) if t < due[1] else max(when, due[1])
        future = self.unruly.future_subscriptions.get(j)
        if future is not None and future[0] <= t:
            when = max(when, future[1])
        return when

    def _subscription(self, j: int, t: int) -> Record:
        if not self._special(j):
            return self._noted("subscriptions", self.subs.record(j, t))
        record = self.subs.record(j, t)
        due = self.unruly.renewal_due(j, self.sales.plan(j), t)
        if due is not None and t < due[1]:  # renewed (due dates, charges) but not yet paid
            before = self.subs.record(j, due[0] - 1)
            charges = record["charges"]
            record = {
                **before,
                "recurrence": record["recurrence"],
                "charges": {
                    **before["charges"],
                    "total": charges["total"],
                    "current": charges["current"],
                    "pending": charges["current"] - before["charges"]["paid"],
                },
            }
        record = {**record, "updatedAt": iso(self.sub_updated(j, t))}
        return self._noted("subscriptions", record)

    def subscription(self, subscription_id: str) -> Record:
        j = self.subs.index_of(subscription_id, self.now)
        return self._subscription(j, self.now)

    def subscriptions(
        self, start: datetime | None, end: datetime | None, filter_by: Literal["creation", "update"]
    ) -> Listing:
        t = self.now
        if filter_by != "update":
            base = super().subscriptions(start, end, filter_by)
            return MappedListing(base, lambda r: self._subscription(int(r["id"]) - SUBSCRIPTION_BASE, t))
        lo = _ms_ceil(start) if start is not None else -NEVER
        hi = _ms_floor(end) if end is not None else NEVER
        return KeyListing(
            self.filtered.get(("subscriptions", lo, hi, t), lambda: self._updated_scan(lo, hi, t)),
            lambda j: self._subscription(j, t),
        )

    def _updated_scan(self, lo: int, hi: int, t: int) -> array[int]:
        """Subscriptions whose served `updatedAt` is in [lo, hi], by (`updatedAt`, id)."""
        plan = self.sales.plan
        hits = []
        for j in range(self.subs.count_at(t)):
            when = self.sub_updated(j, t) if self._special(j) else last_change(plan(j), t)
            if lo <= when <= hi:
                hits.append((when, j))
        hits.sort()
        return array("q", [j for _, j in hits])


if TYPE_CHECKING:
    from .api import World

    _conforms: World = UnrulyWorld()
