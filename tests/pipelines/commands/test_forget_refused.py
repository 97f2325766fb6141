"""`forget` where there is nothing to forget in (issue 51): run from another folder than the sync's, it
blanked nothing, said the request was recorded, exited 0 and made an empty DuckDB file; now one line,
exit 2, and nothing made or recorded."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import cli_env, run_cli


def test_forget_without_a_warehouse_or_a_store_is_refused_and_makes_nothing(tmp_path: Path) -> None:
    env = cli_env(tmp_path, {}, tmp_path / "platform_sync.duckdb")
    done = run_cli(["forget", "--email", "ana@example.com"], env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("configuration error: nothing to forget in: no raw tables in the dataset "), (
        lines
    )
    assert "Nothing was recorded" in lines[-1] and "Traceback" not in done.stderr
    assert "ana@example.com" not in done.stdout + done.stderr
    assert not (tmp_path / "platform_sync.duckdb").exists()
