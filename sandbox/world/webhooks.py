"""Webhook origins (six, each with a prefix and events named `<prefix>.<event_name>`) and the world's
moves that the sandbox announces to a configured webhook URL (docs/contracts.md part 6).

`world_moves(world, a, b)` lists what happened in the clock interval (a, b] (epoch milliseconds) as
`Move`s: sales paid and refunded, subscriptions created and changed, attendees checked in, lesson
comments written. It is a pure function of the world and the interval, so the same advances announce
the same moves with the same delivery ids.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from .api import Record
from .attendees import Attendees
from .clock import DAY, iso
from .events import Events
from .learning import Courses
from .people import People
from .sales import Sales
from .subscription_ids import subscription_id
from .subscriptions import Subscriptions
from .timeline import state_at


class MovingParts(Protocol):
    """The parts of the world whose moves are announced (`world.SyntheticWorld` has them)."""

    @property
    def people(self) -> People: ...
    @property
    def sales(self) -> Sales: ...
    @property
    def subs(self) -> Subscriptions: ...
    @property
    def attendees_(self) -> Attendees: ...
    @property
    def events_(self) -> Events: ...
    @property
    def courses(self) -> Courses: ...


# Bounds of how long after its creation a sale can be paid or refunded (sales.py: payment within 15
# days, refund asked within 28 days and settled within 2): sales created before a - SALE_REACH cannot
# move in (a, b].
SALE_REACH = 50 * DAY
SALE_EVENTS = {"paid": "store.invoice_paid", "refunded": "store.invoice_refunded"}

ORIGINS = (
    (
        "store",
        "Loja",
        (
            ("invoice_created", "Fatura criada", ("producerId", "email", "name", "invoiceId")),
            ("invoice_paid", "Fatura paga", ("producerId", "email", "name", "invoiceId")),
            ("invoice_refunded", "Fatura reembolsada", ("producerId", "email", "invoiceId")),
            ("contract_created", "Assinatura criada", ("producerId", "email", "contractId")),
            ("contract_canceled", "Assinatura cancelada", ("producerId", "email", "contractId")),
            ("contract_updated", "Assinatura alterada", ("producerId", "email", "contractId", "status")),
        ),
    ),
    (
        "course",
        "Cursos",
        (
            ("lesson_watched", "Aula assistida", ("learnerEmail", "lessonId", "courseId")),
            ("course_completed", "Curso concluído", ("learnerEmail", "courseId")),
            ("comment_created", "Comentário criado", ("learnerEmail", "lessonId", "courseId")),
        ),
    ),
    (
        "events",
        "Eventos",
        (
            ("attendance_checkin", "Check-in realizado", ("eventId", "email", "name")),
            ("attendee_created", "Participante criado", ("eventId", "email", "name", "batchId")),
        ),
    ),
    (
        "school",
        "Escola",
        (
            ("student_enrolled", "Aluno matriculado", ("producerId", "learnerEmail", "courseId")),
            ("access_removed", "Acesso removido", ("producerId", "learnerEmail")),
        ),
    ),
    (
        "community",
        "Comunidade",
        (
            ("post_created", "Post criado", ("email", "name")),
            ("member_joined", "Membro entrou", ("email", "name")),
        ),
    ),
    (
        "checkout",
        "Checkout",
        (
            ("cart_created", "Carrinho criado", ("producerId", "email")),
            ("cart_abandoned", "Carrinho abandonado", ("producerId", "email", "name")),
        ),
    ),
)


def webhook_origins() -> list[Record]:
    return [
        {
            "id": f"origin-{n + 1}",
            "name": name,
            "prefix": prefix,
            "events": [
                {"name": f"{prefix}.{ev}", "metadata": list(meta), "description": desc}
                for ev, desc, meta in events
            ],
        }
        for n, (prefix, name, events) in enumerate(ORIGINS)
    ]


@dataclass(frozen=True, slots=True)
class Move:
    """One announced change: when it happened, the event name, its data and a stable delivery id."""

    at: int  # epoch milliseconds
    event: str
    data: dict[str, Any]
    id: str

    def envelope(self) -> dict[str, Any]:
        """The delivery body as the platform sends it (field notes): `{id, event, data, sentDate}`."""
        return {"id": self.id, "event": self.event, "data": self.data, "sentDate": iso(self.at)}


def delivery_id(event: str, key: str, at: int) -> str:
    """A uuid-shaped id derived from what moved, so a replayed world announces the same ids."""
    h = hashlib.sha256(f"{event}|{key}|{at}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _move(at: int, event: str, key: str, data: dict[str, Any]) -> Move:
    return Move(at, event, data, delivery_id(event, key, at))


def world_moves(world: MovingParts, a: int, b: int) -> list[Move]:
    """Everything that moved in (a, b], ordered by time then delivery id."""
    if b <= a:
        return []
    moves = [*_sale_moves(world, a, b), *_subscription_moves(world, a, b)]
    moves += [*_checkin_moves(world, a, b), *_comment_moves(world, a, b)]
    moves.sort(key=lambda m: (m.at, m.id))
    return moves


def _sale_moves(world: MovingParts, a: int, b: int) -> list[Move]:
    sales, producer = world.sales, world.people.get(0).id
    out = []
    for i in range(sales.stream.first_at_or_after(a - SALE_REACH), sales.count_at(b)):
        core = sales.core(i)
        for when, status, _ in core.events:
            if a < when <= b and status in SALE_EVENTS:
                buyer = world.people.get(core.buyer)
                sale_id = sales.sale_id(i)
                data = {"producerId": producer, "email": buyer.email, "invoiceId": sale_id}
                if status == "paid":  # the origin lists a name for payments, not for refunds
                    data["name"] = buyer.name
                out.append(_move(when, SALE_EVENTS[status], sale_id, data))
    return out


def _subscription_moves(world: MovingParts, a: int, b: int) -> list[Move]:
    subs, producer = world.subs, world.people.get(0).id
    out = []
    for j in range(subs.count_at(b)):
        when = subs.updated(j, b)
        created = subs.created(j)
        if a < created <= b:
            event, at = "store.contract_created", created
        elif a < when <= b:
            record = subs.record(j, b)
            canceled = record["status"] == "canceled"
            event, at = ("store.contract_canceled" if canceled else "store.contract_updated"), when
        else:
            continue
        record = subs.record(j, b)
        data = {"producerId": producer, "email": record["client"]["email"], "contractId": subscription_id(j)}
        if event == "store.contract_updated":
            data["status"] = record["status"]
        out.append(_move(at, event, subscription_id(j), data))
    return out


def _checkin_moves(world: MovingParts, a: int, b: int) -> list[Move]:
    attendees, events = world.attendees_, world.events_
    out = []
    for k in range(events.count_at(b)):
        start = events.start(k)
        if not a - 2 * DAY < start <= b + 2 * DAY:  # check-ins happen around the event's start
            continue
        info = events.info(k)
        for i in attendees.sale_indices(k, b):
            life = attendees.life(i)
            checkin = next((w for w, s in life or [] if s == "presence_confirmed"), None)
            if checkin is None or not a < checkin <= b or state_at(life or [], b)[0] < checkin:
                continue
            record = attendees.build(info, i, b)
            if record is None:
                continue
            data = {"eventId": info.id, "email": record["email"], "name": record["name"]}
            out.append(_move(checkin, "events.attendance_checkin", record["id"], data))
    return out


def _comment_moves(world: MovingParts, a: int, b: int) -> list[Move]:
    courses = world.courses
    out = []
    for c in range(courses.stream.first_at_or_after(a + 1), courses.stream.count_at(b)):
        life = courses.life(c)
        if not a < life.created <= b:
            continue
        record = courses.record(c, b)
        data = {
            "learnerEmail": world.people.get(life.author).email,
            "lessonId": record["lessonId"],
            "courseId": courses.ids[c % len(courses.ids)],
        }
        out.append(_move(life.created, "course.comment_created", str(record["id"]), data))
    return out
