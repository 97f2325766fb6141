"""`platform-sync attendees import`: add people to an event's attendee list, from a CSV or a SQL query.

The order of a run, and why (the input side is `attendee_rows.py`):
1. Every row is validated before any request (name, email, CPF with its check digits or a passport,
   phone); bad rows are reported with their line numbers and never sent.
2. The event's attendee list is read once: a person already on it (same document or email) is skipped.
   This also settles the rows a killed run may have sent: the journal (`.dlt/imports/`, one per event
   and ticket, fsynced) records an intent before each POST and its outcome after, so an intent without
   an outcome found on the list is reported as created, and one not found is sent again.
3. The rest is sent through the API client, whose rate limiter paces `add_attendee` at its 30 per
   minute (no 429), with progress and an ETA on stderr. A 422 rejects one row and the run goes on; a
   401/403 stops it with what to do; a POST whose answer was lost is never resent blindly: the list is
   searched for the person first.
4. Each row's outcome goes to a results CSV and to the warehouse table `attendee_imports` (dlt).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dlt

from pipelines.commands.attendee_rows import Row, mark_duplicates
from pipelines.sync.companion import companion_pipeline, run_companion
from pipelines.sync.lock import hold, run_lock
from pipelines.sync.platform_pipeline import make_pipeline
from pipelines.sync.privacy_rewrite import check_companions, note_written, source_fallback
from sources.platform.privacy import Scrubber, configured_privacy
from sources.platform.privacy.forgotten import forgotten_from_destination
from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import (
    REAUTHORIZE_HINT,
    AuthenticationError,
    ConfigurationError,
    NotFoundError,
    PermissionDeniedError,
    PlatformError,
    ValidationError,
)

IMPORT_PIPELINE = "platform_sync_attendee_imports"
IMPORT_TABLE = "attendee_imports"
RESULT_FIELDS = ("line", "name", "email", "document_type", "outcome", "attendee_id", "reason")


class Journal:
    """Intents and outcomes of POSTs, one JSON line each, fsynced before the POST / after the answer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.in_doubt: dict[str, dict[str, Any]] = {}
        self.last_intent: float | None = None  # epoch seconds of the latest POST of any run
        if path.exists():
            for text in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(text)
                except ValueError:
                    continue  # a line cut by a crash: its POST had not been sent yet
                if entry.get("step") == "intent":
                    self.in_doubt[entry["key"]] = entry
                    self.last_intent = datetime.fromisoformat(entry["at"]).timestamp()
                else:
                    self.in_doubt.pop(entry.get("key"), None)
        self._handle = path.open("a", encoding="utf-8")

    def write(self, **entry: Any) -> None:
        self._handle.write(json.dumps({**entry, "at": datetime.now(UTC).isoformat()}) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


def attendee_index(client: PlatformClient, event_id: str, search: str | None = None) -> dict[str, str]:
    """Documents (`cpf:...`, `passport:...`) and emails of the event's attendees -> attendee id."""
    index: dict[str, str] = {}
    params = {"search": search} if search else None
    for page in client.paginate("list_attendees", path_params={"id": event_id}, params=params):
        for item in page.items:
            attendee_id = str(item.get("id") or "")
            kind = str(item.get("documentType") or "").lower()
            document = str(item.get("document") or "")
            document = re.sub(r"[.\-\s]", "", document) if kind == "cpf" else document.upper()
            if document:
                index[f"{kind}:{document}"] = attendee_id
            if item.get("email"):
                index[str(item["email"]).strip().lower()] = attendee_id
    return index


def found(index: Mapping[str, str], row: Row) -> str | None:
    return index.get(row.key) or index.get(row.email)


@dataclass
class Progress:
    """A line on stderr every few seconds: rows sent, outcomes, and an ETA at the observed pace."""

    total: int
    started: float = field(default_factory=time.monotonic)
    last: float = 0.0
    done: int = 0

    def step(self, rows: Iterable[Row], force: bool = False) -> None:
        self.done += 1
        now = time.monotonic()
        if not force and now - self.last < 2.0 and self.done < self.total:
            return
        self.last = now
        pace = (now - self.started) / self.done
        eta = int(pace * (self.total - self.done))
        counts: dict[str, int] = {}
        for row in rows:
            if row.outcome:
                counts[row.outcome] = counts.get(row.outcome, 0) + 1
        told = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"sent {self.done}/{self.total} ({told}); ETA {eta // 60}:{eta % 60:02d}", file=sys.stderr)


def rate_window() -> float:
    """Seconds of the API's rate-limit window as the client sees it (a minute over the time scale),
    with the client's margin and a little more."""
    scale: Any = dlt.config.get("sources.platform.rate_limit_time_scale") or 1.0
    return 60.0 / float(scale) * 1.05


def client_from_config() -> PlatformClient:
    """The API client as the sync builds it, from `[sources.platform]` config and secrets."""
    base_url: Any = dlt.config.get("sources.platform.base_url")
    token: Any = dlt.secrets.get("sources.platform.access_token")
    if not base_url or not token:
        raise ConfigurationError("missing base_url or access_token under [sources.platform]")
    scale: Any = dlt.config.get("sources.platform.rate_limit_time_scale") or 1.0
    limits: Any = dlt.config.get("sources.platform.rate_limits") or {}
    tries: Any = dlt.config.get("sources.platform.max_retries") or 6
    return PlatformClient(
        str(base_url),
        str(token),
        rate_limits=dict(limits),
        rate_limit_time_scale=float(scale),
        max_retries=int(tries),
    )


def send(
    client: PlatformClient,
    rows: list[Row],
    event_id: str,
    ticket_id: str,
    use_stock: bool,
    journal: Journal,
    window: float,
) -> str | None:
    """POST each row still to send; the reason the run stopped (401/403/404), or None."""
    todo = [row for row in rows if not row.outcome]
    wait_out_earlier_run(journal, window)
    progress = Progress(len(todo))
    for n, row in enumerate(todo):
        body = {
            "eventId": event_id,
            "ticketId": ticket_id,
            "name": row.name,
            "document": row.document,
            "documentType": row.document_type,
            "email": row.email,
            "phone": row.phone,
            "useStock": use_stock,
        }
        journal.write(step="intent", key=row.key, email=row.email, line=row.line)
        try:
            answer = client.request("add_attendee", json=body)
            row.outcome, row.attendee_id = "created", str(answer.get("id") or "")
        except ValidationError as exc:
            row.outcome, row.reason = "rejected", exc.server_message or str(exc)
        except (AuthenticationError, PermissionDeniedError, NotFoundError) as exc:
            for later in todo[n:]:
                later.outcome, later.reason = "not_sent", "the run stopped before this row"
            journal.write(step="outcome", key=row.key, outcome="not_sent")
            return stop_message(exc)
        except PlatformError as exc:  # the answer was lost or the server failed: did it go through?
            there = found(attendee_index(client, event_id, search=row.email), row)
            if there:
                row.outcome, row.attendee_id = "created", there
            else:
                row.outcome, row.reason = (
                    "failed",
                    f"{exc}; not created (checked the list): run again to retry",
                )
        journal.write(step="outcome", key=row.key, outcome=row.outcome, id=row.attendee_id)
        progress.step(rows, force=n == len(todo) - 1)
    return None


def wait_out_earlier_run(journal: Journal, window: float) -> None:
    """A run killed a moment ago spent part of this rate window at the platform, which this process's
    limiter cannot know: wait until a whole window has passed since its last POST (no 429)."""
    if journal.last_intent is None:
        return
    wait = journal.last_intent + window - time.time()
    if wait > 0:
        print(
            f"waiting {wait:.1f}s: an earlier run sent requests within the last rate window", file=sys.stderr
        )
        time.sleep(wait)


def stop_message(exc: PlatformError) -> str:
    if isinstance(exc, AuthenticationError):
        return f"the token was rejected (401): {REAUTHORIZE_HINT}"
    if isinstance(exc, NotFoundError):
        return f"the event or the ticket was not found (404): check --event and --ticket. {exc}"
    return (
        "the token may not add attendees to this event (403): it needs the scopes events_read and "
        f"events_write and an event of its account; authorize again with them. {exc}"
    )


def write_results(path: Path, rows: list[Row]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=RESULT_FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: v for k, v in asdict(row).items() if k in RESULT_FIELDS})


def load_results(rows: list[Row], event_id: str, ticket_id: str, destination: str, dataset: str) -> str:
    """The outcomes into `attendee_imports` (one row per input row and run); returns the run's id."""
    import_id = uuid.uuid4().hex
    imported_at = datetime.now(UTC)
    records = [
        {
            "import_id": import_id,
            "imported_at": imported_at,
            "event_id": event_id,
            "ticket_id": ticket_id,
            **{k: v for k, v in asdict(row).items() if k in RESULT_FIELDS},
        }
        for row in rows
    ]
    sync_pipeline = make_pipeline(destination, dataset)
    pipeline = companion_pipeline(IMPORT_PIPELINE, sync_pipeline)
    settings = configured_privacy()
    fallback = _source_record(sync_pipeline)
    scrubber = Scrubber(settings, forgotten_from_destination)
    if scrubber.changes_anything():  # the name and email as the sync treats them (`privacy/`)
        records = [scrubber.json(record) for record in records]

    with run_lock(pipeline, "write", command="platform-sync attendees import"):
        # never results under other settings than those the table holds (`privacy_rewrite.py`)
        check_companions(pipeline, settings, fallback, [IMPORT_TABLE], "no result was loaded")
        resource = dlt.resource(
            records, name=IMPORT_TABLE, primary_key=("import_id", "line"), write_disposition="merge"
        )
        run_companion(pipeline, resource).raise_on_failed_jobs()
        note_written(pipeline, IMPORT_TABLE, settings, fallback)
    return import_id


def _source_record(sync_pipeline: dlt.Pipeline) -> Callable[[], dict[str, Any]]:
    return lambda: source_fallback(sync_pipeline)


def check_results_privacy(destination: str, dataset: str) -> None:
    """Before any request: the results could be loaded under the privacy settings (exit status 2 if
    `attendee_imports` holds values written under others: `sync --full-refresh` rewrites them)."""
    sync_pipeline = make_pipeline(destination, dataset)
    pipeline = companion_pipeline(IMPORT_PIPELINE, sync_pipeline)
    check_companions(
        pipeline, configured_privacy(), _source_record(sync_pipeline), [IMPORT_TABLE], "no attendee was sent"
    )


def journal_path(event_id: str, ticket_id: str) -> Path:
    digest = hashlib.sha256(f"{event_id}|{ticket_id}".encode()).hexdigest()[:16]
    return Path(".dlt") / "imports" / f"attendees-{digest}.jsonl"


def run_import(
    rows: list[Row],
    event_id: str,
    ticket_id: str,
    *,
    use_stock: bool,
    dry_run: bool,
    results: Path,
    destination: str,
    dataset: str,
) -> int:
    """The whole import; exit status 0 (every row created or already there), 3 (some invalid or
    rejected), 1 (stopped: token, permission, event/ticket), 2 (nothing valid to do)."""
    mark_duplicates(rows)
    for row in rows:
        if row.outcome == "invalid":
            print(f"line {row.line}: {row.reason}", file=sys.stderr)
    valid = [row for row in rows if row.outcome != "invalid"]
    print(f"{len(rows)} rows: {len(valid)} valid, {len(rows) - len(valid)} invalid", file=sys.stderr)
    stopped = None
    if not dry_run:
        check_results_privacy(destination, dataset)
    with (
        client_from_config() as client,
        hold(
            journal_path(event_id, ticket_id).with_suffix(".lock"),
            "write",
            f"the attendee import of event {event_id}",
        ),
    ):
        event = client.request("event_details", path_params={"id": event_id})
        if ticket_id not in {str(t.get("id")) for t in event.get("tickets") or []}:
            raise ConfigurationError(f"ticket {ticket_id} is not a ticket of event {event_id}")
        journal = Journal(journal_path(event_id, ticket_id))
        try:
            index = attendee_index(client, event_id)
            for row in valid:
                there = None if row.outcome else found(index, row)
                if there:
                    doubt = row.key in journal.in_doubt
                    row.outcome, row.attendee_id = ("created" if doubt else "skipped"), there
                    row.reason = "sent by an interrupted run" if doubt else "already on the attendee list"
                    if doubt and not dry_run:
                        journal.write(step="outcome", key=row.key, outcome="created", id=there)
                elif not row.outcome and dry_run:
                    row.outcome = "would_create"
            if not dry_run:
                stopped = send(client, rows, event_id, ticket_id, use_stock, journal, rate_window())
        finally:
            journal.close()
    write_results(results, rows)
    counts = {o: sum(1 for r in rows if r.outcome == o) for o in dict.fromkeys(r.outcome for r in rows)}
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f"; results in {results}")
    if not dry_run:
        import_id = load_results(rows, event_id, ticket_id, destination, dataset)
        print(f"recorded in {dataset}.{IMPORT_TABLE} (import_id {import_id})")
    for row in rows:
        if row.outcome == "rejected":
            print(f"line {row.line}: rejected by the platform: {row.reason}", file=sys.stderr)
    if stopped:
        print(f"STOPPED: {stopped}", file=sys.stderr)
        return 1
    return 3 if any(r.outcome in ("invalid", "rejected", "failed") for r in rows) else 0
