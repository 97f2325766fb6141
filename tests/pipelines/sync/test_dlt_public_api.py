"""platform-sync uses dlt through its public API and configuration only (issue 28), and where it must
agree with a behaviour of dlt (how a nested field's column is named, which type a new value gets), it is
compared here with dlt's own result, on whichever dlt version is installed: `make test` runs this file on
the lowest dlt of the declared range and on the newest (`.ci/matrix`)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import dlt
import pytest

from sources.platform.fastpath.columnar import column_name
from sources.platform.fastpath.new_fields import _dlt_type, _NotPackable

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("sources", "pipelines")

# dlt's private names the project once used: patched, driven or mirrored (issue 28).
PRIVATE_NAMES = ("_start", "_stop", "map_parallel", "group_worker_files", "_config_doc", "_infer_column_type")
_NAMED = re.compile(r"\b(" + "|".join(map(re.escape, PRIVATE_NAMES)) + r")\b")


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def private_dlt_uses(text: str) -> list[str]:
    """Every use of one of dlt's private names in a module's source: a name of `PRIVATE_NAMES` anywhere
    (code, strings, comments), an underscored module or name imported from dlt, an underscored
    attribute of `dlt....`."""
    found = [match.group(0) for match in _NAMED.finditer(text)]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "dlt":
            module = node.module or ""
            if any(part.startswith("_") for part in module.split(".")):
                found.append(module)
            found += [alias.name for alias in node.names if alias.name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [
                alias.name
                for alias in node.names
                if alias.name.split(".")[0] == "dlt" and any(p.startswith("_") for p in alias.name.split("."))
            ]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            dotted = _dotted(node)
            if dotted and dotted.split(".")[0] == "dlt":
                found.append(dotted)
    return [name for name in found if not (name.startswith("__") and name.endswith("__"))]


def test_the_check_finds_each_kind_of_private_use() -> None:
    assert private_dlt_uses("self.progress._start(step)") == ["_start"]
    assert private_dlt_uses("module.Normalize.map_parallel = f") == ["map_parallel"]
    assert private_dlt_uses("getattr(provider, '_config_doc', None)") == ["_config_doc"]
    assert private_dlt_uses("from dlt.pipeline.progress import _from_name as f") == ["_from_name"]
    assert private_dlt_uses("from dlt.common import (\n    Schema,\n    _private,\n)") == ["_private"]
    assert private_dlt_uses("x = dlt.common.schema._helper(1)") == ["dlt.common.schema._helper"]
    assert private_dlt_uses("import dlt._workspace") == ["dlt._workspace"]
    assert private_dlt_uses("from dlt.common.schema import Schema\nrow._id = 1") == []


def test_no_private_dlt_name_in_sources_and_pipelines() -> None:
    uses = {
        str(path.relative_to(ROOT)): found
        for folder in SCANNED
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (found := private_dlt_uses(path.read_text()))
    }
    assert uses == {}


def test_importing_the_source_and_syncing_leave_the_process_settings_alone(tmp_path: Path) -> None:
    """A host (an Airflow or Dagster worker) that imports the source and prepares a sync keeps its
    allocator, its Arrow pool and its fork hooks; only `platform-sync` sets them."""
    script = """
import os, pyarrow as pa
pa.set_memory_pool(pa.mimalloc_memory_pool())
forks = []
import sources.platform, pipelines.sync.platform_pipeline as p
p.prepare_process()
from pipelines.sync import parallelism
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print(pa.default_memory_pool().backend_name, parallelism._REGISTERED)
from pipelines.sync.process_settings import apply_process_settings
apply_process_settings()
print(pa.default_memory_pool().backend_name, parallelism._REGISTERED)
"""
    env = {"PATH": "/usr/bin:/bin", "DLT_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert done.stdout.splitlines() == ["mimalloc []", "system [True]"], done.stderr


# ------------------------------------------------------------------------ agreement with dlt's normalizer


def _normalized_columns(tmp_path: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The columns dlt's own normalizer makes of `rows` (as dicts, on the row path) in table `t`."""
    pipeline = dlt.pipeline(
        pipeline_name="agreement",
        destination=dlt.destinations.duckdb(str(tmp_path / "agreement.duckdb")),
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.extract(rows, table_name="t")
    pipeline.normalize()
    return {
        name: column.get("data_type")
        for name, column in pipeline.default_schema.get_table_columns("t").items()
        if not name.startswith("_dlt")
    }


NESTED_ROW = {
    "id": 1,
    "buyer": {
        "address": {"geoHash": "6gyf", "zipCode": "01310"},
        "documentNumber": "123",
        "HTMLUrl": "https://example.com",
    },
    "grossGain": {"value": 1.5, "currencyCode": "BRL"},
    "a" * 40: {"b" * 40: {"c" * 40: 1}},
    "with space": {"and-dash": 2, "ÚnicodeKey": 3},
}


def _leaf_paths(row: dict[str, Any], path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []
    for key, value in row.items():
        paths += _leaf_paths(value, (*path, key)) if isinstance(value, dict) else [(*path, key)]
    return paths


def test_nested_fields_are_named_as_dlt_names_them(tmp_path: Path) -> None:
    ours = sorted(column_name(path) for path in _leaf_paths(NESTED_ROW))
    assert ours == sorted(_normalized_columns(tmp_path, [NESTED_ROW]))


VALUES: dict[str, Any] = {
    "flag": True,
    "small": 7,
    "large": 2**62,
    "negative": -(2**63),
    "ratio": 0.25,
    "word": "text",
    "iso_time": "2024-05-01T10:00:00Z",  # dlt's default detection makes it a timestamp
}


@pytest.mark.parametrize("field", sorted(VALUES))
def test_new_values_get_the_type_dlt_gives_them(tmp_path: Path, field: str) -> None:
    value = VALUES[field]
    dlt_type = _normalized_columns(tmp_path, [{"id": 1, field: value}])[field]
    try:
        ours = _dlt_type(value, ("iso_timestamp",))
    except _NotPackable:
        ours = None  # left to dlt's own normalizer: it must be a type not packed here
    if ours is None:
        assert dlt_type not in ("bool", "bigint", "double", "text"), dlt_type
    else:
        assert ours == dlt_type
