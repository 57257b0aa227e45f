"""The "about these runs" part of a report: how the figures were taken (the
method), each run's options, set-up times, hosts, provenance (experiment file,
reused and merged cells) and the runs side by side. Reads stored runs only."""

from __future__ import annotations

from typing import Any

import pandas as pd

from harness.analysis import Run
from harness.analysis.aggregate import sig
from harness.measure.executors.registry import executor_kind
from harness.measure.stopping import LONG_SAMPLE_SECONDS


def method_text(run: Run) -> str:
    """How this run measured: warm-up, repeats, reference, order, what it lacks."""
    from harness.results import schema_gaps

    opts = run.meta.get("options") or {}
    prefix = f"{run.label}: " if run.label != run.run_id else ""
    warmup = opts.get("warmup")
    parts = [
        f"{warmup} untimed warm-up solve{'s' if warmup != 1 else ''} per cell, then"
        if warmup is not None
        else "no warm-up solve recorded; then",
        f"{opts.get('repeats', '?')} timed repeats"
        + (
            f" at most (a cell stopped once the repeats left could not move its "
            f"median by more than {opts['adaptive']:.0%}"
            + (
                f", or a long solve after {_long_repeats(run)} samples of "
                f"{LONG_SAMPLE_SECONDS:g} s of CPU or more each"
                if _long_repeats(run)
                else ""
            )
            + "; rows: repeats_taken, stop_reason)"
            if opts.get("adaptive")
            else ""
        ),
    ]
    if opts.get("min_sample_seconds"):
        parts.append(
            "each a calibrated sample of at least "
            f"{sig(1e3 * float(opts['min_sample_seconds']))} ms of CPU (a faster "
            "solve is timed as a loop of back-to-back solves of its board, right "
            "after warm solves as many as the loop's; the times are per solve, "
            "rows: loops; each cell's first solve, cold, is first_cpu_seconds)"
        )
    if opts.get("reference"):
        parts.append(
            "each followed by a reference sample in the same worker, on the same "
            "core (harness compare divides by it)"
        )
    text = prefix + " ".join(parts[:2]) + "".join(f", {p}" for p in parts[2:])
    if opts.get("interleave"):
        text += (
            f"; cells interleaved instance by instance (order seed "
            f"{opts.get('order_seed')})"
        )
    gaps = schema_gaps(run.meta)
    if gaps:
        text += "; " + "; ".join(gaps)
    return text + "."


def _long_repeats(run: Run) -> int | None:
    """The repeats a long solve's cells took when the run stopped them early for
    that (stop_reason "long"), or None."""
    rows = run.rows
    if "stop_reason" not in rows:
        return None
    long = rows[(rows["measure"] == "time") & (rows["stop_reason"] == "long")]
    return int(long["repeats_taken"].max()) if len(long) else None


def _plain(value: Any) -> str:
    """Values from meta.json as people write them, not as Python reprs."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(map(_plain, value)) if value else "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items()) or "none"
    return str(value)


def _seconds(value: Any) -> str:
    if not isinstance(value, int | float):
        return "–"
    return "< 0.001" if value < 0.001 else sig(float(value))


def setup_table(run: Run) -> pd.DataFrame | None:
    """meta.json's set-up (imports, tables, compilation) summed per config over
    workers and goals; configs under a millisecond in all share one closing line."""
    setup = [s for s in run.meta.get("setup") or [] if isinstance(s, dict)]
    if not setup:
        return None
    per_config: dict[str, list[dict]] = {}
    for entry in setup:
        per_config.setdefault(str(entry.get("config", "?")), []).append(entry)
    rows, quick = [], []
    for config, entries in sorted(per_config.items()):
        total = sum(float(e.get("seconds") or 0.0) for e in entries)
        if total < 0.001:
            quick.append(config)
            continue
        slowest = max(entries, key=lambda e: float(e.get("seconds") or 0.0))
        boards = sorted({f"{e.get('size', '?')} {e.get('goal', '?')}" for e in entries})
        rows.append((config, ", ".join(boards), len(entries), _seconds(total),
                     str(slowest.get("note") or "")))
    if quick:
        rows.append((f"{len(quick)} other configs", "", "", "< 0.001 each", ""))
    return pd.DataFrame(
        rows, columns=["config", "boards", "set-ups", "total (s)", "slowest set-up"]
    )


def options_frame(opts: dict[str, Any]) -> pd.DataFrame:
    """A run's options, one row each, as people read them: lists joined, per-config
    timeouts grouped by value, the parsed configs left out (the solvers row has
    them)."""
    rows = []
    for key, value in opts.items():
        if key == "configs":
            continue
        if key == "timeout_by_config" and isinstance(value, dict):
            by_value: dict[Any, list[str]] = {}
            for config, seconds in value.items():
                by_value.setdefault(seconds, []).append(config)
            common = max(by_value, key=lambda v: len(by_value[v]), default=None)
            parts = [f"{v} s: {', '.join(sorted(c))}"
                     for v, c in sorted(by_value.items(), key=lambda kv: str(kv[0]))
                     if v != common]  # fmt: skip
            if common is not None:
                parts.append(f"{common} s: the others" if parts else f"{common} s each")
            rows.append(("timeout per config", "; ".join(parts)))
            continue
        if key == "solvers" and isinstance(value, list):
            rows.append(("solvers", f"{len(value)} configs: " + ", ".join(value)))
            continue
        rows.append((key.replace("_", " "), _plain(value)))
    return pd.DataFrame(rows, columns=["option", "value"])


def _on_cluster(name: Any) -> bool:
    kind = executor_kind(name) if isinstance(name, str) else None
    return kind is not None and kind.on_cluster


def hosts_table(run: Run) -> pd.DataFrame | None:
    """Cells per host (meta.json placement), for a run measured on several hosts
    or on a Dask cluster; None otherwise."""
    from harness.results.placement import host_counts

    counts = host_counts(run.meta)
    cluster = any(  # an executor whose cells may run on other hosts (dask)
        isinstance(e, dict) and _on_cluster(e.get("kind"))
        for e in run.meta.get("executors") or []
    )
    if not counts or (len(counts) < 2 and not cluster):
        return None
    return pd.DataFrame(
        {
            "host": [h["host"] for h in counts],
            "CPU model": [h["cpu_model"] for h in counts],
            "cores": [h["cpu_count"] if h["cpu_count"] else "?" for h in counts],
            "workers": [h["workers"] for h in counts],
            "cells": [h["cells"] for h in counts],
        }
    )


def runs_table(runs: list[Run]) -> pd.DataFrame:
    """One column per run, one row per fact (transposed: long values wrap)."""
    cols = {}
    for run in runs:
        m, git = run.meta, run.meta.get("git") or {}
        commit = str(git.get("commit") or "?")[:10] + (
            " (dirty)" if git.get("dirty") else ""
        )
        cols[run.label if len(runs) > 1 else "value"] = {
            "run id": run.run_id,
            "directory": str(run.path),
            "started (UTC)": m.get("started_utc") or "?",
            "finished (UTC)": m.get("finished_utc") or "not finished",
            "commit": commit,
            "python": m.get("python", "?"),
            "platform": m.get("platform", "?"),
            "CPU": f"{m.get('cpu_model', '?')} (x{m.get('cpu_count', '?')})"
            + (" (the client's: see where the cells were measured)"
               if hosts_table(run) is not None else ""),  # fmt: skip
            "options": "listed below",
            "datasets": ", ".join(sorted(m.get("datasets") or {}))
            or ", ".join(sorted(run.rows["dataset"].unique())),
            "configs": ", ".join(sorted(run.rows["config"].unique())),
            **provenance(run),
        }
    frame = pd.DataFrame(cols)
    frame.index.name = "run"
    return frame.reset_index()


def provenance(run: Run) -> dict[str, str]:
    """Experiment file, reused and merged cells: where the rows came from."""
    out, m = {}, run.meta
    exp = m.get("experiment")
    if isinstance(exp, dict):
        out["experiment"] = (
            f"{exp.get('file', '?')} (copy of {exp.get('source', '?')}, sha256 "
            f"{str(exp.get('sha256', '?'))[:12]})"
        )
    measured = run.rows.drop_duplicates(["config", "dataset", "instance"])
    elsewhere = measured[measured["measured_in"] != run.run_id]
    if len(elsewhere):
        counts = elsewhere["measured_in"].value_counts().sort_index()
        label = "merged from" if m.get("merged_from") else "reused cells"
        out[label] = "; ".join(f"{n} cells measured in {r}" for r, n in counts.items())
    return out
