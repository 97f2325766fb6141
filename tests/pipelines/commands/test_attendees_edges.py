"""Attendee import: a 422 for some rows, a token that may not write, a dry run, rows from a SQL query."""

from __future__ import annotations

from pathlib import Path

import duckdb

from sandbox.running import running_sandbox
from sandbox.world import SyntheticWorld
from sources.platform_client.operations import OPERATIONS
from tests.pipelines.cli.test_cli import run_cli
from tests.support.write_commands import attendees, env_for, person, read_results, write_csv

FAST = 600.0


def scarce_ticket(world: SyntheticWorld) -> tuple[str, str, int]:
    """(event id, ticket id, tickets left) of a limited ticket with a few tickets left in its lot."""
    t = world.now
    for k in range(world.events_.count_at(t)):
        info = world.events_.info(k)
        for ticket in info.tickets:
            if ticket.unlimited:
                continue
            lot = world.events_.lot_on_sale(ticket, t)
            left = (
                lot.quantity - len(world.events_.debits.get(lot.id, [])) - world.attendees_.sold(k, lot.id, t)
            )
            if 1 <= left <= 10:
                return info.id, ticket.id, left
    raise AssertionError("no scarce ticket in this world")


def test_insufficient_stock_rejects_rows_and_the_import_goes_on(tmp_path):
    with running_sandbox(seed=5, scale=400, time_scale=FAST) as sandbox:
        assert isinstance(sandbox.apps and sandbox.apps.state.world, SyntheticWorld)
        event_id, ticket_id, left = scarce_ticket(sandbox.apps.state.world)  # type: ignore[union-attr]
        token = sandbox.token()
        people = [person(200 + n) for n in range(left + 2)]
        path = write_csv(tmp_path / "stock.csv", people)
        args = ["attendees", "import", str(path), "--event", event_id, "--ticket", ticket_id, "--use-stock"]
        result = run_cli(args, env_for(tmp_path, sandbox, token, FAST), tmp_path)
        assert result.returncode == 3, result.stdout + result.stderr
        outcomes = [(r["outcome"], r["reason"]) for r in read_results(tmp_path / "stock.results.csv")]
        assert outcomes == [("created", "")] * left + [("rejected", "insufficient stock")] * 2
        assert sandbox.stats()["operations"]["add_attendee"] == {"201": left, "422": 2}
        assert "rejected by the platform: insufficient stock" in result.stderr


def test_a_token_without_events_write_stops_with_what_to_do(tmp_path):
    with running_sandbox(seed=5, scale=400, time_scale=FAST) as sandbox:
        scopes = sorted({s for op in OPERATIONS for s in op.scopes} - {"events_write"})
        token = sandbox.token(scopes)
        event = sandbox.catalog()["events"][0]
        path = write_csv(tmp_path / "g.csv", [person(n) for n in range(3)])
        args = ["attendees", "import", str(path), "--event", event["id"], "--ticket", event["ticket_ids"][0]]
        result = run_cli(args, env_for(tmp_path, sandbox, token, FAST), tmp_path)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "STOPPED" in result.stderr and "events_write" in result.stderr and token not in result.stderr
        assert [r["outcome"] for r in read_results(tmp_path / "g.results.csv")] == ["not_sent"] * 3
        assert sandbox.stats()["operations"]["add_attendee"] == {"403": 1}


def test_dry_run_sends_nothing_and_a_query_on_the_warehouse_imports(tmp_path):
    with running_sandbox(seed=5, scale=400, time_scale=FAST) as sandbox:
        token = sandbox.token()
        event = sandbox.catalog()["events"][2]
        env = env_for(tmp_path, sandbox, token, FAST)
        people = [person(300 + n) for n in range(3)]
        with duckdb.connect(str(tmp_path / "warehouse.duckdb")) as db:
            db.execute("create schema crm")
            db.execute("create table crm.guests (name text, email text, document text, phone text)")
            db.executemany("insert into crm.guests values (?, ?, ?, ?)", [list(p.values()) for p in people])
        query = "select name, email, document, phone from crm.guests order by email"
        base = [
            "attendees",
            "import",
            "--query",
            query,
            "--event",
            event["id"],
            "--ticket",
            event["ticket_ids"][0],
        ]
        dry = run_cli([*base, "--dry-run", "--results", "dry.csv"], env, tmp_path)
        assert dry.returncode == 0, dry.stdout + dry.stderr
        assert [r["outcome"] for r in read_results(Path(tmp_path / "dry.csv"))] == ["would_create"] * 3
        assert "add_attendee" not in sandbox.stats()["operations"]
        real = run_cli(base, env, tmp_path)
        assert real.returncode == 0, real.stdout + real.stderr
        assert sandbox.stats()["operations"]["add_attendee"] == {"201": 3}
        listed = {a["email"] for a in attendees(sandbox, token, event["id"])}
        assert {p["email"] for p in people} <= listed
