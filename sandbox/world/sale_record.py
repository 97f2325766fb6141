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
from .rng import Rng, entity_key, record_key
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
        self.money = lru_cache(maxsize=8192)(self._money)

    def _money(self, i: int) -> SaleMoney:
        core = self.sales.core(i)
        rng = Rng(record_key(self.key, i))
        p = core.product
        physical = p.type in ("physical", "ecommerce")
        qty = rng.between(1, 3) if physical else 1
        unit = core.price
        discount = unit * qty * rng.between(5, 30) // 100 if unit and rng.chance(0.15) else 0
        line = unit * qty - discount
        sid = self.sales.sale_id(i)
        items = [
            {
                "id": f"{sid}01",
                "productId": p.id,
                "description": p.name,
                "unitValue": money(unit),
                "quantity": qty,
                "value": money(line),
                "discount": money(discount) if discount else None,
                "freightType": rng.pick(("PAC", "SEDEX")) if physical else None,
                "freightDeadline": f"{rng.between(3, 12)} dias úteis" if physical else None,
                "trackingCode": f"BR{rng.below(10**9):09d}BR" if physical else None,
            }
        ]
        freight = rng.between(1500, 4500) if physical else 0
        total = line + freight
        method = core.method
        card = method == "creditCard"
        installments = (1 if rng.chance(0.6) else rng.between(2, 12)) if card and total >= 5000 else 1
        interest = total * 199 * (installments - 1) // 10000
        settlement = total * 150 // 10000 if installments > 1 else None
        fee = total * 69 // 1000 + 100 if total else None
        company_x = total * 35 // 1000 if method == "eWallet" and total else None
        others = total * 5 // 1000 if method == "combinedPayment" else 0
        affiliate = None
        approved = self.catalog.approved_affiliates(p)
        if approved and total and core.role not in (SUB, BUMP) and rng.chance(0.3):
            aff = approved[rng.below(len(approved))]
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
        refund_value = total if not core.refund_partial else total * rng.between(20, 60) // 100
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

    def record(self, i: int, t: int) -> Record:
        core = self.sales.core(i)
        m = self.money(i)
        rng = Rng(record_key(self.key, i) ^ 0x5A5A)
        when, status, recovering = state_at(core.events, t)
        paid = core.paid_at is not None and core.paid_at <= t
        buyer = self.people.get(core.buyer)
        sid = self.sales.sale_id(i)
        p = core.product
        items = m.items
        if m.physical and not paid:
            items = [{**items[0], "trackingCode": None}]  # the code is issued once the order ships
        refund = None
        if status in ("waitingRefund", "refunded"):
            done = core.refund_at if status == "refunded" else None
            refund = {
                "type": "partial" if core.refund_partial else "common",
                "value": money(m.refund_value),
                "partialValue": money(m.refund_value if core.refund_partial else 0),
                "refundedAt": iso(done) if done is not None else None,
                "requestedAt": iso(core.refund_req) if core.refund_req is not None else None,
                "motive": rng.pick(MOTIVES),
                "requesterName": buyer.name if rng.chance(0.8) else self.producer["name"],
            }
        else:
            rng.r()
            rng.r()
        method = core.method
        link = None
        if method in ("pix", "bankslip", "installmentBankslip"):
            link = f"https://pay.platform.example/{method.lower()}/{sid}"
        elif method == "creditCard":
            link = f"https://pay.platform.example/checkout/{sid}"
        utm = None
        if rng.chance(0.6):
            utm = {
                "source": rng.pick(UTM_SOURCES),
                "campaign": f"camp{rng.below(40)}",
                "medium": rng.pick(("cpc", "social", "email", None)),
                "content": None,
                "term": rng.pick(("curso", None)),
            }
        role = core.role
        has_bump = role in (MAIN, BUMP)
        credit_days = 30 if method == "creditCard" else 2
        return {
            "id": sid,
            "contractId": subscription_id(i // 5) if role == SUB else None,
            "status": status,
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
            "paidAt": iso(core.paid_at) if paid and core.paid_at is not None else None,
            "creditDate": iso(core.paid_at + credit_days * DAY)
            if paid and core.paid_at is not None
            else None,
            "isInfiniteFunnel": rng.chance(0.05),
            "recoveringStatus": recovering,
            "tracker": f"trk-{rng.below(10**6)}" if rng.chance(0.3) else None,
            "tracker2": None,
            "tracker3": None,
            "createdAt": iso(core.created),
            "updatedAt": iso(when),
            "payment": {"method": method, "detail": core.detail, "link": link},
            "product": {"id": p.id, "name": p.name, "type": p.type, "billingType": p.billing, "sku": p.sku},
            "refund": refund,
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
                "address": buyer.address(),
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
            "items": items,
            "offer": {"name": rng.pick(OFFERS) if rng.chance(0.5) else None},
            "utm": utm,
            "orderBump": {
                "has": has_bump,
                "isMainSale": role == MAIN,
                "mainSaleId": int(self.sales.sale_id(i - 1)) if role == BUMP else None,
            },
        }
