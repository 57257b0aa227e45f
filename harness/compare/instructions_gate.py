"""The instructions gate: each compiled config's instructions per solve on the
counters gate's 3x3 boards (:data:`harness.compare.gate.BOARDS`), counted under
callgrind, against a committed baseline, within a tolerance (``harness gate
--instructions``).

Counters catch a change of algorithm (nodes); this catches a change of constant
factor (instructions per node) that time cannot see on a noisy machine. A count
depends on the code that runs: numba compiles the kernels for the host CPU and the
C library picks routines by CPU features, so a baseline holds for one kind of
machine; it records the CPU it was counted on, and a check on another says so.
Regenerate it with ``harness gate --instructions --update`` on the machine that
checks, and commit it beside an intended change.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from harness.compare.gate import BOARDS, say_differences

FORMAT = 1
BASELINE = Path(__file__).resolve().parents[1] / "data" / "golden_instructions.json"
UPDATE_COMMAND = "harness gate --instructions --update"
#: A config's instructions (summed over the boards) may move this much either way.
TOLERANCE = 0.01
#: The per-solve time limit of a gate count (seconds, before the count's factor).
TIMEOUT = 10.0


#: The configs the gate holds: one per compiled kernel family (best-first on
#: Cantor ranks, IDA*, weighted best-first, IDA* on a pattern database), so that
#: writing the baseline takes minutes, not the hour of every compiled config
#: (each config's set-up under valgrind is ~10 s of CPU, compiling its kernels
#: for valgrind's CPU minutes), and a change to any kernel they share shows.
CONFIGS = (
    "astar_cantor_jit[manhattan]",
    "ida_star_jit[manhattan]",
    "ida_star_jit[pdb44]",
    "wastar_jit[manhattan,w=2]",
)


def compiled_configs() -> list[Any]:
    """The configs of :data:`CONFIGS`, each a built-in config running a compiled
    kernel (its heuristic's ``kernel:*`` capability)."""
    from harness.compare.gate import gate_configs

    return [
        c
        for c in gate_configs()
        if c.label in CONFIGS
        and any(str(cap).startswith("kernel:") for cap in c.spec.needs)
    ]


def compute(
    jobs: int = 2,
    say: Any = None,
    *,
    configs: list[Any] | None = None,
    plugins: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Instructions per solve of every compiled config (or of ``configs``, from
    ``plugins`` too) on every 3x3 gate board it takes, in the baseline's layout:
    ``results[label][board] = count``."""
    from harness.measure.instructions.phase import count_tasks
    from harness.measure.tasks import Pass, Task
    from harness.results.environment import cpu_model

    boards = [b for b in BOARDS if b.size == "3x3"]
    tasks, where = [], {}
    for config in compiled_configs() if configs is None else configs:
        for b in boards:
            if config.refuses(b.grid, b.depth, b.goal_board):
                continue
            task = Task(
                id=len(tasks), config=config.key, plugins=plugins, rows=3, cols=3,
                start=b.start_board, goal=b.goal_board, passes=(Pass("time", 0),),
                timeout=TIMEOUT, memory_limit_mb=None,
            )  # fmt: skip
            tasks.append((task, None))
            where[task.id] = (config.label, b.name)
    counts = count_tasks(tasks, jobs, say or (lambda line: None))
    results: dict[str, dict[str, int | None]] = {}
    for task_id, (label, board) in where.items():
        results.setdefault(label, {})[board] = counts[task_id].instructions
    return {"format": FORMAT, "command": UPDATE_COMMAND, "cpu": cpu_model(),
            "boards": [b.name for b in boards], "results": results}  # fmt: skip


def load(path: Path = BASELINE) -> dict[str, Any]:
    """The stored baseline; ValueError with a one-line reason if unusable."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no instructions baseline; run {UPDATE_COMMAND}") from None
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: unreadable baseline ({err})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a format-{FORMAT} instructions baseline")
    return data


def diff(baseline: dict[str, Any], current: dict[str, Any], tolerance: float) -> list[str]:
    """One line per config whose instructions (summed over the boards both
    counted) moved more than ``tolerance``, or that either side lacks."""
    lines = []
    old, new = baseline.get("results", {}), current["results"]
    for label in sorted(set(new) - set(old)):
        lines.append(f"{label}: not in the baseline; run {UPDATE_COMMAND}")
    for label in sorted(set(old) - set(new)):
        lines.append(f"{label}: in the baseline but not counted now")
    for label in sorted(set(old) & set(new)):
        boards = [
            b for b in new[label]
            if new[label][b] is not None and old[label].get(b) is not None
        ]  # fmt: skip
        lost = [b for b in new[label] if new[label][b] is None]
        if lost:
            lines.append(f"{label}: not counted on {', '.join(lost)}")
        a = sum(old[label][b] for b in boards)
        b = sum(new[label][b] for b in boards)
        if a and abs(b / a - 1) > tolerance:
            lines.append(
                f"{label}: {a:,} -> {b:,} instructions over {len(boards)} boards "
                f"({100 * (b / a - 1):+.2f}%, tolerance {100 * tolerance:g}%)"
            )
    return lines


def check_and_print(
    path: Path, *, update_baseline: bool, tolerance: float, jobs: int, say: Any
) -> int:
    """Check (or regenerate) and print the outcome; 0 pass, 1 moved, 2 unusable."""
    from harness.measure.instructions.shim import missing

    problem = missing()
    if problem:
        print(f"error: {problem}")
        return 2
    t0 = time.monotonic()
    if not update_baseline:
        try:
            baseline = load(path)
        except ValueError as err:
            print(f"error: {err}")
            return 2
    current = compute(jobs, say)
    took = time.monotonic() - t0
    if update_baseline:
        Path(path).write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
        print(f"wrote {path}: {len(current['results'])} configs ({took:.0f} s)")
        return 0
    if baseline.get("cpu") != current["cpu"]:
        print(
            f"note: the baseline was counted on {baseline.get('cpu')!r}, this is "
            f"{current['cpu']!r}: compiled code (numba targets the host CPU) may "
            "differ; regenerate the baseline on this kind of machine"
        )
    lines = diff(baseline, current, tolerance)
    if not lines:
        print(
            f"instructions gate: pass ({len(current['results'])} configs within "
            f"{100 * tolerance:g}% of {Path(path).name}; {took:.0f} s)"
        )
        return 0
    return say_differences("instructions gate", lines, path, UPDATE_COMMAND)
