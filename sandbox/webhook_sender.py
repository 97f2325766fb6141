"""The sandbox's webhook deliveries: signed POSTs of the world's moves to one configured URL, retried.

As the platform does (field notes): each delivery is the JSON envelope `{id, event, data, sentDate}`
with header `x-signature` = hex HMAC-SHA256 of the raw body under the configured secret; turning a URL
on sends a `ping`; a delivery that is not answered 2xx is sent again every minute for two days. The
sandbox divides both by its time scale (docs/contracts.md part 6). Deliveries go out one at a time, in
order, from a task of the server's event loop, so the API never waits for the receiver.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

log = logging.getLogger("sandbox.webhooks")

RETRY_SECONDS = 60.0  # field notes: retried every minute ...
GIVE_UP_SECONDS = 2 * 86400.0  # ... for two days
SEND_TIMEOUT = 5.0


def sign(body: bytes, secret: str) -> str:
    """The `x-signature` of a body: hex HMAC-SHA256 under the secret."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class Delivery:
    id: str
    event: str
    body: bytes
    queued_at: float  # monotonic
    next_at: float
    attempts: int = 0
    delivered: bool = False
    given_up: bool = False
    last_status: int | str | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "event": self.event,
            "attempts": self.attempts,
            "delivered": self.delivered,
            "given_up": self.given_up,
            "last_status": self.last_status,
        }


@dataclass
class WebhookSender:
    """Queue and send deliveries; `configure` turns a URL on (and pings it), `announce` queues moves."""

    time_scale: float = 1.0
    url: str | None = None
    _secret: str = field(default="", repr=False)
    deliveries: dict[str, Delivery] = field(default_factory=dict)
    _queue: deque[Delivery] = field(default_factory=deque)
    _task: asyncio.Task[None] | None = None
    _wake: asyncio.Event | None = None
    pings: int = 0

    @property
    def retry_seconds(self) -> float:
        return RETRY_SECONDS / self.time_scale

    @property
    def give_up_seconds(self) -> float:
        return GIVE_UP_SECONDS / self.time_scale

    def configure(self, url: str | None, secret: str, clock_iso: str) -> None:
        """Send to `url` from now on (None turns deliveries off); a new URL gets a `ping` first."""
        self.url, self._secret = url, secret
        if url:
            self.pings += 1
            self._queue_envelope(
                {"id": f"ping-{self.pings}", "event": "ping", "data": {}, "sentDate": clock_iso}
            )

    def announce(self, envelopes: list[dict[str, Any]]) -> int:
        """Queue one delivery per envelope (when a URL is configured); returns how many were queued."""
        if not self.url:
            return 0
        for envelope in envelopes:
            self._queue_envelope(envelope)
        return len(envelopes)

    def _queue_envelope(self, envelope: dict[str, Any]) -> None:
        if envelope["id"] in self.deliveries:  # the same move announced twice is one delivery
            return
        now = time.monotonic()
        delivery = Delivery(envelope["id"], envelope["event"], orjson.dumps(envelope), now, now)
        self.deliveries[delivery.id] = delivery
        self._queue.append(delivery)
        self._ensure_task()

    def _ensure_task(self) -> None:
        """Start the sending task in the running loop (the routes run in it) or wake it up."""
        if self._task is None or self._task.done():
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())
        assert self._wake is not None
        self._wake.set()

    def snapshot(self) -> dict[str, Any]:
        """What was sent: counts and every delivery's outcome (never the secret)."""
        values = list(self.deliveries.values())
        return {
            "url": self.url,
            "retry_seconds": self.retry_seconds,
            "queued": sum(1 for d in values if not d.delivered and not d.given_up),
            "delivered": sum(1 for d in values if d.delivered),
            "given_up": sum(1 for d in values if d.given_up),
            "attempts": sum(d.attempts for d in values),
            "deliveries": [d.summary() for d in values],
        }

    async def _run(self) -> None:
        assert self._wake is not None
        async with httpx.AsyncClient(timeout=SEND_TIMEOUT) as client:
            while True:
                self._wake.clear()
                now = time.monotonic()
                due = next((d for d in self._queue if d.next_at <= now), None)
                if due is None:
                    wait = min((d.next_at for d in self._queue), default=now + 3600) - now
                    try:
                        await asyncio.wait_for(self._wake.wait(), timeout=max(0.001, wait))
                    except TimeoutError:
                        pass
                    continue
                await self._send(client, due)

    async def _send(self, client: httpx.AsyncClient, delivery: Delivery) -> None:
        url, secret = self.url, self._secret
        delivery.attempts += 1
        status: int | str
        if not url:
            status = "no url"
        else:
            headers = {"content-type": "application/json", "x-signature": sign(delivery.body, secret)}
            try:
                response = await client.post(url, content=delivery.body, headers=headers)
                status = response.status_code
            except httpx.HTTPError as exc:
                status = type(exc).__name__
        delivery.last_status = status
        now = time.monotonic()
        if isinstance(status, int) and 200 <= status < 300:
            delivery.delivered = True
        elif now - delivery.queued_at >= self.give_up_seconds:
            delivery.given_up = True
            log.warning("webhook %s given up after %d attempts", delivery.id, delivery.attempts)
        else:
            delivery.next_at = now + self.retry_seconds
            return
        self._queue.remove(delivery)
