"""The import graph of harness/ and solvers/ is a DAG, layered one way.

Every ``import`` counts, at module level or inside a function: a lazy import is
still a dependency. ``from pkg import name`` is an edge to ``pkg.name`` when that is
a module, else to ``pkg``. Importing ``a.b.c`` is an edge to ``a.b.c`` only (not to
the packages ``a.b`` and ``a``).
"""

from __future__ import annotations

import ast
import functools
import re
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


def imported(node: ast.AST, mod: str) -> list[str]:
    """The modules of harness/ and solvers/ an import statement in ``mod``
    imports (see the module doc); [] for any other node."""
    mods = modules()
    path = mods[mod]
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
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
        return []
    found = []
    for name in targets:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        if name and name != mod:
            found.append(name)
    return found


@functools.cache
def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in modules()}
    for mod, path in modules().items():
        for node in ast.walk(tree(path)):
            graph[mod].update(imported(node, mod))
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


def from_imports():
    """Each ``from X import ...`` statement in harness/ and solvers/: (the
    importing module, the node, X made absolute)."""
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
            yield mod, node, base


def private_imports() -> list[str]:
    """``from other_module import _name``: a private name taken across modules."""
    found = []
    for mod, node, base in from_imports():
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            if private and base != mod and base.split(".")[0] in TOPS:
                found.append(f"{mod}: from {base} import {alias.name}")
    return found


def test_no_module_imports_a_private_name_of_another():
    assert private_imports() == []


def defined_names(mod: str) -> set[str]:
    """The names module ``mod`` binds at its top level (in its ``if``/``try``
    blocks too), and, for a module with a PEP 562 ``__getattr__``, its
    ``__all__``."""
    names: set[str] = set()
    body = list(tree(modules()[mod]).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.If | ast.Try):
            body += node.body + node.orelse + getattr(node, "finalbody", [])
            body += [n for h in getattr(node, "handlers", []) for n in h.body]
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    if "__getattr__" in names:
        for node in tree(modules()[mod]).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                names.update(ast.literal_eval(node.value))
    return names


def missing_names() -> list[str]:
    """``from harness.x import name`` where harness.x neither defines ``name``
    nor has a submodule of that name: an ImportError waiting for the line to
    run (a function-level import runs late: 'run --cost' failed from eeeb770 to
    a672a2e on one)."""
    found = []
    mods = modules()
    for mod, node, base in from_imports():
        if base not in mods:
            continue  # another library, or a module that is not there (cycles)
        have = defined_names(base)
        for alias in node.names:
            if alias.name not in have and f"{base}.{alias.name}" not in mods:
                found.append(f"{mod}:{node.lineno}: from {base} import {alias.name}")
    return found


def test_every_name_imported_from_the_harness_is_there():
    assert missing_names() == []


def test_the_missing_name_check_sees_one(tmp_path, monkeypatch):
    path = tmp_path / "probe.py"
    path.write_text("def f():\n    from harness.datasets.costs import cost_spec\n")
    monkeypatch.setitem(modules(), "harness.probe", path)
    assert missing_names() == [
        "harness.probe:2: from harness.datasets.costs import cost_spec"
    ]


# ------------------------------------------------- function-level imports

#: A comment that says why an import waits for its function: what it costs to
#: load (import cost, start-up, a heavy library) or why it cannot be at the top.
WHY_LATE = re.compile(
    r"#.*\b(cost|cycle|slow|heavy|lazy|lazily|only|loads?|imports?|imported|"
    r"start-?up)\b",
    re.IGNORECASE,
)
#: Function-level imports of the same or a lower layer that predate the check
#: and say no why, per module (issue 33 item 6, counted when the check landed):
#: the number may only go down. Move such an import to the top (it costs
#: nothing there when the module is loaded anyway) or say why it waits.
UNEXPLAINED_LATE_IMPORTS: dict[str, int] = {
    "harness": 1,
    "harness.analysis": 1,
    "harness.cli": 1,
    "harness.cli.board_import": 3,
    "harness.cli.board_input": 1,
    "harness.cli.common": 4,
    "harness.cli.compare": 2,
    "harness.cli.datasets": 8,
    "harness.cli.gate": 2,
    "harness.cli.history": 4,
    "harness.cli.merge": 1,
    "harness.cli.report": 9,
    "harness.cli.solve": 9,
    "harness.cli.solvers": 3,
    "harness.compare": 5,
    "harness.compare.comparability": 3,
    "harness.compare.gate": 1,
    "harness.compare.history": 2,
    "harness.compare.instructions_gate": 5,
    "harness.compare.model": 2,
    "harness.compare.render": 1,
    "harness.compare.times": 1,
    "harness.core.judge": 1,
    "harness.datasets.board_files": 1,
    "harness.datasets.catalogue": 4,
    "harness.datasets.costs": 6,
    "harness.datasets.generators": 1,
    "harness.datasets.jsonl": 1,
    "harness.datasets.labels": 5,
    "harness.heuristics.linear_conflict": 2,
    "harness.heuristics.pdb": 7,
    "harness.heuristics.pdb_costs": 4,
    "harness.measure.executors.dask.client": 1,
    "harness.measure.executors.dask.payloads": 1,
    "harness.measure.executors.dask.worker_side": 2,
    "harness.measure.executors.local": 1,
    "harness.measure.experiment": 8,
    "harness.measure.external.passes": 2,
    "harness.measure.external.programs": 1,
    "harness.measure.instructions.child": 3,
    "harness.measure.instructions.phase": 1,
    "harness.measure.memory_pass": 2,
    "harness.measure.meta": 1,
    "harness.measure.plan": 3,
    "harness.measure.worker": 7,
    "harness.report.about": 2,
    "harness.report.document": 6,
    "harness.report.figures": 3,
    "harness.report.findings": 1,
    "harness.report.summary_table": 1,
    "harness.report.tables": 1,
    "harness.solver": 1,
    "solvers._best_first": 8,
    "solvers._costs": 4,
    "solvers.astar_cantor_jit": 2,
    "solvers.ida_star_jit": 6,
    "solvers.table": 1,
    "solvers.wida_star": 1,
}


def _says_why(lines: list[str], lineno: int) -> bool:
    """A comment on the import's line, on a line of the run of imports it is in,
    or in the comment block just above that run."""
    i = lineno - 1
    if WHY_LATE.search(lines[i]):
        return True
    j = i - 1
    while j >= 0 and re.match(r"\s*(from |import |\)|[A-Za-z_]+,?$)", lines[j]):
        if WHY_LATE.search(lines[j]):
            return True
        j -= 1
    while j >= 0 and lines[j].strip().startswith("#"):
        if WHY_LATE.search(lines[j]):
            return True
        j -= 1
    return False


def late_imports() -> list[tuple[str, int, str]]:
    """(module, line, imported module) of every import inside a function of a
    module of harness/ or solvers/ of the same or a lower layer, with no comment
    saying why."""
    found = []
    for mod, path in modules().items():
        lines = path.read_text().splitlines()
        functions = [
            n for n in ast.walk(tree(path))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]  # fmt: skip
        seen = set()
        for function in functions:
            for node in ast.walk(function):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                if node.lineno in seen:  # a nested function's, seen already
                    continue
                seen.add(node.lineno)
                for target in imported(node, mod):
                    if layer(target) <= layer(mod) and not _says_why(
                        lines, node.lineno
                    ):
                        found.append((mod, node.lineno, target))
                        break
    return sorted(found)


def test_a_function_level_import_of_a_lower_layer_says_why():
    """An import inside a function, of a module the importer could import at its
    top (same or lower layer, no cycle: the graph above counts lazy imports
    too), needs a comment saying why it waits (import cost; a cycle cannot be
    the reason here). Older ones are counted in UNEXPLAINED_LATE_IMPORTS."""
    per_module: dict[str, list[str]] = {}
    for mod, line, target in late_imports():
        per_module.setdefault(mod, []).append(f"{modules()[mod].name}:{line} {target}")
    over = {
        m: found for m, found in per_module.items()
        if len(found) > UNEXPLAINED_LATE_IMPORTS.get(m, 0)
    }  # fmt: skip
    assert not over, f"function-level imports that say no why: {over}"
    fewer = {
        m: (n, len(per_module.get(m, [])))
        for m, n in UNEXPLAINED_LATE_IMPORTS.items()
        if len(per_module.get(m, [])) < n
    }
    assert not fewer, f"fewer unexplained late imports now: lower the counts {fewer}"


def test_the_late_import_check_sees_an_unexplained_one():
    lines = ["def f():", "    from harness import puzzle", "    return puzzle"]
    assert not _says_why(lines, 2)
    lines.insert(1, "    # import cost: numba")
    assert _says_why(lines, 3)
