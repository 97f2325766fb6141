"""Running sandboxes for tests, demos and benchmarks.

    with running_sandbox(seed=1, scale=200) as sb:
        token = sb.token()                      # all scopes
        httpx.get(sb.base_url + "/store/v1/products", headers={"Authorization": f"Bearer {token}"})

`running_sandbox` serves in a background thread of this process (fast to start; `handle.apps` gives
tests the live state); `running_sandbox_process` runs the CLI as a child process (for benchmarks, so
the server has its own interpreter, and for kill tests). Both bind free ports on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from sandbox.app import SandboxApps, SandboxOptions, create_app
from sandbox.auth import DEMO_CLIENT_ID, DEMO_CLIENT_SECRET
from sandbox.server import SandboxServer
from sandbox.world.api import World

DEFAULT_WORLD = "sandbox.world:SyntheticWorld"
UNRULY_WORLD = "sandbox.world.unruly:UnrulyWorld"  # docs/contracts.md part 2, "The unruly world"
_ROOT = Path(__file__).resolve().parent.parent
REDIRECT_URI = "http://localhost/callback"


@dataclass
class SandboxHandle:
    """Where a running sandbox is, and its control routes as methods."""

    base_url: str
    auth_url: str
    apps: SandboxApps | None = None  # in-process sandboxes only
    process: subprocess.Popen[str] | None = None  # subprocess sandboxes only
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=60.0))

    def _call(self, method: str, url: str, json: Any = None) -> Any:
        response = self.client.request(method, url, json=json)
        response.raise_for_status()
        return response.json()

    def advance(self, seconds: float) -> str:
        """Move the world's clock; returns the new clock (ISO 8601)."""
        return str(self._call("POST", f"{self.base_url}/sandbox/advance", {"seconds": seconds})["clock"])

    def catalog(self) -> dict[str, Any]:
        return dict(self._call("GET", f"{self.base_url}/sandbox/catalog"))

    def stats(self) -> dict[str, Any]:
        return dict(self._call("GET", f"{self.base_url}/sandbox/stats"))

    def reset_stats(self) -> None:
        self._call("POST", f"{self.base_url}/sandbox/stats/reset")

    def set_faults(self, spec: str | None) -> dict[str, Any]:
        """Replace the fault spec (None or "" turns faults off); the fault generator restarts."""
        return dict(self._call("POST", f"{self.base_url}/sandbox/faults", {"spec": spec or ""}))

    def faults(self) -> dict[str, Any]:
        return dict(self._call("GET", f"{self.base_url}/sandbox/faults"))

    def set_drift(
        self, rate: float | None = None, seed: int | None = None, rates: dict[str, float] | None = None
    ) -> dict[str, Any]:
        """Change the drift (None keeps a setting); `rates` overrides the rate per operation name."""
        body: dict[str, Any] = {"rate": rate, "seed": seed, "rates": rates}
        return dict(
            self._call(
                "POST", f"{self.base_url}/sandbox/drift", {k: v for k, v in body.items() if v is not None}
            )
        )

    def departures(self) -> list[dict[str, Any]]:
        """Every departure from the spec in the records served since start or `reset_departures`:
        rows `{"operation", "record_id", "path", "kind", "value"}`, sorted, one per distinct row."""
        return list(self._call("GET", f"{self.base_url}/sandbox/departures"))

    def reset_departures(self) -> None:
        self._call("POST", f"{self.base_url}/sandbox/departures/reset")

    def set_webhooks(self, url: str | None, secret: str = "") -> dict[str, Any]:
        """Send signed deliveries of the world's moves to `url` (a ping first); None turns them off."""
        return dict(self._call("POST", f"{self.base_url}/sandbox/webhooks", {"url": url, "secret": secret}))

    def webhooks(self) -> dict[str, Any]:
        """The deliveries so far: counts and each one's id, event, attempts and outcome."""
        return dict(self._call("GET", f"{self.base_url}/sandbox/webhooks"))

    def carts(self) -> list[dict[str, Any]]:
        """Every cart created through the API, oldest first."""
        return list(self._call("GET", f"{self.base_url}/sandbox/carts"))

    def authorize(self, scopes: Sequence[str] | None = None, client_id: str = DEMO_CLIENT_ID) -> str:
        """A fresh single-use authorization code for `scopes` (None: every scope)."""
        body: dict[str, Any] = {"client_id": client_id}
        if scopes is not None:
            body["scopes"] = list(scopes)
        return str(self._call("POST", f"{self.auth_url}/sandbox/authorize", body)["code"])

    def token(self, scopes: Sequence[str] | None = None) -> str:
        """A new access token for the demo application with `scopes` (None: every scope)."""
        body = {
            "client_id": DEMO_CLIENT_ID,
            "client_secret": DEMO_CLIENT_SECRET,
            "code": self.authorize(scopes),
            "redirect_uri": REDIRECT_URI,
            "grant_type": "authorization_code",
        }
        return str(self._call("POST", f"{self.auth_url}/oauth/token", body)["access_token"])

    def close(self) -> None:
        self.client.close()


def _load_world(factory: str, seed: int, scale: int) -> World:
    module_name, _, attribute = factory.partition(":")
    module = __import__(module_name, fromlist=[attribute])
    world: World = getattr(module, attribute)(seed, scale)
    return world


@contextlib.contextmanager
def running_sandbox(
    seed: int = 1,
    scale: int = 200,
    time_scale: float = 1.0,
    rate_limits: bool = True,
    faults: str | None = None,
    world: World | None = None,
    drift: float = 0.0,
    drift_seed: int | None = None,
    unruly: bool = False,
) -> Iterator[SandboxHandle]:
    """Serve a sandbox in a background thread for the `with` block; `world` overrides SyntheticWorld.

    `drift` is the share of records that depart from the spec (`drift_seed`: default `seed`);
    `unruly` serves the world whose moves break the sync's rules (`UnrulyWorld`) instead.
    """
    if world is not None and unruly:
        raise ValueError("running_sandbox: give either world or unruly=True, not both")
    if world is None:
        world = _load_world(UNRULY_WORLD if unruly else DEFAULT_WORLD, seed, scale)
    options = SandboxOptions(
        seed=seed,
        scale=scale,
        time_scale=time_scale,
        rate_limits=rate_limits,
        faults=faults,
        drift=drift,
        drift_seed=drift_seed,
    )
    apps = create_app(world, options)
    server = SandboxServer(apps)
    server.start_in_thread()
    handle = SandboxHandle(server.base_url, server.auth_url, apps=apps)
    try:
        yield handle
    finally:
        handle.close()
        server.stop()


@contextlib.contextmanager
def running_sandbox_process(
    seed: int = 1,
    scale: int = 200,
    time_scale: float = 1.0,
    rate_limits: bool = True,
    faults: str | None = None,
    world_factory: str | None = None,
    env: dict[str, str] | None = None,
    start_timeout: float = 120.0,
    drift: float = 0.0,
    drift_seed: int | None = None,
    unruly: bool = False,
) -> Iterator[SandboxHandle]:
    """Run `python -m sandbox serve` on free ports for the `with` block; SIGTERM (then kill) on exit."""
    command = [
        sys.executable,
        "-m",
        "sandbox",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--auth-port",
        "0",
    ]
    command += ["--seed", str(seed), "--scale", str(scale), "--time-scale", str(time_scale)]
    command += ["--rate-limits", "on" if rate_limits else "off"]
    if faults:
        command += ["--faults", faults]
    if drift:
        command += ["--drift", repr(drift)]
    if drift_seed is not None:
        command += ["--drift-seed", str(drift_seed)]
    if world_factory:
        command += ["--world", world_factory]
    if unruly:
        command += ["--unruly"]
    child_env = {**os.environ, **(env or {})}
    # The child must import this very `sandbox`, whatever its working directory or install state.
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), child_env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=child_env)
        try:
            urls = _read_urls(process, start_timeout)
            if urls is None:
                stderr.seek(0)
                raise RuntimeError(f"sandbox process did not start:\n{stderr.read()[-4000:]}")
            handle = SandboxHandle(urls[0], urls[1], process=process)
            try:
                yield handle
            finally:
                handle.close()
        finally:
            _stop(process)


def _read_urls(process: subprocess.Popen[str], timeout: float) -> tuple[str, str] | None:
    """The URLs the CLI prints once it serves; None if it exits or prints nothing in time."""
    assert process.stdout is not None
    found: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    # readline blocks, but the CLI prints its banner in one go right after binding, or exits.
    while time.monotonic() < deadline and len(found) < 2:
        line = process.stdout.readline()
        if not line:
            return None
        key, _, value = line.strip().partition(": ")
        if key in ("base_url", "auth_url"):
            found[key] = value
    return (found["base_url"], found["auth_url"]) if len(found) == 2 else None


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
