"""The attendee import's results and the webhook deliveries, with pseudonymisation on: pseudonyms in the
warehouse and, once loaded, in the webhook store; `forget` finds them there by their pseudonym."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from pipelines.commands.attendee_rows import Row
from pipelines.commands.attendees_import import load_results
from pipelines.commands.forget import forget, wanted
from pipelines.sync.platform_pipeline import make_pipeline
from pipelines.webhooks.loader import load_deliveries
from pipelines.webhooks.store import DeliveryStore, parse_delivery
from sources.platform.privacy import configured_privacy, parse_privacy
from tests.support.privacy_scan import sqlite_texts
from tests.support.webhooks import envelope

KEY = "privacy-key-for-tests-7f3a9c0d"
SETTINGS = parse_privacy({"emails": "hash", "names": "hash"}, KEY)


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(tmp_path / "warehouse.duckdb"))
    monkeypatch.setenv("SOURCES__PLATFORM__PRIVACY", json.dumps({"emails": "hash", "names": "hash"}))
    monkeypatch.setenv("SOURCES__PLATFORM__PRIVACY_KEY", KEY)
    return tmp_path


def _rows(folder: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def test_import_results_and_deliveries_hold_pseudonyms_and_forget_finds_them(configured: Path) -> None:
    assert configured_privacy() == SETTINGS
    rows = [
        Row(1, "Ana Lima", "ana@example.com", "12345678909", "cpf", "5511987654321", outcome="created"),
        Row(2, "Bruno Dias", "bruno@example.com", "98765432100", "cpf", "5511912345678", outcome="skipped"),
    ]
    load_results(rows, "event-1", "ticket-1", "duckdb", "platform_raw")
    assert _rows(
        configured, "select line, name, email, outcome from platform_raw.attendee_imports order by line"
    ) == [
        (
            1,
            SETTINGS.pseudonym("names", "Ana Lima"),
            SETTINGS.pseudonym("emails", "ana@example.com"),
            "created",
        ),
        (
            2,
            SETTINGS.pseudonym("names", "Bruno Dias"),
            SETTINGS.pseudonym("emails", "bruno@example.com"),
            "skipped",
        ),
    ]

    store = DeliveryStore(configured / "webhooks.sqlite")
    store.add(parse_delivery(envelope("w-1", email="Ana@Example.com", name="Ana Lima", invoiceId="7")))
    store.add(parse_delivery(envelope("w-2", "course.comment_created", learnerEmail="bruno@example.com")))
    store.close()
    assert load_deliveries(configured / "webhooks.sqlite", "duckdb", "platform_raw").loaded == 2
    data = dict(_rows(configured, "select id, data from platform_raw.webhook_events"))
    assert {k: json.loads(v) for k, v in data.items()} == {
        "w-1": {
            "email": SETTINGS.pseudonym("emails", "ana@example.com"),
            "name": SETTINGS.pseudonym("names", "Ana Lima"),
            "invoiceId": "7",
        },
        "w-2": {"learnerEmail": SETTINGS.pseudonym("emails", "bruno@example.com")},
    }
    stored = " ".join(text for _, text in sqlite_texts(configured / "webhooks.sqlite"))
    assert "example.com" not in stored.lower() and "Ana Lima" not in stored
    assert SETTINGS.pseudonym("emails", "ana@example.com") in stored

    result = forget(
        make_pipeline(), SETTINGS, wanted(SETTINGS, "ANA@example.com", None), configured / "webhooks.sqlite"
    )
    assert result.rows == {  # dlt's staging copies of the last merge too
        "platform_raw.attendee_imports": 1,
        "platform_raw.webhook_events": 1,
        "platform_raw_staging.attendee_imports": 1,
        "platform_raw_staging.webhook_events": 1,
    }
    assert result.deliveries == 1 and result.kept
    assert _rows(configured, "select line, name, email from platform_raw.attendee_imports order by line") == [
        (1, None, None),
        (2, SETTINGS.pseudonym("names", "Bruno Dias"), SETTINGS.pseudonym("emails", "bruno@example.com")),
    ]
    data = dict(_rows(configured, "select id, data from platform_raw.webhook_events"))
    assert json.loads(data["w-1"]) == {"email": None, "name": None, "invoiceId": "7"}
    stored = " ".join(text for _, text in sqlite_texts(configured / "webhooks.sqlite"))
    assert SETTINGS.pseudonym("emails", "ana@example.com") not in stored
    assert SETTINGS.pseudonym("emails", "bruno@example.com") in stored

    # Ana imported again: the results table gets her blanked (she is on the kept list)
    load_results(rows[:1], "event-1", "ticket-1", "duckdb", "platform_raw")
    assert _rows(configured, "select name, email from platform_raw.attendee_imports where line = 1") == [
        (None, None),
        (None, None),
    ]
