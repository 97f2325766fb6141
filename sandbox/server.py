"""Serving both apps with uvicorn in one event loop: in a background thread or as the main program.

Sockets are bound here, before uvicorn starts, so port 0 works (the OS picks a free port and the
URLs are known at once) and nothing races for a port between choosing and binding it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import uvicorn

from sandbox.app import SandboxApps

try:  # uvloop makes the event loop faster (bench/README.md); plain asyncio works too.
    import uvloop

    _loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
except ImportError:  # pragma: no cover - uvloop ships with uvicorn[standard]
    _loop_factory = None


class _Server(uvicorn.Server):
    """A uvicorn server that leaves signals alone: two share one process, and threads cannot have them."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket on (host, port); port 0 picks a free one."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _config(app: Any, log_level: str, quiet_logging: bool) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        http="httptools",
        ws="none",
        lifespan="off",
        access_log=False,
        proxy_headers=False,
        server_header=False,
        date_header=False,  # every answer is dated by the world's clock instead (app.KeepCycle)
        log_level=log_level,
        # In a test process uvicorn must not rewrite the host's logging configuration.
        log_config=None if quiet_logging else uvicorn.config.LOGGING_CONFIG,
        timeout_keep_alive=30,
        timeout_graceful_shutdown=5,
        backlog=1024,
    )


class SandboxServer:
    """The API and the token exchange on their own sockets, served together."""

    def __init__(
        self,
        apps: SandboxApps,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        auth_port: int = 0,
        log_level: str = "warning",
        quiet_logging: bool = True,
    ):
        self.apps = apps
        self._sockets = (bind(host, port), bind(host, auth_port))
        self._servers = (
            _Server(_config(apps.api, log_level, quiet_logging)),
            _Server(_config(apps.auth, log_level, quiet_logging)),
        )
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def base_url(self) -> str:
        return _url(self._sockets[0])

    @property
    def auth_url(self) -> str:
        return _url(self._sockets[1])

    @property
    def started(self) -> bool:
        return all(server.started for server in self._servers)

    async def serve(self) -> None:
        """Serve until `request_stop`; closes the sockets at the end."""
        try:
            await asyncio.gather(
                *(s.serve(sockets=[k]) for s, k in zip(self._servers, self._sockets, strict=True))
            )
        finally:
            for sock in self._sockets:
                sock.close()

    def request_stop(self) -> None:
        """Ask both servers to finish (safe from any thread: uvicorn polls the flag)."""
        for server in self._servers:
            server.should_exit = True

    # -- in a background thread (tests, `sandbox.running.running_sandbox`) --

    def start_in_thread(self, timeout: float = 30.0) -> None:
        """Start serving in a daemon thread and return once both servers accept connections."""
        self._thread = threading.Thread(target=self._thread_main, name="sandbox-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self.started:
            self.stop()
            raise RuntimeError(f"sandbox did not start: {self._error!r}")

    def _thread_main(self) -> None:
        try:
            _run(self.serve())
        except BaseException as exc:  # reported by start_in_thread
            self._error = exc

    def stop(self, timeout: float = 15.0) -> None:
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)

    # -- as the program's main loop (the CLI) --

    def run(self, on_started: Callable[[SandboxServer], None]) -> None:
        """Serve in this thread until SIGINT or SIGTERM; `on_started` runs once both accept connections."""

        async def main() -> None:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self.request_stop)
            serving = asyncio.ensure_future(self.serve())
            while not self.started and not serving.done():
                await asyncio.sleep(0.01)
            if self.started:
                on_started(self)
            await serving

        _run(main())


def _run(coroutine: Coroutine[Any, Any, None]) -> None:
    with asyncio.Runner(loop_factory=_loop_factory) as runner:
        runner.run(coroutine)
