"""The package's layout: no import circle between its modules, and no folder so full that its story no longer shows.

Imports are read with `ast`, not by importing, and every import counts: at the top of a module, inside a function
(a lazy import) and under `if TYPE_CHECKING:`. A circle through a lazy import still ties two modules into one.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rewardloop"
MAX_MODULES = 12
"""Modules (besides __init__.py) one folder of the package may hold before it needs subfolders."""


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the package (a package's name for its __init__.py)."""
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that module `name` imports anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x, from ..y import z
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    return {m for m in found if m in modules and m != name}


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    modules = module_files(package)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative): each is a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_circles_finds_a_circle_and_nothing_else():
    # a -> b -> c -> a is one circle; d -> a hangs off it; e imports itself only (not a circle of modules)
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_relative_and_lazy_imports_are_edges(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "x.py").write_text("from . import y\n")
    (package / "sub" / "y.py").write_text("def f():\n    from pkg.z import g\n")
    (package / "z.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub.x import h\n")
    graph = import_graph(package)
    assert graph["pkg.sub.x"] == {"pkg.sub.y"}
    assert graph["pkg.sub.y"] == {"pkg.z"}
    assert graph["pkg.z"] == {"pkg.sub.x"}
    assert circles(graph) == [["pkg.sub.x", "pkg.sub.y", "pkg.z"]]


def test_no_import_circle_in_the_package():
    found = circles(import_graph())
    assert not found, "modules that import each other, directly or round a circle: " + "; ".join(
        " <-> ".join(group) for group in found)


def test_no_folder_too_full():
    folders = {path.parent for path in PACKAGE.rglob("*.py")}
    full = {str(folder.relative_to(PACKAGE.parent)): n for folder in folders
            if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > MAX_MODULES}
    assert not full, f"folders with more than {MAX_MODULES} modules; group them into subfolders: {full}"


def test_the_product_carries_no_test_code():
    # the scripted model server (tests/fakeserver.py) and the tests' fixtures stay under tests/
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] in ("tests", "fakeserver", "conftest", "pytest") for n in names), \
                f"{path.relative_to(PACKAGE.parent)} imports test code: {names}"
