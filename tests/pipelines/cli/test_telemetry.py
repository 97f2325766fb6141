"""dlt's telemetry off wherever the command runs from (issue 51): after a `pip install`, run from a folder
that is not the checkout (no `.dlt/config.toml` of ours), dlt's anonymous telemetry was on. Importing the
command line turns it off unless the user chose: the variable, or `dlthub_telemetry` in a config dlt
reads, stands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import PROJECT_ROOT

RESOLVED = (
    "import os, pipelines.cli\n"
    "from dlt.common.configuration import resolve_configuration\n"
    "from dlt.common.configuration.specs import RuntimeConfiguration\n"
    "print(resolve_configuration(RuntimeConfiguration()).dlthub_telemetry)\n"
)


def telemetry_in(folder: Path, **variables: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "RUNTIME__DLTHUB_TELEMETRY"}
    env.update(HOME=str(folder), PYTHONPATH=str(PROJECT_ROOT), **variables)
    result = subprocess.run(
        [sys.executable, "-c", RESOLVED], cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_off_outside_the_checkout(tmp_path: Path) -> None:
    assert telemetry_in(tmp_path) == "False"


@pytest.mark.parametrize("where", ["variable", "config"])
def test_a_users_choice_stands(tmp_path: Path, where: str) -> None:
    if where == "variable":
        assert telemetry_in(tmp_path, RUNTIME__DLTHUB_TELEMETRY="true") == "True"
        return
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text("[runtime]\ndlthub_telemetry = true\n")
    assert telemetry_in(tmp_path) == "True"
