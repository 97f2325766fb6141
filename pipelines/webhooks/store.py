"""The receiver's durable store: one SQLite file in WAL mode with `synchronous=FULL`.

A delivery is committed (and so on disk: WAL + FULL fsyncs the log at each commit) before the receiver
answers 2xx, so a crash, even `kill -9` or a power cut after the answer, loses nothing acknowledged.
The delivery id is the primary key: a retried delivery is stored once. The loader marks what it loaded
with the dlt load id; a crash between the load and the mark only loads the rows again, which the
warehouse table merges on the same id.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DEFAULT_STORE = Path(".dlt") / "webhooks.sqlite"

SCHEMA = """
create table if not exists deliveries (
    id text primary key,
    event text not null,
    kind text not null,
    sale_id text,
    sent_date text,
    received_at text not null,
    body text not null,
    load_id text
)
"""

# small facts about the store itself: `privacy` = the warehouse's record its loaded bodies agree with
META = "create table if not exists meta (key text primary key, value text not null)"


class MalformedDelivery(ValueError):
    """A body that is not a delivery envelope; the receiver answers 400 with this message."""


@dataclass(frozen=True)
class Delivery:
    """One delivery as received: the envelope's fields and the raw body (kept whole, as sent)."""

    id: str
    event: str
    data: dict[str, Any]
    sent_date: str | None
    body: str

    @property
    def kind(self) -> str:
        """The event name without its origin prefix (`store.invoice_paid` -> `invoice_paid`); some
        deliveries come without the prefix (field notes)."""
        return self.event.rsplit(".", 1)[-1]

    @property
    def sale_id(self) -> str | None:
        """The sale an invoice event announces (`data.invoiceId`), else None."""
        if not self.kind.startswith("invoice_"):
            return None
        value = self.data.get("invoiceId")
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            return None
        return str(value)


def parse_delivery(raw: bytes) -> Delivery:
    """The envelope `{id, event, data, sentDate}`: `id` a non-empty string or integer, `event` a non-empty
    string, `data` an object (absent: `{}`), `sentDate` a string if present. Anything else is malformed."""
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise MalformedDelivery("the body is not JSON") from None
    if not isinstance(document, dict):
        raise MalformedDelivery("the body is not a JSON object")
    delivery_id, event = document.get("id"), document.get("event")
    if isinstance(delivery_id, bool) or not isinstance(delivery_id, str | int) or delivery_id == "":
        raise MalformedDelivery("id must be a non-empty string or an integer")
    if not isinstance(event, str) or not event.strip():
        raise MalformedDelivery("event must be a non-empty string")
    data = document.get("data", {})
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise MalformedDelivery("data must be an object")
    sent = document.get("sentDate")
    if sent is not None and not isinstance(sent, str):
        raise MalformedDelivery("sentDate must be a string")
    return Delivery(str(delivery_id), event.strip(), data, sent, raw.decode("utf-8"))


@dataclass(frozen=True)
class StoredDelivery:
    id: str
    event: str
    kind: str
    sale_id: str | None
    sent_date: str | None
    received_at: str
    body: str

    def row(self) -> dict[str, Any]:
        """The warehouse row (table `webhook_events`)."""
        document = json.loads(self.body)
        return {
            "id": self.id,
            "event": self.event,
            "kind": self.kind,
            "sale_id": self.sale_id,
            "sent_date": self.sent_date,
            "received_at": self.received_at,
            "data": document.get("data") or {},
        }


class DeliveryStore:
    """Deliveries by id in one SQLite file; safe to share between threads (one connection, one lock)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # Autocommit: each statement is its own transaction, committed (and fsynced) when it returns.
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("pragma journal_mode=wal")
        self._db.execute("pragma synchronous=full")
        self._db.execute(SCHEMA)
        self._db.execute(META)

    def add(self, delivery: Delivery) -> bool:
        """Store a delivery unless its id is stored already; True when it was new. Durable on return."""
        received = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        with self._lock:
            cursor = self._db.execute(
                "insert or ignore into deliveries (id, event, kind, sale_id, sent_date, received_at, body) "
                "values (?, ?, ?, ?, ?, ?, ?)",
                (
                    delivery.id,
                    delivery.event,
                    delivery.kind,
                    delivery.sale_id,
                    delivery.sent_date,
                    received,
                    delivery.body,
                ),
            )
            return cursor.rowcount == 1

    def unloaded(self) -> list[StoredDelivery]:
        """Deliveries not loaded into the warehouse yet, in the order received."""
        return list(self._select("where load_id is null"))

    def loaded(self) -> list[StoredDelivery]:
        return list(self._select("where load_id is not null"))

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("select value from meta where key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("insert or replace into meta (key, value) values (?, ?)", (key, value))

    def all(self) -> list[StoredDelivery]:
        return list(self._select(""))

    def _select(self, where: str) -> Iterator[StoredDelivery]:
        with self._lock:
            rows = self._db.execute(
                "select id, event, kind, sale_id, sent_date, received_at, body from deliveries "
                f"{where} order by received_at, id"
            ).fetchall()
        for row in rows:
            yield StoredDelivery(*row)

    def mark_loaded(self, ids: Sequence[str], load_id: str) -> None:
        with self._lock:
            self._db.execute("begin")
            rows = [(load_id, delivery_id) for delivery_id in ids]
            self._db.executemany("update deliveries set load_id = ? where id = ?", rows)
            self._db.execute("commit")

    def rewrite(self, delivery_id: str, body: str) -> None:
        """Replace a delivery's body (its personal values changed: `pipelines/commands/forget.py`, the
        loader)."""
        with self._lock:
            self._db.execute("update deliveries set body = ? where id = ?", (body, delivery_id))

    def close(self) -> None:
        with self._lock:
            self._db.close()
