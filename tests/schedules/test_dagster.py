"""The Dagster definitions materialize every asset against the sandbox, with `dagster asset materialize`
from the project's configuration: the raw tables through the sync, then the dbt models on them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb

from sandbox.running import running_sandbox
from sources.platform.resources import STREAMS
from tests.support.cli import PROJECT_ROOT, cli_env
from tests.support.sync_helpers import source_options

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


# Each process Dagster starts loads the code location (each partition's run, each step): here two at
# once, with a fourth reading the manifest whenever it is there, as dagster-dbt does at load.
CONCURRENT_LOADS = """
import importlib.util, json, shutil, sys, threading
from pathlib import Path
from dagster_dbt import DbtProject

spec = importlib.util.spec_from_file_location("definitions", sys.argv[1])
definitions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(definitions)
copy = Path(sys.argv[2])
shutil.copytree(definitions.DBT_PROJECT_DIR, copy, ignore=shutil.ignore_patterns("target", "logs"))
project = DbtProject(project_dir=copy, profiles_dir=copy / "profiles", target_path=Path("target") / "dagster")
loaders = [threading.Thread(target=definitions.parsed_manifest, args=(project,)) for _ in range(2)]
cut_short = []
for loader in loaders:
    loader.start()
while any(loader.is_alive() for loader in loaders):
    try:
        text = project.manifest_path.read_bytes()
    except FileNotFoundError:
        continue
    try:
        json.loads(text)
    except ValueError:
        cut_short.append(len(text))
manifest = json.loads(project.manifest_path.read_bytes())
print(json.dumps({"cut_short": cut_short, "nodes": len(manifest["nodes"])}))
"""


def test_code_locations_loading_at_once_never_read_a_manifest_cut_short(tmp_path):
    """The dbt manifest is parsed into a folder of the process's own and moved into place in one step:
    a process loading the definitions while another parses reads the old manifest or the new, whole.
    (CI, 2026-11-26: three partitions' runs started together, one failed at load with orjson's
    'unexpected end of data' on the manifest another was writing.)"""
    result = subprocess.run(
        [sys.executable, "-c", CONCURRENT_LOADS, str(DEFINITIONS), str(tmp_path / "dbt_models")],
        env={**cli_env(tmp_path, {}), "PYTHONPATH": str(PROJECT_ROOT)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["cut_short"] == []
    assert outcome["nodes"] > 50
    assert not [p.name for p in (tmp_path / "dbt_models" / "target").iterdir() if p.name != "dagster"]


LOAD_ONLY = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("definitions", sys.argv[1])
definitions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(definitions)
print(definitions.PIPELINE_DESCRIPTION.pipeline_name)
"""


def test_loading_the_code_location_leaves_every_pipelines_folder_alone(tmp_path):
    """Every process Dagster starts loads the definitions, several at once; dlt wipes a working folder
    that has no state yet before it creates the pipeline there. So loading them builds no pipeline in the
    real working folders: an account's run that has begun writing its folder keeps it. (CI, 2026-11-28:
    three partitions' runs started together, one died at load removing acme's folder as acme wrote it.)"""
    project = tmp_path / "project"
    (project / ".dlt").mkdir(parents=True)
    (project / ".dlt" / "config.toml").write_text('[accounts.acme]\nbase_url = "http://127.0.0.1:9"\n')
    (project / ".dlt" / "secrets.toml").write_text('[accounts.acme]\naccess_token = "not-used-here"\n')
    data = project / ".dlt" / "data"
    # acme's first run under way in another process: its folder, a package being extracted, no state yet
    begun = data / "pipelines" / "platform_sync__acme" / "extract" / "new" / "1764300000.1" / "begun"
    begun.parent.mkdir(parents=True)
    begun.write_text("a job file being written")
    result = subprocess.run(
        [sys.executable, "-c", LOAD_ONLY, str(DEFINITIONS)],
        env={**cli_env(tmp_path, {}), "PYTHONPATH": str(PROJECT_ROOT), "DLT_DATA_DIR": str(data)},
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "platform_sync__acme"
    assert begun.read_text() == "a job file being written"
    assert sorted(p.name for p in (data / "pipelines").iterdir()) == ["platform_sync__acme"]
    assert sorted(p.name for p in begun.parents[3].iterdir()) == ["extract"]
