"""The three executors answer everything the runner asks (the Executor protocol),
and the run path asks nothing the protocol does not declare."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import pytest

from harness.measure.executors import Executor
from harness.measure.executors.dask import DaskExecutor
from harness.measure.executors.inline import InlineExecutor
from harness.measure.executors.local import LocalPool

ROOT = Path(__file__).resolve().parents[2]


def protocol_members() -> tuple[dict[str, inspect.Signature], set[str]]:
    """The protocol's methods (name -> signature) and its attributes."""
    methods = {
        name: inspect.signature(value)
        for name, value in vars(Executor).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }
    return methods, set(Executor.__annotations__)


def assigned_attributes(cls: type) -> set[str]:
    """Attributes a class sets: class-level names and ``self.NAME = ...``."""
    names = set(vars(cls))
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(cls)))):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                if target.value.id == "self":
                    names.add(target.attr)
    return names


def test_the_protocol_declares_methods_and_attributes():
    methods, attributes = protocol_members()
    assert {"submit", "events", "shutdown", "prioritize", "describe"} <= set(methods)
    assert {"jobs", "workers", "lost_batches"} <= attributes


@pytest.mark.parametrize(
    "cls", [LocalPool, InlineExecutor, DaskExecutor], ids=lambda c: c.__name__
)
def test_every_executor_answers_every_protocol_member(cls):
    methods, attributes = protocol_members()
    for name, want in methods.items():
        have = getattr(cls, name, None)
        assert callable(have), f"{cls.__name__} lacks {name}()"
        assert list(inspect.signature(have).parameters) == list(want.parameters), (
            f"{cls.__name__}.{name}{inspect.signature(have)} is not {name}{want}"
        )
    missing = attributes - assigned_attributes(cls)
    assert not missing, f"{cls.__name__} never sets {sorted(missing)}"


def probes(path: Path) -> list[str]:
    """``getattr(x, ...)`` / ``hasattr(x, ...)`` on a name that holds an executor."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and node.args
            and isinstance(node.args[0], ast.Name | ast.Attribute)
            and "executor" in ast.unparse(node.args[0]).lower()
        ):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_run_path_never_probes_an_executor():
    measure = ROOT / "harness" / "measure"
    files = [measure / "runner.py", measure / "session.py", measure / "meta.py"]
    assert [p for f in files for p in probes(f)] == []


def test_the_probe_check_sees_a_probe(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f(executor):\n    return getattr(executor, 'jobs', 1)\n")
    assert probes(sample) == ["sample.py:2: getattr(executor, 'jobs', 1)"]
