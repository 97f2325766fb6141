"""The rooms of `pipelines/` import downward only (docs/architecture.md, "pipelines/ rooms"): the command
line above the commands, the dbt runner and webhooks, all of them above the sync room, which imports no
other room. Imports inside functions count: a lazy import upwards is an import upwards. So do the
project's top-level packages: the source, the sandbox and the dashboard import none of the others."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = ROOT / "pipelines"
# The top-level packages each one may import (besides itself): docs/architecture.md, "The packages".
TOP_MAY_IMPORT: dict[str, frozenset[str]] = {
    "sources": frozenset(),
    "sandbox": frozenset(),
    "dashboard": frozenset(),
    "pipelines": frozenset({"sources", "sandbox", "dashboard"}),
    "schedules": frozenset({"pipelines", "sources"}),
    "bench": frozenset({"pipelines", "sources", "sandbox"}),
}
# The rooms each room may import (besides itself).
MAY_IMPORT: dict[str, frozenset[str]] = {
    "cli": frozenset({"accounts", "commands", "dbt", "webhooks", "sync"}),
    "accounts": frozenset({"commands", "dbt", "sync"}),
    "commands": frozenset({"webhooks", "sync"}),
    "dbt": frozenset({"sync"}),
    "webhooks": frozenset({"sync"}),
    "sync": frozenset(),
}


def imported_rooms(source: str) -> set[str]:
    """The rooms of `pipelines/` a module's text imports (`pipelines.<room>...`), wherever the import is."""
    rooms: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        rooms.update(name.split(".")[1] for name in names if name.startswith("pipelines.") and "." in name)
    return rooms


def imported_packages(source: str) -> set[str]:
    """The project's top-level packages a module's text imports, wherever the import is."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return {name.split(".")[0] for name in names} & set(TOP_MAY_IMPORT)


def test_top_level_packages_import_downward_only() -> None:
    upward = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path.read_text()) - TOP_MAY_IMPORT[top] - {top})
        for top in TOP_MAY_IMPORT
        for path in sorted((ROOT / top).rglob("*.py"))
    }
    assert {module: packages for module, packages in upward.items() if packages} == {}
    lazy = "def f():\n    from pipelines.accounts import configured_accounts\n"
    assert imported_packages(lazy) == {"pipelines"}


def upward_imports(room: str, source: str) -> set[str]:
    return imported_rooms(source) - MAY_IMPORT[room] - {room}


def test_every_module_is_in_a_room() -> None:
    loose = sorted(p.name for p in PIPELINES.glob("*.py") if p.name != "__init__.py")
    assert loose == []
    rooms = sorted(p.name for p in PIPELINES.iterdir() if (p / "__init__.py").is_file())
    assert rooms == sorted(MAY_IMPORT)


def test_rooms_import_downward_only() -> None:
    upward = {
        str(path.relative_to(PIPELINES)): sorted(upward_imports(path.parent.name, path.read_text()))
        for room in MAY_IMPORT
        for path in sorted((PIPELINES / room).rglob("*.py"))
    }
    assert {module: rooms for module, rooms in upward.items() if rooms} == {}


def test_an_upward_import_is_seen_even_inside_a_function() -> None:
    lazy = "def f():\n    from pipelines.cli.summary import print_summary\n"
    assert upward_imports("sync", lazy) == {"cli"}
    assert upward_imports("dbt", "from pipelines import commands\n") == {"commands"}
    assert upward_imports("cli", "import pipelines.sync.lock\nfrom pipelines.dbt.runner import x\n") == set()


# Where `dlt.pipeline(...)` may be called: the sync pipeline, every companion pipeline, and preflight's
# probe (in a throwaway working folder, never loaded).
PIPELINE_BUILDERS = {"sync/platform_pipeline.py", "sync/companion.py", "sync/preflight.py"}


def builds_a_pipeline(source: str) -> bool:
    """Whether a module's text calls `dlt.pipeline(...)`."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "pipeline"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "dlt"
        for node in ast.walk(ast.parse(source))
    )


def test_every_companion_pipeline_is_built_one_way() -> None:
    builders = {
        str(path.relative_to(PIPELINES))
        for path in PIPELINES.rglob("*.py")
        if builds_a_pipeline(path.read_text())
    }
    assert builders == PIPELINE_BUILDERS
    assert builds_a_pipeline("import dlt\ndef f():\n    return dlt.pipeline(pipeline_name='x')\n")
    assert not builds_a_pipeline("import dlt\nresource = dlt.resource([], name='x')\n")
