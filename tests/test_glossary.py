"""The glossary (docs/architecture.md) gives each word one meaning; these are the
words most easily mixed up again. A board's places are *squares* (a *cell* is one
config on one instance), and the cost model's view of a cell is a *workload*
(*jobs* is ``--jobs``, the workers)."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from harness.puzzle import grid

ROOT = Path(__file__).resolve().parents[1]

#: Modules about boards only: a "cell" in them would be a square by another name.
BOARD_MODULES = [
    "harness/puzzle.py", "harness/core/batch.py", "harness/core/oracle.py",
    "harness/kernels", "harness/heuristics", "harness/datasets/generators.py",
    "harness/datasets/jsonl.py", "harness/datasets/labels.py",
    "harness/datasets/board_files.py", "harness/cli/solve.py", "solvers",
]  # fmt: skip


def _files(entries: list[str]) -> list[Path]:
    out = []
    for entry in entries:
        path = ROOT / entry
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _words(path: Path, types: tuple[int, ...]) -> list[tuple[int, str]]:
    """(line, text) of the tokens of ``types`` in a module."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    return [(t.start[0], t.string) for t in tokens if t.type in types]


def test_board_code_says_square_not_cell():
    said = [
        f"{path.relative_to(ROOT)}:{line}: {text[:60]}"
        for path in _files(BOARD_MODULES)
        for line, text in _words(path, (tokenize.NAME, tokenize.COMMENT))
        # a quoted "cells" names an old spelling kept on disk (pdb cache files)
        if "cell" in text.lower() and '"cell' not in text
    ]
    assert said == []
    g = grid(3)
    assert g.squares == 9 and not hasattr(g, "cells")


def test_the_cost_model_says_workload_not_job():
    said = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in _files(["harness"])
        for line, text in _words(path, (tokenize.NAME,))
        if text in ("Job", "job", "_job", "running_jobs")
    ]
    assert said == []
