"""Pseudonymisation turned on for a warehouse that holds raw values, the tables written beside the source's
included: webhook deliveries posted by the sandbox to the receiver and loaded (`webhook_events`), an
attendee import's results (`attendee_imports`). The documented procedure (`sync --full-refresh`) reloads
the source's tables and rewrites these two in place: afterwards no raw value is anywhere in the
warehouse, a person has the same pseudonym there as in the source's tables, and no row is lost. Turning
hashing off again cannot turn pseudonyms back: that stops with one line, nothing changed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipelines.webhooks.store import DeliveryStore, parse_delivery
from sandbox.running import SandboxHandle, running_sandbox
from sandbox.world import SyntheticWorld
from sandbox.world.clock import DAY, T0
from sandbox.world.webhooks import world_moves
from sources.platform.privacy import parse_privacy
from tests.pipelines.cli.test_cli import cli_env, run_cli
from tests.support.privacy_scan import Truth, leaks, sqlite_texts, warehouse_texts
from tests.support.sync_helpers import source_options
from tests.support.webhooks import SECRET, envelope, free_port, running_receiver
from tests.support.write_commands import person, write_csv

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("privacy_rewrite"), pytest.mark.timeout(1200)]

SEED, SCALE = 3, 200
PEOPLE = range(0, 301)  # the producer and the pool of buyers: every CPF, email and phone of the world
KEY = "privacy-key-for-tests-7f3a9c0d"
ALL_ON = {"emails": "hash", "documents": "hash", "phones": "hash", "names": "hash", "addresses": "block"}
SETTINGS = parse_privacy(ALL_ON, KEY)
DAYS = 10
# every column but the personal ones: what the rewrite must leave as it was
IMPORT_COLUMNS = "import_id, line, event_id, ticket_id, document_type, outcome, attendee_id, reason"
WEBHOOK_DATA = "select id, cast(data as varchar) from platform_raw.webhook_events order by id"
SALES = "select id, total__value, net_gain__value from platform_raw.sales"
WEBHOOK_COLUMNS = "id, event, kind, sale_id, sent_date, received_at"


def _rows(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def _deliver(sandbox: SandboxHandle, folder: Path, seed: int, scale: int) -> Path:
    """The world's moves of DAYS days (and the ping) posted to the receiver and stored; returns the store."""
    moves = len(world_moves(SyntheticWorld(seed, scale), T0, T0 + DAYS * DAY))
    port, store = free_port(), folder / "webhooks.sqlite"
    with running_receiver(folder, store, port=port):
        sandbox.set_webhooks(f"http://127.0.0.1:{port}/webhooks", SECRET)
        sandbox.advance(DAYS * 86400)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            snapshot = sandbox.webhooks()
            if snapshot["queued"] == 0 and snapshot["delivered"] == moves + 1:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"deliveries did not arrive: {sandbox.webhooks()}")
    sandbox.set_webhooks(None)
    return store


def _personal(folder: Path) -> dict[str, list[tuple[Any, ...]]]:
    return {
        "imports": _rows(folder, "select import_id, line, name, email from platform_raw.attendee_imports"),
        "webhooks": _rows(folder, WEBHOOK_DATA),
    }


def test_turning_hashing_on_rewrites_the_companion_tables_in_place(tmp_path: Path) -> None:
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=600.0) as sandbox:
        token = sandbox.token()
        store = _deliver(sandbox, tmp_path, SEED, SCALE)
        raw = source_options(sandbox, token)
        on = source_options(sandbox, token, privacy=ALL_ON, privacy_key=KEY)
        sync = ["sync", "--no-progress"]
        load = ["webhooks", "load", "--store", str(store)]

        # raw values everywhere: the sync, the deliveries, an attendee import
        assert (done := run_cli(sync, cli_env(tmp_path, raw), tmp_path)).returncode == 0, done.stderr
        assert (done := run_cli(load, cli_env(tmp_path, raw), tmp_path)).returncode == 0, done.stderr
        event = sandbox.catalog()["events"][0]
        guests = [person(n) for n in range(3)]
        csv_path = write_csv(tmp_path / "guests.csv", guests)
        imported = ["attendees", "import", str(csv_path), "--event", event["id"], "--ticket"]
        done = run_cli([*imported, event["ticket_ids"][0]], cli_env(tmp_path, raw), tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr

        webhook_rows = _rows(
            tmp_path, f"select {WEBHOOK_COLUMNS} from platform_raw.webhook_events order by id"
        )
        import_rows = _rows(
            tmp_path, f"select {IMPORT_COLUMNS} from platform_raw.attendee_imports order by 1, 2"
        )
        sales = set(_rows(tmp_path, SALES))
        raw_values = _personal(tmp_path)
        moves = len(world_moves(SyntheticWorld(SEED, SCALE), T0, T0 + DAYS * DAY))
        assert len(webhook_rows) == moves + 1 and moves > 5 and len(import_rows) == 3
        truth = Truth.of_world(SEED, PEOPLE)
        truth.emails |= {guest["email"] for guest in guests}
        truth.documents |= {guest["document"] for guest in guests}
        before = leaks(truth, warehouse_texts(tmp_path / "warehouse.duckdb"))
        for where in ("platform_raw.webhook_events.data", "platform_raw.attendee_imports.email"):
            assert where in before
        assert leaks(truth, sqlite_texts(store))  # the store holds them too, as loaded

        # hashing on: neither the webhook loader nor the sync adds pseudonyms beside the raw values
        late = DeliveryStore(store)
        late.add(parse_delivery(envelope("late-1", email="Late.Buyer@Example.com", invoiceId="1")))
        late.close()
        refused = run_cli(load, cli_env(tmp_path, on), tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "platform_raw.webhook_events holds values written under the earlier ones" in refused.stderr
        assert "platform-sync sync --full-refresh" in refused.stderr
        assert _personal(tmp_path) == raw_values

        # the documented procedure: the source reloaded, the companion tables rewritten in place
        done = run_cli([*sync, "--full-refresh"], cli_env(tmp_path, on), tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        # then the delivery that waited loads, as the rest now is
        assert (done := run_cli(load, cli_env(tmp_path, on), tmp_path)).returncode == 0, done.stderr

    assert leaks(truth, warehouse_texts(tmp_path / "warehouse.duckdb")) == {}
    assert leaks(truth, sqlite_texts(store)) == {}  # the store's loaded bodies follow the warehouse's
    # nothing lost: the same rows, every column but the personal ones as it was, the same money
    assert (
        _rows(
            tmp_path,
            f"select {WEBHOOK_COLUMNS} from platform_raw.webhook_events where id <> 'late-1' order by id",
        )
        == webhook_rows
    )
    late_data = _rows(tmp_path, "select data from platform_raw.webhook_events where id = 'late-1'")
    assert [json.loads(data) for (data,) in late_data] == [
        {"email": SETTINGS.pseudonym("emails", "late.buyer@example.com"), "invoiceId": "1"}
    ]
    assert (
        _rows(tmp_path, f"select {IMPORT_COLUMNS} from platform_raw.attendee_imports order by 1, 2")
        == import_rows
    )
    # (the world moved meanwhile: the attendee import sold tickets; every sale of before is there, the same)
    assert len(sales) > 50 and sales <= set(_rows(tmp_path, SALES))
    # each value became its pseudonym, as a fresh load writes it
    imports = {(i, line): (name, email) for i, line, name, email in raw_values["imports"]}
    assert sorted(_personal(tmp_path)["imports"]) == sorted(
        (i, line, SETTINGS.pseudonym("names", name), SETTINGS.pseudonym("emails", email))
        for (i, line), (name, email) in imports.items()
    )
    rewritten = dict(_rows(tmp_path, WEBHOOK_DATA))
    assert len(rewritten) == len(raw_values["webhooks"]) + 1
    for delivery, text in raw_values["webhooks"]:
        data, now = json.loads(text), json.loads(rewritten[delivery])
        expected = {
            k: SETTINGS.pseudonym("names" if k == "name" else "emails", v)
            if k in ("email", "name", "learnerEmail")
            else v
            for k, v in data.items()
        }
        assert now == expected, delivery
    # the same person, the same pseudonym: a paid invoice's email is its sale's buyer's, a guest's email
    # is the attendee's the sync loaded
    joined = _rows(
        tmp_path,
        "select count(*), count(*) filter (where json_extract_string(w.data, '$.email') = s.buyer__email) "
        "from platform_raw.webhook_events w join platform_raw.sales s on s.id = w.sale_id "
        "where w.event = 'store.invoice_paid'",
    )
    assert joined[0][0] > 0 and joined[0][0] == joined[0][1]
    guests_found = _rows(
        tmp_path,
        "select count(distinct i.email) from platform_raw.attendee_imports i "
        "join platform_raw.event_attendees a on a.email = i.email",
    )
    assert guests_found == [(3,)]
    recorded = _rows(tmp_path, "select table_name, modes, key_id from platform_raw._platform_privacy_tables")
    assert sorted((t, json.loads(m), k) for t, m, k in recorded) == [
        ("attendee_imports", ALL_ON, SETTINGS.key_id()),
        ("webhook_events", ALL_ON, SETTINGS.key_id()),
    ]


def test_pseudonyms_are_not_turned_back_a_full_refresh_with_hashing_off_stops(tmp_path: Path) -> None:
    with running_sandbox(seed=2, scale=50, time_scale=600.0) as sandbox:
        token = sandbox.token()
        store = _deliver(sandbox, tmp_path, 2, 50)
        on = source_options(sandbox, token, privacy={"emails": "hash"}, privacy_key=KEY)
        sync = ["sync", "--no-progress", "--resources", "products"]
        assert (done := run_cli(sync, cli_env(tmp_path, on), tmp_path)).returncode == 0, done.stderr
        load = ["webhooks", "load", "--store", str(store)]
        assert (done := run_cli(load, cli_env(tmp_path, on), tmp_path)).returncode == 0, done.stderr
        hashed = _rows(tmp_path, WEBHOOK_DATA)
        loads = _rows(tmp_path, "select count(*) from platform_raw._dlt_loads")

        off = source_options(sandbox, token)
        refused = run_cli([*sync, "--full-refresh"], cli_env(tmp_path, off), tmp_path)
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            "configuration error: the privacy settings changed, and platform_raw.webhook_events (emails "
            "hash -> keep) holds pseudonyms that cannot be turned back into values nor into another key's: "
            "nothing was synced. Put the earlier settings back, or drop what cannot be rewritten "
            "(`drop table platform_raw.webhook_events`: those rows are not loaded again) and run "
            "`platform-sync sync --full-refresh` again (docs/contracts.md, section 7)"
        ]
        rotated = {**on, "privacy_key": "another-key-for-tests-12345"}
        refused = run_cli([*sync, "--full-refresh"], cli_env(tmp_path, rotated), tmp_path)
        assert refused.returncode == 2 and "(emails under another key)" in refused.stderr
        assert "another-key-for-tests" not in refused.stderr
        assert _rows(tmp_path, WEBHOOK_DATA) == hashed
        assert _rows(tmp_path, "select count(*) from platform_raw._dlt_loads") == loads


def test_an_attendee_import_under_other_settings_stops_before_any_request(tmp_path: Path) -> None:
    with running_sandbox(seed=2, scale=50, time_scale=600.0) as sandbox:
        token = sandbox.token()
        event = sandbox.catalog()["events"][0]
        args = ["attendees", "import", "", "--event", event["id"], "--ticket", event["ticket_ids"][0]]
        args[2] = str(write_csv(tmp_path / "first.csv", [person(0)]))
        done = run_cli(args, cli_env(tmp_path, source_options(sandbox, token)), tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        results = _rows(tmp_path, "select line, name, email, outcome from platform_raw.attendee_imports")
        before = sandbox.stats()["operations"]

        args[2] = str(write_csv(tmp_path / "second.csv", [person(1)]))
        on = source_options(sandbox, token, privacy={"emails": "hash"}, privacy_key=KEY)
        refused = run_cli(args, cli_env(tmp_path, on), tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.strip().splitlines()[-1] == (
            "configuration error: the privacy settings changed (emails keep -> hash) but "
            "platform_raw.attendee_imports holds values written under the earlier ones, and the two would "
            "mix: no attendee was sent. Run `platform-sync sync --full-refresh` (it rewrites "
            "attendee_imports in place under the new settings), or put the earlier settings back "
            "(docs/contracts.md, section 7)"
        )
        assert sandbox.stats()["operations"] == before
        assert (
            _rows(tmp_path, "select line, name, email, outcome from platform_raw.attendee_imports") == results
        )
