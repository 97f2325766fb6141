"""Progress lines of a benchmark run on stdout, time-stamped, so a long `make bench` shows where it is."""

from __future__ import annotations

from datetime import UTC, datetime


def log(message: str) -> None:
    print(f"[{datetime.now(UTC).strftime('%H:%M:%S')}] {message}", flush=True)
