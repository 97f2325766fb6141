"""The receiver's durable store: one SQLite file in WAL mode with `synchronous=FULL`.

A delivery is committed (and so on disk: WAL + FULL fsyncs the log at each commit) before the receiver
answers 2xx, so a crash, even `kill -9` or a power cut after the answer, loses nothing acknowledged.
The delivery id is the primary key: a retried delivery is stored once. The loader marks what it loaded
with the dlt load id; a crash between the load and the mark only loads the rows again, which the
warehouse table merges on the same id. A delivery the loader cannot load is set aside: `set_aside` holds
the reason (and `set_aside_at` when), the body stays for inspection, and no later load tries it again.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipelines.webhooks.decoding import MalformedDelivery, body_text, parse_json, valid_json
from sources.platform.unreadable import unreadable, valid_text

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
    load_id text,
    set_aside text,
    set_aside_at text
)
"""
# columns added since the first stores were written (issue 53), added to an older store when it is opened
ADDED_COLUMNS = {"set_aside": "text", "set_aside_at": "text"}
_SURROGATE = re.compile("[\ud800-\udfff]")

# small facts about the store itself: `privacy` = the warehouse's record its loaded bodies agree with
META = "create table if not exists meta (key text primary key, value text not null)"


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
    string, `data` an object (absent: `{}`), `sentDate` a string if present; UTF-8 JSON at most 128 levels
    deep (`decoding.py`). Anything else is malformed. The body is kept as sent, but for a leading byte
    order mark; the fields stored beside it have each lone surrogate replaced by U+FFFD, but for the id,
    where one is malformed (two ids would become one)."""
    text = body_text(raw)
    document = parse_json(text)
    if not isinstance(document, dict):
        raise MalformedDelivery("the body is not a JSON object")
    delivery_id, event = document.get("id"), document.get("event")
    if isinstance(delivery_id, bool) or not isinstance(delivery_id, str | int) or delivery_id == "":
        raise MalformedDelivery("id must be a non-empty string or an integer")
    if isinstance(delivery_id, str) and valid_text(delivery_id) != delivery_id:
        raise MalformedDelivery("id holds an invalid code point (a lone surrogate)")
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
    valid_data, _ = valid_json(data)
    sent = None if sent is None else valid_text(sent)
    return Delivery(str(delivery_id), valid_text(event.strip()), valid_data, sent, text)


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
        """The warehouse row (table `webhook_events`): `loadable`'s."""
        return self.loadable()[0]

    def loadable(self) -> tuple[dict[str, Any], int]:
        """The warehouse row, with each lone surrogate replaced by U+FFFD, and how many texts were so
        changed. MalformedDelivery when the body cannot be loaded, with the reason."""
        document = parse_json(self.body)
        if not isinstance(document, dict):
            raise MalformedDelivery("the body is not a JSON object")
        data, replaced = valid_json(document.get("data") or {})
        row = {
            "id": self.id,
            "event": self.event,
            "kind": self.kind,
            "sale_id": self.sale_id,
            "sent_date": self.sent_date,
            "received_at": self.received_at,
            "data": data,
        }
        problem = unreadable(row)  # what dlt (orjson) would refuse: an integer beyond 64 bits, for one
        if problem is not None:
            raise MalformedDelivery(problem)
        return row, replaced


@dataclass(frozen=True)
class SetAside:
    """A delivery the loader could not load: why, and when it was set aside."""

    id: str
    event: str
    reason: str
    at: str


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
        self._add_columns()

    def _add_columns(self) -> None:
        """The columns an older store lacks, added in one transaction (a receiver and a load may open the
        store at once: the second finds them there)."""
        with self._lock:
            self._db.execute("begin immediate")
            try:
                present = {row[1] for row in self._db.execute("pragma table_info(deliveries)")}
                for name, kind in ADDED_COLUMNS.items():
                    if name not in present:
                        self._db.execute(f"alter table deliveries add column {name} {kind}")
            finally:
                self._db.execute("commit")

    def add(self, delivery: Delivery) -> bool:
        """Store a delivery unless its id is stored already; True when it was new. Durable on return."""
        received = _now()
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
        """Deliveries not loaded into the warehouse yet, nor set aside, in the order received."""
        return list(self._select("where load_id is null and set_aside is null"))

    def set_aside(self, reasons: dict[str, str]) -> None:
        """Set these deliveries aside (by id, with the reason each cannot be loaded): kept, never loaded."""
        at = _now()
        with self._lock:
            self._db.execute("begin")
            rows = [(reason, at, delivery_id) for delivery_id, reason in reasons.items()]
            self._db.executemany("update deliveries set set_aside = ?, set_aside_at = ? where id = ?", rows)
            self._db.execute("commit")

    def set_aside_deliveries(self) -> list[SetAside]:
        """The deliveries set aside, in the order they were received."""
        with self._lock:
            rows = self._db.execute(
                "select id, event, set_aside, set_aside_at from deliveries where set_aside is not null "
                "order by received_at, id"
            ).fetchall()
        return [SetAside(*row) for row in rows]

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
        for delivery_id, event, kind, sale_id, sent_date, received_at, body in rows:
            # a byte order mark an earlier receiver kept is no part of the JSON (`decoding.body_text`)
            body = body.removeprefix("\ufeff")
            yield StoredDelivery(delivery_id, event, kind, sale_id, sent_date, received_at, body)

    def mark_loaded(self, ids: Sequence[str], load_id: str) -> None:
        with self._lock:
            self._db.execute("begin")
            rows = [(load_id, delivery_id) for delivery_id in ids]
            self._db.executemany("update deliveries set load_id = ? where id = ?", rows)
            self._db.execute("commit")

    def rewrite(self, delivery_id: str, body: str) -> None:
        """Replace a delivery's body (its personal values changed: `pipelines/commands/forget.py`, the
        loader). A lone surrogate that `json.dumps(..., ensure_ascii=False)` wrote as such (no UTF-8 text,
        which SQLite refuses) is written back as its JSON escape, the same JSON."""
        text = _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", body)
        with self._lock:
            self._db.execute("update deliveries set body = ? where id = ?", (text, delivery_id))

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
