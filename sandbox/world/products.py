"""The product catalogue and what hangs off each product: campaigns, partners, affiliations.

Products are few (max(12, N/200)), so they are built once and cached. Roles: the first products are
ticket products (one per event, cycling), then subscription products, then one-off products whose
first few are pinned so every product type and payment type exists even in a tiny world.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .api import Record
from .clock import DAY, H0, HOUR, T0, iso
from .people import People
from .rng import Rng, entity_key, record_key

TYPES = ("digital", "physical", "service", "ticket", "ecommerce", "package", "project")
PAYMENT_BILLING = {"oneTime": "single", "subscription": "recurrence", "free": "free", "open": "other"}
MODERATION = ("approved", "new", "pending", "refused")
AFFILIATION_STATUS = ("approved", "pending", "canceled", "removed")
# One-off products pinned so each remaining type and payment type (and billing `unknown`) exists.
PINNED_SINGLES = (
    ("digital", "oneTime"),
    ("physical", "oneTime"),
    ("ecommerce", "free"),
    ("package", "open"),
    ("project", "open"),
    ("service", "oneTime"),
)
TOPICS = (
    "Marketing Digital",
    "Finanças Pessoais",
    "Inglês Fluente",
    "Fotografia",
    "Confeitaria",
    "Yoga",
    "Programação Python",
    "Excel Avançado",
    "Violão",
    "Maquiagem",
    "Concursos",
    "Nutrição",
    "Desenho",
    "Investimentos",
    "Oratória",
    "Produtividade",
    "Copywriting",
    "Tráfego Pago",
)
FORMATS = {
    "digital": ("Curso", "Masterclass", "E-book"),
    "physical": ("Kit", "Livro"),
    "service": ("Mentoria", "Consultoria"),
    "ticket": ("Ingresso", "Imersão"),
    "ecommerce": ("Loja", "Box"),
    "package": ("Pacote", "Combo"),
    "project": ("Projeto", "Desafio"),
}


@dataclass(slots=True)
class ProductInfo:
    index: int
    id: str
    name: str
    type: str
    payment_type: str
    billing: str
    price_cents: int
    role: str  # "ticket", "subscription" or "single"
    created: int
    record: Record
    sku: str | None = None
    affiliate_rate: float = 0.0  # share of the sale an affiliate earns
    campaigns: list[Record] = field(default_factory=list)
    partners: list[Record] = field(default_factory=list)
    affiliations: list[Record] = field(default_factory=list)
    approved: list[Record] = field(default_factory=list)
    built: bool = False


class Catalog:
    """Products of the world's single producer account, with campaigns, partners and affiliations."""

    def __init__(self, seed: int, scale: int, people: People, producer_id: str, producer_name: str):
        self.people = people
        self.key = entity_key(seed, "product")
        count = max(12, scale // 200)
        self.ticket_count = max(3, min(count // 6, 365))
        self.sub_count = max(3, count // 6)
        self.products: list[ProductInfo] = [
            self._product(k, count, producer_id, producer_name) for k in range(count)
        ]
        self.by_id = {p.id: p for p in self.products}
        self.tickets = self.products[: self.ticket_count]
        self.subscriptions = self.products[self.ticket_count : self.ticket_count + self.sub_count]
        self.singles = self.products[self.ticket_count + self.sub_count :]
        self._affiliations: list[Record] | None = None

    def extras(self, p: ProductInfo) -> ProductInfo:
        """The product with its campaigns, partners and affiliations (built on first use: init stays fast)."""
        if not p.built:
            self._extras(p)
            p.approved = [a for a in p.affiliations if a["status"] == "approved"]
            p.built = True
        return p

    def affiliations(self) -> list[Record]:
        if self._affiliations is None:
            self._affiliations = [a for p in self.products for a in self.extras(p).affiliations]
        return self._affiliations

    def _product(self, k: int, count: int, producer_id: str, producer_name: str) -> ProductInfo:
        rng = Rng(record_key(self.key, k))
        if k < self.ticket_count:
            role, ptype, pay = "ticket", "ticket", "oneTime"
        elif k < self.ticket_count + self.sub_count:
            role, ptype, pay = (
                "subscription",
                rng.pick(("digital", "digital", "service", "project")),
                "subscription",
            )
        else:
            role = "single"
            s = k - self.ticket_count - self.sub_count
            if s < len(PINNED_SINGLES):
                ptype, pay = PINNED_SINGLES[s]
            else:
                ptype = rng.pick(
                    ("digital", "digital", "digital", "physical", "service", "ecommerce", "package")
                )
                pay = "free" if rng.chance(0.05) else "oneTime"
        billing = PAYMENT_BILLING[pay]
        if pay == "open" and k % 2 == 0:
            billing = "unknown"  # the platform reports some open-price products with an unknown billing
        if pay == "free":
            price = 0
        elif pay == "subscription":
            price = rng.pick((1990, 2990, 3990, 4990, 9700, 14700, 29700))
        elif ptype == "ticket":
            price = rng.pick((4900, 9700, 19700, 29700, 49700))
        else:
            price = rng.pick((1990, 2790, 4700, 9700, 19700, 29700, 49700, 99700, 199700))
        name = f"{rng.pick(FORMATS[ptype])} {TOPICS[k % len(TOPICS)]}"
        if k >= len(TOPICS):
            name += f" {k // len(TOPICS) + 1}"
        created = H0 - rng.between(30, 400) * DAY + rng.below(DAY)
        updated = created + rng.between(0, (T0 - created) // HOUR) * HOUR
        pid = f"{4_100_000 + k}"
        sku = f"SKU-{pid}" if ptype in ("physical", "ecommerce") else None
        moderation = MODERATION[k % 4] if k < 8 else ("approved" if rng.chance(0.9) else rng.pick(MODERATION))
        status = "inactive" if k == 1 or (k > 8 and rng.chance(0.1)) else "active"
        multiple = ptype not in ("ticket",) and price >= 9700
        record: Record = {
            "id": pid,
            "name": name,
            "description": f"{name}: conteúdo completo com suporte e bônus exclusivos.",
            "producerId": producer_id,
            "author": producer_name,
            "imageUrl": f"https://cdn.platform.example/products/{pid}.jpg",
            "type": ptype,
            "status": status,
            "moderation": moderation,
            "createdAt": iso(created),
            "updatedAt": iso(updated),
            "payment": {
                "type": pay,
                "price": {"currency": "BRL", "value": price / 100},
                "methods": {
                    "bankslip": pay != "free",
                    "pix": pay != "free",
                    "card": pay != "free",
                    "multipleCards": multiple,
                },
            },
        }
        return ProductInfo(
            k,
            pid,
            name,
            ptype,
            pay,
            billing,
            price,
            role,
            created,
            record,
            sku,
            affiliate_rate=rng.pick((0.2, 0.3, 0.4)),
        )

    def _extras(self, p: ProductInfo) -> None:
        """Campaigns (0-4), partners (0-3) and affiliations (~3) of one product."""
        rng = Rng(record_key(self.key, 1_000_000 + p.index))
        k = p.index
        n_campaigns = 1 + k % 4 if k < 2 else rng.below(5)
        for c in range(n_campaigns):
            cid = 5_000_000 + k * 10 + c
            key = rng.token(8)
            p.campaigns.append(
                {
                    "id": str(cid),
                    "key": key,
                    "title": f"Campanha {c + 1} - {p.name}",
                    "url": f"https://go.platform.example/{key}",
                    "resultPerClick": {
                        "affiliate": rng.between(0, 250) / 100,
                        "producer": rng.between(0, 400) / 100,
                    },
                    "isInfinityFunnel": k == 0 and c == 0 or rng.chance(0.2),
                    "isActive": not (k == 0 and c == 1) and rng.chance(0.85),
                    "createdAt": iso(p.created + rng.between(1, 600) * DAY // 2),
                }
            )
        n_partners = 2 if k < 2 else rng.below(4)
        for c in range(n_partners):
            person = self.people.get(1_000_000 + k * 4 + c)
            pct = (k + c) % 2 == 0 if k < 2 else rng.chance(0.6)
            p.partners.append(
                {
                    "id": person.id,
                    "name": person.name,
                    "email": person.email,
                    "commission": {
                        "type": "percentage" if pct else "value",
                        # percentages stay small and fixed values under 10% of the price, so net >= 0
                        "value": float(rng.between(2, 10))
                        if pct
                        else rng.between(0, p.price_cents // 1000) / 10,
                        "onlyByAffiliate": k == 1 and c == 1 or rng.chance(0.15),
                    },
                    "permission": {
                        "canManageAffiliates": rng.chance(0.5),
                        "canRefund": rng.chance(0.3),
                        "canViewCustomerData": rng.chance(0.7),
                    },
                }
            )
        n_aff = 4 if k == 0 else rng.between(1, 5)
        for c in range(n_aff):
            no = k * 8 + c  # ids by product, so a product's affiliations never depend on the others
            person = self.people.get(2_000_000 + no)
            status = (
                AFFILIATION_STATUS[c]
                if k == 0
                else "approved"
                if rng.chance(0.7)
                else rng.pick(AFFILIATION_STATUS)
            )
            requested = p.created + rng.between(1, 700) * DAY // 2
            approved = requested + rng.between(1, 72) * HOUR
            updated = approved if status in ("approved", "pending") else approved + rng.between(1, 90) * DAY
            p.affiliations.append(
                {
                    "id": str(6_000_000 + no),
                    "status": status,
                    "requestedAt": iso(requested),
                    "approvedAt": iso(approved if status != "pending" else requested),
                    "updatedAt": iso(min(updated, T0)),
                    "createdAt": iso(requested),
                    "product": {"id": p.id, "name": p.name},
                    "customer": {"id": person.id, "name": person.name},
                }
            )

    def approved_affiliates(self, p: ProductInfo) -> list[Record]:
        return self.extras(p).approved
