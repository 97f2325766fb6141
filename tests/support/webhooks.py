"""A webhook receiver run as users run it (`platform-sync webhooks serve` in a subprocess)."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec-test-3f9a1c"


def sign(body: bytes, secret: str = SECRET) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def envelope(delivery_id: str, event: str = "store.invoice_paid", **data: Any) -> bytes:
    body = {"id": delivery_id, "event": event, "data": data, "sentDate": "2026-06-01T00:00:00.000Z"}
    return json.dumps(body).encode()


def receiver_env(tmp_path: Path, secret: str = SECRET) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION__"))}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    env["SOURCES__PLATFORM__WEBHOOK_SECRET"] = secret
    env["DESTINATION__DUCKDB__CREDENTIALS"] = str(tmp_path / "warehouse.duckdb")
    return env


@dataclass
class Receiver:
    url: str
    process: subprocess.Popen[str]
    store: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_receiver(tmp_path: Path, store: Path, port: int = 0) -> Iterator[Receiver]:
    """`platform-sync webhooks serve` on 127.0.0.1; SIGTERM at the end (unless the test killed it)."""
    command = [sys.executable, "-m", "pipelines.cli", "webhooks", "serve", "--port", str(port)]
    command += ["--store", str(store)]
    process = subprocess.Popen(
        command, env=receiver_env(tmp_path), cwd=tmp_path, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "receiving webhooks on " in line, line
    url = line.split("receiving webhooks on ", 1)[1].split()[0]
    try:
        yield Receiver(url, process, store)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(15)
        process.stdout.close()
