"""A finished cell as rows of ``rows.csv``: every answer replayed and judged against
the optimum, counters compared across passes (and with rows stored by an earlier
session: nondeterminism is a failure), timed rows with the repeats taken and why
they stopped, and the rows of cells refused before running."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from harness import results as res
from harness.core.costs import path_cost
from harness.core.jsontext import loads
from harness.core.judge import judge as check_answer
from harness.datasets import Instance
from harness.measure import stopping
from harness.measure.instructions.model import Count
from harness.measure.plan import Cell
from harness.measure.tasks import MAX_MOVES_CHARS, Attempt, Pass, TaskResult
from harness.puzzle import goal_name
from harness.results.columns import core_columns

FAILURES = res.PROBLEMS  # what --strict fails on
CORE = core_columns()
COUNTER_COLUMNS = ("expanded", "generated", "max_frontier", "iterations")


def pass_status(
    attempt: Attempt, inst: Instance, optimum: int | None, bound: Fraction | None,
    cost_model: str = "unit",
) -> tuple[str, str, int | None, bool | None]:  # fmt: skip
    """``(status, message, path_length, is_optimal)`` of one returned or failed pass;
    every move string is replayed from the start board, and its length checked
    against the config's claimed ``bound`` times the optimum (under tile costs
    its cost, against the instance's optimal cost)."""
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
        optimum=optimum, bound=bound, cost_model=cost_model,
        optimal_cost=inst.optimal_cost,
    )
    return v.status, v.message, v.path_length, v.is_optimal


def _counter_signature(counters: dict[str, Any] | None) -> tuple:
    return tuple(sorted((counters or {}).items()))


def _stored_signature(row: dict[str, str]) -> tuple:
    sig = {k: int(row[k]) for k in COUNTER_COLUMNS if row.get(k, "") != ""}
    if row.get("extra"):
        try:
            sig.update(
                {f"extra_{k}": int(v) for k, v in loads(row["extra"]).items()}
            )
        except (ValueError, AttributeError, TypeError, OverflowError):
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
                    f"{a.measure} {a.repeat}, {a.check_label or 'tracemalloc solve'}",
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


def _counted(count: Count | None) -> list[Attempt]:
    """The instruction count's solves as an attempt, for the determinism check."""
    if count is None or count.outcome != "returned":
        return []
    return [
        Attempt(
            "instructions", 0, "returned", moves=count.moves, counters=count.counters,
            check_counters=count.check_counters, check_moves=count.check_moves,
            check_label="a solve of the count" if count.check_counters else "",
        )
    ]  # fmt: skip


def build_rows(
    run_id: str,
    cell: Cell,
    result: TaskResult,
    optimum: int | None,
    stored: Sequence[dict[str, str]] = (),
    count: Count | None = None,
) -> list[res.ResultRow]:
    """The stored rows of one finished task: judged, checked for determinism.
    ``count``: the cell's instruction count (its solves must count and answer as
    the timed ones), recorded on its time rows."""
    inst, config = cell.instance, cell.config
    drift = nondeterminism([*result.attempts, *_counted(count)], stored)
    instructions = count.instructions if count is not None else None
    not_counted = count.message if count is not None and instructions is None else ""
    taken, stop = _repeats_taken(result, stored)
    first = next((a for a in result.attempts if a.first_cpu_seconds is not None), None)
    kept = keeps_state(result.attempts)
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
        status, message, length, is_optimal = pass_status(
            a, inst, optimum, config.bound, cell.dataset.cost_model
        )
        counters = a.counters or {}
        if a.outcome == "returned" and "_error" in counters:
            status, message = "invalid", f"counters unusable: {counters['_error']}"
            counters = {}
        if drift and a.outcome == "returned":
            status = "invalid"
            message = drift + (f"; {message}" if message else "")
        elif kept and a.measure == "time" and a.outcome == "returned":
            message = kept + (f"; {message}" if message else "")
        if not_counted and a.measure == "time" and a.outcome == "returned":
            message = (f"{message}; " if message else "") + not_counted
        extra = {k[6:]: v for k, v in counters.items() if k.startswith("extra_")}
        timed = a.measure == "time" and a.outcome == "returned"
        if timed and instructions is not None:  # the instructions column's value
            a = replace(a, measured={**a.measured, "instructions": instructions})
        rows.append(
            _with_registered(
                cell,
                result,
                a,
                optimum,
                **_cell_fields(run_id, cell, optimum),
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
                loops=a.loops if timed else None,
                first_seconds=first.first_seconds if timed and first else None,
                first_cpu_seconds=first.first_cpu_seconds if timed and first else None,
                suboptimality=_suboptimality(status, length, optimum, cell, a.moves),
            )
        )
    return rows


def _with_registered(
    cell: Cell,
    result: TaskResult | None,
    attempt: Attempt | None,
    optimum: int | None,
    **core: Any,
) -> res.ResultRow:
    """A row of the core fields ``core`` and every registered column's value,
    computed by its declaration (harness.results.columns)."""
    context = res.RowContext(core, attempt, result, cell, optimum)
    more = {c.name: c.compute(context) for c in res.columns()[len(CORE):]}
    return res.ResultRow(**core, more=more)


#: A cell whose first solve took this many times as long as a later cold solve of
#: the same board (the memory pass's plain solve: after gc.collect() and the heap
#: trim, as the first solve follows the cells before it) is flagged: the solver
#: keeps something between calls (an answer cache, or set-up done in its first
#: call), and only its first solve paid for it ...
STATE_KEPT_RATIO = 4.0
#: ... when the gap is also this many CPU seconds or more (cold solves of a few
#: hundred microseconds vary by 0.1-0.25 ms).
STATE_KEPT_SECONDS = 0.0005
#: Without a memory pass, the later single solves are the warm solves before the
#: samples, which a solver's first touch of memory it allocates per call does not
#: slow: a first solve of astar_cantor (2 MiB of fresh arrays) took 4-7x its warm
#: solves, 1.5-2 ms more, on the main job. So then: 10x and 1 ms.
STATE_KEPT_WARM_RATIO = 10.0
STATE_KEPT_WARM_SECONDS = 0.001
STATE_KEPT = res.STATE_KEPT


def keeps_state(attempts: Sequence[Attempt]) -> str | None:
    """A warning when the cell's first solve took far longer than its later single
    solves: the solver keeps something between calls (an answer cache, or set-up
    done in its first call), so its loop times flatter it. None otherwise."""
    first = next((a.first_cpu_seconds for a in attempts if a.first_cpu_seconds), None)
    cold = [
        a.single_cpu_seconds
        for a in attempts
        if a.measure == "memory" and a.outcome == "returned" and a.single_cpu_seconds
    ]
    warm = sorted(
        a.single_cpu_seconds
        for a in attempts
        if a.measure == "time" and a.outcome == "returned" and a.single_cpu_seconds
    )
    if first is None or not (cold or warm):
        return None
    later, ratio, gap = (
        (cold[0], STATE_KEPT_RATIO, STATE_KEPT_SECONDS)
        if cold
        else (warm[len(warm) // 2], STATE_KEPT_WARM_RATIO, STATE_KEPT_WARM_SECONDS)
    )
    if first < ratio * later or first - later < gap:
        return None
    return (
        f"{STATE_KEPT}: first solve {_ms(first)}, a later solve of the same board "
        f"{_ms(later)} ({first / later:.0f}x): the solver keeps something between "
        "calls, so its loop time may flatter it"
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


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
    stop = next((a.stop for a in timed if a.stop), "")
    if stop:
        return taken, stop  # STABLE or LONG
    return taken, stopping.MAXIMUM if result.task.adaptive > 0 else stopping.FIXED


def _suboptimality(
    status: str, length: int | None, optimum: int | None, cell: Cell, moves: Any
):  # fmt: skip
    """path length / optimum for a solved row whose optimum is known (a shorter
    path than a wrong label included: below 1, and the label is contradicted);
    under tile costs path cost / optimal cost."""
    if status != "solved" or length is None:
        return None
    model, inst = cell.dataset.cost_model, cell.instance
    if model != "unit":
        best = inst.optimal_cost
        if best is None or not isinstance(moves, str):
            return None
        cost = path_cost(inst.start, moves, inst.grid, model)
        if best == 0:  # the start is the goal
            return 1.0 if cost == 0 else None
        return cost / best
    if optimum is None:
        return None
    if optimum == 0:  # the start is the goal
        return 1.0 if length == 0 else None
    return length / optimum


def _cell_fields(run_id: str, cell: Cell, optimum: int | None) -> dict[str, Any]:
    """The ResultRow fields every row of a cell shares (run, instance, config)."""
    inst, config = cell.instance, cell.config
    bound = config.bound
    return dict(
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
        bound=None if bound is None else float(bound),
    )


#: ResultRow fields without a value in a row of a cell that was not run
UNMEASURED = (
    "moves", "path_length", "is_optimal", "expanded", "generated", "max_frontier",
    "iterations", "seconds", "cpu_seconds", "peak_bytes", "peak_rss_bytes", "h_start",
)  # fmt: skip


def skipped_rows(run_id: str, cell: Cell, passes: Sequence[Pass], optimum: int | None):
    """Rows of a refused cell: one per pass, status ``skipped`` with the reason."""
    return [
        _with_registered(
            cell,
            None,
            None,
            optimum,
            **_cell_fields(run_id, cell, optimum),
            measure=p.measure,
            repeat=p.repeat,
            status="skipped",
            message=cell.refusal or "",
            **dict.fromkeys(UNMEASURED),
            extra="",
        )
        for p in passes
        if p.measure != "warmup"
    ]
