"""No import circles outside the tests (issue 29).

The graph is built from the files, not by importing them: every `import a.b` and `from a.b import X`
anywhere in a file (inside functions and under `TYPE_CHECKING` too: a circle is a circle) is an edge to
`a/b.py` or `a/b/__init__.py`, and, when `a/b/X.py` (or `a/b/X/`) exists, to that submodule as well.
Relative imports are resolved against the importing file's package. Only files of the project count.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sources", "sandbox", "pipelines", "dashboard", "bench", "schedules")


def project_files(root: Path = ROOT) -> list[Path]:
    """Every .py file of the checked packages, relative to the root."""
    files: list[Path] = []
    for package in PACKAGES:
        files.extend(p.relative_to(root) for p in sorted((root / package).rglob("*.py")))
    return [f for f in files if ".venv" not in f.parts and "__pycache__" not in f.parts]


def _module_file(dotted: str, known: set[Path]) -> Path | None:
    parts = dotted.split(".")
    as_module = Path(*parts).with_suffix(".py")
    if as_module in known:
        return as_module
    as_package = Path(*parts) / "__init__.py"
    if as_package in known:
        return as_package
    return None


def _package_of(file: Path) -> list[str]:
    parts = list(file.with_suffix("").parts)
    return parts[:-1]


def _imported_modules(file: Path, tree: ast.AST) -> Iterator[tuple[str, list[str]]]:
    """(module, names imported from it) for every import statement of the file."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            if node.level == 0:
                yield node.module or "", names
                continue
            package = _package_of(file)
            if file.name == "__init__.py":
                package = list(file.parent.parts)
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            yield module, names


def import_graph(root: Path = ROOT) -> dict[Path, set[Path]]:
    """File -> the project files it imports."""
    files = project_files(root)
    known = set(files)
    graph: dict[Path, set[Path]] = {f: set() for f in files}
    for file in files:
        tree = ast.parse((root / file).read_text(encoding="utf-8"), filename=str(file))
        for module, names in _imported_modules(file, tree):
            if not module:
                continue
            target = _module_file(module, known)
            if target is not None:
                graph[file].add(target)
            for name in names:
                submodule = _module_file(f"{module}.{name}", known)
                if submodule is not None:
                    graph[file].add(submodule)
        graph[file].discard(file)
    return graph


def strongly_connected(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    on_stack: set[Path] = set()
    stack: list[Path] = []
    components: list[list[Path]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[Path, Iterator[Path]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[Path] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _one_circle(component: list[Path], graph: dict[Path, set[Path]]) -> list[Path]:
    """A shortest cycle through the component's first file, to print."""
    members = set(component)
    start = component[0]
    paths: dict[Path, list[Path]] = {start: [start]}
    frontier = [start]
    while frontier:
        following: list[Path] = []
        for node in frontier:
            for succ in sorted(graph[node] & members):
                if succ == start:
                    return [*paths[node], start]
                if succ not in paths:
                    paths[succ] = [*paths[node], succ]
                    following.append(succ)
        frontier = following
    return component


def test_the_graph_sees_each_kind_of_import(tmp_path: Path) -> None:
    """The graph builder itself: absolute, relative, submodule, in a function, under TYPE_CHECKING."""
    pkg = tmp_path / "sources" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (tmp_path / "sources" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from sources.pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f() -> None:\n    from ..c import X\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\nX = 1\n"
    )
    (pkg / "d.py").write_text("import sources.pkg.c\n")
    graph = import_graph(tmp_path)
    a, b = Path("sources/pkg/a.py"), Path("sources/pkg/sub/b.py")
    c, d = Path("sources/pkg/c.py"), Path("sources/pkg/d.py")
    assert graph[a] == {Path("sources/pkg/sub/__init__.py"), b}
    assert graph[b] == {c}
    assert graph[c] == {Path("sources/pkg/__init__.py"), a}
    assert graph[d] == {c}
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert circles == [sorted([a, b, c])]


def test_no_import_circles() -> None:
    graph = import_graph()
    circles = [c for c in strongly_connected(graph) if len(c) > 1]
    described = [
        f"{len(c)} files: "
        + " -> ".join(str(p) for p in _one_circle(c, graph))
        + ("" if len(c) <= 3 else "\n    all: " + ", ".join(str(p) for p in c))
        for c in circles
    ]
    assert not circles, "import circles:\n  " + "\n  ".join(described)
