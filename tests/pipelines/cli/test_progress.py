"""Progress of the real command: plain lines without a terminal, a live block on a terminal, JSON lines
with `--log-format json`; counts that agree with the summary, and no secret anywhere."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from pipelines.sync.progress import SyncProgress
from sandbox.running import SandboxHandle, running_sandbox
from sources.platform.report import RunReport, SaleDetailsPace
from sources.platform_client.ratelimit import Schedule
from tests.support.cli import PLATFORM_SYNC, cli_env, run_cli
from tests.support.sync_helpers import source_options

SLOW = 60  # rate-limit windows of 1 s: the sale details keep the extract busy for a few seconds
PLAIN_LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ progress (\w+) +([\d,]+) rows +([\d,]+) requests(.*)$"
)


def env_for(sandbox: SandboxHandle, folder: Path, token: str) -> dict[str, str]:
    return cli_env(folder, source_options(sandbox, token, rate_limit_time_scale=SLOW))


def summary_counts(stdout: str) -> dict[str, int]:
    """`table  rows` and `operation  requests` lines of the text summary."""
    counts = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].replace(",", "").isdigit():
            counts[parts[0]] = int(parts[1].replace(",", ""))
    return counts


def test_plain_lines_every_interval_without_a_terminal(tmp_path):
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        token = sandbox.token()
        result = run_cli(["sync", "--progress-interval", "1"], env_for(sandbox, tmp_path, token), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [PLAIN_LINE.match(line) for line in result.stderr.splitlines() if "Z progress " in line]
    assert lines and all(lines), result.stderr
    sales = [
        m for m in lines if m and m.group(1) == "sales" and "sale details known to this run" in m.group(4)
    ]
    assert len(sales) >= 2, "the extract lasts seconds: a sales line every second"
    last: dict[str, tuple[int, int]] = {}
    for match in lines:
        assert match
        last[match.group(1)] = (int(match.group(2).replace(",", "")), int(match.group(3).replace(",", "")))
    counts = summary_counts(result.stdout)
    assert last["transfers"] == (counts["transfers"], counts["list_transfers"])
    assert last["sales"] == (counts["sales"], counts["sale_details"])
    assert last["fiscal_documents"] == (counts["fiscal_documents"], counts["list_fiscal_documents"])
    assert token not in result.stderr + result.stdout


def test_json_lines_for_log_collectors(tmp_path):
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        token = sandbox.token()
        args = ["-v", "--log-format", "json", "sync", "--progress-interval", "1"]
        result = run_cli(args, env_for(sandbox, tmp_path, token), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    for line in result.stderr.splitlines():
        try:
            json.loads(line)
        except ValueError:
            raise AssertionError(line) from None
    records = [json.loads(line) for line in result.stderr.splitlines()]  # every line is one JSON object
    progress = [r for r in records if r.get("event") == "progress"]
    assert {"transfers", "sales", "subscriptions"} <= {r["resource"] for r in progress}
    sales = [r for r in progress if r["resource"] == "sales" and r["step"] == "extract"]
    (summary,) = [json.loads(line) for line in result.stdout.splitlines()]
    # Done of what the run knows it will fetch, not of the budget (5,000): the total only grows, while
    # the producers discover sale ids, up to what the run fetched in the end.
    totals = [r["total"] for r in sales]
    assert sales and all(r["done"] == r["requests"] <= r["total"] for r in sales)
    assert totals == sorted(totals) and totals[-1] <= summary["requests"]["sale_details"] < 5000
    assert summary["event"] == "summary" and summary["exit_status"] == 0 and summary["failure"] is None
    final = {r["resource"]: r for r in progress}
    assert final["transfers"]["rows"] == summary["rows"]["transfers"]
    assert final["transfers"]["requests"] == summary["requests"]["list_transfers"]
    assert [r["resource"] for r in summary["resources"]][:2] == ["products", "product_campaigns"]
    assert {r["status"] for r in summary["resources"]} == {"loaded"}
    assert token not in result.stderr + result.stdout


LIVE_ROW = re.compile(r"^(\w+) .* ([\d,]+) rows +([\d,]+) req\b")
HEADER = re.compile(r"^(starting|extract|normalize|load) \dm\d\ds")


def run_in_terminal(folder: Path, env: dict[str, str], columns: int) -> list[tuple[str, str]]:
    """`platform-sync sync` in a tmux terminal of `columns` x 40 (a server of its own, on its own
    socket); the screen as it is (`capture-pane -p`) and with wrapped lines joined (`-J`), every 0.2 s
    until the command has ended."""
    script = folder / "run.sh"
    exports = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in env.items())
    script.write_text(
        f"{exports}cd {shlex.quote(str(folder))}\n{PLATFORM_SYNC} sync\necho EXIT=$?\nsleep 600\n"
    )
    tmux = ["tmux", "-L", f"platform-sync-test-{os.getpid()}-{columns}", "-f", "/dev/null"]
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", str(columns), "-y", "40", "sh", str(script)], check=True
    )
    screens: list[tuple[str, str]] = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            plain = subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True).stdout
            joined = subprocess.run(
                [*tmux, "capture-pane", "-p", "-J"], capture_output=True, text=True
            ).stdout
            screens.append((plain, joined))
            if "EXIT=" in plain:  # the whole of it, scrollback included
                history = subprocess.run(
                    [*tmux, "capture-pane", "-p", "-S", "-"], capture_output=True, text=True
                )
                return [*screens, (history.stdout, history.stdout)]
            time.sleep(0.2)
        raise AssertionError("the sync did not end: " + screens[-1][0])
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def block(lines: list[str]) -> list[str]:
    """The display's lines on a screen: from its header to the first empty line."""
    start = next((n for n, line in enumerate(lines) if HEADER.match(line)), len(lines))
    end = next((n for n in range(start, len(lines)) if not lines[n]), len(lines))
    return lines[start:end]


def trimmed(screen: str) -> list[str]:
    return [line.rstrip() for line in screen.splitlines()]


@pytest.mark.parametrize("columns", [80, 200])
def test_live_display_in_a_terminal_of_80_and_200_columns(tmp_path, columns):
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        token = sandbox.token()
        screens = run_in_terminal(tmp_path, env_for(sandbox, tmp_path, token), columns)
    final = screens[-1][0]
    (tmp_path.parent / f"screens-{columns}.txt").write_text("\n=====\n".join(plain for plain, _ in screens))
    assert "EXIT=0" in final, final
    live = [plain for plain, _ in screens if any(HEADER.match(line) for line in plain.splitlines())]
    assert len(live) > 5, screens[-1][0]  # redrawn while the run goes on
    for plain, joined in screens[:-1]:
        # -J joins the lines the terminal wrapped: none of the display is longer than the terminal is
        # wide (the summary's own lines come after the display's last block)
        display = block(trimmed(joined))
        assert all(len(line) <= columns for line in display), joined
        lines = plain.splitlines()
        # no stale copy of the block: one header, and each resource once
        assert len([line for line in lines if HEADER.match(line)]) <= 1, plain
        resources = [m.group(1) for m in map(LIVE_ROW.match, lines) if m]
        assert len(resources) == len(set(resources)), plain
    during = [
        plain for plain in live if re.search(r"^sales +[\u2501\u2578\u257a ]+ +[\d,]+/[\d,]+ ", plain, re.M)
    ]
    assert during, live[-1]
    assert any("\u2501" in plain for plain in during)  # rich's bar
    header = re.compile(r"^extract \dm\d\ds +(~|at least )\dm\d\ds left", re.M)
    assert any(header.search(plain) for plain in live), live[-1]
    # the summary after the display, counts as the last block showed them
    assert "operation" in final and "rows loaded" in final
    assert token not in "".join(plain for plain, _ in screens)


def _sale_details_etas(kept_per_second: float, scheduled_per_second: float) -> list[tuple[float, float]]:
    """(time, projected end) of each progress report of a run on a fake clock: 100 s of lists, then 1,000
    sale details (a burst of 30, then `kept_per_second`) while the limiter's schedule grants
    `scheduled_per_second`; reported every 10 s."""
    now = [0.0]
    requests: dict[str, int] = {}
    report = RunReport()
    # the limiter sets the pace when the details keep it (its requests wait), latency when slower
    schedule = Schedule(scheduled_per_second, 30, waiting=kept_per_second >= scheduled_per_second)
    report.sale_details_pace = SaleDetailsPace(5000, 30.0, lambda: schedule)
    report.count_requests_with(lambda: dict(requests))
    report.plan_sale_details(1000, final=True)
    progress = SyncProgress("off", clock=lambda: now[0])
    progress.watch(report)
    progress.on_start_trace_step(None, "extract", None)
    progress.update("transfers", 400)
    requests["list_transfers"] = 8
    projected = []
    for step in range(1, 200):
        now[0] = 10.0 * step
        if now[0] > 100:
            done = min(1000, 30 + int(kept_per_second * (now[0] - 100)))
            requests["sale_details"] = done
            if done == 1000:
                break
            (line,) = [line for line in progress.lines() if line.resource == "sales"]
            assert line.eta_seconds is not None
            projected.append((now[0], now[0] + line.eta_seconds))
    return projected


@pytest.mark.parametrize(("kept", "scheduled"), [(0.5, 0.5), (0.25, 0.5)])
def test_the_sale_details_eta_follows_the_schedule_and_holds_within_a_fifth(kept, scheduled):
    """Issue 51: against the real limits the ETA swung between 17 and 41 minutes in 100 s (rows over the
    run's time, lists included). Now: the limiter's pace, or the pace the details kept when slower
    (latency-bound: 0.25 a second against 0.5 granted); every projected end within 20% of the real one
    from the second report of the details on."""
    projected = _sale_details_etas(kept, scheduled)
    real_end = 100 + (1000 - 30) / kept
    assert len(projected) > 10
    for at, end in projected[1:]:
        assert abs(end - real_end) <= 0.2 * (real_end - at), (at, end, real_end)


def test_the_sale_details_total_is_the_runs_across_its_passes(tmp_path):
    """Issue 51: in passes (checkpoints), the total and the time left were the pass's: "0m03s left" while
    the run had minutes of passes to go. The total now counts what the run has ahead, past this pass."""
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        env = {**env_for(sandbox, tmp_path, sandbox.token()), "SYNC__CHECKPOINT_REQUESTS": "20"}
        result = run_cli(["sync", "--progress-interval", "1"], env, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    totals = [
        (int(done.replace(",", "")), int(total.replace(",", "")))
        for done, total in re.findall(r"([\d,]+) of ([\d,]+) sale details known to this run", result.stderr)
    ]
    assert len(totals) >= 2, result.stderr
    assert "loaded in" in result.stdout and "checkpoints" in result.stdout  # it ran in passes
    assert any(total - done > 20 for done, total in totals), totals  # beyond the pass that runs
    assert max(total for _, total in totals) <= summary_counts(result.stdout)["sale_details"]


def _bursty_sale_details_etas(lost_window_at: int | None) -> tuple[list[tuple[float, float]], float]:
    """(time, projected end) of each progress report of a run on a fake clock as the real limiter makes
    it (time scale 12: a window of 5.1 s), and the real end: lists for 4 s, then 700 sale details in
    bursts of 30 at each window's start; a pass of 150 ends with 3 s of load and list reads; a foreign
    429's `Retry-After` costs one window after `lost_window_at` details. Reported every 2 s."""
    window, burst, total = 5.1, 30, 700
    bursts, at, done = [], 4.0, 0
    while done < total:
        done = min(total, done + burst)
        bursts.append((at, done))
        at += window
        if done % 150 == 0:
            at += 3.0
        if lost_window_at is not None and done == lost_window_at:
            at += window
    real_end = bursts[-1][0]
    now = [0.0]
    requests: dict[str, int] = {}
    report = RunReport()
    report.count_requests_with(lambda: dict(requests))
    report.plan_sale_details(total, final=True)

    def schedule() -> Schedule:  # requests wait for the limiter except in a pass's pause
        done_now = requests.get("sale_details", 0)
        return Schedule(burst / window, burst, waiting=done_now % 150 != 0 or done_now == 0)

    report.sale_details_pace = SaleDetailsPace(5000, 30.0, schedule)
    progress = SyncProgress("off", clock=lambda: now[0])
    progress.watch(report)
    progress.on_start_trace_step(None, "extract", None)
    projected = []
    for step in range(1, 1000):
        now[0] = 0.3 + 2.0 * step
        done = max([count for start, count in bursts if start <= now[0]], default=0)
        if done == total:
            break
        if done:
            requests["sale_details"] = done
            (line,) = [line for line in progress.lines() if line.resource == "sales"]
            assert line.eta_seconds is not None
            projected.append((now[0], now[0] + line.eta_seconds))
    return projected, real_end


@pytest.mark.parametrize("lost_window_at", [None, 480])
def test_the_sale_details_eta_holds_within_a_fifth_through_bursts_and_passes(lost_window_at):
    """Issue 51, measured on the real command (`bench/eta.py`): the limiter grants a window's 30 at once
    and then waits, and a pass pauses the details for its load; a pace kept over a few windows swung
    the projected end to 3x the run. Every projected end within 20% of the run's time to the real end."""
    projected, real_end = _bursty_sale_details_etas(lost_window_at)
    assert len(projected) > 50
    worst = max(abs(end - real_end) for _, end in projected)
    assert worst <= 0.2 * real_end, (worst / real_end, real_end)
