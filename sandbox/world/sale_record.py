"""A sale as the API shows it at clock T: money (integer cents, exact) and the record itself.

Money is computed in integer cents and written as `cents / 100` floats: the shortest repr of such a
float is exactly the 2-decimal amount, so JSON serialisers (json, orjson) emit exact numbers and a
`Decimal(str(x))` on the reading side gets the cents back. gross = net + fee + partners + affiliates +
companyXFee + installmentSettlementFee + others holds to the cent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .api import Record
from .clock import DAY, iso
from .people import People, Person
from .products import Catalog
from .rng import entity_key, mix64, record_key
from .sales import BUMP, MAIN, SUB, Sales
from .subscription_ids import subscription_id
from .timeline import state_at

MOTIVES = (
    "Desistência da compra",
    "Produto não atendeu às expectativas",
    "Compra duplicada",
    "Problemas no acesso",
    "Arrependimento (7 dias)",
)
OFFERS = ("Oferta de lançamento", "Black Friday", "Oferta padrão", "Condição especial")
UTM_SOURCES = ("instagram", "facebook", "google", "youtube", "email", "whatsapp")


def money(cents: int) -> Record:
    return {"currency": "BRL", "value": cents / 100}


def opt_money(cents: int | None) -> Record | None:
    return None if cents is None else {"currency": "BRL", "value": cents / 100}


@dataclass(slots=True)
class SaleMoney:
    items: list[Record]
    total: int
    interest_total: int
    installments: int
    fee: int | None
    company_x: int | None
    settlement: int | None
    others: int
    affiliate: tuple[Person, int] | None
    partners: list[tuple[Record, int]]
    net: int
    refund_value: int
    physical: bool


class SaleRecords:
    """Builds sale records; the money part is cached by index (it never changes)."""

    def __init__(self, seed: int, sales: Sales, catalog: Catalog, people: People, producer: Person):
        self.sales = sales
        self.catalog = catalog
        self.people = people
        self.key = entity_key(seed, "sale.detail")
        self.producer = {"id": producer.id, "name": producer.name}
        self.recipient = {
            "id": producer.id,
            "name": producer.name,
            "email": producer.email,
            "document": producer.document,
            "phone": producer.phone,
        }
        self.money = lru_cache(maxsize=4096)(self._money)
        self.static = lru_cache(maxsize=4096)(self._static)

    def _money(self, i: int) -> SaleMoney:
        # Draws are bit fields of two hashes: one generator step per field would double the cost.
        core = self.sales.core(i)
        h = record_key(self.key, i)
        h2 = mix64(h)
        p = core.product
        physical = p.type in ("physical", "ecommerce")
        qty = 1 + h % 3 if physical else 1
        unit = core.price
        discount = unit * qty * (5 + (h >> 9) % 26) // 100 if unit and (h >> 2) % 100 < 15 else 0
        line = unit * qty - discount
        items = [
            {
                "id": f"{self.sales.sale_id(i)}01",
                "productId": p.id,
                "description": p.name,
                "unitValue": money(unit),
                "quantity": qty,
                "value": money(line),
                "discount": money(discount) if discount else None,
                "freightType": ("PAC", "SEDEX")[(h >> 16) & 1] if physical else None,
                "freightDeadline": f"{3 + (h >> 17) % 10} dias úteis" if physical else None,
                "trackingCode": f"BR{h2 % 10**9:09d}BR" if physical else None,
            }
        ]
        total = line + (1500 + (h >> 24) % 3001 if physical else 0)
        method = core.method
        installments = 1
        if method == "creditCard" and total >= 5000 and (h >> 36) % 100 >= 60:
            installments = 2 + (h >> 43) % 11
        interest = total * 199 * (installments - 1) // 10000
        settlement = total * 150 // 10000 if installments > 1 else None
        fee = total * 69 // 1000 + 100 if total else None
        company_x = total * 35 // 1000 if method == "eWallet" and total else None
        others = total * 5 // 1000 if method == "combinedPayment" else 0
        affiliate = None
        approved = self.catalog.approved_affiliates(p)
        if approved and total and core.role not in (SUB, BUMP) and (h >> 50) % 100 < 30:
            aff = approved[(h2 >> 30) % len(approved)]
            person = self.people.get(2_000_000 + int(aff["id"]) - 6_000_000)
            affiliate = (person, round(total * p.affiliate_rate))
        partners = []
        for partner in p.partners if total else ():
            c = partner["commission"]
            if c["onlyByAffiliate"] and affiliate is None:
                continue  # this partner only earns on sales that came through an affiliate
            cut = total * int(c["value"]) // 100 if c["type"] == "percentage" else round(c["value"] * 100)
            partners.append((partner, min(cut, total // 10)))
        net = total - (fee or 0) - (company_x or 0) - (settlement or 0) - others
        net -= sum(c for _, c in partners) + (affiliate[1] if affiliate else 0)
        refund_value = total if not core.refund_partial else total * (20 + (h2 >> 40) % 41) // 100
        return SaleMoney(
            items,
            total,
            total + interest,
            installments,
            fee,
            company_x,
            settlement,
            others,
            affiliate,
            partners,
            net,
            refund_value,
            physical,
        )

    def _static(self, i: int) -> Record:
        """The time-independent part of sale i, in the spec's key order (time fields are placeholders)."""
        core = self.sales.core(i)
        m = self.money(i)
        h = record_key(self.key ^ 0x5A5A, i)
        buyer = self.people.get(core.buyer)
        sid = self.sales.sale_id(i)
        p = core.product
        method = core.method
        link = None
        if method in ("pix", "bankslip", "installmentBankslip"):
            link = f"https://pay.platform.example/{method.lower()}/{sid}"
        elif method == "creditCard":
            link = f"https://pay.platform.example/checkout/{sid}"
        utm = None
        if (h >> 7) % 10 < 6:
            utm = {
                "source": UTM_SOURCES[(h >> 11) % len(UTM_SOURCES)],
                "campaign": f"camp{(h >> 14) % 40}",
                "medium": ("cpc", "social", "email", None)[(h >> 20) % 4],
                "content": None,
                "term": ("curso", None)[(h >> 22) & 1],
            }
        role = core.role
        return {
            "id": sid,
            "contractId": subscription_id(i // 5) if role == SUB else None,
            "status": None,
            "grossGain": money(m.total),
            "netGain": money(m.net),
            "partnersGain": money(sum(c for _, c in m.partners)),
            "affiliatesGain": money(m.affiliate[1] if m.affiliate else 0),
            "fee": opt_money(m.fee),
            "total": money(m.total),
            "totalInterest": money(m.interest_total),
            "installments": m.installments,
            "companyXFee": opt_money(m.company_x),
            "installmentSettlementFee": opt_money(m.settlement),
            "others": money(m.others),
            "currency": "BRL",
            "locale": "pt_BR",
            "dueDate": iso(core.due),
            "paidAt": None,
            "creditDate": None,
            "isInfiniteFunnel": (h >> 23) % 100 < 5,
            "recoveringStatus": None,
            "tracker": f"trk-{(h >> 34) % 10**6}" if (h >> 30) % 10 < 3 else None,
            "tracker2": None,
            "tracker3": None,
            "createdAt": iso(core.created),
            "updatedAt": None,
            "payment": {"method": method, "detail": core.detail, "link": link},
            "product": {"id": p.id, "name": p.name, "type": p.type, "billingType": p.billing, "sku": p.sku},
            "refund": None,
            "affiliate": {"id": m.affiliate[0].id, "name": m.affiliate[0].name} if m.affiliate else None,
            "recipient": self.recipient,
            "buyer": {
                "id": buyer.id,
                "name": buyer.name,
                "email": buyer.email,
                "document": buyer.document,
                "phone": buyer.phone,
                "phone2": None,
                "phone3": None,
                "address": buyer.addr,
            },
            "producer": self.producer,
            "affiliates": [
                {"id": a.id, "name": a.name, "email": a.email, "netGain": money(c)}
                for a, c in ([m.affiliate] if m.affiliate else [])
            ],
            "partners": [
                {"id": pr["id"], "name": pr["name"], "email": pr["email"], "netGain": money(c)}
                for pr, c in m.partners
            ],
            "items": m.items,
            "offer": {"name": OFFERS[(h >> 55) % len(OFFERS)] if (h >> 54) & 1 else None},
            "utm": utm,
            "orderBump": {
                "has": role in (MAIN, BUMP),
                "isMainSale": role == MAIN,
                "mainSaleId": int(self.sales.sale_id(i - 1)) if role == BUMP else None,
            },
        }

    def record(self, i: int, t: int) -> Record:
        """Sale i at clock t: the cached static part plus the state of its life at t.

        Nested objects are shared between calls: callers serialise records, they never mutate them.
        """
        core = self.sales.core(i)
        rec = self.static(i).copy()
        when, status, recovering = state_at(core.events, t)
        rec["status"], rec["recoveringStatus"], rec["updatedAt"] = status, recovering, iso(when)
        paid_at = core.paid_at
        if paid_at is not None and paid_at <= t:
            rec["paidAt"] = iso(paid_at)
            rec["creditDate"] = iso(paid_at + (30 if core.method == "creditCard" else 2) * DAY)
        else:
            m = self.money(i)
            if m.physical:
                rec["items"] = [{**m.items[0], "trackingCode": None}]  # issued once the order ships
        if status in ("waitingRefund", "refunded"):
            m = self.money(i)
            h = record_key(self.key ^ 0x5A5A, i)
            done = core.refund_at if status == "refunded" else None
            rec["refund"] = {
                "type": "partial" if core.refund_partial else "common",
                "value": money(m.refund_value),
                "partialValue": money(m.refund_value if core.refund_partial else 0),
                "refundedAt": iso(done) if done is not None else None,
                "requestedAt": iso(core.refund_req) if core.refund_req is not None else None,
                "motive": MOTIVES[h % len(MOTIVES)],
                "requesterName": rec["buyer"]["name"] if (h >> 3) % 10 < 8 else self.producer["name"],
            }
        return rec
