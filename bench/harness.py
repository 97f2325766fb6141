"""Processes of the benchmark: the page server, and measured runs in child processes.

A run is `python -m bench.worker TASK CONFIG RESULT` in its own process (so its peak memory is its own),
with the repository as working folder (so `.dlt/config.toml` applies as it does for `platform-sync sync`)
and dlt's telemetry off. While it runs, the parent samples the resident memory of the child and its
descendants with psutil, a cross-check of the `ru_maxrss` the child reports itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent


class RunFailed(RuntimeError):
    """A measured run exited with an error; the message ends with the tail of its output."""


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["RUNTIME__DLTHUB_TELEMETRY"] = "false"
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    for name in [n for n in env if n.startswith("DESTINATION__DUCKDB__")]:
        env.pop(name)
    # `run_models` finds dbt through the running interpreter; dlt's runner would look at VIRTUAL_ENV.
    env.setdefault("VIRTUAL_ENV", str(Path(sys.executable).resolve().parent.parent))
    return env


def world_fingerprint() -> str:
    """A hash of the sandbox's code: recorded pages are valid only for the world that served them."""
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted((ROOT / "sandbox").rglob("*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class _MemorySampler(threading.Thread):
    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            process = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self._halt.is_set():
            try:
                total = process.memory_info().rss
                for child in process.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        total += child.memory_info().rss
            except psutil.Error:
                return
            self.peak = max(self.peak, total)
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(5)


def run_worker(
    task: str,
    config: Mapping[str, Any],
    workdir: Path,
    timeout: float = 3600.0,
    result_name: str | None = None,
) -> dict[str, Any]:
    """Run one measured task in a child process; its result plus the parent's view (wall, sampled peak)."""
    workdir.mkdir(parents=True, exist_ok=True)
    name = result_name or task
    config_path = workdir / f"{name}.config.json"
    result_path = workdir / f"{name}.result.json"
    log_path = workdir / f"{name}.log"
    config_path.write_text(json.dumps({**config, "workdir": str(workdir)}, default=str))
    result_path.unlink(missing_ok=True)
    started = time.perf_counter()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.worker", task, str(config_path), str(result_path)],
            cwd=ROOT,
            env=child_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        sampler = _MemorySampler(process.pid)
        sampler.start()
        try:
            returncode = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            returncode = -9
        finally:
            sampler.stop()
    wall = time.perf_counter() - started
    if returncode != 0 or not result_path.exists():
        tail = log_path.read_text(errors="replace")[-3000:]
        raise RunFailed(f"{task} run exited with {returncode} (log {log_path}):\n{tail}")
    result: dict[str, Any] = json.loads(result_path.read_text())
    result["wall_seconds"] = wall
    result["sampled_peak_rss_mb"] = sampler.peak / 2**20
    return result


def drop_databases(workdir: Path) -> None:
    """Delete a run's DuckDB files once its figures are taken, so that the runs of a benchmark do not
    pile up on disk."""
    for path in workdir.glob("*.duckdb*"):
        path.unlink(missing_ok=True)


@dataclass
class PageServer:
    url: str
    process: subprocess.Popen[str]
    recorded_at_start: int

    def stats(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.url}/_bench/stats", timeout=30).raise_for_status().json())

    def reset_stats(self) -> dict[str, Any]:
        return dict(httpx.post(f"{self.url}/_bench/stats/reset", timeout=30).raise_for_status().json())

    def cpu_seconds(self) -> float:
        times = psutil.Process(self.process.pid).cpu_times()
        return float(times.user + times.system)


@contextlib.contextmanager
def page_server(upstream: str, store: Path | None) -> Iterator[PageServer]:
    """Run `bench.pageserver` in front of `upstream` for the `with` block."""
    command = [sys.executable, "-m", "bench.pageserver", "--upstream", upstream]
    if store is not None:
        command += ["--store", str(store)]
    process = subprocess.Popen(command, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url, recorded = "", 0
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError("the page server exited before it listened")
            key, _, value = line.strip().partition(": ")
            if key == "url":
                url = value
            elif key == "recorded":
                recorded = int(value)
                break
        yield PageServer(url, process, recorded)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import platform

    cpu_model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "cpu_model": cpu_model,
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]
