"""The built wheel carries both top-level packages and the console script.

An editable install hides a package missing from the wheel, so build a real one.
"""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_contains_harness_solvers_and_entry_point(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
         str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("npuzzle_harness-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for module in ("harness/puzzle.py", "harness/solver.py", "harness/cli/__init__.py",
                   "solvers/__init__.py", "harness/data/korf100.tsv",
                   # subpackages found by setuptools, and the gate's baseline
                   "harness/heuristics/pdb.py", "harness/datasets/catalogue.py",
                   "harness/core/judge.py", "harness/report/document.py",
                   "harness/data/golden_counters.json",
                   "harness/measure/executors/dask/client.py"):
        assert module in names, f"{module} missing from {wheel.name}"
    solver_files = {p.name for p in (ROOT / "solvers").glob("*.py")}
    assert solver_files <= {Path(n).name for n in names if n.startswith("solvers/")}
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "harness = harness.cli:main" in text
