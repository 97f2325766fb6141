"""The Dagster definitions materialize every asset against the sandbox, with `dagster asset materialize`
from the project's configuration: the raw tables through the sync, then the dbt models on them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

from sandbox.running import running_sandbox
from sources.platform.resources import STREAMS
from tests.e2e.conftest import source_options
from tests.ops.conftest import PROJECT_ROOT, cli_env

DAGSTER = str(Path(sys.executable).with_name("dagster"))
DEFINITIONS = PROJECT_ROOT / "schedules" / "dagster" / "definitions.py"


def test_materialize_the_sync_and_the_models(tmp_path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    with running_sandbox(seed=2, scale=100, time_scale=600) as sandbox:
        env = cli_env(tmp_path, source_options(sandbox, sandbox.token(), rate_limit_time_scale=600))
        env.update({"DAGSTER_HOME": str(home), "PYTHONPATH": str(PROJECT_ROOT)})
        result = subprocess.run(
            [DAGSTER, "asset", "materialize", "-f", str(DEFINITIONS), "--select", "*"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    assert "RUN_SUCCESS" in result.stderr + result.stdout
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as connection:
        runs = connection.execute(
            "select resource, status from platform_raw._platform_sync_runs order by resource"
        ).fetchall()
        assert runs == sorted((name, "loaded") for name in STREAMS)
        sales = connection.execute("select count(*) from platform_raw.sales").fetchone()
        marts = connection.execute("select count(*) from marts.fct_sales").fetchone()
        assert sales is not None and marts == sales and sales[0] > 0
