"""Attendees: one per paid ticket sale (sale i with i % 10 == 6), plus manually added ones.

An attendee appears when its sale is paid and then lives: paid -> confirmed (the buyer fills in the
form) -> presence_confirmed at check-in around the event start; a refunded sale makes it `refunded`, a
few get `locked`. The first five ticket sales are pinned to one status each and hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .api import Record, WorldError
from .clock import DAY, HOUR, iso, iso_naive
from .events import EventInfo, Events
from .people import People, cpf_is_valid
from .rng import Rng, entity_key, record_key
from .sale_record import SaleRecords
from .sales import ATTENDEE_PINS, TICKET, Sales
from .timeline import state_at

DESCRIPTIONS = {
    "paid": "Pagamento confirmado",
    "confirmed": "Inscrição confirmada",
    "locked": "Ingresso bloqueado",
    "presence_confirmed": "Presença confirmada",
    "refunded": "Ingresso reembolsado",
}
TAGS = ("vip", "imprensa", "palestrante", "staff", "primeira-vez")


@dataclass
class Overlay:
    """Writes kept in memory: manual attendees by event number, and a counter for generated ids."""

    attendees: dict[int, list[Record]] = field(default_factory=dict)
    count: int = 0
    version: int = 0


class Attendees:
    def __init__(self, seed: int, events: Events, sales: Sales, records: SaleRecords, people: People):
        self.events = events
        self.sales = sales
        self.records = records
        self.people = people
        self.key = entity_key(seed, "attendee")
        self.manual_key = entity_key(seed, "attendee.manual")
        self.overlay = Overlay()

    def sale_indices(self, k: int, t: int) -> range:
        """Ticket sales of event k visible at t (every tenth sale, in the event's sales window)."""
        lo, hi = self.events.sales_window(k)
        stream = self.sales.stream
        first = stream.first_at_or_after(lo)
        stop = min(stream.first_at_or_after(hi), self.sales.count_at(t))
        first += (6 - first % 10) % 10
        return range(first, max(first, stop), 10)

    def life(self, i: int) -> list[tuple[int, str]] | None:
        """The attendee of ticket sale i as (time, status) events, or None if the sale is never paid."""
        core = self.sales.core(i)
        if core.paid_at is None:
            return None
        assert core.ticket is not None and core.role == TICKET
        info = self.events.info(core.ticket[0])
        rng = Rng(record_key(self.key, i))
        n = i // 10
        pin = ATTENDEE_PINS[n] if n < len(ATTENDEE_PINS) else None
        ev = [(core.paid_at, "paid")]
        confirm = core.paid_at + rng.between(HOUR, 3 * DAY)
        checkin = info.start + rng.between(-HOUR, 3 * HOUR)
        u = rng.r()
        if pin == "paid":
            return ev
        if pin == "locked" or (pin is None and u < 0.02):
            return [*ev, (min(confirm, info.start - HOUR), "locked")]
        ev.append((min(confirm, info.start - 2 * HOUR), "confirmed"))
        if pin == "confirmed":
            return ev
        if core.refund_at is not None and core.refund_at < checkin:
            return [*ev, (core.refund_at, "refunded")]
        if pin == "presence_confirmed" or (pin is None and u < 0.72):
            ev.append((checkin, "presence_confirmed"))
        return ev

    def build(self, info: EventInfo, i: int, t: int) -> Record | None:
        ev = self.life(i)
        if ev is None or ev[0][0] > t:
            return None
        when, status = state_at(ev, t)
        core = self.sales.core(i)
        assert core.ticket is not None
        ticket = info.tickets[core.ticket[1]]
        rng = Rng(record_key(self.key, i) ^ 0xA11)
        buyer = self.people.get(core.buyer)
        person = buyer if rng.chance(0.85) else self.people.get(1 + rng.below(self.sales.pool))
        checkin = next((w for w, s in ev if s == "presence_confirmed"), None)
        naive = rng.chance(0.33)  # some invoice dates come without zone (docs/contracts.md part 1)
        fmt = iso_naive if naive else iso
        paid_at = core.paid_at if core.paid_at is not None else core.created
        # a few attendees are foreigners identified by passport (and the locked pin is one of them)
        passport = rng.chance(0.03) or ATTENDEE_PINS[min(i // 10, 4)] == "locked" and i // 10 == 4
        document = f"F{rng.below(10**7):07d}" if passport else person.document
        custom: dict[str, Any] = (
            {"Empresa": rng.pick(("ACME", "Loja X", "Autônomo"))} if rng.chance(0.3) else {}
        )
        return {
            "id": rng.uuid(),
            "name": person.name,
            "email": person.email,
            "document": document,
            "phone": person.phone,
            "documentType": "passport" if passport else "cpf",
            "inviteKey": rng.token(10),
            "status": status,
            "ticketId": ticket.id,
            "ticketName": ticket.name,
            "checkinDate": iso(checkin) if checkin is not None and checkin <= t else None,
            "manuallyCreated": False,
            "fromSqueeze": rng.chance(0.05),
            "platformId": person.id,
            "firstPlatformId": buyer.id,
            "invoiceId": self.sales.sale_id(i),
            "eventId": info.id,
            "createdAt": iso(ev[0][0]),
            "modifiedAt": iso(when),
            "invoiceCustomerName": buyer.name,
            "invoiceCustomerEmail": buyer.email,
            "invoiceCustomerPlatformId": buyer.id,
            "invoiceCustomerDocument": buyer.document,
            "invoiceCreatedAt": fmt(core.created),
            "invoicePaidAt": fmt(paid_at),
            "invoiceAmount": self.records.money(i).total / 100,
            "customFields": custom,
            "statusDescription": DESCRIPTIONS[status],
            "tags": [rng.pick(TAGS)] if rng.chance(0.2) else [],
        }

    def all_at(self, k: int, t: int) -> list[Record]:
        """Every attendee of event k at t, ordered by (modifiedAt, id)."""
        info = self.events.info(k)
        out = [r for i in self.sale_indices(k, t) if (r := self.build(info, i, t)) is not None]
        out += [r for r in self.overlay.attendees.get(k, []) if r["createdAt"] <= iso(t)]
        out.sort(key=lambda r: (r["modifiedAt"], r["id"]))
        return out

    def sold(self, k: int, lot_id: str, t: int) -> int:
        """Tickets of a lot held by sale attendees (not refunded) at t."""
        info = self.events.info(k)
        n = 0
        for i in self.sale_indices(k, t):
            core = self.sales.core(i)
            ev = self.life(i)
            if ev is None or ev[0][0] > t or state_at(ev, t)[1] == "refunded" or core.ticket is None:
                continue
            if info.tickets[core.ticket[1]].lots[core.ticket[2]].id == lot_id:
                n += 1
        return n

    def add(self, body: Record, t: int) -> Record:
        """Manual addition (endpoint 8): 404 event/ticket, 422 invalid document or no stock."""
        details = [
            {"field": f, "message": "required"}
            for f in ("eventId", "ticketId", "name", "documentType")
            if not isinstance(body.get(f), str) or not body.get(f)
        ]
        if details:
            raise WorldError(422, "validation_error", "invalid body", details)
        k = self.events.index_of(body["eventId"], t)
        if k is None:
            raise WorldError(404, "not_found", "event not found")
        info = self.events.info(k)
        ticket = next((tk for tk in info.tickets if tk.id == body["ticketId"]), None)
        if ticket is None:
            raise WorldError(404, "not_found", "ticket not found")
        doc_type = body["documentType"]
        document = str(body.get("document") or "")
        if doc_type not in ("cpf", "passport"):
            raise WorldError(
                422,
                "validation_error",
                "invalid body",
                [{"field": "documentType", "message": "must be cpf or passport"}],
            )
        if doc_type == "cpf" and not cpf_is_valid(document):
            raise WorldError(
                422, "validation_error", "invalid document", [{"field": "document", "message": "invalid CPF"}]
            )
        if body.get("useStock") and not ticket.unlimited:
            lot = self.events.lot_on_sale(ticket, t)
            debits = self.events.debits.setdefault(lot.id, [])
            if lot.quantity - len(debits) - self.sold(k, lot.id, t) <= 0:
                raise WorldError(422, "validation_error", "insufficient stock")
            debits.append(t)
        rng = Rng(record_key(self.manual_key, self.overlay.count))
        self.overlay.count += 1
        self.overlay.version += 1
        aid, invite, stamp = rng.uuid(), rng.token(10), iso(t)
        phone, email, name = str(body.get("phone") or ""), str(body.get("email") or ""), body["name"]
        record = {
            "id": aid,
            "name": name,
            "email": email,
            "document": document,
            "phone": phone,
            "documentType": doc_type,
            "inviteKey": invite,
            "status": "presence_confirmed",
            "ticketId": ticket.id,
            "ticketName": ticket.name,
            "checkinDate": stamp,
            "manuallyCreated": True,
            "fromSqueeze": False,
            "platformId": "",
            "firstPlatformId": "",
            "invoiceId": "",
            "eventId": info.id,
            "createdAt": stamp,
            "modifiedAt": stamp,
            "invoiceCustomerName": "",
            "invoiceCustomerEmail": "",
            "invoiceCustomerPlatformId": "",
            "invoiceCustomerDocument": "",
            "invoiceCreatedAt": "",
            "invoicePaidAt": "",
            "invoiceAmount": 0,
            "customFields": {},
            "statusDescription": DESCRIPTIONS["presence_confirmed"],
            "tags": [],
        }
        self.overlay.attendees.setdefault(k, []).append(record)
        return {
            "id": aid,
            "inviteKey": invite,
            "name": name,
            "document": document,
            "phoneNumber": phone,
            "email": email,
            "platformId": "",
            "invoiceId": "",
            "documentType": doc_type,
            "status": "presence_confirmed",
            "manuallyCreated": True,
            "modifiedAt": stamp,
        }
