"""A damaged `state.json` (issue 53): emptied, or cut in half by a full disk, it stopped dlt with a
traceback on every run until a person deleted it. The real command sets it aside with one line and goes
on from the state the warehouse keeps: exit 0, and the warehouse exact."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import cli_env, in_folder, run_cli
from tests.support.faults import TIME_SCALE, Reference
from tests.support.sync_helpers import source_options
from tests.support.warehouses import assert_exact


@pytest.mark.parametrize("damage", ["emptied", "cut in half", "not an object"])
def test_a_damaged_state_is_set_aside_and_restored_from_the_warehouse(
    sandbox, reference: Reference, tmp_path: Path, damage: str
) -> None:
    options = source_options(sandbox, sandbox.token(), rate_limit_time_scale=TIME_SCALE)
    database = tmp_path / "warehouse.duckdb"
    env = in_folder(cli_env(tmp_path, options, database), tmp_path)
    first = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    pipelines = tmp_path / ".dlt" / "pipelines"
    state = pipelines / "platform_sync" / "state.json"
    text = state.read_text()
    state.write_text({"emptied": "", "cut in half": text[: len(text) // 2], "not an object": "[]"}[damage])

    again = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Traceback" not in again.stderr
    damaged = [line for line in again.stderr.splitlines() if "was damaged" in line]
    assert len(damaged) == 1, again.stderr
    aside = list(pipelines.glob("platform_sync.state.json.damaged-*"))
    assert len(aside) == 1 and str(aside[0]) in damaged[0]
    assert (
        aside[0].read_text()
        == {"emptied": "", "cut in half": text[: len(text) // 2], "not an object": "[]"}[damage]
    )
    assert_exact(str(database), reference.database)
    # The state came back from the warehouse: the cursors are there, and a third run reads no full list
    # it read a moment ago.
    assert '"sources"' in state.read_text()
    third = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert third.returncode == 0 and "was damaged" not in third.stderr
