"""A recording page server: the pages of the sandbox, recorded once and then served from memory.

    python -m bench.pageserver --upstream http://127.0.0.1:8400 [--port 0] [--store DIR]

Every contender of the throughput benchmark talks to this server instead of the sandbox. A request
it has not seen is forwarded to the sandbox (the upstream) and its answer kept; from then on the same
request is answered from memory, without the sandbox. So the world's cost of building a page is paid
once, by the recording pass, and the contenders measure their own cost: HTTP, JSON, validation,
normalizing and loading, against a server that costs next to nothing.

A request is identified by method, path and query (parameters sorted, so their order does not
matter). Date-time query values keep only their date (`2026-11-23T18:51:02.123Z` -> `2026-11-23`):
the only such value with a time of day is the open end of the newest fiscal-document window
("now + 1 day", different on every run), and the world holds nothing after its clock, so answers do
not depend on the time of day. Headers are not part of the key (the bearer token changes between
runs); the token of the first request is what the sandbox saw.

Control routes (never forwarded): `GET /_bench/stats` -> hits, misses, forwarded errors and recorded
pages and bytes; `POST /_bench/stats/reset`. `--store DIR` loads recorded answers from DIR at start
and writes new ones there, so later benchmarks at the same seed and scale skip the recording.

The server prints `url: http://127.0.0.1:PORT` on stdout once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx

try:
    import uvloop
except ImportError:  # pragma: no cover - uvloop ships with uvicorn[standard]
    uvloop = None  # type: ignore[assignment]

_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}")
_HOP_HEADERS = {b"host", b"connection", b"keep-alive", b"content-length", b"accept-encoding"}
_REASONS = {200: b"OK", 201: b"Created", 404: b"Not Found", 500: b"Internal Server Error"}


def request_key(method: str, target: str) -> str:
    """The identity of a request: method, path, sorted query with date-times cut to their date."""
    parts = urlsplit(target)
    query = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        match = _DATETIME.match(value)
        query.append((name, match.group(1) if match else value))
    query.sort()
    encoded = "&".join(f"{name}={value}" for name, value in query)
    return f"{method.upper()} {parts.path}?{encoded}"


@dataclass
class Answer:
    status: int
    content_type: bytes
    body: bytes


@dataclass
class Counters:
    hits: int = 0
    misses: int = 0
    upstream_errors: int = 0
    misses_by_path: dict[str, int] = field(default_factory=dict)

    def as_dict(self, answers: dict[str, Answer]) -> dict[str, object]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "upstream_errors": self.upstream_errors,
            "misses_by_path": dict(sorted(self.misses_by_path.items())),
            "recorded_answers": len(answers),
            "recorded_bytes": sum(len(a.body) for a in answers.values()),
        }


class Store:
    """Recorded answers on disk: one append-only data file and a JSON-lines index."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.data_path = directory / "answers.bin"
        self.index_path = directory / "index.jsonl"

    def load(self) -> dict[str, Answer]:
        answers: dict[str, Answer] = {}
        if not self.index_path.exists() or not self.data_path.exists():
            return answers
        data = self.data_path.read_bytes()
        with self.index_path.open() as index:
            for line in index:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    break  # a line cut by a killed run: everything before it is whole
                start, length = entry["offset"], entry["length"]
                if start + length > len(data):
                    break
                body = data[start : start + length]
                answers[entry["key"]] = Answer(entry["status"], entry["content_type"].encode(), body)
        return answers

    def append(self, key: str, answer: Answer) -> None:
        with self.data_path.open("ab") as data:
            offset = data.tell()
            data.write(answer.body)
        entry = {
            "key": key,
            "status": answer.status,
            "content_type": answer.content_type.decode(),
            "offset": offset,
            "length": len(answer.body),
        }
        with self.index_path.open("a") as index:
            index.write(json.dumps(entry) + "\n")


class PageServer:
    def __init__(self, upstream: str, store: Store | None) -> None:
        self.upstream = upstream.rstrip("/")
        self.store = store
        self.answers: dict[str, Answer] = store.load() if store else {}
        self.counters = Counters()
        self.client = httpx.AsyncClient(base_url=self.upstream, timeout=300.0)
        self._recording: dict[str, asyncio.Future[Answer]] = {}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.split(b"\r\n")
                method, target, _ = lines[0].decode("latin-1").split(" ", 2)
                headers: list[tuple[bytes, bytes]] = []
                length = 0
                for line in lines[1:]:
                    if not line:
                        continue
                    name, _, value = line.partition(b":")
                    name, value = name.strip().lower(), value.strip()
                    headers.append((name, value))
                    if name == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                answer = await self.answer(method, target, headers, body)
                reason = _REASONS.get(answer.status, b"Status")
                writer.write(
                    b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                    % (answer.status, reason, answer.content_type, len(answer.body))
                )
                writer.write(answer.body)
                await writer.drain()
        finally:
            writer.close()

    async def answer(
        self, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> Answer:
        if target.startswith("/_bench/"):
            return self.control(method, target)
        key = request_key(method, target)
        found = self.answers.get(key)
        if found is not None:
            self.counters.hits += 1
            return found
        self.counters.misses += 1
        path = urlsplit(target).path
        self.counters.misses_by_path[path] = self.counters.misses_by_path.get(path, 0) + 1
        pending = self._recording.get(key)
        if pending is not None:  # the same request is being recorded for another connection
            return await asyncio.shield(pending)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._recording[key] = future
        try:
            answer = await self.forward(method, target, headers, body)
            future.set_result(answer)
        except BaseException as exc:
            future.set_exception(exc)
            raise
        finally:
            del self._recording[key]
        return answer

    async def forward(
        self, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> Answer:
        sent = [(n, v) for n, v in headers if n not in _HOP_HEADERS]
        try:
            response = await self.client.request(method, target, headers=sent, content=body or None)
        except httpx.HTTPError as exc:
            self.counters.upstream_errors += 1
            message = json.dumps({"status": 502, "error": "bad_gateway", "message": str(exc)})
            return Answer(502, b"application/json", message.encode())
        answer = Answer(
            response.status_code,
            response.headers.get("content-type", "application/json").encode(),
            response.content,
        )
        if method == "GET" and 200 <= response.status_code < 300:
            key = request_key(method, target)
            self.answers[key] = answer
            if self.store:
                self.store.append(key, answer)
        else:
            self.counters.upstream_errors += 1
        return answer

    def control(self, method: str, target: str) -> Answer:
        path = urlsplit(target).path
        if path == "/_bench/stats/reset" and method == "POST":
            self.counters = Counters()
        elif path != "/_bench/stats":
            return Answer(404, b"application/json", b'{"status": 404, "error": "not_found"}')
        return Answer(200, b"application/json", json.dumps(self.counters.as_dict(self.answers)).encode())


async def serve(upstream: str, port: int, store: Store | None) -> None:
    server = PageServer(upstream, store)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    listener = await asyncio.start_server(server.handle, sock=sock, backlog=1024, limit=1 << 20)
    host, bound = sock.getsockname()[:2]
    print(f"url: http://{host}:{bound}", flush=True)
    print(f"recorded: {len(server.answers)}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with listener:
        await stop.wait()
    await server.client.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--upstream", required=True, help="the sandbox's base_url")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--store", type=Path, help="directory of recorded answers (loaded and extended)")
    args = parser.parse_args(argv)
    store = Store(args.store) if args.store else None
    if uvloop is not None:
        uvloop.run(serve(args.upstream, args.port, store))
    else:  # pragma: no cover
        asyncio.run(serve(args.upstream, args.port, store))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
