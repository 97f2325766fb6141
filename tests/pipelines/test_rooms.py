"""The rooms of `pipelines/` import downward only (docs/architecture.md, "pipelines/ rooms"): the command
line above the commands, the dbt runner and webhooks, all of them above the sync room, which imports no
other room. Imports inside functions count: a lazy import upwards is an import upwards."""

from __future__ import annotations

import ast
from pathlib import Path

PIPELINES = Path(__file__).resolve().parents[2] / "pipelines"
# The rooms each room may import (besides itself).
MAY_IMPORT: dict[str, frozenset[str]] = {
    "cli": frozenset({"commands", "dbt", "webhooks", "sync"}),
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
