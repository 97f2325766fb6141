"""The ready-to-use schedules under `schedules/` are valid: the GitHub Actions workflow passes actionlint
(installed from PyPI with the dev extra), and the cron line runs the commands the README documents."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.cli import PROJECT_ROOT

ACTIONLINT = str(Path(sys.executable).with_name("actionlint"))
WORKFLOW = PROJECT_ROOT / "schedules" / "github-actions" / "platform-sync.yml"
CRON = PROJECT_ROOT / "schedules" / "cron" / "platform-sync.cron"


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ACTIONLINT, "-no-color", str(path)], capture_output=True, text=True, timeout=60)


def test_workflow_passes_actionlint():
    result = actionlint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    # the check above can fail: the same workflow with a mistyped key and a bad cron is refused
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text().replace("runs-on:", "run-on:").replace('"17 * * * *"', '"61 * * * *"')
    broken.write_text(text)
    result = actionlint(broken)
    assert result.returncode == 1
    assert "run-on" in result.stdout and "61" in result.stdout


def test_workflow_runs_the_documented_commands_and_tolerates_only_exit_3():
    text = WORKFLOW.read_text()
    assert "platform-sync --log-format json sync --destination postgres" in text
    assert 'if [ "$status" -eq 3 ]; then' in text
    assert "platform-sync models --destination postgres" in text


def test_cron_line_is_one_valid_entry_whose_shell_parses():
    entries = [line for line in CRON.read_text().splitlines() if line and not line.startswith("#")]
    assert len(entries) == 1
    fields = entries[0].split(maxsplit=5)
    assert fields[:5] == ["17", "*", "*", "*", "*"]
    command = fields[5].replace("\\%", "%")  # cron's own escape of %
    assert shutil.which("sh")
    assert subprocess.run(["sh", "-n", "-c", command], capture_output=True).returncode == 0
    assert ".venv/bin/platform-sync --log-format json sync" in command
    assert "[ $s -eq 0 ] || [ $s -eq 3 ]" in command
    assert ".venv/bin/platform-sync --log-format json models" in command  # no coloured dbt lines in the log


def test_cron_line_runs_from_a_fresh_checkout_and_logs_there(tmp_path):
    """Issue 51: in a fresh checkout `logs/` does not exist, and the line's redirection failed before
    anything ran. The line as shipped, in a folder with the two commands stubbed: both run, the log is
    written."""
    [entry] = [line for line in CRON.read_text().splitlines() if line and not line.startswith("#")]
    command = entry.split(maxsplit=5)[5].replace("\\%", "%").replace("/srv/platform-sync", str(tmp_path))
    stub = tmp_path / ".venv" / "bin" / "platform-sync"
    stub.parent.mkdir(parents=True)
    stub.write_text('#!/bin/sh\necho "ran: $*"\n')
    stub.chmod(0o755)
    result = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    [log] = list((tmp_path / "logs").iterdir())
    assert log.read_text().splitlines() == ["ran: --log-format json sync", "ran: --log-format json models"]
