"""Progress of the real command: plain lines without a terminal, a live block on a terminal, JSON lines
with `--log-format json`; counts that agree with the summary, and no secret anywhere."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import threading
from pathlib import Path

from sandbox.testing import SandboxHandle, running_sandbox
from tests.e2e.conftest import source_options
from tests.ops.conftest import PLATFORM_SYNC, cli_env, run_cli

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


def test_live_display_on_a_terminal(tmp_path):
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        token = sandbox.token()
        leader, follower = pty.openpty()
        process = subprocess.Popen(
            [PLATFORM_SYNC, "sync"],
            env=env_for(sandbox, tmp_path, token),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
        )
        os.close(follower)
        chunks: list[bytes] = []
        reader = threading.Thread(target=read_all, args=(leader, chunks), daemon=True)
        reader.start()
        stdout, _ = process.communicate(timeout=300)
        reader.join(timeout=10)
    screen = b"".join(chunks).decode()
    assert process.returncode == 0, stdout + screen
    redraws = screen.count("\x1b[")
    assert redraws > 10, screen  # the block is rewritten in place, every second
    assert re.search(r"\x1b\[\d+F", screen), "the cursor moves up over the previous block"
    assert re.search(r"sales +[\d,]+ rows +[\d,]+ requests +[\d,]+ of [\d,]+ sale details known to", screen)
    assert re.search(r"(^|\n)extract \dm\d\ds\r?\n", screen.replace("\x1b[K", ""))
    assert token not in screen + stdout


def read_all(fd: int, chunks: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the terminal closed when the process ended
            return
        if not data:
            return
        chunks.append(data)


def test_live_block_is_drawn_below_a_log_line_not_over_it():
    import io
    import logging

    from pipelines.progress import SyncProgress

    screen = io.StringIO()
    handler = logging.StreamHandler(screen)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        from sources.platform.report import RunReport

        report = RunReport()
        report.count_requests_with(lambda: {"list_transfers": 2})
        display = SyncProgress("live", screen)
        display.watch(report)
        display.phase = "extract"
        display._stop_event.set()  # no ticker thread: the test draws by hand
        display.on_start_trace_step(None, "extract", None)
        display.update("transfers", 24)
        display.report()
        display.report()
        assert screen.getvalue().count("\x1b[2F") == 1  # the second block over the first
        logging.getLogger("platform_sync.test").warning("a warning between two blocks")
        before = len(screen.getvalue())
        display.report()
        redraw = screen.getvalue()[before:]
        assert not redraw.startswith("\x1b[") or redraw.startswith("\x1b[K")  # no cursor move up
        assert "a warning between two blocks" in screen.getvalue()
        assert "transfers                      24 rows        2 requests" in redraw
    finally:
        root.removeHandler(handler)
        display.close()
