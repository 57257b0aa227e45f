"""Incremental runs and merged results.

- :func:`reusable_rows`: the stored rows of earlier runs that a new run may copy
  instead of measuring again (``harness run --reuse RUN_DIR...``). A cell
  (config x instance) is copied only when everything that determines its rows
  matches: the solver's source hash, the config (solver and heuristic), the
  dataset's sha256, the instance, every option that changes a measurement
  (repeats, the config's time limit, memory limit, memory pass, garbage collector,
  ...: every recorded option except the ones listed in :data:`NOT_MEASUREMENT`),
  and the environment (CPU model, Python, package versions). The cell must be
  complete (every pass stored) and must not have ended in ``error`` (a crash may
  be the machine's, so it is measured again). Copied rows keep the ``run_id`` of
  the run that measured them: that is where they came from.
- :func:`merge`: runs that do not overlap combined into one reportable run
  (``harness merge RUN_DIR... --out DIR``); a cell in two runs is an error unless
  ``prefer="newest"`` (the run that started last wins the cell).

Standard library only.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import results as res
from harness.core.files import append_durably, building_dir

#: Recorded options that do not change what a cell measures.
NOT_MEASUREMENT = frozenset(
    {"solvers", "configs", "datasets", "plugins", "jobs", "jobs_by_session",
     "timeout", "timeout_by_config", "experiment", "reuse", "pairs",
     # the run order and core pinning: when a cell ran, not what it measures
     "order_seed", "interleave", "pin"}
)  # fmt: skip
ENVIRONMENT = ("cpu_model", "python", "packages")


class ReuseError(ValueError):
    """A run that cannot be reused or merged; the message names it."""


def _load(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """A run's meta.json, migrated (its options compared under this version's
    names), and its rows."""
    try:
        meta = res.read_meta(run_dir)
        return res.migrate(meta, str(run_dir / res.META_FILE)), res.read_row_dicts(
            run_dir
        )
    except res.ResultsError as err:
        raise ReuseError(str(err)) from None


def measurement_options(meta: dict[str, Any], config: str) -> dict[str, Any]:
    """The options of a run that change ``config``'s measurements."""
    opts = meta.get("options") or {}
    out = {k: v for k, v in opts.items() if k not in NOT_MEASUREMENT}
    out["timeout"] = (opts.get("timeout_by_config") or {}).get(
        config, opts.get("timeout")
    )
    return out


def mismatch(
    old: dict[str, Any], new: dict[str, Any], config: str, dataset: str
) -> str | None:
    """Why a cell of ``config`` on ``dataset`` stored under meta ``old`` may not be
    copied into the run of meta ``new``; None when it may."""
    for key in ENVIRONMENT:
        if old.get(key) != new.get(key):
            return f"different {key.replace('_', ' ')}"
    a = (old.get("solvers") or {}).get(config) or {}
    b = (new.get("solvers") or {}).get(config) or {}
    if not a.get("source_sha256") or a.get("source_sha256") != b.get("source_sha256"):
        return "different solver source"
    if a.get("heuristic") != b.get("heuristic"):
        return "different heuristic"
    da = ((old.get("datasets") or {}).get(dataset) or {}).get("sha256")
    db = ((new.get("datasets") or {}).get(dataset) or {}).get("sha256")
    if not da or da != db:
        return "different dataset contents"
    ma, mb = measurement_options(old, config), measurement_options(new, config)
    if ma != mb:
        keys = sorted(k for k in set(ma) | set(mb) if ma.get(k) != mb.get(k))
        return f"different options ({', '.join(keys)})"
    return None


def _passes(meta: dict[str, Any]) -> set[tuple[str, int]]:
    opts = meta.get("options") or {}
    out = {("time", r) for r in range(int(opts.get("repeats", 1)))}
    if opts.get("memory_pass", True):
        out.add(("memory", 0))
    return out


def reusable_rows(
    sources: Sequence[Path | str],
    new_meta: dict[str, Any],
    wanted: set[tuple[str, str, str]],
) -> tuple[list[dict[str, str]], dict[str, int], Counter]:
    """Rows to copy for the cells ``wanted`` ((config, dataset, instance)) of a
    run whose meta.json is ``new_meta``. Returns (rows, cells copied per source
    run directory, cells not copied per reason). The first source that has a
    matching cell wins."""
    need = _passes(new_meta)
    taken: set[tuple[str, str, str]] = set()
    rows: list[dict[str, str]] = []
    per_source: dict[str, int] = {}
    refused: Counter = Counter()
    for source in sources:
        source = Path(source)
        old, stored = _load(source)
        cells: dict[tuple[str, str, str], list[dict[str, str]]] = {}
        for row in stored:
            key = (row["config"], row["dataset"], row["instance"])
            if key in wanted and key not in taken:
                cells.setdefault(key, []).append(row)
        copied = 0
        verdicts: dict[tuple[str, str], str | None] = {}
        for key, cell_rows in cells.items():
            config, dataset, _ = key
            if (config, dataset) not in verdicts:
                verdicts[(config, dataset)] = mismatch(old, new_meta, config, dataset)
            why = verdicts[(config, dataset)]
            have = {(r["measure"], int(r["repeat"])) for r in cell_rows}
            if res.stopped_early(cell_rows):  # adaptive stop: fewer repeats on purpose
                have |= {p for p in need if p[0] == "time"}
            if why is None and have != need:
                why = "incomplete cell"
            if why is None and any(r["status"] == "error" for r in cell_rows):
                why = "ended in error (measured again)"
            if why is not None:
                refused[why] += 1
                continue
            rows.extend(cell_rows)
            taken.add(key)
            copied += 1
        per_source[str(source)] = copied
    return rows, per_source, refused


def append_raw(run_dir: Path, rows: Sequence[dict[str, str]]) -> None:
    """Append stored rows (dicts of strings, as read) to ``run_dir/rows.csv``."""
    if not rows:
        return
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow([row.get(c, "") for c in res.column_names()])
    header = (",".join(res.column_names()) + "\n").encode("utf-8")
    append_durably(Path(run_dir) / res.ROWS_FILE, buf.getvalue().encode(), header)


# ------------------------------------------------------------------ merge


def merge(
    run_dirs: Sequence[Path | str], out: Path | str, prefer: str | None = None
) -> tuple[Path, list[str]]:
    """Combine runs into a new run directory ``out`` (must not exist). Returns the
    directory and warnings (different machines or options). ReuseError on an
    overlapping cell (unless ``prefer="newest"``), on two datasets of one name
    with different contents, or on one config with two solver sources."""
    if prefer not in (None, "newest"):
        raise ReuseError(f"--prefer {prefer!r}: the only choice is 'newest'")
    if len(run_dirs) < 2:
        raise ReuseError("merge needs at least two run directories")
    seen: set[Path] = set()
    for d in run_dirs:
        if Path(d).resolve() in seen:
            raise ReuseError(f"{d}: given twice")
        seen.add(Path(d).resolve())
    out = Path(out)
    if out.exists():
        raise ReuseError(f"{out}: already exists (merge writes a new run directory)")
    loaded = []
    warnings: list[str] = []
    for d in run_dirs:
        meta, rows = _load(Path(d))
        if not (Path(d) / res.ROWS_FILE).is_file():
            warnings.append(f"{d}: no {res.ROWS_FILE} (no cell stored); nothing "
                            "merged from it")  # fmt: skip
        loaded.append((Path(d), meta, rows))
    # Newest first, so that with --prefer newest the first owner of a cell wins.
    order = sorted(
        loaded, key=lambda t: str(t[1].get("started_utc") or ""), reverse=True
    )
    datasets: dict[str, dict] = {}
    solvers: dict[str, dict] = {}
    for path, meta, _ in loaded:
        for name, info in (meta.get("datasets") or {}).items():
            have = datasets.setdefault(name, info)
            if have.get("sha256") != info.get("sha256"):
                raise ReuseError(
                    f"{path}: dataset {name} has other contents than in another run "
                    "(sha256 differs); cannot merge"
                )
        for label, info in (meta.get("solvers") or {}).items():
            have = solvers.setdefault(label, info)
            if have.get("source_sha256") != info.get("source_sha256"):
                raise ReuseError(
                    f"{path}: config {label} was measured with another solver source "
                    "than in another run; cannot merge"
                )
    base = loaded[0][1]
    for path, meta, _ in loaded[1:]:
        for key in ENVIRONMENT:
            if meta.get(key) != base.get(key):
                warnings.append(
                    f"{path} ran with a different {key.replace('_', ' ')} than "
                    f"{loaded[0][0]}: its times are not comparable one to one"
                )
        a = {k: v for k, v in (meta.get("options") or {}).items()
             if k not in NOT_MEASUREMENT}  # fmt: skip
        b = {k: v for k, v in (base.get("options") or {}).items()
             if k not in NOT_MEASUREMENT}  # fmt: skip
        if a != b:
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            warnings.append(
                f"{path} ran with other measurement options ({', '.join(keys)}) "
                f"than {loaded[0][0]}"
            )
    owner: dict[tuple[str, str, str], Path] = {}
    kept: list[dict[str, str]] = []
    counts: dict[str, int] = {}
    for path, _meta, rows in order:
        mine: set[tuple[str, str, str]] = set()
        for row in rows:
            key = (row["config"], row["dataset"], row["instance"])
            if key in owner and owner[key] != path:
                if prefer is None:
                    raise ReuseError(
                        f"{row['config']} on {row['dataset']}/{row['instance']} is in "
                        f"both {owner[key]} and {path}; merge runs that do not "
                        "overlap, or pass --prefer newest"
                    )
                continue
            owner[key] = path
            mine.add(key)
            kept.append(row)
        counts[str(path)] = len(mine)
    newest = order[0][1]
    opts = dict(newest.get("options") or {})
    opts["solvers"] = list(dict.fromkeys(
        s for _, m, _ in loaded for s in (m.get("options") or {}).get("solvers", [])
    ))  # fmt: skip
    stored = [(m.get("options") or {}).get("configs") for _, m, _ in loaded]
    if all(c is not None for c in stored):  # the values, merged as the labels are
        # entries are [solver, heuristic] or [solver, heuristic, {param: text}]
        opts["configs"] = [json.loads(c) for c in dict.fromkeys(
            json.dumps(entry, sort_keys=True) for c in stored for entry in c
        )]  # fmt: skip
    else:  # a run stored before configs were recorded: resume reads the labels
        opts.pop("configs", None)
    opts["datasets"] = list(dict.fromkeys(
        s for _, m, _ in loaded for s in (m.get("options") or {}).get("datasets", [])
    ))  # fmt: skip
    by_config: dict[str, Any] = {}
    for _, m, _ in loaded:
        by_config.update((m.get("options") or {}).get("timeout_by_config") or {})
    if by_config:
        opts["timeout_by_config"] = by_config
    meta = res.load_meta(newest)  # the newest run's machine and timers, migrated
    meta.run_id = out.name
    meta.started_utc = min(str(m.get("started_utc") or "") for _, m, _ in loaded)
    meta.finished_utc = res.utc_now()
    meta.options = opts
    meta.datasets = datasets
    meta.solvers = solvers
    meta.setup = [s for _, m, _ in loaded for s in m.get("setup") or []]
    meta.warnings = [
        w for _, m, _ in loaded for w in m.get("warnings") or []
    ] + warnings
    meta.merged_from = [
        {"run_id": m.get("run_id"), "path": str(p), "cells": counts[str(p)]}
        for p, m, _ in loaded
    ]
    meta.prefer = prefer
    meta.complete = all(m.get("complete", False) for _, m, _ in loaded)
    meta.interrupted = False
    try:  # out appears whole (rows, then meta.json saying complete) or not at all
        with building_dir(out) as folder:
            append_raw(folder, kept)
            res.write_meta(folder, meta)
    except FileExistsError:
        raise ReuseError(f"{out}: already exists (merge writes a new run "
                         "directory)") from None  # fmt: skip
    except OSError as err:
        where = err.filename or out
        raise ReuseError(
            f"{where}: {err.strerror or err}; nothing merged ({out} not created)"
        ) from None
    return out, warnings
