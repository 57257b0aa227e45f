"""Where a run's cells were measured, read back from meta.json.

The runner records, local and Dask runs alike, ``hosts`` (each machine's CPU model,
cores, platform, Python), ``workers`` (each worker's host) and ``placement`` (for each
worker, the ``[config, dataset, instance]`` cells it measured), and for Dask runs
``lost_batches`` (batches whose worker died under them). This module turns them
into what the report and ``harness compare`` say: cells per host, a warning when
times come from different CPU models, and the lost batches. Plain dicts only.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

CellKey = tuple[str, str, str]  # config, dataset, instance


def cell_hosts(meta: dict[str, Any]) -> dict[CellKey, str]:
    """Each placed cell's host (the last placement wins: a cell measured again)."""
    workers = meta.get("workers") or {}
    out: dict[CellKey, str] = {}
    for worker, cells in (meta.get("placement") or {}).items():
        host = (workers.get(worker) or {}).get("host")
        if not host:
            continue
        for cell in cells or ():
            if isinstance(cell, list | tuple) and len(cell) == 3:
                out[(str(cell[0]), str(cell[1]), str(cell[2]))] = str(host)
    return out


def cpu_model(meta: dict[str, Any], host: str) -> str:
    """The host's CPU model as recorded ('unknown CPU' if not)."""
    info = (meta.get("hosts") or {}).get(host) or {}
    return str(info.get("cpu_model") or "unknown CPU")


def host_counts(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Per host that measured cells: CPU model, cores, workers and cells, most
    cells first."""
    placed = cell_hosts(meta)
    cells = Counter(placed.values())
    workers = Counter(
        str(w.get("host"))
        for key, w in (meta.get("workers") or {}).items()
        if isinstance(w, dict) and (meta.get("placement") or {}).get(key)
    )
    return [
        {
            "host": host,
            "cpu_model": cpu_model(meta, host),
            "cpu_count": ((meta.get("hosts") or {}).get(host) or {}).get("cpu_count"),
            "workers": workers.get(host, 0),
            "cells": n,
        }
        for host, n in sorted(cells.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def models_by_config(meta: dict[str, Any]) -> dict[str, Counter]:
    """config -> CPU model -> cells measured on it."""
    out: dict[str, Counter] = {}
    for (config, _, _), host in cell_hosts(meta).items():
        out.setdefault(config, Counter())[cpu_model(meta, host)] += 1
    return out


def hosts_sentence(meta: dict[str, Any], label: str) -> list[str]:
    """Cells per host, when more than one host measured the run."""
    counts = host_counts(meta)
    if len(counts) < 2:
        return []
    parts = [
        f"{h['host']} ({h['cpu_model']}"
        + (f", {h['cpu_count']} cores" if h["cpu_count"] else "")
        + f", {h['workers']} worker{'s' * (h['workers'] != 1)}): {h['cells']} cells"
        for h in counts
    ]
    return [f"{label} was measured on {len(counts)} hosts: " + "; ".join(parts) + "."]


def mixed_models_warning(meta: dict[str, Any], label: str) -> list[str]:
    """A warning when one run's cells were measured on different CPU models: its
    configs' times are then not comparable with each other (counters are)."""
    by_config = models_by_config(meta)
    models = Counter()
    for counts in by_config.values():
        models.update(counts)
    if len(models) < 2:
        return []
    where: dict[str, list[str]] = {}
    split = []
    for config, counts in sorted(by_config.items()):
        if len(counts) > 1:
            split.append(config)
        else:
            where.setdefault(next(iter(counts)), []).append(config)
    text = (
        f"{label} measured its cells on {len(models)} CPU models ("
        + "; ".join(f"{m}: {n} cells" for m, n in models.most_common())
        + "): times of configs measured on different models mix code and machine; "
        "compare times within one model (counters are exact everywhere)."
    )
    if where:
        text += " Configs by model: " + "; ".join(
            f"{m}: {_names(cs)}" for m, cs in sorted(where.items())
        ) + "."
    if split:
        text += f" Measured on more than one model: {_names(split)}."
    return [text]


def model_differences(
    base: dict[str, Any], new: dict[str, Any]
) -> tuple[list[str], list[str]]:
    """(warnings, notes) for a comparison of two runs, cell by cell (a time ratio
    compares one cell's times in both): measured on different CPU models -> a
    warning; on other hosts of the same model -> a note. Empty when either run has
    no placement."""
    b_hosts, n_hosts = cell_hosts(base), cell_hosts(new)
    differ: dict[str, list[tuple[str, str]]] = {}
    moved: dict[str, list[tuple[str, str]]] = {}
    for cell in sorted(set(b_hosts) & set(n_hosts)):
        bh, nh = b_hosts[cell], n_hosts[cell]
        bm, nm = cpu_model(base, bh), cpu_model(new, nh)
        if bm != nm:
            differ.setdefault(cell[0], []).append((bm, nm))
        elif bh != nh:
            moved.setdefault(cell[0], []).append((bh, nh))
    warnings, notes = [], []
    if differ:
        config, pairs = next(iter(differ.items()))
        cells = sum(len(v) for v in differ.values())
        warnings.append(
            f"CPU model differs between the runs on {cells} cell(s) of "
            f"{len(differ)} config(s) (e.g. {config}: base on {pairs[0][0]}, new on "
            f"{pairs[0][1]}): those time ratios mix code and machine changes"
        )
    if moved:
        config, pairs = next(iter(moved.items()))
        cells = sum(len(v) for v in moved.values())
        notes.append(
            f"{cells} cell(s) of {len(moved)} config(s) ran on other hosts of the "
            f"same CPU model in the two runs (e.g. {config}: base on {pairs[0][0]}, "
            f"new on {pairs[0][1]})"
        )
    return warnings, notes


def lost_batch_sentences(meta: dict[str, Any]) -> list[str]:
    """One sentence per batch whose Dask worker died under it."""
    out = []
    for entry in meta.get("lost_batches") or []:
        if not isinstance(entry, dict):
            continue
        cells = entry.get("cells") or []
        shown = ", ".join(
            f"{c[0]} on {c[1]}/{c[2]}" for c in cells[:3] if len(c) == 3
        ) + (f" and {len(cells) - 3} more" if len(cells) > 3 else "")
        who = entry.get("worker") or "unknown"
        if entry.get("host"):
            who += f" on {entry['host']}"
        outcome = (
            "its cells were queued again"
            if entry.get("retried")
            else "its cells are recorded as errors"
        )
        died = f"died under batch {entry.get('batch')}"
        if entry.get("started") is False:  # it only waited behind another batch
            died = f"died while batch {entry.get('batch')} waited on it, not started"
            if entry.get("retried"):
                outcome += " (not counted as a retry)"
        said = str(entry.get("error") or "")
        said = said if len(said) <= 160 else said[:157] + "..."
        out.append(
            f"Dask worker {who} {died} (attempt "
            f"{entry.get('attempt', 1)}, {len(cells)} cells: {shown}); {outcome}"
            + (f". Dask said: {said}" if said else ".")
        )
    return out


def _names(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
