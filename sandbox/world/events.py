"""Ticketed events: an open-ended series, one every G days (G = two years / max(3, N/4000)).

Event k starts around H0 + (k+1)G and is published at H0 + (k-1)G; its tickets are sold in the window
[start(k-1) - 1 day, start(k) - 1 day), split into the lots of each ticket. Events are few, so they are
cached; the manual stock debits live in the write overlay (`debits`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from .api import Record
from .clock import DAY, H0, HOUR, SPAN, iso
from .products import Catalog, ProductInfo
from .rng import Rng, entity_key, record_key

EVENT_TYPES = ("presential", "online", "live")
TICKET_NAMES = ("Pista", "VIP", "Meia-entrada", "Camarote", "Online", "Cortesia")
THEMES = ("Summit", "Imersão", "Workshop", "Meetup", "Congresso", "Masterclass ao vivo", "Encontro")
PLACES = (
    ("Centro de Convenções", "São Paulo", "SP", -23.5505, -46.6333),
    ("Expo Center", "Belo Horizonte", "MG", -19.9167, -43.9345),
    ("Teatro Municipal", "Rio de Janeiro", "RJ", -22.9068, -43.1729),
    ("Hotel Plaza", "Curitiba", "PR", -25.4284, -49.2733),
)


@dataclass(slots=True)
class Lot:
    id: str
    number: int
    start_sale: int
    end_sale: int
    quantity: int
    value: int  # cents
    active: bool
    created: int


@dataclass(slots=True)
class Ticket:
    id: str
    name: str
    paid: bool
    unlimited: bool
    lots: list[Lot] = field(default_factory=list)


@dataclass(slots=True)
class EventInfo:
    k: int
    id: str
    created: int
    start: int
    end: int
    product: ProductInfo
    tickets: list[Ticket]
    rng_key: int


class Events:
    def __init__(self, seed: int, scale: int, catalog: Catalog, owner_id: str):
        self.count0 = min(365, max(3, scale // 4000))
        self.gap = SPAN // self.count0
        self.key = entity_key(seed, "event")
        self.catalog = catalog
        self.owner_id = owner_id
        # expected ticket sales per event: one sale in ten is a ticket sale
        self.per_event = max(1, scale // (10 * self.count0))
        self.info = lru_cache(maxsize=2048)(self._info)
        self.by_id: dict[str, int] = {}
        self.debits: dict[str, list[int]] = {}  # lot id -> times of manual stock debits

    def start(self, k: int) -> int:
        jitter = Rng(record_key(self.key, k)).below(self.gap // 4)
        return (H0 + (k + 1) * self.gap - jitter) // HOUR * HOUR

    def created(self, k: int) -> int:
        return H0 + (k - 1) * self.gap

    def count_at(self, t: int) -> int:
        """Events published at or before t."""
        return max(0, (t - H0) // self.gap + 2)

    def event_for_time(self, t: int) -> int:
        """The event whose tickets are on sale at t: the first that starts more than a day after t."""
        k = max(0, (t + DAY - H0) // self.gap - 2)
        while self.start(k) <= t + DAY:
            k += 1
        return k

    def sales_window(self, k: int) -> tuple[int, int]:
        lo = self.start(k - 1) - DAY if k > 0 else H0 - DAY
        return lo, self.start(k) - DAY

    def index_of(self, event_id: str, t: int) -> int | None:
        k = self.by_id.get(event_id)
        if k is None:
            for n in range(self.count_at(t)):  # ids are cached as events are built; few events
                if self.info(n).id == event_id:
                    k = n
                    break
        return k if k is not None and k < self.count_at(t) else None

    def _info(self, k: int) -> EventInfo:
        rng = Rng(record_key(self.key, 1_000_000 + k))
        eid = rng.uuid()
        start = self.start(k)
        lo, hi = self.sales_window(k)
        product = self.catalog.tickets[k % len(self.catalog.tickets)]
        tickets: list[Ticket] = []
        n_tickets = rng.between(2, 4)
        names = list(TICKET_NAMES[:5])
        for n in range(n_tickets):
            name = names.pop(rng.below(len(names))) if n < n_tickets - 1 or k % 3 else "Cortesia"
            paid = name != "Cortesia"
            ticket = Ticket(rng.uuid(), name, paid, unlimited=k == 0 and n == 1 or rng.chance(0.1))
            n_lots = rng.between(1, 3)
            base = product.price_cents * (2 if name in ("VIP", "Camarote") else 1)
            base = base // 2 if name == "Meia-entrada" else base
            expected = self.per_event // (n_tickets * n_lots) + 1
            for L in range(n_lots):
                ticket.lots.append(
                    Lot(
                        id=rng.uuid(),
                        number=L + 1,
                        start_sale=lo + (hi - lo) * L // n_lots,
                        end_sale=lo + (hi - lo) * (L + 1) // n_lots,
                        quantity=max(2, round(expected * (1.2 + rng.r()))),
                        value=(base * (10 + 2 * L) // 10) if paid else 0,
                        active=rng.chance(0.9),
                        created=self.created(k) + rng.below(DAY),
                    )
                )
            tickets.append(ticket)
        end = start + rng.pick((3, 4, 8, 24, 48)) * HOUR
        info = EventInfo(k, eid, self.created(k), start, end, product, tickets, record_key(self.key, k))
        self.by_id[eid] = k
        return info

    def pick_for_sale(self, t: int, rng: Rng) -> tuple[ProductInfo, tuple[int, int, int], int]:
        """The event, ticket and lot a ticket sale created at t buys, and the price paid (cents)."""
        k = self.event_for_time(t)
        info = self.info(k)
        paid = [n for n, tk in enumerate(info.tickets) if tk.paid]
        n = paid[rng.below(len(paid))]
        lots = info.tickets[n].lots
        lot = next((L for L in lots if L.start_sale <= t < L.end_sale), lots[-1])
        return info.product, (k, n, lot.number - 1), lot.value

    def lot_on_sale(self, ticket: Ticket, t: int) -> Lot:
        """The lot a manual addition debits: the one on sale at t, else the latest started."""
        started = [L for L in ticket.lots if L.start_sale <= t]
        on_sale = [L for L in started if t < L.end_sale]
        return on_sale[0] if on_sale else started[-1] if started else ticket.lots[0]

    def record(self, k: int) -> Record:
        info = self.info(k)
        rng = Rng(info.rng_key)
        etype = EVENT_TYPES[k] if k < 3 else rng.pick(EVENT_TYPES)
        title = f"{rng.pick(THEMES)} {info.product.name.split(' ', 1)[-1]} {k + 1}"
        place, city, state, lat, lon = rng.pick(PLACES)
        modified = info.created + rng.between(1, 48) * HOUR
        tickets = []
        for tk in info.tickets:
            lots = []
            for L in tk.lots:
                debits = self.debits.get(L.id, [])
                lot_modified = max([L.created, *debits])
                modified = max(modified, lot_modified)
                lots.append(
                    {
                        "id": L.id,
                        "ticketId": tk.id,
                        "name": f"Lote {L.number}",
                        "quantity": L.quantity - len(debits),
                        "value": L.value / 100,
                        "isActive": L.active,
                        "startSaleAt": iso(L.start_sale),
                        "endSaleAt": iso(L.end_sale),
                        "createdAt": iso(L.created),
                        "modifiedAt": iso(lot_modified),
                        "platformProductId": int(info.product.id),
                    }
                )
            tickets.append(
                {
                    "id": tk.id,
                    "eventId": info.id,
                    "name": tk.name,
                    "isPaid": tk.paid,
                    "showOnPage": tk.paid,
                    "buyLimit": tk.name == "Meia-entrada",
                    "isUnlimited": tk.unlimited,
                    "isActive": True,
                    "buyMinimum": 1,
                    "createdAt": iso(info.created),
                    "modifiedAt": iso(info.created),
                    "lots": lots,
                }
            )
        slug = f"evento-{info.id[:8]}"
        return {
            "id": info.id,
            "userId": self.owner_id,
            "type": etype,
            "title": title,
            "description": f"{title}: um dia inteiro de conteúdo prático, networking e sorteios.",
            "saleUrl": f"https://events.platform.example/{slug}",
            "imageUrl": f"https://cdn.platform.example/events/{slug}.jpg",
            "streamUrl": f"https://live.platform.example/{slug}",
            "reserveTime": rng.pick((10, 15, 30)),
            "transmissionLinks": [f"https://live.platform.example/{slug}"] if etype != "presential" else [],
            "files": [f"https://cdn.platform.example/events/{slug}/programacao.pdf"]
            if rng.chance(0.5)
            else [],
            "isLive": etype == "live",
            "activePrecheckout": rng.chance(0.3),
            "startAt": iso(info.start),
            "endAt": iso(info.end),
            "createdAt": iso(info.created),
            "modifiedAt": iso(modified),
            "tickets": tickets,
            "address": {
                "place": place,
                "country": "Brasil",
                "state": state,
                "city": city,
                "district": "Centro",
                "street": "Avenida Principal",
                "complement": "Pavilhão A",
                "number": str(rng.between(10, 999)),
                "zip": f"{rng.below(10**8):08d}",
                "mapUrl": f"https://maps.example/?q={lat},{lon}",
                "geolocation": {"latitude": lat, "longitude": lon},
            },
        }
