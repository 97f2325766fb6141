"""Issue 53: the receiver refuses what it cannot decode with 400 and what is too large with 413, never
500, reads no more of a body than its limit, and stays up for the next delivery."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from pipelines.webhooks.store import DeliveryStore
from tests.support.webhooks import envelope, running_receiver, sign

LIMIT = 1_000_000  # bytes (docs/contracts.md part 6)
CHUNK = 64 * 1024
GUARD_SECONDS = 60  # a guard against a hang only: every answer below comes without waiting


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname, parts.port), timeout=GUARD_SECONDS)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    answer = bytearray()
    while chunk := sock.recv(65536):
        answer += chunk
    return bytes(answer)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def head(path: str, framing: str) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{framing}\r\n\r\n"
    ).encode()


def stored(store: Path) -> list[tuple[str, str, str]]:
    opened = DeliveryStore(store)
    try:
        return [(d.id, d.event, d.body) for d in opened.all()]
    finally:
        opened.close()


def nested(delivery_id: str, levels: int) -> bytes:
    """An envelope nested `levels` deep: the envelope, its `data`, and objects within."""
    data: dict[str, object] = {}
    for _ in range(levels - 2):
        data = {"a": data}
    return json.dumps({"id": delivery_id, "event": "x", "data": data}).encode()


def test_undecodable_bodies_are_refused_with_400_and_the_receiver_stays_up(tmp_path):
    text = envelope("u-1").decode()
    deep = '{"id": "deep", "event": "store.invoice_paid", "data": ' + "[" * 100_000 + "]" * 100_000 + "}"
    refused = {
        "utf-16 with a BOM": text.encode("utf-16"),
        "utf-16 without a BOM": text.encode("utf-16-le"),
        "utf-32": text.encode("utf-32"),
        "latin-1": (text[:-1] + ', "name": "Jo\u00e3o"}').encode("latin-1"),
        "100k levels deep": deep.encode(),
        "129 levels deep": nested("nested-129", 129),
        "an id with a lone surrogate": b'{"id": "x\\ud83d", "event": "store.invoice_paid", "data": {}}',
        "not JSON": b"\xff\xfe{",
    }
    good = envelope("g-1", invoiceId="77")
    with_bom = envelope("bom-1")
    accepted = [nested("nested-128", 128), b"\xef\xbb\xbf" + with_bom, good]
    with (
        running_receiver(tmp_path, tmp_path / "store.sqlite") as receiver,
        httpx.Client(timeout=30) as client,
    ):
        statuses = {
            name: client.post(receiver.url, content=body, headers={"x-signature": sign(body)}).status_code
            for name, body in refused.items()
        }
        after = [
            client.post(receiver.url, content=body, headers={"x-signature": sign(body)}) for body in accepted
        ]
        assert receiver.process.poll() is None
    assert statuses == dict.fromkeys(refused, 400)
    assert [answer.status_code for answer in after] == [200, 200, 200]
    assert after[2].json() == {"id": "g-1", "stored": True}
    assert stored(tmp_path / "store.sqlite") == [
        ("nested-128", "x", nested("nested-128", 128).decode()),
        ("bom-1", "store.invoice_paid", with_bom.decode()),  # the byte order mark left out
        ("g-1", "store.invoice_paid", good.decode()),
    ]


def test_a_body_over_the_limit_is_refused_with_413_before_it_is_read(tmp_path):
    good = envelope("after-1", invoiceId="5")
    with running_receiver(tmp_path, tmp_path / "store.sqlite") as receiver:
        # Content-Length of 300 MB, unsigned: the headers and 14 bytes are all that is ever sent. The 413
        # and the closed connection come back while 299.99 MB are still unsent.
        with connect(receiver.url) as sock:
            sock.sendall(head("/webhooks", "Content-Length: 300000000") + b'{"id": "big", ')
            declared = read_until_closed(sock)
        # Chunked, no length: exactly the limit, then one byte more, the last byte ever sent (its chunk
        # is never finished, no last chunk follows). The 413 comes on that byte: the server read no more
        # than was sent, and it leaves nothing unread, so it closes cleanly (unread bytes: a reset).
        with connect(receiver.url) as sock:
            sock.sendall(head("/", "Transfer-Encoding: chunked") + chunks(LIMIT) + b"1\r\nx")
            chunked = read_until_closed(sock)
        # The limit itself is no refusal: the whole body is read, then its signature checked (none: 401).
        with connect(receiver.url) as sock:
            sock.sendall(head("/", "Transfer-Encoding: chunked\r\nConnection: close") + chunks(LIMIT))
            sock.sendall(b"0\r\n\r\n")
            at_the_limit = read_until_closed(sock)
        answer = httpx.post(receiver.url, content=good, headers={"x-signature": sign(good)}, timeout=30)
        assert receiver.process.poll() is None
    assert status_of(declared) == 413, declared
    assert json.loads(declared.split(b"\r\n\r\n", 1)[1]) == {"status": 413, "message": "body too large"}
    assert status_of(chunked) == 413, chunked
    assert status_of(at_the_limit) == 401, at_the_limit
    assert answer.status_code == 200 and answer.json() == {"id": "after-1", "stored": True}
    assert [i for i, _, _ in stored(tmp_path / "store.sqlite")] == ["after-1"]


def chunks(size: int) -> bytes:
    """`size` bytes of body in chunks of at most 64 KiB, without the last (empty) chunk that ends it."""
    sizes = [CHUNK] * (size // CHUNK) + ([size % CHUNK] if size % CHUNK else [])
    return b"".join(b"%x\r\n" % n + b" " * n + b"\r\n" for n in sizes)
