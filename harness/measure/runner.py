"""The runner: every selected solver config on every instance, measured honestly.

All measurement lives here and in the worker (:mod:`harness.measure.worker`): the timed
region is the solve call alone (``perf_counter_ns`` wall, ``process_time_ns`` CPU),
with ``gc.collect()`` before and the collector off during it; set-up (imports,
heuristic tables, ``prepare``) is timed separately into meta.json. Memory is a
separate untimed pass. Every answer is replayed and checked against the dataset's
optimum (or the exact 3x3 oracle), and counters must agree across all passes.

Rows are appended to ``rows.csv`` as each cell (config x instance) finishes, so an
interrupted or killed run resumes without redoing or duplicating a row.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from harness import defaults
from harness import results as res
from harness.datasets import Dataset, Instance
from harness.external import load_plugin
from harness.measure import stopping
from harness.measure.judge import judge as check_answer
from harness.measure.pool import Executor, InlineExecutor, LocalPool
from harness.measure.schedule import CostModel, Job, eta, priority
from harness.measure.worker import (
    MAX_MOVES_CHARS,
    REFERENCE_BOARD,
    REFERENCE_CONFIG,
    REFERENCE_REUSE_SECONDS,
    TRACEMALLOC_BELOW_BYTES,
    TRACEMALLOC_BELOW_SECONDS,
    Attempt,
    Pass,
    Setup,
    Task,
    TaskResult,
    TaskStarted,
)
from harness.puzzle import format_board, goal_name
from harness.solver import ConfigKey, SolverConfig, select_solvers

DEFAULT_REPEATS = defaults.REPEATS
DEFAULT_MEMORY_LIMIT_MB = defaults.MEMORY_LIMIT_MB
DEFAULT_SETUP_TIMEOUT = defaults.SETUP_TIMEOUT
DEFAULT_OUT = defaults.RESULTS_DIR
#: Upper bounds of --timeout / --setup-timeout (seconds) and --memory-limit (MB).
#: Larger values overflow the alarm, the parent's poll or RLIMIT_AS somewhere
#: below us; a day per solve and 1 TiB are far beyond any benchmark here.
MAX_SECONDS = 86_400.0
MAX_MEMORY_LIMIT_MB = 1_048_576
DEFAULT_WARMUP = defaults.WARMUP
DEFAULT_ADAPTIVE = defaults.ADAPTIVE
COUNTER_COLUMNS = ("expanded", "generated", "max_frontier", "iterations")
FAILURES = res.PROBLEMS  # what --strict fails on
#: Seconds between two ETA computations: playing the rest of a 900-cell run out on
#: the model takes ~8 ms of the parent's CPU, which the pinned workers share; once
#: per finished cell that was 6.4 s of a 55 s main job.
ETA_EVERY = 0.25


class RunError(Exception):
    """Bad selection or options, or a run that cannot be resumed: one line."""


class RunInterrupted(Exception):
    """Ctrl-C (or SIGTERM) stopped the run; finished rows are stored."""

    def __init__(self, run_dir: Path, done: int, total: int) -> None:
        super().__init__(f"interrupted after {done} of {total} cells")
        self.run_dir, self.done, self.total = run_dir, done, total


# -------------------------------------------------------------------- plan


@dataclass(slots=True)
class Plan:
    """What to run and how: the grid of configs x datasets and the options."""

    configs: list[SolverConfig]
    datasets: list[Dataset]
    plugins: tuple[str, ...] = ()
    repeats: int = DEFAULT_REPEATS
    timeout: float | None = None  # None: each solver's own budget_seconds
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB
    memory_pass: bool = True
    disable_gc: bool = True
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT
    #: (dataset, instance id) -> optimum from the exact 3x3 oracle, when unlabelled
    oracle_optima: dict[tuple[str, str], int] = field(default_factory=dict)
    #: (config label, dataset name) pairs to run; None: every config on every
    #: dataset. An experiment file's union of grids is not a full product.
    pairs: set[tuple[str, str]] | None = None
    warmup: int = DEFAULT_WARMUP
    #: time the reference solve after every timed repeat (harness.noise)
    reference: bool = True
    #: pin worker i to core i, so a cell and its reference share a core's drift
    pin: bool = True
    #: run instance by instance, every config on it in one worker, in an order
    #: rotated per instance from a seeded shuffle; False: config by config
    interleave: bool = True
    order_seed: int = 0
    #: adaptive stop: a cell stops repeating once the repeats left could not move
    #: its median by more than this factor (harness.measure.stopping); 0: all
    adaptive: float = 0.0

    def timeout_for(self, config: SolverConfig) -> float:
        return self.timeout if self.timeout is not None else config.spec.budget_seconds

    def passes(self) -> tuple[Pass, ...]:
        warm = tuple(Pass("warmup", w) for w in range(self.warmup))
        timed = tuple(Pass("time", r) for r in range(self.repeats))
        return warm + timed + ((Pass("memory", 0),) if self.memory_pass else ())

    def optimum(self, dataset: Dataset, inst: Instance) -> int | None:
        if inst.optimal_length is not None:
            return inst.optimal_length
        return self.oracle_optima.get((dataset.name, inst.id))

    def options(self, jobs: int) -> dict[str, Any]:
        return {
            "solvers": [c.label for c in self.configs],
            # the same configs as values, what a resume rebuilds the plan from
            "configs": [[c.spec.name, c.heuristic] for c in self.configs],
            "datasets": [d.name for d in self.datasets],
            "plugins": list(self.plugins),
            "repeats": self.repeats,
            "timeout": self.timeout,
            "timeout_by_config": {c.label: self.timeout_for(c) for c in self.configs},
            "memory_limit_mb": self.memory_limit_mb,
            "memory_pass": self.memory_pass,
            "gc_disabled_during_timing": self.disable_gc,
            "setup_timeout": self.setup_timeout,
            "jobs": jobs,
            **(
                {"pairs": sorted([c, d] for c, d in self.pairs)}
                if self.pairs is not None
                else {}
            ),
            "warmup": self.warmup,
            "reference": self.reference,
            "pin": self.pin,
            "interleave": self.interleave,
            "order_seed": self.order_seed,
            "adaptive": self.adaptive,
        }


def resolve_plugins(plugins: Iterable[str]) -> tuple[str, ...]:
    """Load each plugin (module name or .py path) here; return the targets workers
    load (paths made absolute). RunError naming the plugin if one fails."""
    out = []
    for target in plugins:
        path = Path(target)
        if target.startswith("exec:"):
            from harness.external import parse_exec

            try:  # canonical form: the program's path made absolute for workers
                target = parse_exec(target[5:]).target
            except ValueError as err:
                raise RunError(str(err)) from None
        elif target.endswith((".py", ".toml")) or path.is_file():
            target = str(path.resolve()) if path.exists() else target
        try:
            load_plugin(target)
        except ImportError as err:
            where = "" if target.startswith("exec:") else f"--plugin {target}: "
            raise RunError(f"{where}{err}") from None
        if target not in out:
            out.append(target)
    return tuple(out)


def resolve_solvers(
    spec: str | Sequence[str | SolverConfig | ConfigKey],
) -> list[SolverConfig]:
    """``"all"``, ``"a,b[h]"`` or a list of labels / configs / config keys ->
    configs. Only the labels are parsed; configs and keys stay values."""
    items = [spec] if isinstance(spec, str) else list(spec)
    out: list[SolverConfig] = []
    try:
        for item in items:
            if isinstance(item, SolverConfig):
                out.append(item)
            elif isinstance(item, ConfigKey):
                out.append(item.resolve())
            else:
                out.extend(select_solvers(item))
        if not out:
            select_solvers("")  # the one-line "names no solver" error
    except KeyError as err:
        raise RunError(f"--solvers: {err.args[0] if err.args else err}") from None
    return list(dict.fromkeys(out))


def stored_configs(options: dict[str, Any]) -> list[SolverConfig]:
    """The configs of a stored run's options: its ``configs`` values (solver,
    heuristic), looked up in the registry; the labels of ``solvers`` only for a
    run stored before ``configs`` was recorded."""
    if "configs" not in options:
        return resolve_solvers(options["solvers"])
    keys = [ConfigKey(solver, heuristic) for solver, heuristic in options["configs"]]
    try:
        return list(dict.fromkeys(key.resolve() for key in keys))
    except KeyError as err:
        raise RunError(f"stored config: {err.args[0] if err.args else err}") from None


def resolve_datasets(spec: str | Dataset | Sequence[str | Dataset]) -> list[Dataset]:
    """``"default"``, ``"all"``, ``"a,b"`` (names or paths) or Dataset objects."""
    from harness import datasets as ds

    if isinstance(spec, Dataset):
        items: list[str | Dataset] = [spec]
    elif isinstance(spec, str):
        items = [spec]
    else:
        items = list(spec)
    out: list[Dataset] = []
    for item in items:
        if isinstance(item, Dataset):
            out.append(item)
            continue
        try:
            out.extend(ds.select_datasets(str(item)))
        except (ValueError, OSError) as err:  # DatasetError is a ValueError
            raise RunError(f"--datasets: {err}") from None
    if not out:
        raise RunError("--datasets: no dataset named")
    names: dict[str, Dataset] = {}
    for d in out:
        if d.name in names and names[d.name].checksum != d.checksum:
            raise RunError(f"--datasets: two different datasets are named {d.name!r}")
        names[d.name] = d
    return list(names.values())


def make_plan(
    solvers: str | Sequence[str | SolverConfig] = "all",
    datasets: str | Dataset | Sequence[str | Dataset] = "default",
    *,
    plugins: Iterable[str] = (),
    repeats: int = DEFAULT_REPEATS,
    timeout: float | None = None,
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
    memory_pass: bool = True,
    disable_gc: bool = True,
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT,
    use_oracle: bool = True,
    pairs: set[tuple[str, str]] | None = None,
    warmup: int = DEFAULT_WARMUP,
    reference: bool = True,
    pin: bool = True,
    interleave: bool = True,
    order_seed: int | None = None,
    adaptive: float = DEFAULT_ADAPTIVE,
) -> Plan:
    """Resolve names into a :class:`Plan`; RunError (one line) on bad input.
    ``order_seed`` None: a fresh one, recorded in meta.json."""
    if repeats < 1:
        raise RunError(f"--repeats {repeats}: must be at least 1")
    if warmup < 0:
        raise RunError(f"--warmup {warmup}: must be 0 or more")
    if not 0 <= adaptive < 1:  # also refuses nan
        raise RunError(f"adaptive tolerance {adaptive}: must be 0 (off) to under 1")
    if timeout is not None:
        _check_seconds("--timeout", timeout)
    _check_seconds("--setup-timeout", setup_timeout)
    if memory_limit_mb is not None and not 0 <= memory_limit_mb <= MAX_MEMORY_LIMIT_MB:
        raise RunError(
            f"--memory-limit {memory_limit_mb}: must be 0 (no limit) to "
            f"{MAX_MEMORY_LIMIT_MB:,} MB"
        )
    if memory_limit_mb == 0:
        memory_limit_mb = None  # 0 means no limit
    plugin_targets = resolve_plugins(plugins)
    plan = Plan(
        configs=resolve_solvers(solvers),
        datasets=resolve_datasets(datasets),
        plugins=plugin_targets,
        repeats=repeats,
        timeout=timeout,
        memory_limit_mb=memory_limit_mb,
        memory_pass=memory_pass,
        disable_gc=disable_gc,
        setup_timeout=setup_timeout,
        pairs=set(pairs) if pairs is not None else None,
        warmup=warmup,
        reference=reference,
        pin=pin,
        interleave=interleave,
        order_seed=random.randrange(2**31) if order_seed is None else order_seed,
        adaptive=adaptive,
    )
    if use_oracle:
        plan.oracle_optima = oracle_optima(plan.datasets)
    return plan


def _check_seconds(option: str, value: float) -> None:
    if not 0 < value <= MAX_SECONDS:  # also refuses nan and inf
        raise RunError(
            f"{option} {value:g}: must be more than 0 and at most "
            f"{MAX_SECONDS:,.0f} seconds (a day)"
        )


def oracle_optima(datasets: Iterable[Dataset]) -> dict[tuple[str, str], int]:
    """Exact optima for solvable small-grid (<= 9 cells) instances the dataset left
    unlabelled, from :mod:`harness.oracle` when it is available."""
    wanted = [
        (d, i)
        for d in datasets
        for i in d.instances
        if i.solvable and i.optimal_length is None and i.grid.cells <= 9
    ]
    if not wanted:
        return {}
    try:
        from harness import oracle
        from harness.puzzle import rank
    except ImportError:
        return {}
    out = {}
    for d, inst in wanted:
        try:
            table = oracle.distances(inst.goal, inst.grid)
        except (ValueError, AttributeError):
            continue
        dist = int(table[rank(inst.start)])
        if dist >= 0:
            out[(d.name, inst.id)] = dist
    return out


# -------------------------------------------------------------------- cells


@dataclass(frozen=True, slots=True)
class Cell:
    """One config on one instance; ``refusal`` says why the solver declined it."""

    config: SolverConfig
    dataset: Dataset
    instance: Instance
    refusal: str | None = None
    block: int | None = None  # interleaved order: the instance's block number


def plan_cells(plan: Plan) -> list[Cell]:
    """The grid in run order, refusals resolved.

    Interleaved (the default): instance by instance; on each instance every config,
    in an order that rotates by one position per instance, starting from a shuffle
    seeded by ``plan.order_seed``. Each config then samples the machine's drift
    all through the run instead of in one window of its own, and every config
    takes every position equally often. The cells of one instance form a block,
    run by one worker. Otherwise config by config (a worker reuses its set-up).
    """
    from harness.heuristics import all_heuristics

    heuristics = all_heuristics()

    def cell(config: SolverConfig, dataset: Dataset, inst: Instance, block=None):
        depth = plan.optimum(dataset, inst)
        return Cell(
            config, dataset, inst, _refusal(config, inst, depth, heuristics), block
        )

    def wanted(config: SolverConfig, dataset: Dataset) -> bool:
        return plan.pairs is None or (config.label, dataset.name) in plan.pairs

    if not plan.interleave:
        return [
            cell(config, dataset, inst)
            for config in plan.configs
            for dataset in plan.datasets
            if wanted(config, dataset)
            for inst in dataset.instances
        ]
    order = list(plan.configs)
    random.Random(plan.order_seed).shuffle(order)
    cells, block = [], 0
    for dataset in plan.datasets:
        for inst in dataset.instances:
            turn = block % len(order)
            chosen = [c for c in order[turn:] + order[:turn] if wanted(c, dataset)]
            for config in chosen:
                cells.append(cell(config, dataset, inst, block))
            block += 1 if chosen else 0
    return cells


def slow_setups(
    cells: list[Cell], setup_timeout: float, needed: Callable[[Cell], bool],
    say: Callable[[str], None],
) -> list[Cell]:
    """Heuristics whose tables take long to build (``setup_estimate``): a config
    whose estimate exceeds ``setup_timeout`` is declined cell by cell with the
    reason; otherwise the tables are built here, once, before any worker starts,
    with progress and an ETA through ``say`` (workers then load them from the
    cache). Only cells ``needed`` (not refused, not already stored) count."""
    from dataclasses import replace

    from harness.heuristics import all_heuristics

    heuristics = all_heuristics()
    verdicts: dict[tuple, str | None] = {}
    out = []
    for cell in cells:
        info = heuristics.get(cell.config.heuristic or "")
        if info is None or info.setup_estimate is None or not needed(cell):
            out.append(cell)
            continue
        g, goal = cell.instance.grid, cell.instance.goal
        key = (info.name, g.rows, g.cols, goal)
        if key not in verdicts:
            verdicts[key] = _slow_setup(info, g, goal, setup_timeout, say)
        reason = verdicts[key]
        out.append(cell if reason is None else replace(cell, refusal=reason))
    return out


def _slow_setup(info, g, goal, setup_timeout: float, say) -> str | None:
    import time

    estimate = info.setup_estimate(goal, g)
    if estimate is None:
        return None
    what = f"{info.name} tables for {g.label} (not cached yet)"
    if estimate > setup_timeout:
        return (
            f"set-up would take ~{estimate:.0f} s here (building the {what}), over "
            f"--setup-timeout {setup_timeout:g} s; raise it, or build them once with "
            f"one solve: harness solve --size {g.label} --goal "
            f"\"{goal_name(goal, g)}\" --solver \"ida_star_jit[{info.name}]\""
        )
    say(f"set-up: building the {what}: ~{estimate:.0f} s estimated")
    last = [time.monotonic()]

    def report(fraction: float, left: float | None) -> None:
        now = time.monotonic()
        if now - last[0] >= 5.0:
            last[0] = now
            eta = f", ~{left:.0f} s left" if left is not None else ""
            say(f"set-up: {info.name} {fraction:.0%}{eta}")

    t0 = time.monotonic()
    info.prebuild(goal, g, report)
    say(f"set-up: {info.name} built and cached in {time.monotonic() - t0:.0f} s")
    return None


def _refusal(
    config: SolverConfig, inst: Instance, depth: int | None, heuristics
) -> str | None:
    if config.heuristic is not None:
        info = heuristics.get(config.heuristic)
        reason = info.refuses(inst.grid) if info is not None else None
        if reason:
            return (
                f"heuristic {config.heuristic} does not apply to {inst.grid.label}: "
                f"{reason}"
            )
    if config.spec.external is not None:  # a program reads no goal: it has its own
        reason = config.spec.external.refuses_goal(inst.goal, inst.grid)
        if reason:
            return reason
    try:
        return config.spec.refuses(inst.grid, depth, config.heuristic)
    except Exception as err:  # a plugin's refuses() itself is broken
        return f"(refuses() raised {type(err).__name__}: {err})"


# --------------------------------------------------------------- judging


def judge(
    attempt: Attempt, inst: Instance, optimum: int | None, declares_optimal: bool
) -> tuple[str, str, int | None, bool | None]:
    """``(status, message, path_length, is_optimal)`` of one returned or failed pass;
    every move string is replayed from the start board."""
    if attempt.outcome != "returned":
        return attempt.outcome, attempt.message, None, None
    kind = attempt.moves_type
    if kind not in ("str", "NoneType"):
        return (
            "invalid",
            f"returned a {kind} ({attempt.moves}), not a move string or None",
            None,
            None,
        )  # noqa: E501
    length = attempt.moves_chars
    if attempt.moves is not None and length > MAX_MOVES_CHARS:
        return (
            "invalid",
            f"returned a move string of {length:,} characters; not replayed",
            length,
            None,
        )  # noqa: E501
    v = check_answer(
        attempt.moves, inst.start, inst.goal, inst.grid, solvable=inst.solvable,
        optimum=optimum, declares_optimal=declares_optimal,
    )
    return v.status, v.message, v.path_length, v.is_optimal


def _counter_signature(counters: dict[str, Any] | None) -> tuple:
    return tuple(sorted((counters or {}).items()))


def _stored_signature(row: dict[str, str]) -> tuple:
    sig = {k: int(row[k]) for k in COUNTER_COLUMNS if row.get(k, "") != ""}
    if row.get("extra"):
        try:
            sig.update(
                {f"extra_{k}": int(v) for k, v in json.loads(row["extra"]).items()}
            )
        except (ValueError, AttributeError):
            pass
    return tuple(sorted(sig.items()))


def nondeterminism(
    attempts: Sequence[Attempt], stored: Sequence[dict[str, str]] = ()
) -> str | None:
    """A message when passes that finished disagree on counters or moves, else None."""
    seen: list[tuple[str, tuple, Any]] = []
    for row in stored:
        if (
            row["status"] in (*res.ANSWERED, "invalid")
            and row["expanded"] != ""
        ):
            name = f"{row['measure']} {row['repeat']} (stored)"
            seen.append((name, _stored_signature(row), row["moves"] or None))
    for a in attempts:
        if a.outcome != "returned" or a.counters is None:
            continue
        seen.append(
            (f"{a.measure} {a.repeat}", _counter_signature(a.counters), a.moves)
        )
        if a.check_counters is not None:
            seen.append(
                (
                    "memory 0, tracemalloc solve",
                    _counter_signature(a.check_counters),
                    a.check_moves,
                )
            )
    if len(seen) < 2:
        return None
    ref_name, ref_sig, ref_moves = seen[0]
    for name, sig, moves in seen[1:]:
        if sig != ref_sig:
            a, b = dict(ref_sig), dict(sig)
            diffs = [
                f"{k} {a.get(k)} ({ref_name}) vs {b.get(k)} ({name})"
                for k in sorted(set(a) | set(b))
                if a.get(k) != b.get(k)
            ]
            return "nondeterministic counters: " + "; ".join(diffs[:3])
        if (moves or None) != (ref_moves or None):
            return (
                f"nondeterministic moves: {ref_name} and {name} returned different "
                "paths"
            )
    return None


def build_rows(
    run_id: str,
    cell: Cell,
    result: TaskResult,
    optimum: int | None,
    stored: Sequence[dict[str, str]] = (),
) -> list[res.ResultRow]:
    """The stored rows of one finished task: judged, checked for determinism."""
    inst, config = cell.instance, cell.config
    drift = nondeterminism(result.attempts, stored)
    taken, stop = _repeats_taken(result, stored)
    rows = []
    warm_failure: Attempt | None = None
    for a in result.attempts:
        if a.measure == "warmup":
            # untimed, no row; a failure shows in the rows of the passes after it
            if a.outcome != "returned" and warm_failure is None:
                warm_failure = a
            continue
        if warm_failure is not None and a.message.startswith("not run after"):
            # the cell's first solve failed: say so as it happened, then point at it
            a = replace(
                a,
                message=warm_failure.message
                if not rows
                else f"not run after {warm_failure.outcome} in the warm-up solve: "
                f"{warm_failure.message}",
            )
        status, message, length, is_optimal = judge(
            a, inst, optimum, config.spec.optimal
        )
        counters = a.counters or {}
        if a.outcome == "returned" and "_error" in counters:
            status, message = "invalid", f"counters unusable: {counters['_error']}"
            counters = {}
        if drift and a.outcome == "returned":
            status = "invalid"
            message = drift + (f"; {message}" if message else "")
        extra = {k[6:]: v for k, v in counters.items() if k.startswith("extra_")}
        timed = a.measure == "time" and a.outcome == "returned"
        rows.append(
            res.ResultRow(
                run_id=run_id,
                dataset=cell.dataset.name,
                instance=inst.id,
                size=inst.grid.label,
                goal=goal_name(inst.goal, inst.grid),
                solvable=inst.solvable,
                optimal_length=optimum if inst.solvable else None,
                solver=config.spec.name,
                heuristic=config.heuristic_column,
                config=config.label,
                measure=a.measure,
                repeat=a.repeat,
                status=status,
                message=message,
                moves=a.moves if isinstance(a.moves, str) else None,
                path_length=length,
                is_optimal=is_optimal,
                expanded=counters.get("expanded"),
                generated=counters.get("generated"),
                max_frontier=counters.get("max_frontier"),
                iterations=counters.get("iterations"),
                seconds=a.seconds if timed else None,
                cpu_seconds=a.cpu_seconds if timed else None,
                raw_seconds=a.raw_seconds if timed else None,
                raw_cpu_seconds=a.raw_cpu_seconds if timed else None,
                peak_bytes=a.peak_bytes if a.measure == "memory" else None,
                peak_rss_bytes=a.peak_rss_bytes if a.measure == "memory" else None,
                h_start=result.h_start if config.heuristic else None,
                extra=json.dumps(extra, sort_keys=True) if extra else "",
                peak_rss_delta_bytes=a.peak_rss_delta_bytes
                if a.measure == "memory"
                else None,
                ref_seconds=a.ref_seconds if timed else None,
                ref_cpu_seconds=a.ref_cpu_seconds if timed else None,
                worker=result.worker if result.worker >= 0 else None,
                cpu=result.cpu,
                repeats_taken=taken if a.measure == "time" else None,
                stop_reason=stop if a.measure == "time" else "",
            )
        )
    return rows


def _repeats_taken(
    result: TaskResult, stored: Sequence[dict[str, str]]
) -> tuple[int, str]:
    """(timed repeats the cell took, why no more) for its time rows: see
    harness.measure.stopping. Repeats not run after a failure are not taken."""
    timed = [a for a in result.attempts if a.measure == "time"]
    ran = [a for a in timed if not a.message.startswith("not run after")]
    taken = len(ran) + sum(1 for r in stored if r["measure"] == "time")
    if any(a.outcome != "returned" for a in timed) or any(
        r["measure"] == "time" and r["status"] in FAILURES for r in stored
    ):
        return taken, stopping.FAILED
    if any(a.stop for a in timed):
        return taken, stopping.STABLE
    return taken, stopping.MAXIMUM if result.task.adaptive > 0 else stopping.FIXED


def skipped_rows(run_id: str, cell: Cell, passes: Sequence[Pass], optimum: int | None):
    """Rows of a refused cell: one per pass, status ``skipped`` with the reason."""
    inst, config = cell.instance, cell.config
    return [
        res.ResultRow(
            run_id,
            cell.dataset.name,
            inst.id,
            inst.grid.label,
            goal_name(inst.goal, inst.grid),
            inst.solvable,
            optimum if inst.solvable else None,
            config.spec.name,
            config.heuristic_column,
            config.label,
            p.measure,
            p.repeat,
            "skipped",
            cell.refusal or "",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            "",
        )
        for p in passes
        if p.measure != "warmup"
    ]


# ----------------------------------------------------------------- progress


def _say(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


class Progress(Protocol):
    """Where the runner reports progress (a rich bar, plain lines, or nothing)."""

    def start(self, total: int, done: int, failures: int) -> None: ...
    def started(self, config: str, dataset: str) -> None: ...
    def finished(self, done: int, failures: int, failure_line: str | None) -> None: ...
    def stop(self) -> None: ...


class NoProgress:
    def start(self, total: int, done: int, failures: int) -> None: ...
    def started(self, config: str, dataset: str) -> None: ...
    def finished(self, done: int, failures: int, failure_line: str | None) -> None: ...
    def stop(self) -> None: ...


# ---------------------------------------------------------------- the run


@dataclass(slots=True)
class Outcome:
    run_dir: Path
    meta: dict[str, Any]
    total: int
    done: int
    failures: int
    resumed: bool = False


def risks(jobs: int) -> list[str]:
    """Warnings worth reading before the work starts."""
    if jobs == 0:
        return [
            "--jobs 0 solves inside the harness process: no isolation, so a crash or "
            "a solver ignoring the time limit ends the whole run"
        ]
    return []


def advice(jobs: int) -> list[str]:
    """Notes about how to read the figures, worth reading after the work."""
    if jobs > 1:
        return [
            f"{jobs} workers solved side by side, sharing caches and memory "
            "bandwidth, so times can be higher and noisier than alone; for timings "
            "you will compare, run with --jobs 1"
        ]
    return []


def new_meta(
    plan: Plan, run_id: str, jobs: int, git: dict[str, Any], argv: list[str]
) -> dict:
    """meta.json at the start of a run (``finished_utc`` None, ``complete`` False)."""
    datasets = {
        d.name: {
            "sha256": d.checksum,
            "path": str(d.path) if d.path else None,
            "size": d.grid.label,
            "goal": goal_name(d.goal, d.grid),
            "instances": len(d.instances),
            "optimal_from_oracle": sum(1 for k in plan.oracle_optima if k[0] == d.name),
        }
        for d in plan.datasets
    }
    solvers = {
        c.label: {
            "solver": c.spec.name,
            "heuristic": c.heuristic_column,
            "source_sha256": c.spec.source_sha256(),
            "optimal": c.spec.optimal,
            "module": c.spec.module,
            "budget_seconds": c.spec.budget_seconds,
            **(
                {"external": list(c.spec.external.command),
                 "batch": c.spec.external.batch}
                if c.spec.external is not None else {}
            ),  # fmt: skip
        }
        for c in plan.configs
    }
    warnings = [*risks(jobs), *advice(jobs)]
    return {
        "run_id": run_id,
        "started_utc": res.utc_now(),
        "finished_utc": None,
        "git": git,
        **res.environment_meta(),
        "argv": argv,
        "options": plan.options(jobs),
        "datasets": datasets,
        "solvers": solvers,
        "timer": {
            **res.timer_meta(),
            "timed_region": "the solve call alone; gc.collect() before it"
            + ("; gc disabled during it" if plan.disable_gc else "; gc enabled")
            + "; worker objects from imports and set-up frozen (gc.freeze())",
            "memory_pass": (
                "untimed: peak_rss_delta_bytes = what the solve added to the "
                "worker's resident set (VmHWM, reset via /proc/self/clear_refs just "
                "before the solve, minus VmRSS just before it; excludes the "
                "interpreter, imports and tables loaded in set-up); peak_rss_bytes "
                "= that absolute peak; peak_bytes = tracemalloc peak of a second "
                "solve (Python allocations only), run only when the delta is under "
                f"{TRACEMALLOC_BELOW_BYTES // 2**20} MiB and the plain solve took "
                f"under {TRACEMALLOC_BELOW_SECONDS * 1000:g} ms of CPU (traced, it "
                "runs 5-20x slower)"
            ),
            "warmup": f"{plan.warmup} untimed solve(s) per cell before the timed "
            "repeats",
            "repeats": (
                f"adaptive: up to {plan.repeats} per cell; a cell stops once the "
                "repeats left could not move the median of its wall, CPU and "
                f"normalised times by more than {plan.adaptive:.0%} (rows: "
                "repeats_taken, stop_reason)"
                if plan.adaptive > 0
                else f"{plan.repeats} per cell"
            ),
            "reference": (
                f"{REFERENCE_CONFIG} on {format_board(REFERENCE_BOARD)} timed in "
                "the same worker right after a timed repeat, unless the one after "
                "an earlier repeat of the same cell ended at most "
                f"{REFERENCE_REUSE_SECONDS:g} s before the repeat began (then "
                "that one is used again): ref_seconds, ref_cpu_seconds; compare "
                "divides by it"
                if plan.reference
                else "none"
            ),
            "order": (
                f"interleaved: instance by instance, configs rotated per instance "
                f"from a shuffle seeded {plan.order_seed}, one worker per instance"
                if plan.interleave
                else "config by config"
            ),
            "pinning": "worker i pinned to core i (os.sched_setaffinity)"
            if plan.pin
            else "none",
            "memory_limit": "RLIMIT_AS = worker size at the call + memory_limit_mb",
        },
        "setup": [],
        "warnings": warnings,
        "resumes": [],
        "interrupted": False,
        "complete": False,
    }


def _setup_entry(s: Setup) -> dict[str, Any]:
    from harness.puzzle import parse_size

    return {
        "config": s.config,
        "size": s.size,
        "goal": goal_name(s.goal, parse_size(s.size)),
        "seconds": s.seconds,
        "note": s.note if s.ok else s.error,
        "worker": s.worker,
        "ok": s.ok,
        "import_seconds": s.import_seconds,
        "heuristic_seconds": s.heuristic_seconds,
        "prepare_seconds": s.prepare_seconds,
        "rss_baseline_bytes": s.rss_baseline_bytes,
    }


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


EXECUTORS = ("local", "dask")


def make_executor(jobs: int, run_dir: Path, *, pin: bool = True) -> Executor:
    """``jobs`` >= 1: a local process pool, worker i pinned to core i when ``pin``;
    0: inline in this process (no isolation)."""
    if jobs == 0:
        return InlineExecutor()
    return LocalPool(jobs, log_path=str(run_dir / "workers.log"), pin=pin)


def make_dask_executor(
    scheduler: str | None = None, jobs: int | None = None, plugins: Sequence[str] = ()
):
    """A :class:`~harness.measure.dask_pool.DaskExecutor` on the cluster at
    ``scheduler``, or on a LocalCluster of ``jobs`` workers (default: one per core).
    Imports Dask only now; RunError (one line) if it is missing or unreachable, or
    a worker lacks an external program of ``plugins``."""
    if jobs is not None and jobs < 1:
        raise RunError(f"--jobs {jobs}: the dask executor needs at least 1 worker")
    if jobs is not None and scheduler is not None:
        raise RunError(
            "--jobs applies to the LocalCluster the harness starts; with --scheduler "
            "the cluster's workers decide (start them with --nthreads 1)"
        )
    from harness.measure import dask_pool

    try:
        return dask_pool.DaskExecutor(scheduler, jobs=jobs, plugins=plugins)
    except (dask_pool.DaskUnavailable, dask_pool.DaskSetupError) as err:
        raise RunError(str(err)) from None


def _host_entry(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: meta.get(k) for k in ("cpu_model", "cpu_count", "platform", "python")}


def note_executor(meta: dict[str, Any], executor: Executor) -> None:
    """meta.json: which executor this session used, and its warnings."""
    describe = getattr(executor, "describe", None)
    if describe is not None:
        entry = describe()
    else:
        kind = "inline" if executor.jobs == 0 else "local"
        entry = {"kind": kind, "slots": executor.jobs}
    meta.setdefault("executors", []).append({"at_utc": res.utc_now(), **entry})
    warn = getattr(executor, "warnings", None)
    for line in warn() if warn is not None else []:
        if line not in meta["warnings"]:
            meta["warnings"].append(line)


def note_lost_batches(meta: dict[str, Any], executor: Executor, seen: int) -> int:
    """meta.json ``lost_batches``: the Dask batches whose worker died under them
    since the last call (``seen`` of the executor's list already noted)."""
    lost = getattr(executor, "lost_batches", None) or []
    if len(lost) > seen:
        session = len(meta.get("executors") or [1]) - 1
        meta.setdefault("lost_batches", []).extend(
            {"session": session, **entry} for entry in lost[seen:]
        )
    return max(len(lost), seen)


def _place(meta: dict[str, Any], executor: Executor, cell: Cell, event: TaskResult):
    """meta.json placement: which worker (and so which host) measured the cell."""
    import socket

    if not event.worker_id and event.worker < 0:
        return  # measured nowhere (a Dask batch lost with its workers)
    if event.worker_id:
        worker_key, host = event.worker_id, event.host
        info = dict(getattr(executor, "workers", {}).get(worker_key, {}))
    else:
        worker_key, host = f"local-{event.worker}", socket.gethostname()
        info = {}
    hosts = meta.setdefault("hosts", {})
    if host not in hosts:
        hosts[host] = (
            {k: info.get(k) for k in ("cpu_model", "cpu_count", "platform", "python")}
            if event.worker_id
            else _host_entry(meta)
        )
    workers = meta.setdefault("workers", {})
    if worker_key not in workers:
        keep = ("name", "address", "pid", "nthreads", "resources")
        workers[worker_key] = {"host": host} | {k: info[k] for k in keep if k in info}
    meta.setdefault("placement", {}).setdefault(worker_key, []).append(
        [cell.config.label, cell.dataset.name, cell.instance.id]
    )


def execute(
    plan: Plan,
    run_dir: Path,
    meta: dict[str, Any],
    *,
    executor: Executor,
    progress: Progress | None = None,
) -> Outcome:
    """Run every cell of ``plan`` whose rows are not yet in ``run_dir``; append rows
    as cells finish. RunInterrupted after a clean stop on KeyboardInterrupt."""
    progress = progress or NoProgress()
    run_id = meta["run_id"]
    passes = plan.passes()
    stored_rows = res.read_row_dicts(run_dir)
    stored_by_cell: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for row in stored_rows:
        stored_by_cell.setdefault(
            (row["config"], row["dataset"], row["instance"]), []
        ).append(row)
    passes_needed = {(p.measure, p.repeat) for p in passes}

    def stored_passes(key: tuple[str, str, str]) -> set[tuple[str, int]]:
        rows = stored_by_cell.get(key, [])
        have = {(r["measure"], int(r["repeat"])) for r in rows}
        if res.stopped_early(rows):  # the repeats it lacks were skipped on purpose
            have |= {(p.measure, p.repeat) for p in passes if p.measure == "time"}
        return have

    def needed(cell: Cell) -> bool:
        key = (cell.config.label, cell.dataset.name, cell.instance.id)
        return cell.refusal is None and not passes_needed <= stored_passes(key)

    cells = slow_setups(plan_cells(plan), plan.setup_timeout, needed, _say)
    total = len(cells)
    done = failures = 0
    skipped: list[res.ResultRow] = []
    by_task: dict[int, Cell] = {}
    tasks: list[Task] = []
    for cell in cells:
        key = (cell.config.label, cell.dataset.name, cell.instance.id)
        have = stored_passes(key)
        todo = tuple(p for p in passes if (p.measure, p.repeat) not in have)
        if not any(p.measure == "time" for p in todo):
            todo = tuple(p for p in todo if p.measure != "warmup")  # nothing to warm
        optimum = plan.optimum(cell.dataset, cell.instance)
        if not todo:
            done += 1
            failures += any(r["status"] in FAILURES for r in stored_by_cell[key])
        elif cell.refusal is not None:
            skipped += skipped_rows(run_id, cell, todo, optimum)
            done += 1
        else:
            task = Task(
                id=len(by_task),
                config=cell.config.key,
                plugins=plan.plugins,
                rows=cell.instance.grid.rows,
                cols=cell.instance.grid.cols,
                start=cell.instance.start,
                goal=cell.instance.goal,
                passes=todo,
                timeout=plan.timeout_for(cell.config),
                memory_limit_mb=plan.memory_limit_mb,
                setup_timeout=plan.setup_timeout,
                disable_gc=plan.disable_gc,
                dataset=cell.dataset.name,
                instance=cell.instance.id,
                reference=plan.reference,
                block=cell.block,
                adaptive=plan.adaptive,
            )
            by_task[task.id] = cell
            tasks.append(task)
    # Longest expected first, so no long cell starts last; a pool that can ask
    # again at every hand-off does so as the model learns (harness.measure.schedule).
    model = CostModel()
    model.observe_all(_stored_costs(plan, cells, stored_by_cell, passes))
    cost_jobs = {t.id: _job(by_task[t.id], t, plan) for t in tasks}
    blocks = {t.id: t.block for t in tasks}  # a block runs on one worker
    for i in model.order(cost_jobs[t.id] for t in tasks):
        executor.submit(tasks[i])
    running: dict[int, float] = {}
    if hasattr(executor, "prioritize"):
        executor.prioritize(
            lambda t: priority(
                model,
                cost_jobs[t.id],
                (cost_jobs[i] for i in running if i in cost_jobs),
            )
        )
    workers = max(getattr(executor, "jobs", 1), 1)

    said: dict[int, float] = {}  # the cost expected when each cell started

    def seconds_left() -> float | None:
        """The ETA; None while a config with cells left has none measured (its
        level would be borrowed from the others: '~2 s left' a second into a
        one-minute run, so the bar shows nothing until each has one)."""
        if any(not model.measured(j.key) for j in cost_jobs.values()):
            return None
        now = time.monotonic()
        return eta(
            model,
            ((j, blocks[i]) for i, j in cost_jobs.items() if i not in running),
            ((cost_jobs[i], now - t0, blocks[i]) for i, t0 in running.items()),
            workers,
        )

    if skipped:
        res.append_rows(run_dir, skipped)
    res.write_meta(run_dir, meta)
    set_run_dir = getattr(executor, "set_run_dir", None)
    if set_run_dir is not None:
        set_run_dir(run_dir)
    set_pin = getattr(executor, "set_pin", None)  # a cluster: pin as plan.pin says
    if set_pin is not None:
        set_pin(plan.pin)
    note_executor(meta, executor)
    res.write_meta(run_dir, meta)
    progress.start(total, done, failures)
    last_meta = 0.0
    lost_seen = 0
    estimate = getattr(progress, "estimate", None)
    observed = getattr(progress, "observed", None)
    last_eta = -math.inf

    def update_eta() -> None:
        nonlocal last_eta
        left = seconds_left()
        if left is not None:
            estimate(left)
            last_eta = time.monotonic()

    if estimate is not None:  # (a resume can know every config already)
        update_eta()
    clock = PhaseClock(workers)
    try:
        for event in executor.events():
            if isinstance(event, TaskStarted):
                running[event.task.id] = clock.started()
                if event.task.id in cost_jobs:
                    said[event.task.id] = model.cost(cost_jobs[event.task.id])
                progress.started(event.task.config.label, event.task.dataset)
                continue
            began = running.pop(event.task.id, None)
            clock.finished(began, event.phases)
            job = cost_jobs.pop(event.task.id, None)
            if began is not None and job is not None:
                setup = sum(s.seconds or 0.0 for s in event.setups)
                took = max(time.monotonic() - began - setup, 0.0)
                model.observe(job, took)
                if observed is not None:  # (benchmarks: how right the model was)
                    observed(job, said.get(event.task.id), took)
                said.pop(event.task.id, None)
            if estimate is not None and time.monotonic() - last_eta >= ETA_EVERY:
                update_eta()
            cell = by_task[event.task.id]
            key = (cell.config.label, cell.dataset.name, cell.instance.id)
            optimum = plan.optimum(cell.dataset, cell.instance)
            rows = build_rows(run_id, cell, event, optimum, stored_by_cell.get(key, ()))
            res.append_rows(run_dir, rows)
            _place(meta, executor, cell, event)
            if event.setups:
                meta["setup"].extend(_setup_entry(s) for s in event.setups)
            lost_before, lost_seen = lost_seen, note_lost_batches(
                meta, executor, lost_seen
            )
            # placement must survive a SIGKILL too: meta.json at least every second
            if (
                event.setups
                or lost_seen > lost_before
                or time.monotonic() - last_meta >= 1.0
            ):
                res.write_meta(run_dir, meta)
                last_meta = time.monotonic()
            done += 1
            bad = next((r for r in rows if r.status in FAILURES), None)
            failures += bad is not None
            line = (
                f"{bad.status}: {cell.config.label} on {cell.dataset.name} "
                f"{cell.instance.id}: {bad.message}"
                if bad is not None
                else None
            )
            progress.finished(done, failures, line)
            clock.handled()
    except KeyboardInterrupt:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second ^C waits
        try:
            executor.shutdown(cancel=True)
            progress.stop()
            note_lost_batches(meta, executor, lost_seen)
            meta["interrupted"] = True
            res.write_meta(run_dir, meta)
        finally:
            signal.signal(signal.SIGINT, previous)
        raise RunInterrupted(run_dir, done, total) from None
    except BaseException:
        executor.shutdown(cancel=True)
        progress.stop()
        if note_lost_batches(meta, executor, lost_seen) > lost_seen:
            res.write_meta(run_dir, meta)
        raise
    executor.shutdown()
    progress.stop()
    note_lost_batches(meta, executor, lost_seen)
    meta["phases"] = clock.summary()
    meta["finished_utc"] = res.utc_now()
    meta["load_average_end"] = res.load_average()
    meta["interrupted"] = False
    meta["complete"] = True
    res.write_meta(run_dir, meta)
    return Outcome(run_dir, meta, total, done, failures)


class PhaseClock:
    """Where a session's wall time went (meta.json ``phases``, seconds; the
    workers' phases also in CPU seconds, which a loaded machine inflates less): the
    workers' own phases (set-up, warm-up, timed solves, reference solves, memory
    and tracemalloc solves), the rest of their busy time (hand-off, messages,
    worker start-up), the time worker slots sat idle (``idle_slot_seconds``;
    ``tail_seconds``: from the last hand-off to the end, when workers run out
    of cells one by one) and the parent's handling of results (judging, rows,
    meta.json, progress)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.t0 = self.last_start = time.monotonic()
        self.busy = self.parent = 0.0
        self.phases: dict[str, float] = {}  # wall seconds
        self.cpu: dict[str, float] = {}  # CPU seconds (load inflates wall, less this)
        self._mark = self.t0

    def started(self) -> float:
        self.last_start = time.monotonic()
        return self.last_start

    def finished(
        self, began: float | None, phases: dict[str, tuple[float, float]]
    ) -> None:
        self._mark = now = time.monotonic()
        if began is not None:
            self.busy += now - began
        for name, (wall, cpu) in phases.items():
            self.phases[name] = self.phases.get(name, 0.0) + wall
            self.cpu[name] = self.cpu.get(name, 0.0) + cpu

    def handled(self) -> None:
        self.parent += time.monotonic() - self._mark

    def summary(self) -> dict[str, Any]:
        wall = time.monotonic() - self.t0
        measured = sum(self.phases.values())
        out: dict[str, Any] = {
            "wall_seconds": wall,
            "workers": self.workers,
            **{f"worker_{k}_seconds": v for k, v in sorted(self.phases.items())},
            **{f"worker_{k}_cpu_seconds": v for k, v in sorted(self.cpu.items())},
            "worker_other_seconds": max(self.busy - measured, 0.0)
            if self.phases
            else None,
            "worker_busy_seconds": self.busy,
            "idle_slot_seconds": max(self.workers * wall - self.busy, 0.0),
            "tail_seconds": wall - (self.last_start - self.t0),
            "parent_handling_seconds": self.parent,
        }
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}


def _job(cell: Cell, task: Task, plan: Plan) -> Job:
    """The cost model's view of one cell (see harness.measure.schedule)."""
    inst = cell.instance
    return Job(
        key=(cell.config.label, inst.grid.label, inst.solvable),
        depth=plan.optimum(cell.dataset, inst) if inst.solvable else None,
        passes=len(task.passes),
        limit=sum(task.pass_budget(p) for p in task.passes),
    )


def _stored_costs(plan: Plan, cells: Sequence[Cell], stored_by_cell, passes):
    """(job, seconds) for cells an earlier session of this run measured: the sum of
    their timed solves, scaled to all passes (a lower bound: it leaves out the
    memory pass and the worker's own overhead)."""
    for cell in cells:
        rows = stored_by_cell.get(
            (cell.config.label, cell.dataset.name, cell.instance.id), ()
        )
        timed = [
            float(r["seconds"])
            for r in rows
            if r["measure"] == "time" and r["seconds"] not in ("", None)
        ]
        if not timed:
            continue
        inst = cell.instance
        job = Job(
            key=(cell.config.label, inst.grid.label, inst.solvable),
            depth=plan.optimum(cell.dataset, inst) if inst.solvable else None,
            passes=len(passes),
            limit=float("inf"),
        )
        yield job, sum(timed) / len(timed) * len(passes)


def start(
    plan: Plan,
    out: Path | str = DEFAULT_OUT,
    *,
    jobs: int | None = None,
    argv: list[str] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Create the run directory and its first meta.json; returns both."""
    jobs = default_jobs() if jobs is None else jobs
    git = res.git_info()
    run_dir = res.new_run_dir(out, res.make_run_id(git))
    meta = new_meta(
        plan, run_dir.name, jobs, git, argv if argv is not None else res.python_argv()
    )
    res.write_meta(run_dir, meta)
    return run_dir, meta


def find_run(run_id: str, out: Path | str = DEFAULT_OUT) -> Path:
    """The directory of ``run_id`` under ``out`` (or a path to a run directory)."""
    candidates = [Path(out) / run_id, Path(run_id)]
    for path in candidates:
        if (path / res.META_FILE).is_file():
            return path
    raise RunError(f"--resume {run_id}: no run directory {candidates[0]} (see --out)")


def plan_from_meta(
    meta: dict[str, Any], datasets: Sequence[Dataset] | None = None
) -> Plan:
    """Rebuild the plan of a stored run for resuming; RunError if its datasets or
    solver sources changed since (mixing them would make the run dishonest)."""
    opts = meta.get("options") or {}
    try:
        plugins = resolve_plugins(opts.get("plugins", []))
        configs = stored_configs(opts)
        if datasets is None:
            recorded = meta.get("datasets", {})
            datasets = resolve_datasets(
                [recorded.get(n, {}).get("path") or n for n in opts["datasets"]]
            )
    except KeyError as err:
        raise RunError(f"meta.json lacks {err}; cannot resume this run") from None
    for d in datasets:
        want = meta.get("datasets", {}).get(d.name, {}).get("sha256")
        if want is not None and want != d.checksum:
            raise RunError(
                f"dataset {d.name} changed since the run started (checksum "
                f"{d.checksum[:12]} != {want[:12]}); start a new run"
            )
    for c in configs:
        want = meta.get("solvers", {}).get(c.label, {}).get("source_sha256")
        have = c.spec.source_sha256()
        if want and have and want != have:
            raise RunError(
                f"solver {c.label}'s source changed since the run started; "
                "start a new run instead of mixing results of two versions"
            )
    plan = Plan(
        configs=configs,
        datasets=list(datasets),
        plugins=plugins,
        repeats=int(opts.get("repeats", DEFAULT_REPEATS)),
        timeout=opts.get("timeout"),
        memory_limit_mb=opts.get("memory_limit_mb"),
        memory_pass=bool(opts.get("memory_pass", True)),
        disable_gc=bool(opts.get("gc_disabled_during_timing", True)),
        setup_timeout=float(opts.get("setup_timeout", DEFAULT_SETUP_TIMEOUT)),
        pairs={(c, d) for c, d in opts["pairs"]} if opts.get("pairs") else None,
        warmup=int(opts.get("warmup", 0)),
        reference=bool(opts.get("reference", False)),
        pin=bool(opts.get("pin", False)),
        interleave=bool(opts.get("interleave", False)),
        order_seed=int(opts.get("order_seed", 0)),
        adaptive=float(opts.get("adaptive", 0.0)),
    )
    plan.oracle_optima = oracle_optima(plan.datasets)
    return plan


def prepare_resume(
    run_id: str,
    out: Path | str = DEFAULT_OUT,
    *,
    jobs: int | None = None,
    argv: list[str] | None = None,
    datasets: Sequence[Dataset] | None = None,
    repair: bool = False,
) -> tuple[Plan, Path, dict[str, Any]]:
    """Open a stored run for completion: plan, directory, meta (with the resume noted).
    A torn last line of rows.csv (killed mid-write) is cut off here. Any other
    unreadable line is a RunError, unless ``repair`` moves such lines into
    rows.rejected.csv (their cells are then measured again)."""
    run_dir = find_run(run_id, out)
    try:
        meta = res.read_meta(run_dir)
    except res.ResultsError as err:
        raise RunError(str(err)) from None
    if meta.get("schema_version") != res.SCHEMA_VERSION:
        raise RunError(
            f"run {run_id} was stored with schema_version {meta.get('schema_version')} "
            f"and cannot be resumed by this harness (version {res.SCHEMA_VERSION})"
        )
    plan = plan_from_meta(meta, datasets)
    dropped = res.repair_rows(run_dir)
    try:
        rejected = res.quarantine_rows(run_dir) if repair else 0
        res.read_row_dicts(run_dir)
    except res.ResultsError as err:
        hint = (
            ""
            if repair
            else f"; `harness run --resume {run_id} --repair` moves unreadable "
            f"lines to {res.REJECTED_FILE} and measures their cells again"
        )
        raise RunError(f"{err}{hint}") from None
    jobs = default_jobs() if jobs is None else jobs
    meta.setdefault("resumes", []).append(
        {
            "at_utc": res.utc_now(),
            "argv": argv if argv is not None else res.python_argv(),
            "jobs": jobs,
            "torn_bytes_dropped": dropped,
            "rows_rejected": rejected,
            "git": res.git_info(),
        }
    )
    set_session_jobs(meta, jobs)
    meta["complete"] = False
    meta["finished_utc"] = None
    return plan, run_dir, meta


def set_session_jobs(meta: dict[str, Any], jobs: int) -> None:
    """The resumed session's worker count (known late for a Dask cluster)."""
    meta["resumes"][-1]["jobs"] = jobs
    meta["options"]["jobs_by_session"] = [meta["options"].get("jobs")] + [
        r["jobs"] for r in meta["resumes"]
    ]


# -------------------------------------------------------------------- API


def run(
    solvers: str | Sequence[str | SolverConfig] = "all",
    datasets: str | Dataset | Sequence[str | Dataset] = "default",
    *,
    repeats: int = DEFAULT_REPEATS,
    timeout: float | None = None,
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
    jobs: int | None = None,
    out: Path | str = DEFAULT_OUT,
    plugins: Iterable[str] = (),
    memory_pass: bool = True,
    disable_gc: bool = True,
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT,
    warmup: int = DEFAULT_WARMUP,
    reference: bool = True,
    pin: bool = True,
    interleave: bool = True,
    order_seed: int | None = None,
    adaptive: float = DEFAULT_ADAPTIVE,
    resume: str | None = None,
    progress: Progress | None = None,
    executor_factory: Callable[[int, Path], Executor] | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    pairs: set[tuple[str, str]] | None = None,
    experiment: Any = None,
):
    """Run the grid, store it under ``out/<run_id>/`` and return that directory.
    ``resume=RUN_ID`` completes a stored run instead (its own options apply).
    ``executor="dask"`` runs the cells on the Dask cluster at ``scheduler``
    (``"tcp://HOST:PORT"``), or on a LocalCluster of ``jobs`` workers if None.
    ``pairs``: only these (config, dataset) pairs; ``experiment``: the
    :class:`harness.experiment.Experiment` the grid came from, kept with the run.
    :func:`harness.api.run` (``harness.run``) returns the rows and can report."""
    if executor not in EXECUTORS:
        raise RunError(f"executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    if scheduler is not None and executor != "dask":
        raise RunError("scheduler= applies to executor='dask' only")
    dask_executor = None
    if resume is not None:
        plan, run_dir, meta = prepare_resume(
            resume,
            out,
            jobs=jobs,
            datasets=None if isinstance(datasets, str) else resolve_datasets(datasets),
        )
        if executor == "dask":
            dask_executor = make_dask_executor(scheduler, jobs, plan.plugins)
            set_session_jobs(meta, dask_executor.jobs)
        jobs = meta["resumes"][-1]["jobs"]
    else:
        plan = make_plan(
            solvers,
            datasets,
            plugins=plugins,
            repeats=repeats,
            timeout=timeout,
            memory_limit_mb=memory_limit_mb,
            memory_pass=memory_pass,
            disable_gc=disable_gc,
            setup_timeout=setup_timeout,
            warmup=warmup,
            reference=reference,
            pin=pin,
            interleave=interleave,
            order_seed=order_seed,
            pairs=pairs,
            adaptive=adaptive,
        )
        if executor == "dask":
            dask_executor = make_dask_executor(scheduler, jobs, plan.plugins)
            jobs = dask_executor.jobs
        jobs = default_jobs() if jobs is None else jobs
        try:
            run_dir, meta = start(plan, out, jobs=jobs)
            if experiment is not None:
                from harness.experiment import record

                record(experiment, run_dir, meta)
        except BaseException:
            if dask_executor is not None:
                dask_executor.shutdown(cancel=True)
            raise
    chosen = dask_executor or (
        executor_factory(jobs, run_dir)
        if executor_factory is not None
        else make_executor(jobs, run_dir, pin=plan.pin)
    )
    execute(plan, run_dir, meta, executor=chosen, progress=progress)
    return run_dir
