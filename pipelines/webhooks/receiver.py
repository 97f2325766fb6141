"""`platform-sync webhooks serve`: the HTTP receiver of the platform's webhook deliveries.

For each POST: the body may hold at most `MAX_BODY` bytes (else 413, said as soon as the declared
Content-Length or the bytes read pass it: the rest is never read, the connection closed), the
`x-signature` header must be the hex HMAC-SHA256 of the raw body under the webhook secret (else 401,
before the body is even parsed), the body must be a delivery envelope in UTF-8 JSON (else 400:
`decoding.py`), and the delivery is committed to the store before the 200 (`store.py`). A delivery id
already stored is answered 200 again without a second row, so the platform's retries stop. A `ping` is
stored and answered like any delivery, with `{"pong": true}`. Nothing about the secret or the signature
is ever logged.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import socket
from collections.abc import Callable

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pipelines.webhooks.store import DeliveryStore, MalformedDelivery, parse_delivery

logger = logging.getLogger("platform_sync.webhooks")

MAX_BODY = 1_000_000  # bytes; a delivery is a small JSON envelope
BACKLOG = 2048  # uvicorn's own default


def signature_matches(body: bytes, header: str | None, secret: str) -> bool:
    """Whether `header` is the hex HMAC-SHA256 of `body` under `secret` (case-insensitive hex; a
    `sha256=` prefix, as some platforms write it, is accepted). Compared in constant time."""
    if not header or not secret:
        return False
    given = header.strip().lower().removeprefix("sha256=")
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(given.encode(), expected.encode())


def create_receiver(store: DeliveryStore, secret: str) -> Starlette:
    """The receiver's ASGI app: POST `/` (and `/webhooks`) take deliveries; GET `/health` says ok."""
    if not secret:
        raise ValueError("the webhook secret is empty")

    async def receive(request: Request) -> Response:
        try:
            body = await read_body(request, MAX_BODY)
        except BodyTooLarge:
            # the rest of the body is never read: the connection is closed after the answer
            return _error(413, "body too large", headers={"connection": "close"})
        if not signature_matches(body, request.headers.get("x-signature"), secret):
            return _error(401, "missing or wrong x-signature")
        try:
            delivery = parse_delivery(body)
        except MalformedDelivery as exc:
            return _error(400, str(exc))
        new = store.add(delivery)  # committed and fsynced before the answer
        logger.info("delivery %s (%s) %s", delivery.id, delivery.event, "stored" if new else "already stored")
        answer: dict[str, object] = {"id": delivery.id, "stored": new}
        if delivery.event == "ping":
            answer["pong"] = True
        return JSONResponse(answer)

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route("/", receive, methods=["POST"]),
            Route("/webhooks", receive, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
        ]
    )


class BodyTooLarge(ValueError):
    """A body over the limit, declared (Content-Length) or read so far."""


async def read_body(request: Request, limit: int) -> bytes:
    """The body, read only while it stays within `limit` bytes: BodyTooLarge as soon as a Content-Length
    over the limit is declared (nothing read) or the bytes read pass it (the rest left unread)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(declared)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(len(body))
    return bytes(body)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"status": status, "message": message}, status_code=status, headers=headers)


def serve(
    store: DeliveryStore, secret: str, host: str, port: int, on_listening: Callable[[str], None]
) -> None:
    """Serve until SIGINT/SIGTERM; `on_listening(url)` once the socket is bound (port 0: a free one)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)  # before the line that says so: a delivery sent on seeing it is not refused
    bound_host, bound_port = sock.getsockname()[:2]
    url = f"http://[{bound_host}]:{bound_port}" if ":" in bound_host else f"http://{bound_host}:{bound_port}"
    config = uvicorn.Config(
        create_receiver(store, secret),
        http="httptools",
        ws="none",
        lifespan="off",
        access_log=False,
        server_header=False,
        log_config=None,
        log_level="warning",
    )
    on_listening(url)
    uvicorn.Server(config).run(sockets=[sock])
