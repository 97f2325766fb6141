"""The demo's last line names the command as the user runs it (issue 51): it said `.venv/bin/platform-sync`
to a user who had installed the package with pip into a virtual environment of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.cli.demo import this_command


def _script(folder: Path) -> Path:
    folder.mkdir(parents=True)
    script = folder / "platform-sync"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return script


def test_the_demo_names_the_command_as_the_user_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    in_checkout = _script(checkout / ".venv" / "bin")
    elsewhere = _script(tmp_path / "venvs" / "ps" / "bin")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    # `make demo` in a checkout: the checkout's .venv, relative to where it runs
    assert this_command(str(in_checkout), checkout) == ".venv/bin/platform-sync"
    # pip into a virtual environment elsewhere, not activated: its full path
    assert this_command(str(elsewhere), tmp_path / "project") == str(elsewhere)
    # activated (on PATH): the bare name
    monkeypatch.setenv("PATH", f"{elsewhere.parent}:/usr/bin:/bin")
    assert this_command(str(elsewhere), tmp_path / "project") == "platform-sync"
    assert this_command("python", checkout) == "platform-sync"
