"""How many pages of 100 items per second the sandbox serves over real HTTP on loopback.

    .venv/bin/python -m sandbox.measure_http [--scale 5000] [--seconds 5] [--concurrency 4] [--drift 0.03]

The sandbox runs as its own process (`running_sandbox_process`, rate limits off), so client and server
do not share an interpreter. Besides pages/s it prints the server's CPU time per page (from
/proc/<pid>/stat), which bounds what the server could do if the client were free.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from sandbox.running import DEFAULT_WORLD, SandboxHandle, running_sandbox_process

# Paged operations with the query each needs; the catalog supplies the event id.
LISTINGS: dict[str, tuple[str, dict[str, str]]] = {
    "list_products": ("/store/v1/products", {}),
    "list_transfers": ("/store/v1/financial/transfers", {}),
    "list_subscriptions": ("/store/v1/subscriptions", {}),
    "list_fiscal_documents": (
        "/store/v1/financial/buyer/fiscal-documents",
        {"startDate": "2024-01-01", "endDate": "2026-06-01"},
    ),
    "list_lesson_comments": ("/course/v1/comments", {}),
    "list_affiliations": ("/store/v1/affiliates", {}),
}


@dataclass
class Result:
    operation: str
    pages: int
    items: int
    bytes: int
    seconds: float
    server_cpu: float

    def line(self) -> str:
        rate = self.pages / self.seconds
        cpu_ms = 1000 * self.server_cpu / max(self.pages, 1)
        return (
            f"{self.operation:24} {rate:8.0f} pages/s {self.items / self.seconds:10.0f} items/s "
            f"{self.bytes / self.seconds / 1e6:7.1f} MB/s  server {cpu_ms:5.2f} ms CPU/page "
            f"(ceiling {1000 / cpu_ms if cpu_ms else float('inf'):6.0f} pages/s)"
        )


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    sandbox: SandboxHandle,
    operation: str,
    path: str,
    params: dict[str, str],
    seconds: float,
    concurrency: int,
) -> Result:
    """Fetch pages 1..pages round-robin with `concurrency` keep-alive clients for `seconds`."""
    headers = {"Authorization": f"Bearer {sandbox.token()}"}
    query = {**params, "itemsPerPage": "100"}
    first = httpx.get(sandbox.base_url + path, params={**query, "page": "1"}, headers=headers).json()
    pages = max(1, int(first["pages"]))
    counts = {"pages": 0, "items": 0, "bytes": 0}
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def worker(offset: int) -> None:
        with httpx.Client(base_url=sandbox.base_url, headers=headers, timeout=30) as client:
            page = offset
            while time.monotonic() < stop:
                response = client.get(path, params={**query, "page": str(page % pages + 1)})
                body = response.json()
                with lock:
                    counts["pages"] += 1
                    counts["items"] += len(body["items"])
                    counts["bytes"] += len(response.content)
                page += concurrency

    assert sandbox.process is not None
    cpu_before, started = _cpu_seconds(sandbox.process.pid), time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    cpu = _cpu_seconds(sandbox.process.pid) - cpu_before
    return Result(operation, counts["pages"], counts["items"], counts["bytes"], elapsed, cpu)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", type=int, default=5000, help="world scale (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=4.0, help="per operation (default: %(default)s)")
    parser.add_argument("--concurrency", type=int, default=4, help="client threads (default: %(default)s)")
    parser.add_argument(
        "--world", default=DEFAULT_WORLD, help="MODULE:FACTORY of the world (default: %(default)s)"
    )
    parser.add_argument("--operation", action="append", choices=sorted(LISTINGS), help="default: all")
    parser.add_argument("--drift", type=float, default=0.0, help="share of departing records (default: 0)")
    args = parser.parse_args(argv)
    with running_sandbox_process(
        seed=args.seed, scale=args.scale, rate_limits=False, world_factory=args.world, drift=args.drift
    ) as sb:
        print(
            f"sandbox {sb.base_url}, scale {args.scale}, {args.concurrency} client threads, 100 items/page, "
            f"drift {args.drift:g}"
        )
        for operation in args.operation or sorted(LISTINGS):
            path, params = LISTINGS[operation]
            print(measure(sb, operation, path, params, args.seconds, args.concurrency).line(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
