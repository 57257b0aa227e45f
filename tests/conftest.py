"""Shared fixtures: the known-optimum boards of known_boards.py, exact distances,
and the solvers of tests/plugins/measured.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from known_boards import KNOWN, Known

from harness.solver import load_plugin, scoped_registry

#: Solvers with known costs and behaviours, for the tests of what the runner measures.
MEASURED = str(Path(__file__).parent / "plugins" / "measured.py")


#: Modules whose tests share an expensive module-scoped fixture (a run, a report, a
#: cluster, a C build, the gate's counters): each goes whole to one xdist worker, so
#: the fixture is made once. (xdist_group marks would say this in the module, but
#: pytest-xdist 3.8's --dist loadgroup ignores them under pytest 9.2: xdist#1386.)
WHOLE_MODULES = frozenset(
    f"tests/{name}.py"
    for name in (
        "cli/test_cli_first_hour",
        "cli/test_cli_report",
        "compare/test_gate",
        "compare/test_history",
        "measure/test_dask_executor",
        "measure/test_external",
        "measure/test_runner",
        "report/test_real_report",
        "report/test_report",
        "results/test_run_lock",
    )
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """pyproject's ``-n auto`` (``--dist load``): each test goes to whichever worker
    is free, except that a module of :data:`WHOLE_MODULES` is one unit of work.
    Units with more tests start first. Other ``--dist`` choices are xdist's own."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    missing = sorted(m for m in WHOLE_MODULES if not (config.rootpath / m).is_file())
    if missing:  # a moved module would silently lose its grouping
        raise pytest.UsageError(f"WHOLE_MODULES names no module at {missing}")

    class LoadWithWholeModules(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:  # xdist's hook for a unit's key
            module = nodeid.split("::", 1)[0]
            return module if module in WHOLE_MODULES else nodeid

    return LoadWithWholeModules(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """On the xdist controller, before the workers start: compile the kernels into
    numba's cache in two processes, one a core (tests/compile_kernels.py), so the
    workers load them instead of both compiling them. Seconds on a warm cache; a
    part that fails is reported and the suite goes on (its tests will say why).
    ``NPUZZLE_PRECOMPILE=0`` skips it: a few tests on a cold cache then compile
    only the kernels they use (about 65 CPU s saved when they use none)."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", 0):
        return
    if os.environ.get("NPUZZLE_PRECOMPILE", "1") == "0":
        return
    if config.getoption("collectonly", False):
        return
    import subprocess
    import sys

    from compile_kernels import PARTS

    script = str(Path(__file__).parent / "compile_kernels.py")
    procs = {
        part: subprocess.Popen(
            [sys.executable, script, part],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        for part in PARTS
    }
    for part, proc in procs.items():
        _, err = proc.communicate()
        if proc.returncode:
            last = (err.strip().splitlines() or ["no output"])[-1]
            sys.stderr.write(f"compile_kernels {part} failed (exit {proc.returncode}):"
                             f" {last}\n")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Timed benchmarks (``--benchmark-enable``) run in the pytest process, not on
    pyproject's xdist workers: pytest-benchmark turns itself off under xdist."""
    if config.getoption("benchmark_enable", False) and config.pluginmanager.hasplugin(
        "xdist"
    ):
        config.option.numprocesses = 0


@pytest.fixture(scope="module")
def measured_plugin() -> str:
    """The solvers of tests/plugins/measured.py, registered for a whole module."""
    with scoped_registry():
        load_plugin(MEASURED)
        yield MEASURED


@pytest.fixture(autouse=True)
def _no_plugin_leaks():
    """A plugin a test loads (in-process CLI runs) is gone after that test."""
    with scoped_registry():
        yield

@pytest.fixture(params=KNOWN, ids=lambda k: k.name)
def known(request: pytest.FixtureRequest) -> Known:
    """Each known-optimum instance, under both goals."""
    return request.param


@pytest.fixture(params=["standard", "spiral"])
def goal_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="session")
def exact_distance():
    """``exact_distance(board, goal, grid) -> int | None`` from a full BFS table.

    Uses :mod:`harness.core.oracle` (whole-space BFS, cached on disk) for grids of at
    most 9 cells."""
    from harness.core import oracle

    return oracle.distance
