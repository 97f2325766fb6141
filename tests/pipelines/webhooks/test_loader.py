"""`platform-sync webhooks load`: stored deliveries merge into webhook_events once, even when reloaded."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time

import duckdb

from pipelines.webhooks.loader import load_deliveries
from pipelines.webhooks.store import DeliveryStore, parse_delivery
from tests.support.webhooks import PROJECT_ROOT, SECRET, envelope, free_port, receiver_env, running_receiver


def test_load_merges_on_the_delivery_id_and_survives_a_crash_before_marking(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(tmp_path / "warehouse.duckdb"))
    store = DeliveryStore(tmp_path / "store.sqlite")
    for n in range(4):
        store.add(parse_delivery(envelope(f"d-{n}", "store.invoice_refunded", invoiceId=str(500 + n))))
    store.add(parse_delivery(envelope("c-1", "course.comment_created", lessonId=7)))
    store.close()
    first = load_deliveries(tmp_path / "store.sqlite", "duckdb", "platform_raw")
    assert first.loaded == 5
    assert load_deliveries(tmp_path / "store.sqlite", "duckdb", "platform_raw").loaded == 0
    # A crash after the load and before the mark: the rows are loaded again and merged.
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        db.execute("update deliveries set load_id = null")
    assert load_deliveries(tmp_path / "store.sqlite", "duckdb", "platform_raw").loaded == 5
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as db:
        rows = db.execute(
            "select id, event, kind, sale_id, data from platform_raw.webhook_events order by id"
        ).fetchall()
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("c-1", "course.comment_created", "comment_created", None),
        *((f"d-{n}", "store.invoice_refunded", "invoice_refunded", str(500 + n)) for n in range(4)),
    ]
    assert json.loads(rows[0][4]) == {"lessonId": 7}


def test_sandbox_cli_sends_a_ping_to_its_webhook_url(tmp_path):
    port = free_port()
    env = receiver_env(tmp_path)
    env["SANDBOX_WEBHOOK_SECRET"] = SECRET
    url = f"http://127.0.0.1:{port}/webhooks"
    with running_receiver(tmp_path, tmp_path / "store.sqlite", port=port):
        command = [
            sys.executable,
            "-m",
            "sandbox",
            "serve",
            "--port",
            "0",
            "--auth-port",
            "0",
            "--scale",
            "50",
        ]
        sandbox = subprocess.Popen(
            [*command, "--webhook-url", url], env=env, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True
        )
        try:
            assert sandbox.stdout is not None
            banner = [sandbox.stdout.readline() for _ in range(3)]
            assert f"webhooks: {url}\n" in banner and SECRET not in "".join(banner)
            store = DeliveryStore(tmp_path / "store.sqlite")
            for _ in range(200):
                if [d.id for d in store.all()] == ["ping-1"]:
                    break
                time.sleep(0.05)
            assert [(d.id, d.event) for d in store.all()] == [("ping-1", "ping")]
        finally:
            sandbox.terminate()
            sandbox.wait(15)
            assert sandbox.stdout is not None
            sandbox.stdout.close()
    refused = subprocess.run(
        [*command, "--webhook-url", url],
        env=receiver_env(tmp_path),
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "SANDBOX_WEBHOOK_SECRET" in refused.stderr
