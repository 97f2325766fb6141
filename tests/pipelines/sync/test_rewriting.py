"""Which change of the privacy settings a companion table can be rewritten for, and how."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dlt
import pytest

from pipelines.sync import privacy_rewrite
from pipelines.sync.platform_pipeline import make_pipeline
from pipelines.sync.privacy_rewrite import rewrite_companions, rewriting
from pipelines.webhooks.loader import load_deliveries
from pipelines.webhooks.store import DeliveryStore, parse_delivery
from sources.platform.privacy import OFF, parse_privacy
from tests.support.postgres_server import running_postgres
from tests.support.webhooks import envelope

KEY = "privacy-key-for-tests-7f3a9c0d"


def test_raw_values_are_hashed_or_blocked_and_pseudonyms_blocked() -> None:
    before = parse_privacy({"emails": "keep", "phones": "hash", "names": "block"}, KEY)
    after = parse_privacy({"emails": "hash", "phones": "block", "names": "keep", "addresses": "block"}, KEY)
    rewrite, impossible = rewriting(before.record(), after)
    assert impossible == []
    assert dict(rewrite.modes) == {
        "documents": "keep",
        "emails": "hash",
        "phones": "block",
        "names": "keep",  # null under block: nothing to change
        "addresses": "block",
    }
    assert rewrite.pseudonym("emails", " Ana@X.com") == after.pseudonym("emails", "ana@x.com")


def test_the_same_settings_change_nothing() -> None:
    settings = parse_privacy({"emails": "hash"}, KEY)
    rewrite, impossible = rewriting(settings.record(), settings)
    assert impossible == [] and not rewrite.active
    rewrite, impossible = rewriting(OFF.record(), OFF)
    assert impossible == [] and not rewrite.active


def test_a_pseudonym_cannot_be_turned_back_nor_into_another_keys() -> None:
    hashed = parse_privacy({"emails": "hash", "documents": "hash"}, KEY)
    assert rewriting(hashed.record(), OFF)[1] == ["documents hash -> keep", "emails hash -> keep"]
    rotated = parse_privacy({"emails": "hash", "documents": "block"}, "another-key-for-tests-12345")
    rewrite, impossible = rewriting(hashed.record(), rotated)
    assert impossible == ["emails under another key"]
    assert rewrite.mode("documents") == "block"


def test_a_table_is_rewritten_whole_or_not_at_all_and_only_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(tmp_path / "warehouse.duckdb"))
    rewritten_whole_once(tmp_path, monkeypatch, "duckdb")


def test_on_postgres_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with running_postgres() as server:
        server.create_database("privacy_rewrite")
        monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", server.credentials("privacy_rewrite"))
        rewritten_whole_once(tmp_path, monkeypatch, "postgres")


def rewritten_whole_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, destination: str) -> None:
    store = DeliveryStore(tmp_path / "webhooks.sqlite")
    store.add(parse_delivery(envelope("w-1", email="Ana@Example.com", name="Ana Lima", invoiceId="7")))
    store.add(parse_delivery(envelope("w-2", "course.comment_created", learnerEmail="bruno@example.com")))
    store.close()
    assert load_deliveries(tmp_path / "webhooks.sqlite", destination, "platform_raw").loaded == 2
    settings = parse_privacy({"emails": "hash"}, KEY)
    pipeline = make_pipeline(destination, "platform_raw")
    raw = _data(pipeline)

    def fails(*args: Any) -> None:
        raise RuntimeError("the disk is full")

    with monkeypatch.context() as patch:  # the record is written last, in the same transaction
        patch.setattr(privacy_rewrite, "_write_record", fails)
        with pytest.raises(RuntimeError):
            rewrite_companions(pipeline, settings, OFF.record)
    assert _data(pipeline) == raw

    assert rewrite_companions(pipeline, settings, OFF.record) == {
        "platform_raw.webhook_events": 2,
        "platform_raw_staging.webhook_events": 2,
    }
    hashed = {
        "w-1": {
            "email": settings.pseudonym("emails", "ana@example.com"),
            "name": "Ana Lima",
            "invoiceId": "7",
        },
        "w-2": {"learnerEmail": settings.pseudonym("emails", "bruno@example.com")},
    }
    assert _data(pipeline) == hashed
    assert rewrite_companions(pipeline, settings, OFF.record) == {}  # recorded: never hashed twice
    assert _data(pipeline) == hashed


def _data(pipeline: dlt.Pipeline) -> dict[str, Any]:
    with pipeline.sql_client() as client:
        rows = client.execute_sql("select id, cast(data as varchar) from platform_raw.webhook_events")
    return {key: json.loads(text) for key, text in rows or []}
