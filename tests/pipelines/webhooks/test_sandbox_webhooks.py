"""The sandbox plays the platform: signed deliveries of its world's moves, a ping first, retries."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from pipelines.webhooks.store import DeliveryStore
from sandbox.running import SandboxHandle, running_sandbox
from sandbox.world import SyntheticWorld
from sandbox.world.clock import DAY, T0
from sandbox.world.webhooks import world_moves
from tests.support.webhooks import SECRET, free_port, running_receiver

DAYS = 20


def wait_for(sandbox: SandboxHandle, done: Any, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snapshot = sandbox.webhooks()
        if done(snapshot):
            return snapshot
        time.sleep(0.05)
    raise AssertionError(f"webhooks did not get there: {sandbox.webhooks()}")


def test_moves_are_delivered_signed_once_each_after_retries(tmp_path):
    expected = world_moves(SyntheticWorld(3, 800), T0, T0 + DAYS * DAY)
    kinds = Counter(move.event for move in expected)
    assert {"store.invoice_paid", "store.invoice_refunded", "course.comment_created"} <= set(kinds)
    assert {"store.contract_created", "store.contract_updated"} & set(kinds)
    port = free_port()
    with running_sandbox(seed=3, scale=800, time_scale=600) as sandbox:
        sandbox.set_webhooks(f"http://127.0.0.1:{port}/webhooks", SECRET)
        sandbox.advance(DAYS * 86400)
        # Nobody listens yet: every delivery is tried again every 60 s / 600 = 0.1 s.
        wait_for(sandbox, lambda s: all(d["attempts"] >= 3 for d in s["deliveries"]))
        with running_receiver(tmp_path, tmp_path / "store.sqlite", port=port):
            snapshot = wait_for(sandbox, lambda s: s["queued"] == 0)
    assert snapshot["delivered"] == len(expected) + 1 and snapshot["given_up"] == 0
    store = DeliveryStore(tmp_path / "store.sqlite")
    rows = {row.id: row for row in store.all()}
    assert sorted(rows) == sorted(["ping-1", *(move.id for move in expected)])
    assert Counter(row.event for row in rows.values()) == kinds + Counter({"ping": 1})
    for move in expected:
        assert rows[move.id].row()["data"] == move.data
        announced = move.data["invoiceId"] if move.event.startswith("store.invoice_") else None
        assert rows[move.id].sale_id == announced


def test_a_wrong_secret_is_refused_and_retried(tmp_path):
    with running_sandbox(seed=3, scale=100, time_scale=600) as sandbox:
        with running_receiver(tmp_path, tmp_path / "store.sqlite") as receiver:
            sandbox.set_webhooks(receiver.url, "not-the-secret")
            snapshot = wait_for(sandbox, lambda s: s["deliveries"][0]["attempts"] >= 3)
    assert snapshot["deliveries"][0]["last_status"] == 401 and snapshot["delivered"] == 0
    assert DeliveryStore(tmp_path / "store.sqlite").all() == []
    assert "not-the-secret" not in str(snapshot)


def test_check_ins_are_announced_around_an_event_start():
    world = SyntheticWorld(3, 4000)
    start = world.events_.start(2)
    moves = world_moves(world, start - 2 * 3600 * 1000, start + 4 * 3600 * 1000)
    checkins = [m for m in moves if m.event == "events.attendance_checkin"]
    event_id = world.events_.info(2).id
    assert checkins and {m.data["eventId"] for m in checkins} == {event_id}
    attendees = {(a["email"], a["checkinDate"]) for a in world.attendees_.all_at(2, start + 4 * 3600 * 1000)}
    assert {(m.data["email"], m.envelope()["sentDate"]) for m in checkins} <= attendees
