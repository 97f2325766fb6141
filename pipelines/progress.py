"""Progress of a sync, per resource: rows extracted, requests made, and for the rate-bound sale details
requests done of those the run knows it will make (the new sale ids and the sales that can change,
within `sales_max_requests`; the total grows while the producers discover ids) and when they would be
done at the rate observed, while the extract runs.

Three forms, one collector (a dlt `Collector`, so dlt reports rows to it while it extracts):
- `live`: on a terminal, a block of lines redrawn every second;
- `plain`: without a terminal (cron, CI), one line per active resource every `interval` seconds;
- `json`: one JSON object per line and per resource every `interval` seconds, for log collectors.

Only names and counts are printed: no URL, no parameter, no token.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal, TextIO

from dlt.common.runtime.collector import NullCollector

from sources.platform.report import RunReport
from sources.platform.resources import STREAMS

Style = Literal["live", "plain", "json"]
RESOURCE_OF_OPERATION = {stream.operation: name for name, stream in STREAMS.items()}
RATE_BOUND = "sales"  # sale details: 30 a minute, one request per sale
LIVE_REFRESH_SECONDS = 1.0


@dataclass
class ResourceLine:
    """What is known of one resource so far."""

    resource: str
    rows: int
    requests: int
    done_of: tuple[int, int] | None = None  # requests made of the most this run makes
    eta_seconds: float | None = None

    def text(self) -> str:
        parts = [f"{self.resource:22} {self.rows:>10,} rows {self.requests:>8,} requests"]
        if self.done_of:
            done, total = self.done_of
            parts.append(f"  {done:,} of {total:,} sale details known to this run")
            if self.eta_seconds is not None:
                parts.append(f", all of them in {_duration(self.eta_seconds)} at the current rate")
        return "".join(parts)


class SyncProgress(NullCollector):
    """dlt's extract reports rows per table here; a thread prints the resources' lines on a schedule.

    Built on dlt's public collector hooks only (`update`, `on_start_trace_step`): the null collector's
    own start and stop do nothing, as nothing is drawn per step."""

    def __init__(self, style: Style, out: TextIO = sys.stderr, interval: float = 60.0) -> None:
        self.style = style
        self.out = out
        self.interval = LIVE_REFRESH_SECONDS if style == "live" else interval
        self.phase = ""
        self._rows: dict[str, int] = {}
        self._report: RunReport | None = None
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = 0  # lines of the live block on screen
        self._started = time.monotonic()

    def watch(self, report: RunReport) -> None:
        """Read the requests per operation and the sale details planned from the source's run report."""
        self._report = report

    def update(
        self,
        name: str,
        inc: int = 1,
        total: int | None = None,
        inc_total: int | None = None,
        message: str | None = None,
        label: str | None = None,
    ) -> None:
        if self._extracting() and name in STREAMS:
            with self._lock:
                self._rows[name] = self._rows.get(name, 0) + inc

    def _extracting(self) -> bool:
        return self.phase == "extract"

    def below_log_lines(self) -> None:
        """A log line was written under the live block: draw the next block below it, not over it."""
        self._drawn = 0

    def on_start_trace_step(self, trace: Any, step: Any, pipeline: Any) -> None:
        """dlt's public hook at the start of each step ("extract", "normalize", "load")."""
        if self.style == "live":
            _keep_logs_visible(self)
        self.phase = str(step)
        if self._thread is None:
            self._started = time.monotonic()
            self._thread = threading.Thread(target=self._run, name="platform-sync-progress", daemon=True)
            self._thread.start()
        super().on_start_trace_step(trace, step, pipeline)

    def close(self) -> None:
        """Stop the display after one last report."""
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
            self.report()

    def lines(self) -> list[ResourceLine]:
        """One line per resource that has rows or requests so far, in the order of `STREAMS`."""
        requests: dict[str, int] = {}
        report = self._report
        for operation, count in (report.requests if report else {}).items():
            resource = RESOURCE_OF_OPERATION.get(operation)
            if resource:
                requests[resource] = requests.get(resource, 0) + count
        with self._lock:
            rows = dict(self._rows)
        elapsed = max(time.monotonic() - self._started, 1e-6)
        result = []
        for name in STREAMS:
            if name not in rows and name not in requests:
                continue
            line = ResourceLine(name, rows.get(name, 0), requests.get(name, 0))
            if name == RATE_BOUND and self._extracting():
                planned = report.sale_details_planned if report else None
                done, total = line.requests, max(planned or 0, line.requests)
                line.done_of = (done, total)
                if done:
                    line.eta_seconds = (total - done) / (done / elapsed)
            result.append(line)
        return result

    def report(self) -> None:
        """Print the current lines in this collector's style."""
        lines = self.lines()
        if self.style == "live":
            self._draw(lines)
            return
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for line in lines:
            if self.style == "json":
                record = {
                    "time": stamp,
                    "level": "info",
                    "event": "progress",
                    "step": self.phase,
                    "resource": line.resource,
                    "rows": line.rows,
                    "requests": line.requests,
                }
                if line.done_of:
                    record["done"], record["total"] = line.done_of
                    record["eta_seconds"] = None if line.eta_seconds is None else round(line.eta_seconds)
                self._write_line(json.dumps(record))
            else:
                self._write_line(f"{stamp} progress {line.text().strip()}")

    def _write_line(self, text: str) -> None:
        # One write: `print` writes the text and its newline apart, and a log line written by another
        # thread in between would join this one (two JSON objects on one line).
        self.out.write(text + "\n")
        self.out.flush()

    def _draw(self, lines: list[ResourceLine]) -> None:
        # Move up over the previous block and rewrite it; \x1b[K clears what a longer line left.
        text = "".join(f"\x1b[K{line.text()}\n" for line in lines)
        header = f"\x1b[K{self.phase or 'starting'} {_duration(time.monotonic() - self._started)}\n"
        up = f"\x1b[{self._drawn}F" if self._drawn else ""
        self.out.write(up + header + text)
        self.out.flush()
        self._drawn = len(lines) + 1

    def _run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.report()


class _LogWritten(logging.Filter):
    """Tells the live display that a handler writes a line (it lets every record through)."""

    def __init__(self, display: SyncProgress) -> None:
        super().__init__()
        self.display = display

    def filter(self, record: logging.LogRecord) -> bool:
        self.display.below_log_lines()
        return True


def _keep_logs_visible(display: SyncProgress) -> None:
    """Watch the handlers of the root logger and of dlt's logger (which does not propagate; dlt sets it
    up when the pipeline starts, hence here and not earlier)."""
    for logger in (logging.getLogger(), logging.getLogger("dlt")):
        for handler in logger.handlers:
            if not any(isinstance(f, _LogWritten) for f in handler.filters):
                handler.addFilter(_LogWritten(display))


def progress_for(log_format: str, out: TextIO = sys.stderr, interval: float = 60.0) -> SyncProgress:
    """The live display on a terminal, plain lines otherwise, JSON lines when asked for."""
    if log_format == "json":
        return SyncProgress("json", out, interval)
    return SyncProgress("live" if out.isatty() else "plain", out, interval)


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"
