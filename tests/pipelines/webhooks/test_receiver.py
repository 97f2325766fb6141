"""The receiver under bursts, retries, bad signatures, malformed bodies and kill -9."""

from __future__ import annotations

import json
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from pipelines.webhooks.store import DeliveryStore
from tests.support.webhooks import SECRET, envelope, running_receiver, sign


def post(client: httpx.Client, url: str, body: bytes, signature: str | None) -> int:
    headers = {"content-type": "application/json"}
    if signature is not None:
        headers["x-signature"] = signature
    return client.post(url, content=body, headers=headers).status_code


def stored_ids(store: Path) -> list[str]:
    opened = DeliveryStore(store)
    try:
        return [d.id for d in opened.all()]
    finally:
        opened.close()


def test_burst_stores_each_good_delivery_once_and_refuses_the_rest(tmp_path):
    good = [envelope(f"d-{n}", invoiceId=str(100 + n)) for n in range(25)]
    malformed = [
        b"{not json",
        b"[1, 2]",
        json.dumps({"event": "store.invoice_paid", "data": {}}).encode(),  # no id
        json.dumps({"id": "m-1", "event": "", "data": {}}).encode(),
        json.dumps({"id": "m-2", "event": "store.invoice_paid", "data": [1]}).encode(),
        json.dumps({"id": True, "event": "x", "data": {}}).encode(),
    ]
    # (body, signature, expected status): each good one three times (the platform's retries), bad
    # signatures (wrong secret, tampered body, none, garbage), malformed bodies correctly signed.
    calls = [(body, sign(body), 200) for body in good for _ in range(3)]
    calls += [(body, sign(body, "another-secret"), 401) for body in good[:5]]
    calls += [(good[0].replace(b"100", b"999"), sign(good[0]), 401), (good[1], None, 401)]
    calls += [(good[2], "zz" * 32, 401), (good[3], "", 401)]
    calls += [(body, sign(body), 400) for body in malformed]
    with running_receiver(tmp_path, tmp_path / "store.sqlite") as receiver:
        with httpx.Client(timeout=10) as client, ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda c: post(client, receiver.url, c[0], c[1]), calls))
    assert statuses == [expected for _, _, expected in calls]
    assert sorted(stored_ids(tmp_path / "store.sqlite")) == sorted(f"d-{n}" for n in range(25))
    rows = DeliveryStore(tmp_path / "store.sqlite").all()
    assert {r.id: r.sale_id for r in rows} == {f"d-{n}": str(100 + n) for n in range(25)}
    assert {r.kind for r in rows} == {"invoice_paid"}


def test_ping_is_answered_and_stored(tmp_path):
    body = json.dumps({"id": "ping-1", "event": "ping", "data": {}, "sentDate": "2026-06-01T00:00:00Z"})
    with running_receiver(tmp_path, tmp_path / "store.sqlite") as receiver, httpx.Client() as client:
        answer = client.post(receiver.url, content=body, headers={"x-signature": sign(body.encode())})
        # Each answer comes once the delivery is on disk, in milliseconds (fsync included).
        seconds = []
        for n in range(30):
            delivery = envelope(f"t-{n}")
            started = time.perf_counter()
            assert post(client, receiver.url, delivery, sign(delivery)) == 200
            seconds.append(time.perf_counter() - started)
    assert answer.status_code == 200
    assert answer.json() == {"id": "ping-1", "stored": True, "pong": True}
    assert stored_ids(tmp_path / "store.sqlite")[0] == "ping-1"
    assert sorted(seconds)[15] < 0.05, sorted(seconds)


def test_killed_receiver_loses_no_acknowledged_delivery(tmp_path):
    store = tmp_path / "store.sqlite"
    acknowledged: list[str] = []
    stop = threading.Event()

    def send_until_refused(url: str) -> None:
        with httpx.Client(timeout=5) as client:
            n = 0
            while not stop.is_set():
                body = envelope(f"k-{n}", invoiceId=str(n))
                try:
                    if post(client, url, body, sign(body)) == 200:
                        acknowledged.append(f"k-{n}")
                except httpx.HTTPError:
                    return  # the receiver is gone: whatever was not answered was not acknowledged
                n += 1

    with running_receiver(tmp_path, store) as receiver:
        sender = threading.Thread(target=send_until_refused, args=(receiver.url,))
        sender.start()
        while len(acknowledged) < 150:
            threading.Event().wait(0.01)
        receiver.process.send_signal(signal.SIGKILL)  # mid-stream, with requests in flight
        receiver.process.wait()
        sender.join(10)
        stop.set()
    assert len(acknowledged) >= 150
    after_kill = set(stored_ids(store))
    assert set(acknowledged) <= after_kill
    # Restarted on the same store: everything is still there, and a retry of a stored id is one row.
    with running_receiver(tmp_path, store) as receiver:
        body = envelope(acknowledged[0], invoiceId="0")
        answer = httpx.post(receiver.url, content=body, headers={"x-signature": sign(body)})
        assert answer.status_code == 200 and answer.json()["stored"] is False
    assert sorted(stored_ids(store)) == sorted(after_kill)
    assert SECRET not in store.read_bytes().decode("latin-1")
