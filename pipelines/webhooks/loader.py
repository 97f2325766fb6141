"""`platform-sync webhooks load`: stored deliveries into the warehouse table `webhook_events` via dlt.

A command (run it from cron next to the sync, or before it), not a timer inside the receiver: the
receiver must answer in milliseconds and never wait on the warehouse, and the warehouse has one writer
at a time (the run lock), which a long sync holds. The table goes to the sync's own destination and
dataset, through a pipeline of its own (`platform_sync_webhooks`), so the next sync can read the sale ids
that were announced (`sources/platform/resources/store_sale_ids.py`).

A delivery that cannot be loaded (`StoredDelivery.loadable`: not JSON, nested too deep, an integer beyond
64 bits) is set aside in the store with its reason and never tried again; the others load. A lone
surrogate costs only that code point: the value loads with U+FFFD in its place (`decoding.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt

from pipelines.sync.companion import companion_pipeline
from pipelines.sync.lock import run_lock
from pipelines.sync.platform_pipeline import make_pipeline
from pipelines.sync.privacy_rewrite import check_companions, companion_record, note_written, source_fallback
from pipelines.webhooks.store import DeliveryStore, MalformedDelivery, SetAside, StoredDelivery
from sources.platform.privacy import Scrubber, configured_privacy
from sources.platform.privacy.forgotten import forgotten_from_destination

WEBHOOK_PIPELINE = "platform_sync_webhooks"
WEBHOOK_TABLE = "webhook_events"

COLUMNS: dict[str, Any] = {
    "id": {"data_type": "text", "nullable": False, "primary_key": True},
    "event": {"data_type": "text", "nullable": False},
    "kind": {"data_type": "text", "nullable": False},
    "sale_id": {"data_type": "text", "nullable": True},
    "sent_date": {"data_type": "text", "nullable": True},
    "received_at": {"data_type": "timestamp", "nullable": False},
    "data": {"data_type": "json", "nullable": True},
}


def scrubbed_body(body: str, data: Any) -> str:
    """A delivery's body with its data as loaded (pseudonymised or blocked)."""
    document = json.loads(body)
    document["data"] = data
    return json.dumps(document, ensure_ascii=False)


def align_store(pipeline: dlt.Pipeline, store: DeliveryStore) -> int:
    """The loaded bodies as the warehouse holds them, once after its table was written under new privacy
    settings (rewritten in place by `sync --full-refresh`: `privacy_rewrite.py`), so the store keeps no raw
    value the warehouse no longer has. Returns the bodies rewritten; nothing to do without a record."""
    record = companion_record(pipeline, WEBHOOK_TABLE)
    if record is None:
        return 0
    marker = json.dumps(record, sort_keys=True, default=str)
    if store.meta("privacy") == marker:
        return 0
    with pipeline.sql_client() as client:
        table = f"{client.make_qualified_table_name(WEBHOOK_TABLE)}"
        rows = client.execute_sql(f"select id, cast(data as varchar) from {table}") or []
    held = {str(delivery_id): text for delivery_id, text in rows}
    changed = 0
    for delivery in store.loaded():
        if delivery.id not in held:
            continue
        data = None if held[delivery.id] is None else json.loads(held[delivery.id])
        if (json.loads(delivery.body).get("data") or {}) != data:
            store.rewrite(delivery.id, scrubbed_body(delivery.body, data))
            changed += 1
    store.set_meta("privacy", marker)
    return changed


@dataclass(frozen=True)
class LoadResult:
    loaded: int
    load_id: str | None
    set_aside: tuple[SetAside, ...] = ()  # by this load
    replaced: int = 0  # deliveries loaded with U+FFFD in place of a lone surrogate


@dataclass(frozen=True)
class Decoded:
    """The pending deliveries split: those that load (with their rows), and why the others cannot."""

    deliveries: list[StoredDelivery]
    rows: list[dict[str, Any]]
    reasons: dict[str, str]
    replaced: int


def decode_pending(pending: list[StoredDelivery]) -> Decoded:
    """Each pending delivery's row, or the reason it cannot be loaded."""
    deliveries: list[StoredDelivery] = []
    rows: list[dict[str, Any]] = []
    reasons: dict[str, str] = {}
    replaced = 0
    for delivery in pending:
        try:
            row, changed = delivery.loadable()
        except MalformedDelivery as exc:
            reasons[delivery.id] = str(exc)
            continue
        deliveries.append(delivery)
        rows.append(row)
        replaced += changed > 0
    return Decoded(deliveries, rows, reasons, replaced)


def load_deliveries(store_path: str | Path, destination: str, dataset: str) -> LoadResult:
    """Load every stored delivery not loaded yet (merged on the delivery id) and mark it loaded; set aside
    those that cannot be loaded."""
    sync_pipeline = make_pipeline(destination, dataset)
    pipeline = companion_pipeline(WEBHOOK_PIPELINE, sync_pipeline)
    store = DeliveryStore(store_path)
    try:
        with run_lock(pipeline, "write", command="platform-sync webhooks load"):
            align_store(pipeline, store)
            decoded = decode_pending(store.unloaded())
            aside = set_aside(store, decoded.reasons)
            if not decoded.deliveries:
                return LoadResult(0, None, aside)
            load_id = load_rows(pipeline, sync_pipeline, store, decoded)
            return LoadResult(len(decoded.deliveries), load_id, aside, decoded.replaced)
    finally:
        store.close()


def set_aside(store: DeliveryStore, reasons: dict[str, str]) -> tuple[SetAside, ...]:
    """Mark these deliveries set aside (kept for inspection, never tried again), before the others load."""
    if not reasons:
        return ()
    store.set_aside(reasons)
    return tuple(delivery for delivery in store.set_aside_deliveries() if delivery.id in reasons)


def load_rows(
    pipeline: dlt.Pipeline, sync_pipeline: dlt.Pipeline, store: DeliveryStore, decoded: Decoded
) -> str:
    """Merge the decoded rows into `webhook_events`, then mark their deliveries loaded; the load id."""
    pending, rows = decoded.deliveries, decoded.rows
    settings = configured_privacy()

    def fallback() -> dict[str, Any]:
        return source_fallback(sync_pipeline)

    # never deliveries under other settings than those the table holds (`privacy_rewrite.py`)
    check_companions(pipeline, settings, fallback, [WEBHOOK_TABLE], "no delivery was loaded")
    scrubber = Scrubber(settings, forgotten_from_destination)
    if scrubber.changes_anything():  # personal values as the sync treats them (`privacy/`)
        for row in rows:
            row["data"] = scrubber.json(row["data"])
    resource = dlt.resource(
        rows,
        name=WEBHOOK_TABLE,
        primary_key="id",
        write_disposition="merge",
        columns=COLUMNS,
    )
    info = pipeline.run(resource)
    info.raise_on_failed_jobs()
    load_id: str = info.loads_ids[-1]
    note_written(pipeline, WEBHOOK_TABLE, settings, fallback)
    # Marked only after the load committed: a crash in between loads these rows again (merged).
    store.mark_loaded([delivery.id for delivery in pending], load_id)
    if scrubber.changes_anything():  # the store keeps raw values only until they are loaded
        for delivery, row in zip(pending, rows, strict=True):
            store.rewrite(delivery.id, scrubbed_body(delivery.body, row["data"]))
    return load_id
