"""The pipeline's working folder follows dlt's own settings, keeps one warehouse per folder (a second
DuckDB file of the same dataset included), and an earlier version's `./.dlt/pipelines` folder is moved
to it, never lost (issue 28)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dlt
import pytest

from pipelines.sync.platform_pipeline import (
    DATASET_NAME,
    DEFAULT_DESTINATION,
    DUCKDB_LOAD_SETTINGS,
    PIPELINE_NAME,
    make_pipeline,
    sync,
)
from pipelines.sync.working_folder import WAREHOUSE_FILE, pipelines_dir_for
from sandbox.running import running_sandbox
from tests.support.scan_budget import FANS_WAIT
from tests.support.sync_helpers import query, source_options

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder as the current folder, its DuckDB file configured, dlt's data folder elsewhere."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(folder / "warehouse.duckdb"))
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "dlt-data"))
    monkeypatch.delenv("PLATFORM_SYNC_KEEP_LEGACY_FOLDER")  # the suite's guard (tests/conftest.py)
    return folder


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_working_folder_is_in_dlt_data_dir(tmp_path: Path, project: Path) -> None:
    pipeline = make_pipeline()
    assert Path(pipeline.working_dir) == tmp_path / "dlt-data" / "pipelines" / PIPELINE_NAME


def test_the_pipelines_dir_setting_wins(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIPELINES_DIR", str(tmp_path / "chosen"))
    assert Path(make_pipeline().working_dir) == tmp_path / "chosen" / PIPELINE_NAME


def test_another_destination_or_dataset_has_a_folder_of_its_own(tmp_path: Path) -> None:
    default = (DEFAULT_DESTINATION, DATASET_NAME)
    assert pipelines_dir_for(PIPELINE_NAME, "duckdb", "platform_raw", default, tmp_path) == tmp_path
    assert (
        pipelines_dir_for(PIPELINE_NAME, "postgres", "platform_raw", default, tmp_path)
        == tmp_path / "platform_sync-postgres-platform_raw"
    )
    assert (
        pipelines_dir_for(PIPELINE_NAME, "duckdb", "other", default, tmp_path)
        == tmp_path / "platform_sync-duckdb-other"
    )


def test_a_sync_into_another_dataset_leaves_the_default_ones_folder_alone(
    tmp_path: Path, project: Path
) -> None:
    default = make_pipeline()
    default.run([{"id": 1}], table_name="products").raise_on_failed_jobs()
    before = files(Path(default.working_dir))
    other = make_pipeline(dataset_name="other_raw")
    other.run([{"id": 2}], table_name="products").raise_on_failed_jobs()
    assert Path(other.working_dir) != Path(default.working_dir)
    assert files(Path(default.working_dir)) == before
    assert make_pipeline().dataset_name == DATASET_NAME and make_pipeline().last_trace is not None


def _legacy_pipeline(project: Path, dataset: str) -> dlt.Pipeline:
    """A working folder where versions before issue 28 kept it: `./.dlt/pipelines`."""
    pipeline = dlt.pipeline(
        pipeline_name=PIPELINE_NAME,
        destination=dlt.destinations.duckdb(str(project / "warehouse.duckdb")),
        dataset_name=dataset,
        pipelines_dir=str(project / ".dlt" / "pipelines"),
    )
    pipeline.run([{"id": 1}], table_name="products").raise_on_failed_jobs()
    return pipeline


def test_an_earlier_versions_working_folder_is_moved_with_its_state(tmp_path: Path, project: Path) -> None:
    legacy = Path(_legacy_pipeline(project, DATASET_NAME).working_dir)
    before = files(legacy)
    pipeline = make_pipeline()
    moved = tmp_path / "dlt-data" / "pipelines" / PIPELINE_NAME
    assert Path(pipeline.working_dir) == moved and not legacy.exists()
    after = files(moved)
    assert {name: after[name] for name in before} == before  # every file, byte for byte
    assert pipeline.last_trace is not None and "products" in pipeline.default_schema.tables


def test_the_suites_guard_keeps_the_legacy_folder(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    legacy = Path(_legacy_pipeline(project, DATASET_NAME).working_dir)
    monkeypatch.setenv("PLATFORM_SYNC_KEEP_LEGACY_FOLDER", "1")
    before = files(legacy)
    assert Path(make_pipeline().working_dir) == tmp_path / "dlt-data" / "pipelines" / PIPELINE_NAME
    assert files(legacy) == before


def test_an_earlier_working_folder_of_another_dataset_stays(tmp_path: Path, project: Path) -> None:
    legacy = Path(_legacy_pipeline(project, "other_raw").working_dir)
    before = files(legacy)
    make_pipeline()
    assert files(legacy) == before
    assert make_pipeline(dataset_name="other_raw").working_dir == str(
        tmp_path / "dlt-data" / "pipelines" / "platform_sync-duckdb-other_raw" / PIPELINE_NAME
    )
    assert not legacy.exists()  # moved to the folder of its own dataset once asked for


def _counts(pipeline: dlt.Pipeline) -> dict[str, int]:
    return {
        table: query(pipeline, f"select count(*) from {table}")[0][0]
        for (table,) in query(
            pipeline,
            "select table_name from information_schema.tables where table_schema = 'platform_raw' "
            "and table_name not like '!_%' escape '!'",
        )
    }


def test_a_second_duckdb_file_of_the_same_dataset_never_continues_the_first_ones_state(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Two DuckDB files, the same destination and dataset, one dlt data folder: the second file's sync is a
    first sync (the same rows as the first file), in a working folder of its own; the first file keeps its
    folder and continues its own state."""
    first, second = project / "warehouse.duckdb", project / "second.duckdb"
    with running_sandbox(seed=7, scale=40, time_scale=600.0) as sandbox:
        # the fans not due in the rerun: its appended snapshots would otherwise differ from a first sync's
        options = source_options(sandbox, sandbox.token(), **FANS_WAIT)
        pipeline = make_pipeline()
        assert sync(pipeline, source_options=options).report.failed == {}
        home = Path(pipeline.working_dir)
        assert json.loads((home / WAREHOUSE_FILE).read_text())["database"] == str(first)
        first_counts = _counts(pipeline)
        assert first_counts["sales"] > 0

        monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(second))
        with caplog.at_level(logging.INFO, logger="platform_sync.pipeline"):
            other = make_pipeline()
            make_pipeline()
        # said once as a warning, naming dlt's command for this warehouse's folder; then at info level
        said = [r for r in caplog.records if "holds the state of another warehouse" in r.getMessage()]
        assert [r.levelno for r in said] == [logging.WARNING, logging.INFO]
        own = Path(other.working_dir).parent
        assert f"`dlt pipeline --pipelines-dir {own} platform_sync info`" in said[0].getMessage()
        assert Path(other.working_dir) != home
        assert Path(other.working_dir).parent.parent == home.parent  # beside it, in dlt's pipelines_dir
        assert sync(other, source_options=options).report.failed == {}
        assert _counts(other) == first_counts  # a first sync: everything, not the first file's increments
        assert json.loads((Path(other.working_dir) / WAREHOUSE_FILE).read_text())["database"] == str(second)
        assert Path(make_pipeline().working_dir) == Path(other.working_dir)  # and it stays its own

        monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(first))
        again = make_pipeline()
        assert Path(again.working_dir) == home
        rerun = sync(again, source_options=options)
        assert rerun.report.failed == {} and _counts(again) == first_counts
        # an incremental run from the first file's own state: far fewer requests than a first sync
        first_requests = sum(
            sync(make_pipeline(), source_options=options, full_refresh=True).requests.values()
        )
        assert sum(rerun.requests.values()) < first_requests


def test_each_checkout_loads_its_own_default_file_even_once_the_first_is_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No DuckDB file configured, one dlt data folder (the machine's), two checkouts: each loads its own
    `platform_sync.duckdb`. dlt alone would take the file from the folder the working folder was first
    used from: the second checkout would load into the first one's file, and fail once it is deleted."""
    monkeypatch.delenv("DESTINATION__DUCKDB__CREDENTIALS", raising=False)
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "machine-dlt"))
    first, second = tmp_path / "first", tmp_path / "second"
    with running_sandbox(seed=7, scale=40, time_scale=600.0) as sandbox:
        options = source_options(sandbox, sandbox.token())
        first.mkdir()
        monkeypatch.chdir(first)
        pipeline = make_pipeline()
        assert pipeline.destination_client().config.credentials.database == str(
            first / "platform_sync.duckdb"
        )
        assert sync(pipeline, source_options=options).report.failed == {}
        counts = _counts(pipeline)
        assert counts["sales"] > 0
        home = Path(pipeline.working_dir)

        second.mkdir()
        monkeypatch.chdir(second)
        other = make_pipeline()
        assert other.destination_client().config.credentials.database == str(second / "platform_sync.duckdb")
        assert Path(other.working_dir) != home
        before = (first / "platform_sync.duckdb").stat().st_mtime_ns
        assert sync(other, source_options=options).report.failed == {}
        assert _counts(other) == counts  # a first sync of its own file
        assert (first / "platform_sync.duckdb").stat().st_mtime_ns == before

        # the first checkout deleted, a third one cloned: its own file, its own first sync
        shutil.rmtree(first)
        third = tmp_path / "third"
        third.mkdir()
        monkeypatch.chdir(third)
        again = make_pipeline()
        assert sync(again, source_options=options).report.failed == {}
        assert _counts(again) == counts
        assert (third / "platform_sync.duckdb").is_file() and not first.exists()


@pytest.mark.parametrize(
    ("variable", "form", "name"),
    [
        ("DESTINATION__DUCKDB__CREDENTIALS", "data/wh.duckdb", "data/wh.duckdb"),
        ("DESTINATION__DUCKDB__CREDENTIALS", "duckdb:///data/url.duckdb", "data/url.duckdb"),
        ("DESTINATION__DUCKDB__CREDENTIALS__DATABASE", "data/field.duckdb", "data/field.duckdb"),
    ],
)
def test_a_relative_duckdb_path_is_taken_from_the_folder_the_command_runs_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, form: str, name: str
) -> None:
    monkeypatch.delenv("DESTINATION__DUCKDB__CREDENTIALS", raising=False)
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "machine-dlt"))
    monkeypatch.setenv(variable, form)
    for checkout in ("a", "b"):
        (tmp_path / checkout / "data").mkdir(parents=True)
        monkeypatch.chdir(tmp_path / checkout)
        pipeline = make_pipeline()
        pipeline.run([{"id": 1}], table_name="products").raise_on_failed_jobs()
        assert pipeline.destination_client().config.credentials.database == str(tmp_path / checkout / name)
        assert (tmp_path / checkout / name).is_file()


# Run in a process of its own started in the project folder, as the command line is: dlt reads `.dlt/`
# of the folder a process starts in.
_SHOW_DUCKDB = """
import json
from pipelines.sync.platform_pipeline import make_pipeline
shown = []
for pipeline in (make_pipeline(), make_pipeline(pipeline_name="platform_sync__acme", dataset_name="acme")):
    credentials = pipeline.destination_client().config.credentials
    shown.append([credentials.database, credentials.global_config])
print(json.dumps(shown))
"""


@pytest.mark.parametrize("where", ["config.toml", "secrets.toml"])
def test_an_accounts_pipeline_reads_the_duckdb_file_and_settings_from_either_toml(
    tmp_path: Path, where: str
) -> None:
    """The DuckDB file and memory settings in config.toml or secrets.toml reach every pipeline, an
    account's included (`dlt.secrets.get` alone missed config.toml)."""
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / where).write_text(
        '[destination.duckdb.credentials]\ndatabase = "data/shop.duckdb"\n'
        "[destination.duckdb.credentials.global_config]\nthreads = 1\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESTINATION__")}
    env.update(DLT_DATA_DIR=str(tmp_path / "machine-dlt"), PYTHONPATH=str(ROOT))
    shown = subprocess.run(
        [sys.executable, "-c", _SHOW_DUCKDB], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr[-3000:]
    expected = [str(tmp_path / "data" / "shop.duckdb"), {**DUCKDB_LOAD_SETTINGS, "threads": 1}]
    assert json.loads(shown.stdout.splitlines()[-1]) == [expected, expected]
