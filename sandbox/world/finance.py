"""Buyer fiscal documents (one for ~60% of paid sales) and transfers (withdrawals, ~N/30).

A fiscal document is emitted 10 minutes to 2 days after its sale is paid and then moves over the next
~10 days: new -> processing -> processed -> approved -> fileGenerated (most), or through
pending -> waitingDocument, or deleted; a refund after emission cancels it (a refund before emission
means no document). Its id is derived from the sale index, so the list is in sale order and an
emission-date range maps to a bounded range of sales (emission - creation <= MAX_LAG).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

from .api import Record
from .clock import DAY, H0, HOUR, MINUTE, T0, iso, iso_date
from .listing import KeyListing, RangeListing, ScanCache
from .people import People, Person
from .rng import Rng, Stream, Weighted, entity_key, record_key, unit_hash
from .sale_record import SaleRecords, money
from .sales import MAX_PAY_DELAY, Sales
from .timeline import state_at

FISCAL_BASE = 300_000_000
TRANSFER_BASE = 400_000_000
MAX_LAG = MAX_PAY_DELAY + 2 * DAY
FISCAL_STATUSES = (
    "new",
    "pending",
    "waitingDocument",
    "canceled",
    "processed",
    "approved",
    "fileGenerated",
    "processing",
    "deleted",
)
FISCAL_PATHS = Weighted(
    [
        (("processing", "processed", "approved", "fileGenerated"), 85),
        (("pending", "waitingDocument", "processing", "approved"), 8),
        (("pending", "waitingDocument"), 5),
        (("deleted",), 2),
    ]
)
TRANSFER_STATUSES = (
    "confirmed",
    "canceled",
    "returnedMessage",
    "pending",
    "awaitingBankReturn",
    "inProgress",
    "blocked",
    "awaitingTransfer",
    "inProcess",
    "inQueue",
    "failed",
    "registeringInvoices",
)
TRANSFER_PATHS = Weighted(
    [
        (("inQueue", "inProcess", "awaitingBankReturn", "confirmed"), 70),
        (("registeringInvoices", "awaitingTransfer", "inProgress", "confirmed"), 10),
        (("inProgress", "failed"), 5),
        (("inProcess", "awaitingBankReturn", "returnedMessage"), 4),
        (("canceled",), 6),
        (("blocked",), 5),
    ]
)
TERMINAL = {"confirmed", "failed", "returnedMessage", "canceled"}
TRANSFER_DETAILS = {
    "failed": "Conta de destino inválida",
    "returnedMessage": "Devolvido pelo banco: conta encerrada",
    "blocked": "Bloqueado para análise de segurança",
}
TAXATION = {
    "nbs": {"code": "1.1506.00.00", "description": "Serviços de educação a distância"},
    "taxClassification": {"code": "01", "description": "Tributação no município"},
    "operationIndicator": {"code": "1", "description": "Prestação de serviço"},
}


class FiscalDocuments:
    def __init__(self, seed: int, sales: Sales, records: SaleRecords, people: People, producer: Person):
        self.sales = sales
        self.records = records
        self.people = people
        self.producer = producer
        self.key = entity_key(seed, "fiscal")
        self.cache = ScanCache(32)
        self.pins = self._pins()

    def _pins(self) -> dict[int, str]:
        """The first sales that would carry a document are pinned, one per status (held)."""
        pins: dict[int, str] = {}
        i = 0
        while len(pins) < len(FISCAL_STATUSES) and i < 10_000:
            core = self.sales.core(i)
            if core.paid_at is not None and core.price > 0 and core.refund_req is None:
                pins[i] = FISCAL_STATUSES[len(pins)]
            i += 1
        return pins

    def life(self, i: int) -> list[tuple[int, str]] | None:
        """The document of sale i as (time, status) events (first: emission), or None if it has none."""
        pin = self.pins.get(i)
        if pin is None and unit_hash(self.key, i) >= 0.6:
            return None
        core = self.sales.core(i)
        if core.paid_at is None or core.price == 0:
            return None
        rng = Rng(record_key(self.key, i))
        e = core.paid_at + rng.between(10 * MINUTE, 2 * DAY)
        if core.refund_at is not None and core.refund_at <= e:
            return None
        ev = [(e, "new")]
        t = e
        steps = FISCAL_PATHS.draw(rng.r())
        if pin is not None:
            steps = ("pending", "waitingDocument") if pin in ("pending", "waitingDocument") else (pin,)
        for status in steps:
            t += rng.between(HOUR, 2 * DAY)
            ev.append((t, status))
        if pin is not None:
            ev = ev[: next(n for n, s in enumerate(ev) if s[1] == pin) + 1]
        elif core.refund_at is not None:
            ev = [x for x in ev if x[0] < core.refund_at] + [(core.refund_at, "canceled")]
        return ev

    def listing(
        self,
        t: int,
        start: int,
        end: int,
        status: str | None,
        name: str | None,
        email: str | None,
        sale_id: str | None,
        product_id: str | None,
        document_id: str | None,
    ) -> KeyListing[int]:
        query = ("fiscal", t, start, end, status, name, email, sale_id, product_id, document_id)
        return KeyListing(self.cache.get(query, lambda: self._scan(*query[1:])), lambda i: self.record(i, t))

    def _scan(
        self,
        t: int,
        start: int,
        end: int,
        status: str | None,
        name: str | None,
        email: str | None,
        sale_id: str | None,
        product_id: str | None,
        document_id: str | None,
    ) -> array[int]:
        end = min(end, t)
        count = self.sales.count_at(min(end, t))
        candidates: range | list[int] = range(self.sales.stream.first_at_or_after(start - MAX_LAG), count)
        for given, base in ((sale_id, self.sales.sale_id(0)), (document_id, str(FISCAL_BASE))):
            if given is not None:
                i = int(given) - int(base) if given.isascii() and given.isdigit() else -1
                candidates = [i] if i in candidates else []
        name_l, email_l = (name or "").casefold(), (email or "").casefold()
        out = array("q")
        for i in candidates:
            ev = self.life(i)
            if ev is None or not start <= ev[0][0] <= end:
                continue
            if status is not None and state_at(ev, t)[1] != status:
                continue
            if product_id is not None and self.sales.core(i).product.id != product_id:
                continue
            if name or email:
                buyer = self.people.get(self.sales.core(i).buyer)
                if name and name_l not in buyer.name.casefold():
                    continue
                if email and email_l != buyer.email.casefold():
                    continue
            out.append(i)
        return out

    def record(self, i: int, t: int) -> Record:
        ev = self.life(i)
        assert ev is not None
        core = self.sales.core(i)
        m = self.records.money(i)
        buyer = self.people.get(core.buyer)
        pr = self.producer
        processing = next((w for w, s in ev if s == "processing" and w <= t), ev[0][0])
        assert core.paid_at is not None
        return {
            "document": {
                "id": str(FISCAL_BASE + i),
                "name": f"NFS-e {i + 1:09d}",
                "status": state_at(ev, t)[1],
                "type": "NFS-e",
                "baseValue": money(m.total),
                "emissionDate": iso(ev[0][0]),
                "referenceDate": iso(core.paid_at // DAY * DAY),
                "processingDate": iso(processing),
                "taxation": TAXATION,
            },
            "source": {
                "taxType": None,
                "companyName": f"{pr.name} Educação Ltda",
                "document": "12345678000195",
                "ie": "ISENTO",
                "im": None,
                "email": pr.email,
                "tel": None,
                "tel2": "",
                "cell": pr.phone,
                "address": {
                    "street": pr.street,
                    "number": pr.street_number,
                    "complement": pr.complement or "",
                    "district": pr.district,
                    "zipCode": pr.zip_code,
                    "city": pr.city,
                    "uf": pr.state,
                },
            },
            "destination": {
                "companyName": buyer.name,
                "taxType": "F",
                "taxId": buyer.document,
                "ie": "ISENTO",
                "im": None,
                "email": buyer.email,
                "tel": None,
                "tel2": None,
                "cell": buyer.phone,
                "address": {
                    "zipCode": buyer.zip_code,
                    "street": buyer.street,
                    "number": buyer.street_number,
                    "complement": buyer.complement,
                    "district": buyer.district,
                    "countryForeign": None,
                    "city": buyer.city,
                    "uf": buyer.state,
                    "country": "Brasil",
                },
            },
            "sale": {"id": self.sales.sale_id(i), "paymentDate": iso(core.paid_at), "total": money(m.total)},
            "client": {
                "id": buyer.id,
                "name": buyer.name,
                "document": buyer.document,
                "email": buyer.email,
                "cellphone": buyer.phone,
                "telephone": None,
                "telephone2": None,
                "address": {
                    "zipCode": buyer.zip_code,
                    "street": buyer.street,
                    "number": buyer.street_number,
                    "complement": buyer.complement,
                    "neighborhood": buyer.district,
                    "city": buyer.city,
                    "state": buyer.state,
                },
            },
            "product": {"id": core.product.id, "title": core.product.name},
            "generatedByNewSystem": core.created >= H0 + 365 * DAY,
        }


class Transfers:
    """Withdrawals to the producer's bank account; the first 12 hold one status each."""

    def __init__(self, seed: int, scale: int):
        self.stream = Stream(seed, "transfer", H0, T0, max(24, scale // 30))
        self.key = entity_key(seed, "transfer")

    def life(self, k: int, rng: Rng) -> list[tuple[int, str]]:
        c = self.stream.created(k)
        steps = TRANSFER_PATHS.draw(rng.r())
        if k < len(TRANSFER_STATUSES):
            pin = TRANSFER_STATUSES[k]
            found = next((p for p in TRANSFER_PATHS.values if pin in p), (pin,))
            steps = found[: found.index(pin) + 1] if pin != "pending" else ()
        ev = [(c, "pending")]
        t = c
        for status in steps:
            t += rng.between(10 * MINUTE, DAY)
            ev.append((t, status))
        return ev

    def listing(self, t: int) -> RangeListing:
        build: Callable[[int], Record] = lambda k: self.record(k, t)  # noqa: E731 - a closure over t
        return RangeListing(0, self.stream.count_at(t), build)

    def record(self, k: int, t: int) -> Record:
        rng = Rng(record_key(self.key, k))
        ev = self.life(k, rng)
        status = state_at(ev, t)[1]
        date_only = k % 3 == 0  # about a third carry date-only dates (docs/contracts.md part 1)
        fmt = iso_date if date_only else iso
        done = ev[-1][0] if status in TERMINAL and ev[-1][0] <= t else None
        return {
            "id": str(TRANSFER_BASE + k),
            "value": money(rng.between(10_000, 2_000_000)),
            "requestedAt": fmt(ev[0][0]),
            "completedAt": fmt(done) if done is not None else None,
            "createdAt": iso(ev[0][0]),
            "status": status,
            "details": TRANSFER_DETAILS.get(status),
            "bankAccount": {
                "type": rng.pick(("checkingAccount", "checkingAccount", "savingsAccount", None)),
                "bankCode": rng.pick(("001", "237", "341", "104", "260", "033")),
                "agency": f"{rng.below(10_000):04d}",
                "account": f"{rng.below(1_000_000):06d}-{rng.below(10)}",
            },
        }
