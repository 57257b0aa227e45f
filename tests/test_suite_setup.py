"""The suite's own set-up (tests/conftest.py): the kernels compiled before the
xdist workers start, and the switch that skips it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from compile_kernels import PARTS

# tests/conftest.py by its path: the name "conftest" may be another folder's
_spec = importlib.util.spec_from_file_location(
    "suite_conftest", Path(__file__).with_name("conftest.py")
)
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)


class _Config:
    """What pytest_configure reads of pytest's config: the xdist worker count."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def getoption(self, name: str, default=None):
        return {"numprocesses": self.workers}.get(name, default)


class _Done:
    returncode = 0

    def communicate(self):
        return "", ""


@pytest.fixture
def started(monkeypatch) -> list[list[str]]:
    """The command lines pytest_configure starts (none really runs)."""
    commands: list[list[str]] = []

    def popen(args, **_kwargs):
        commands.append(list(args))
        return _Done()

    monkeypatch.setattr(subprocess, "Popen", popen)
    return commands


def test_the_kernels_are_compiled_before_the_workers_start(started, monkeypatch):
    monkeypatch.delenv("NPUZZLE_PRECOMPILE", raising=False)
    conftest.pytest_configure(_Config(workers=2))
    assert sorted(c[-1] for c in started) == sorted(PARTS)
    assert all(c[0] == sys.executable and c[1].endswith("compile_kernels.py")
               for c in started)  # fmt: skip


def test_npuzzle_precompile_0_skips_it(started, monkeypatch):
    monkeypatch.setenv("NPUZZLE_PRECOMPILE", "0")
    conftest.pytest_configure(_Config(workers=2))
    assert started == []


def test_without_workers_nothing_is_compiled_ahead(started, monkeypatch):
    monkeypatch.delenv("NPUZZLE_PRECOMPILE", raising=False)
    conftest.pytest_configure(_Config(workers=0))
    assert started == []
