"""Issue 53: one stored delivery that dlt cannot write no longer blocks every later `webhooks load`.

A lone surrogate (`\\ud83d`, legal JSON as JavaScript's JSON.stringify writes it) costs only that value
(U+FFFD); a delivery that cannot be loaded at all is set aside in the store with its reason, reported in
one line (exit 3, partial), never retried; every other delivery loads once.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import httpx

from tests.support.webhooks import envelope, receiver_env, running_receiver, sign

GOOD = 205
DEEP_LEVELS = 300  # stored by the receiver before issue 53 (Python's json reads it), which orjson refuses


def webhooks_load(tmp_path: Path, store: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pipelines.cli", "webhooks", "load", "--store", str(store)]
    return subprocess.run(
        command, env=receiver_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=300
    )


def loaded_events(tmp_path: Path) -> list[tuple[str, str, str | None, str]]:
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as db:
        rows = db.execute(
            "select id, kind, sale_id, cast(data as varchar) from platform_raw.webhook_events order by id"
        ).fetchall()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def set_aside(store: Path) -> dict[str, tuple[str | None, str | None]]:
    with sqlite3.connect(store) as db:
        rows = db.execute("select id, set_aside, load_id from deliveries where set_aside is not null")
        return {r[0]: (r[1], r[2]) for r in rows}


def surrogate_body() -> bytes:
    """Half an emoji, as JavaScript writes it: in a value and in a key of `data`."""
    return (
        b'{"id": "poison-1", "event": "store.invoice_paid", "sentDate": "2026-06-01T00:00:00.000Z", '
        b'"data": {"invoiceId": "900", "name": "Ana \\ud83d", "note\\udc00": "kept"}}'
    )


def huge_integer_body() -> bytes:
    return json.dumps({"id": "huge-1", "event": "store.invoice_paid", "data": {"total": 2**70}}).encode()


def test_a_poisoned_delivery_costs_one_value_an_unloadable_one_is_set_aside_the_rest_load(tmp_path):
    store = tmp_path / "store.sqlite"
    good = [envelope(f"d-{n:03d}", invoiceId=str(100 + n)) for n in range(GOOD)]
    with running_receiver(tmp_path, store) as receiver, httpx.Client(timeout=30) as client:
        for body in [*good[:100], surrogate_body(), huge_integer_body(), *good[100:]]:
            answer = client.post(receiver.url, content=body, headers={"x-signature": sign(body)})
            assert answer.status_code == 200, (answer.status_code, answer.text)
    deep = '{"id": "deep-1", "event": "course.comment_created", "data": ' + "[" * DEEP_LEVELS
    deep += "]" * DEEP_LEVELS + "}"
    with sqlite3.connect(store) as db:  # as the receiver stored it before issue 53
        db.execute(
            "insert into deliveries (id, event, kind, received_at, body) values (?, ?, ?, ?, ?)",
            ("deep-1", "course.comment_created", "comment_created", "2026-06-01T00:00:00.000000Z", deep),
        )

    first = webhooks_load(tmp_path, store)

    assert first.returncode == 3, first.stdout + first.stderr
    assert f"loaded {GOOD + 1} deliveries into platform_raw.webhook_events" in first.stdout
    assert "\n1 delivery loaded with U+FFFD in place of a lone surrogate\n" in first.stdout
    lines = first.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("2 deliveries set aside"), first.stderr
    assert "deep-1" in lines[0] and "huge-1" in lines[0] and "not retried" in lines[0]
    assert "poison-1" not in first.stderr
    good_rows = [
        (f"d-{n:03d}", "invoice_paid", f"{100 + n}", {"invoiceId": f"{100 + n}"}) for n in range(GOOD)
    ]
    replaced = {"invoiceId": "900", "name": "Ana \ufffd", "note\ufffd": "kept"}  # only the half emoji lost
    poisoned = ("poison-1", "invoice_paid", "900", replaced)
    events = loaded_events(tmp_path)
    assert [(i, k, s, json.loads(d)) for i, k, s, d in events] == [*good_rows, poisoned]
    aside = set_aside(store)
    assert sorted(aside) == ["deep-1", "huge-1"]
    assert "nested more than 128 levels" in str(aside["deep-1"][0]), aside
    assert "data.total does not fit in 64 bits" in str(aside["huge-1"][0]), aside
    assert aside["deep-1"][1] is None and aside["huge-1"][1] is None  # never marked loaded

    rerun = webhooks_load(tmp_path, store)

    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert rerun.stdout.strip() == "no new deliveries to load" and rerun.stderr == ""
    assert loaded_events(tmp_path) == events
    assert sorted(set_aside(store)) == ["deep-1", "huge-1"]


def test_forget_rewrites_a_stored_delivery_that_holds_a_lone_surrogate(tmp_path):
    store = tmp_path / "store.sqlite"
    body = (
        b'{"id": "w-1", "event": "store.invoice_paid", '
        b'"data": {"email": "ana@example.com", "note": "half \\ud83d", "invoiceId": "5"}}'
    )
    with running_receiver(tmp_path, store) as receiver:
        assert httpx.post(receiver.url, content=body, headers={"x-signature": sign(body)}).status_code == 200
    assert webhooks_load(tmp_path, store).returncode == 0
    command = [sys.executable, "-m", "pipelines.cli", "forget", "--email", "ana@example.com"]
    forgot = subprocess.run(
        [*command, "--webhook-store", str(store)],
        env=receiver_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    with sqlite3.connect(store) as db:
        (kept,) = db.execute("select body from deliveries where id = 'w-1'").fetchone()
    # the same JSON but for the person: the half emoji still written as its escape, as it was sent
    assert json.loads(kept)["data"] == {"email": None, "note": "half \ud83d", "invoiceId": "5"}
    assert "\\ud83d" in kept
    ((delivery_id, _, _, data),) = loaded_events(tmp_path)
    assert (delivery_id, json.loads(data)) == (
        "w-1",
        {"email": None, "note": "half \ufffd", "invoiceId": "5"},
    )


OLDER_STORE = """
create table deliveries (
    id text primary key, event text not null, kind text not null, sale_id text, sent_date text,
    received_at text not null, body text not null, load_id text
)
"""


def test_a_store_written_before_issue_53_loads_what_it_can_and_sets_the_rest_aside(tmp_path):
    store = tmp_path / "store.sqlite"
    bodies = {  # as the receiver stored them then: it kept a byte order mark, and read 300 levels
        "old-1": envelope("old-1", invoiceId="1").decode(),
        "bom-1": "\ufeff" + envelope("bom-1", invoiceId="2").decode(),
        "deep-1": '{"id": "deep-1", "event": "x", "data": ' + "[" * DEEP_LEVELS + "]" * DEEP_LEVELS + "}",
    }
    with sqlite3.connect(store) as db:
        db.execute(OLDER_STORE)
        for n, (delivery_id, body) in enumerate(bodies.items()):
            sale_id = None if delivery_id == "deep-1" else str(n + 1)
            kind = "x" if delivery_id == "deep-1" else "invoice_paid"
            db.execute(
                "insert into deliveries values (?, ?, ?, ?, null, ?, ?, null)",
                (delivery_id, kind, kind, sale_id, f"2026-06-01T00:00:0{n}.000000Z", body),
            )

    first = webhooks_load(tmp_path, store)

    assert first.returncode == 3, first.stdout + first.stderr
    assert first.stderr.startswith("1 delivery set aside, not loaded and not retried (deep-1: the body is")
    assert [(i, s, json.loads(d)) for i, _, s, d in loaded_events(tmp_path)] == [
        ("bom-1", "2", {"invoiceId": "2"}),
        ("old-1", "1", {"invoiceId": "1"}),
    ]
    assert list(set_aside(store)) == ["deep-1"]
    rerun = webhooks_load(tmp_path, store)
    assert (rerun.returncode, rerun.stdout, rerun.stderr) == (0, "no new deliveries to load\n", "")
