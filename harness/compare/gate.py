"""The counters gate: exact node counts on a fixed, fast selection, against a baseline.

Counters are deterministic (boards are tuples or ints, ties are broken by fixed
rules), so the hard performance gate in CI compares them exactly, with no timing:
every built-in solver with every heuristic it takes, on the few fixed boards of
:data:`BOARDS`, against ``harness/data/golden_counters.json`` (package data, so
the gate also runs from an installed wheel; ``--baseline PATH`` names another file).
Any moved counter,
changed status or path length, new solver or vanished solver is reported as one
readable line. After an intended algorithmic change, regenerate the baseline with
``python -m harness.compare.gate --update`` (or ``harness gate --update``) and commit it
beside the change.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.configs import SolverConfig, every_config, select_solvers
from harness.core.files import write_atomic
from harness.core.jsontext import loads
from harness.core.judge import judge
from harness.heuristics import make_heuristic
from harness.puzzle import Board, Grid, goal_board, parse_board, parse_size
from harness.solver import Counters

FORMAT = 1
UPDATE_COMMAND = "python -m harness.compare.gate --update"
BASELINE = Path(__file__).resolve().parents[1] / "data" / "golden_counters.json"
FIELDS = (
    "status",
    "path_length",
    "expanded",
    "generated",
    "max_frontier",
    "iterations",
)


@dataclass(frozen=True, slots=True)
class GateBoard:
    """A fixed board of the gate; ``depth`` is its exact optimum (None: unsolvable)."""

    name: str
    size: str
    goal: str
    start: str
    depth: int | None

    @property
    def grid(self) -> Grid:
        return parse_size(self.size)

    @property
    def goal_board(self) -> Board:
        return goal_board(self.goal, self.grid)

    @property
    def start_board(self) -> Board:
        return parse_board(self.start, self.grid)

    def as_dict(self) -> dict[str, Any]:
        return {"size": self.size, "goal": self.goal, "start": self.start,
                "depth": self.depth}  # fmt: skip


#: Depths are exact (3x3: the distance oracle; 4x4: breadth-first search), checked
#: by tests/compare/test_gate.py. Shallow to mid-depth, so every solver stays fast.
BOARDS: tuple[GateBoard, ...] = (
    GateBoard("3x3-d00", "3x3", "standard", "1 2 3 4 5 6 7 8 x", 0),
    GateBoard("3x3-d05", "3x3", "standard", "1 2 3 5 6 x 4 7 8", 5),
    GateBoard("3x3-d12", "3x3", "standard", "4 5 1 7 2 3 x 8 6", 12),
    GateBoard("3x3-d19-judge", "3x3", "standard", "2 3 4 1 5 x 7 6 8", 19),
    GateBoard("3x3-d24", "3x3", "standard", "x 1 8 3 6 4 5 2 7", 24),
    GateBoard("3x3-unsolvable", "3x3", "standard", "3 2 4 1 5 x 7 6 8", None),
    GateBoard("3x3-spiral-d15", "3x3", "spiral", "8 4 5 7 1 x 2 3 6", 15),
    GateBoard(
        "4x4-d16", "4x4", "blank-first", "1 2 3 11 4 7 6 x 8 5 9 14 12 13 15 10", 16
    ),
)


def gate_configs() -> list[SolverConfig]:
    """Every built-in solver (module under ``solvers``) with every heuristic it
    takes, as ``--solvers all`` runs them, and the solvers left out of ``all``
    (registered ``in_all="none"``: mm, nbs) with theirs too; plugins loaded by
    other code in the same process are left out."""
    chosen = select_solvers("all")
    chosen += [c for c in every_config() if c.spec.in_all == "none"]
    return [c for c in chosen if c.spec.module.startswith("solvers.")]


def measure(config: SolverConfig, board: GateBoard) -> dict[str, Any]:
    """The counters of one solve, with its status: solved, unsolvable, skipped,
    invalid (wrong answer, with the reason) or error (an exception)."""
    g, goal, start = board.grid, board.goal_board, board.start_board
    spec = config.spec
    reason = config.refuses(g, board.depth, goal)
    if reason or _slow_setup(config.heuristic):
        return {"status": "skipped"}
    try:
        h = make_heuristic(config.heuristic, goal, g) if config.heuristic else None
    except ValueError:  # the heuristic does not apply to this grid
        return {"status": "skipped"}
    counters = Counters()
    try:
        if spec.prepare is not None:
            spec.prepare(g, goal, h)
        moves = config.solve(start, goal, g, counters=counters, heuristic=h)
    except Exception as err:  # one broken cell must not hide the others
        return {"status": "error", "message": f"{type(err).__name__}: {err}"}
    out: dict[str, Any] = {"status": _judge(moves, board, config.bound)}
    out["path_length"] = None if moves is None else len(moves)
    out.update(counters.as_dict())
    return out


def _slow_setup(heuristic: str | None) -> bool:
    """Heuristics whose tables take minutes to build (pdb78) are left out of the
    gate, always (not only when uncached), so its results never depend on the
    cache; tests/heuristics/test_pdb_build.py checks their kernels on smaller tables."""
    from harness.heuristics import all_heuristics

    info = all_heuristics().get(heuristic or "")
    return info is not None and info.setup_estimate is not None


def _judge(moves: str | None, board: GateBoard, bound) -> str:
    """``solved``/``unsolvable``, or ``invalid: why`` for a wrong answer (a path
    longer than ``bound`` times the optimum included)."""
    v = judge(
        moves, board.start_board, board.goal_board, board.grid,
        solvable=board.depth is not None, optimum=board.depth, bound=bound,
    )
    return v.status if v.ok else f"{v.status}: {v.message}"


def compute(
    configs: Iterable[SolverConfig] | None = None,
    boards: Iterable[GateBoard] = BOARDS,
    progress: Any = None,
) -> dict[str, Any]:
    """Counters of every config on every board, in the baseline's layout.

    ``progress(label, seconds)`` is called after each config if given.
    """
    boards = tuple(boards)
    results: dict[str, dict[str, Any]] = {}
    for config in gate_configs() if configs is None else configs:
        t0 = time.perf_counter()  # the gate's own duration, never a solver's figure
        results[config.label] = {b.name: measure(config, b) for b in boards}
        if progress is not None:
            progress(config.label, time.perf_counter() - t0)
    return {
        "format": FORMAT,
        "command": UPDATE_COMMAND,
        "boards": {b.name: b.as_dict() for b in boards},
        "results": results,
    }


def load(path: Path = BASELINE) -> dict[str, Any]:
    """The stored baseline; ValueError with a one-line reason if unusable."""
    try:
        data = loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no baseline; run {UPDATE_COMMAND}") from None
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: unreadable baseline ({err})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a format-{FORMAT} counters baseline")
    return data


def diff(baseline: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """One readable line per difference; empty when the counters match exactly."""
    lines: list[str] = []
    if baseline.get("boards") != current["boards"]:
        lines.append(
            f"the gate's board set differs from the baseline; run {UPDATE_COMMAND}"
        )
        return lines
    old, new = baseline.get("results", {}), current["results"]
    for label in sorted(set(new) - set(old)):
        lines.append(f"{label}: not in baseline; run {UPDATE_COMMAND}")
    for label in sorted(set(old) - set(new)):
        lines.append(
            f"{label}: in the baseline but no longer registered; "
            f"if removed on purpose, run {UPDATE_COMMAND}"
        )
    for label in sorted(set(old) & set(new)):
        for board in current["boards"]:
            moved = _moved(old[label].get(board, {}), new[label].get(board, {}))
            if moved:
                lines.append(f"{label} on {board}: {'; '.join(moved)}")
    return lines


def _moved(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    if old.get("status") != new.get("status"):
        why = f" ({new['message']})" if new.get("message") else ""
        return [f"status {old.get('status')} -> {new.get('status')}{why}"]
    out = []
    for key in sorted(set(old) | set(new), key=_field_order):
        if key in ("status", "message"):
            continue
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, int) and isinstance(b, int):
            pct = f", {100 * (b - a) / a:+.1f}%" if a else ""
            out.append(f"{key} {a:,} -> {b:,} ({b - a:+,}{pct})")
        else:
            out.append(f"{key} {_show(a)} -> {_show(b)}")
    return out


def _show(value: Any) -> str:
    return "(absent)" if value is None else str(value)


def _field_order(key: str) -> tuple[int, str]:
    return (FIELDS.index(key) if key in FIELDS else len(FIELDS), key)


def check(path: Path = BASELINE, progress: Any = None) -> list[str]:
    """Current counters against the baseline at ``path``: the diff lines
    (empty: the gate passes). ValueError if the baseline is missing or unusable."""
    return diff(load(path), compute(progress=progress))


def dumps(data: dict[str, Any]) -> str:
    """The baseline as JSON with one line per (config, board), for readable diffs."""
    parts = [
        "{",
        f' "format": {json.dumps(data["format"])},',
        f' "command": {json.dumps(data["command"])},',
        ' "boards": {',
    ]
    boards = list(data["boards"].items())
    for i, (name, b) in enumerate(boards):
        sep = "," if i < len(boards) - 1 else ""
        parts.append(f"  {json.dumps(name)}: {json.dumps(b)}{sep}")
    parts += [" },", ' "results": {']
    results = sorted(data["results"].items())
    for i, (label, per_board) in enumerate(results):
        parts.append(f"  {json.dumps(label)}: {{")
        items = list(per_board.items())
        for j, (name, cell) in enumerate(items):
            sep = "," if j < len(items) - 1 else ""
            parts.append(f"   {json.dumps(name)}: {json.dumps(cell)}{sep}")
        parts.append("  }" + ("," if i < len(results) - 1 else ""))
    parts += [" }", "}", ""]
    return "\n".join(parts)


def update(path: Path = BASELINE, progress: Any = None) -> dict[str, Any]:
    """Recompute every counter and write the baseline; returns what was written."""
    data = compute(progress=progress)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, dumps(data))
    return data


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.compare.gate [--update] [--baseline PATH] [--verbose]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m harness.compare.gate",
        description="Exact counters of every built-in solver against the baseline.",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="regenerate the baseline (after an intended change)",
    )
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    parser.add_argument(
        "--verbose", action="store_true", help="print each config's gate time"
    )
    args = parser.parse_args(argv)
    return check_and_print(
        args.baseline, update_baseline=args.update, verbose=args.verbose
    )


def check_and_print(
    path: Path, *, update_baseline: bool = False, verbose: bool = False
) -> int:
    """Check (or regenerate) and print the outcome; 0 pass, 1 moved, 2 unusable."""

    def progress(label: str, seconds: float) -> None:
        if verbose:
            print(f"  {label:<40} {seconds:7.2f} s", file=sys.stderr)

    t0 = time.perf_counter()
    if update_baseline:
        data = update(path, progress)
        cells = sum(len(v) for v in data["results"].values())
        print(
            f"wrote {path}: {len(data['results'])} configs x {len(data['boards'])} "
            f"boards ({cells} cells) in {time.perf_counter() - t0:.1f} s"
        )
        return 0
    try:
        lines = check(path, progress)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    took = time.perf_counter() - t0
    if not lines:
        print(
            f"counters gate: pass ({len(gate_configs())} configs x {len(BOARDS)} "
            f"boards match {path.name}; {took:.1f} s)"
        )
        return 0
    return say_differences("counters gate", lines, path, UPDATE_COMMAND)


def say_differences(gate: str, lines: list[str], path: object, update: str) -> int:
    """Print a gate's differences from its baseline at ``path`` and how to take
    them if intended (``update``: the command); exit status 1."""
    print(f"{gate}: {len(lines)} difference(s) from {path}:")
    for line in lines:
        print(f"  {line}")
    print(f"if intended, run {update} and commit the baseline")
    return 1


if __name__ == "__main__":
    sys.exit(main())
