"""Progress of a sync, per resource: rows extracted, requests made, and a bar with done of total where
the total is known: the rows a full scan announced (`totalItems` of each list's first page), and for the
rate-bound sale details the requests the run knows it will make (the new sale ids and the sales that can
change, within the run's budget; the total grows while the producers discover ids); with the time
left at the rate observed, per resource and for the run (the slowest of them).

Four forms, one collector (a dlt collector, so dlt reports rows to it while it extracts; built on dlt's
public collector hooks only, `update` and `on_start_trace_step`):
- `live`: on a terminal, drawn by rich's `Live` (one line per resource, cut to the terminal's width,
  redrawn in place; log lines are printed above it);
- `plain`: without a terminal (cron, CI), one line per active resource every `interval` seconds;
- `json`: one JSON object per line and per resource every `interval` seconds, for log collectors;
- `off` (`--no-progress`): counts, for the summary of an interrupted run, and prints nothing.

Only names and counts are printed: no URL, no parameter, no token.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TextIO

from dlt.common.runtime.collector import NullCollector
from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from sources.platform.report import RunReport
from sources.platform.resources import STREAMS

Style = Literal["live", "plain", "json", "off"]
RESOURCE_OF_OPERATION = {stream.operation: name for name, stream in STREAMS.items()}
RATE_BOUND = "sales"  # sale details: 30 a minute, one request per sale
LIVE_REFRESH_PER_SECOND = 2.0
# The sale details' ETA follows the pace they kept once it spans this many of the limiter's bursts: a
# burst more or less then moves it by an eighth at most.
KEPT_OVER_BURSTS = 8


@dataclass
class ResourceLine:
    """What is known of one resource so far."""

    resource: str
    rows: int
    requests: int
    done_of: tuple[int, int] | None = None  # sale details: requests made of the most this run makes
    rows_of: int | None = None  # rows the lists announced (totalItems), when the resource reads lists
    eta_seconds: float | None = None
    eta_at_least: bool = False  # the total may still grow (sale ids still being found): a floor

    def text(self) -> str:
        """The plain form (no terminal): one line, for log files."""
        parts = [f"{self.resource:22} {self.rows:>10,} rows {self.requests:>8,} requests"]
        if self.rows_of is not None:
            parts.append(f" of {self.rows_of:,} rows announced")
        if self.done_of:
            done, total = self.done_of
            parts.append(f"  {done:,} of {total:,} sale details known to this run")
            if self.eta_seconds is not None:
                floor = "at least " if self.eta_at_least else ""
                parts.append(f", {floor}{_duration(self.eta_seconds)} left")
        return "".join(parts)

    def bar(self) -> tuple[int, int] | None:
        """Done and total of the bar, where the total is known."""
        if self.done_of:
            return self.done_of
        if self.rows_of:
            return min(self.rows, self.rows_of), self.rows_of
        return None


class SyncProgress(NullCollector):
    """dlt's extract reports rows per table here; the display reads them with the run report's counts."""

    def __init__(
        self,
        style: Style,
        out: TextIO = sys.stderr,
        interval: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.style = style
        self._clock = clock
        self.out = out
        self.interval = interval
        self.phase = ""
        self._rows: dict[str, int] = {}
        self._report: RunReport | None = None
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        self._live: Live | None = None
        self._moved: list[tuple[logging.StreamHandler[TextIO], TextIO]] = []
        self._started = clock()
        self._step_started = self._started
        self._details_seen: tuple[float, int] | None = None  # when sale details were first seen, how many
        self._details_advanced: tuple[float, int] | None = None  # when they last advanced, how many

    def watch(self, report: RunReport) -> None:
        """Read the requests per operation and the totals announced from the source's run report."""
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

    def on_start_trace_step(self, trace: Any, step: Any, pipeline: Any) -> None:
        """dlt's public hook at the start of each step ("extract", "normalize", "load")."""
        self.phase = str(step)
        self._step_started = self._clock()
        if self.style == "off" or self._thread is not None or self._live is not None:
            return
        self._started = self._clock()
        if self.style == "live":
            self._start_live()
        else:
            self._thread = threading.Thread(target=self._run, name="platform-sync-progress", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the display after one last report."""
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
            self.report()
        if self._live is not None:
            self._live.update(self.renderable(), refresh=True)
            self.halt()

    def halt(self) -> None:
        """Stop the display at once, as it is (an interrupted run), and give the log lines their stream."""
        self._stop_event.set()
        live, self._live = self._live, None
        if live is not None:
            live.stop()
        for handler, stream in self._moved:
            handler.setStream(stream)
        self._moved = []

    def lines(self) -> list[ResourceLine]:
        """One line per resource that has rows or requests so far, in the order of `STREAMS`."""
        requests: dict[str, int] = {}
        report = self._report
        for operation, count in (report.requests if report else {}).items():
            resource = RESOURCE_OF_OPERATION.get(operation)
            if resource:
                requests[resource] = requests.get(resource, 0) + count
        announced = dict(report.rows_announced) if report else {}
        with self._lock:
            rows = dict(self._rows)
        elapsed = max(self._clock() - self._started, 1e-6)
        result = []
        for name in STREAMS:
            if name not in rows and name not in requests:
                continue
            line = ResourceLine(name, rows.get(name, 0), requests.get(name, 0), rows_of=announced.get(name))
            planned = report.sale_details_planned if report else None
            if name == RATE_BOUND and planned is not None:
                line.done_of = (line.requests, max(planned or 0, line.requests))
            bar = line.bar()
            if bar and bar[0] and self._extracting():
                done, total = bar
                if name == RATE_BOUND:
                    line.eta_seconds = self._sale_details_left(done, total)
                    line.eta_at_least = not (report and report.sale_details_final)
                else:
                    line.eta_seconds = (total - done) / (done / elapsed)
            result.append(line)
        return result

    def _sale_details_left(self, done: int, total: int) -> float:
        """Seconds left of the sale details. Not at rows over the run's time: the lists read before the first
        detail made that ETA swing between 17 and 41 minutes in 100 s (issue 51). At the pace the details kept
        (from when the progress first saw them to when they last advanced) once that covers `KEPT_OVER_BURSTS`
        of the rate limiter's bursts (pass starts, 429 cuts, latency and retries are in it, and a burst-then-
        wait step moves it little); before that, at the limiter's schedule while requests wait for it (its
        steps would make a pace kept over a few windows swing by half), or at the slower of the two when they
        do not (latency sets the pace)."""
        now = self._clock()
        if self._details_seen is None:
            self._details_seen = (now, done)
        if self._details_advanced is None or done > self._details_advanced[1]:
            self._details_advanced = (now, done)
        seen_at, seen_done = self._details_seen
        advanced_at, advanced_done = self._details_advanced
        pace = self._report.sale_details_pace if self._report else None
        schedule = pace.schedule() if pace is not None and pace.schedule is not None else None
        # Kept from the first time they were seen to the last time they advanced, both just after a
        # step: a line that falls in a wait (the next window, a pass's load) does not halve it.
        advanced = advanced_done - seen_done
        kept = advanced / (advanced_at - seen_at) if advanced_at > seen_at and advanced > 0 else None
        if schedule is None or (kept is not None and advanced >= KEPT_OVER_BURSTS * schedule.burst):
            rate = kept
        elif schedule.waiting or kept is None:
            rate = schedule.per_second
        else:
            rate = min(kept, schedule.per_second)
        return (total - done) / rate if rate else 0.0

    def report(self) -> None:
        """Print the current lines in this collector's style (plain or JSON; the live form redraws)."""
        if self.style in ("live", "off"):
            return
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for line in self.lines():
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
                if line.rows_of is not None:
                    record["rows_announced"] = line.rows_of
                if line.done_of:
                    record["done"], record["total"] = line.done_of
                if line.bar():
                    record["eta_seconds"] = None if line.eta_seconds is None else round(line.eta_seconds)
                    if line.done_of:
                        record["total_final"] = not line.eta_at_least
                self._write_line(json.dumps(record))
            else:
                self._write_line(f"{stamp} progress {line.text().strip()}")

    def _write_line(self, text: str) -> None:
        # One write: `print` writes the text and its newline apart, and a log line written by another
        # thread in between would join this one (two JSON objects on one line).
        self.out.write(text + "\n")
        self.out.flush()

    def renderable(self) -> Group:
        """The live form: a header (step, time, the run's time left) and one row per resource."""
        lines = self.lines()
        width = self._live.console.width if self._live else 80
        timed = [line for line in lines if line.eta_seconds is not None and _unfinished(line)]
        longest = max(timed, key=lambda line: line.eta_seconds or 0.0, default=None)
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(f"{self.phase or 'starting'} ", style="bold")
        header.append(_duration(self._clock() - self._step_started))
        if self._extracting():
            if longest is not None and longest.eta_seconds is not None:
                floor = "at least " if longest.eta_at_least else "~"
                header.append(f"  {floor}{_duration(longest.eta_seconds)} left")
            else:
                header.append("  time left: not known yet")
        header.append("  (bars: rows of the lists' totals; sales: sale details)" if width >= 100 else "")
        bar_width = max(6, min(30, width - 66))
        table = Table.grid(padding=(0, 1), expand=False)
        table.add_column("resource", no_wrap=True, overflow="ellipsis", max_width=20)
        table.add_column("bar", no_wrap=True, width=bar_width)
        table.add_column("done", no_wrap=True, overflow="ellipsis", justify="right", max_width=15)
        table.add_column("rows", no_wrap=True, overflow="ellipsis", justify="right", max_width=15)
        table.add_column("requests", no_wrap=True, overflow="ellipsis", justify="right", max_width=12)
        table.add_column("left", no_wrap=True, overflow="ellipsis", max_width=7)
        for line in lines:
            bar = line.bar()
            drawn: ProgressBar | Text = Text("")
            done_text = eta = ""
            if bar:
                done, total = bar
                drawn = ProgressBar(total=max(total, 1), completed=done, width=bar_width)
                done_text = f"{done:,}/{total:,}"
                if line.eta_seconds is not None and done < total:
                    eta = f"{'>' if line.eta_at_least else '~'}{_duration(line.eta_seconds)}"
            table.add_row(
                line.resource, drawn, done_text, f"{line.rows:,} rows", f"{line.requests:,} req", eta
            )
        return Group(header, table)

    def _start_live(self) -> None:
        console = Console(file=self.out, force_terminal=True)
        self._live = Live(
            get_renderable=self.renderable,
            console=console,
            refresh_per_second=LIVE_REFRESH_PER_SECOND,
            transient=False,
            redirect_stdout=False,
            redirect_stderr=False,
            vertical_overflow="visible",
        )
        self._live.start()
        self._print_logs_above()

    def _print_logs_above(self) -> None:
        """Log lines (the root logger's handler, and dlt's, which does not propagate and is set up when the
        pipeline starts: hence here) are printed above the live display, not over it."""
        assert self._live is not None
        above = _AboveLive(self._live)
        for logger in (logging.getLogger(), logging.getLogger("dlt")):
            for handler in logger.handlers:
                if isinstance(handler, logging.StreamHandler) and handler.stream is self.out:
                    self._moved.append((handler, handler.setStream(above) or self.out))

    def _run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.report()


class _AboveLive:
    """A text stream whose lines rich prints above the live display."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            self.live.console.print(Text(line), soft_wrap=True)
        return len(text)

    def flush(self) -> None:
        """Lines are printed as they end."""


def progress_for(
    log_format: str, out: TextIO = sys.stderr, interval: float = 60.0, quiet: bool = False
) -> SyncProgress:
    """The live display on a terminal, plain lines otherwise, JSON lines when asked for; `quiet`
    (`--no-progress`) only counts."""
    if quiet:
        return SyncProgress("off", out, interval)
    if log_format == "json":
        return SyncProgress("json", out, interval)
    return SyncProgress("live" if out.isatty() else "plain", out, interval)


def _unfinished(line: ResourceLine) -> bool:
    bar = line.bar()
    return bar is not None and bar[0] < bar[1]


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"
