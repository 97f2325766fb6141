"""Webhook origins: six origins, each with a prefix and events named `<prefix>.<event_name>`."""

from __future__ import annotations

from .api import Record

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
