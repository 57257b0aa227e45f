"""The import graph of harness/ and solvers/ is a DAG, layered one way.

Every ``import`` counts, at module level or inside a function: a lazy import is
still a dependency. ``from pkg import name`` is an edge to ``pkg.name`` when that is
a module, else to ``pkg``. Importing ``a.b.c`` is an edge to ``a.b.c`` only (not to
the packages ``a.b`` and ``a``).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Lowest first. A module may import its own layer (without a cycle) and lower ones,
#: never a higher one. The most specific prefix decides a module's layer.
LAYERS: list[tuple[str, ...]] = [
    # what plugins import, and the plain helpers under everything
    ("harness.puzzle", "harness.core"),
    ("harness.heuristics", "harness.kernels"),
    # the solver contract
    ("harness.solver", "harness.configs", "solvers"),
    # the stored formats: datasets in, runs out
    ("harness.datasets", "harness.results"),
    # measuring, and the plans, experiments and stored cells it starts from
    ("harness.measure",),
    ("harness.analysis",),
    ("harness.compare",),
    ("harness.report",),
    # where measuring and reading runs meet: the Python API
    ("harness.api",),
    ("harness.cli", "harness"),
]


#: The packages checked.
TOPS = ("harness", "solvers")


@functools.cache
def tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for every check here."""
    return ast.parse(path.read_text(), str(path))


@functools.cache
def modules() -> dict[str, Path]:
    found = {}
    for top in TOPS:
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


@functools.cache
def import_graph() -> dict[str, set[str]]:
    mods = modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                    for a in node.names
                ]
            else:
                continue
            for target in targets:
                resolved = resolve(target)
                if resolved and resolved != mod:
                    graph[mod].add(resolved)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def layer(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for number, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), number)
    return None if best is None else best[1]


def test_every_module_has_a_layer():
    assert [m for m in modules() if layer(m) is None] == []


def test_no_import_cycles():
    graph = import_graph()
    edges = sum(len(targets) for targets in graph.values())
    print(f"import graph: {len(graph)} modules, {edges} edges")
    assert cycles(graph) == []


def test_no_module_imports_a_higher_layer():
    upward = [
        f"{mod} (layer {layer(mod)}) imports {dep} (layer {layer(dep)})"
        for mod, deps in sorted(import_graph().items())
        for dep in sorted(deps)
        if layer(dep) is not None and layer(mod) is not None and layer(dep) > layer(mod)
    ]
    assert upward == []


def test_the_check_sees_a_cycle_and_an_upward_edge():
    graph = {"harness.puzzle": {"harness.solver"}, "harness.solver": {"harness.puzzle"}}
    assert cycles(graph) == [["harness.puzzle", "harness.solver"]]
    assert layer("harness.solver") > layer("harness.puzzle")
    assert layer("harness.core.judge") < layer("harness.measure.runner")


#: No library file grows past this many lines (issue 22): split along its seams.
MAX_LINES = 700


def test_no_library_file_is_over_the_line_limit():
    long = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / "harness").rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def private_imports() -> list[str]:
    """``from other_module import _name``: a private name taken across modules."""
    found = []
    for mod, path in modules().items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(tree(path)):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and base != mod and base.split(".")[0] in TOPS:
                    found.append(f"{mod}: from {base} import {alias.name}")
    return found


def test_no_module_imports_a_private_name_of_another():
    assert private_imports() == []
