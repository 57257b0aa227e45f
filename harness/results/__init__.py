"""Stored results: one directory per run, ``rows.csv`` plus ``meta.json``.

The contract is ``results/README.md`` (reporter and compare read it):
``results/<run_id>/`` is created once and never overwritten; rows are appended as
cells finish, each batch flushed and fsynced, one physical line per row (text fields
are kept on one line), so a run killed at any moment leaves at most one torn last
line, which readers drop and :func:`repair_rows` cuts off before a resume appends.
Standard library only; :func:`harness.analysis.read_run` is the typed reader.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import astuple, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 5  # bump on any change of columns or their meaning
# History:
#   1 - first version (results/README.md), plus the trailing ``extra`` column:
#       per-algorithm counters beyond the four fixed ones, as a JSON object.
#   2 - trailing ``raw_seconds``, ``raw_cpu_seconds``: an external program's times
#       before its start-up was subtracted (empty for in-process solvers).
#       Version 1 runs are read as version 2 with those columns empty.
#   3 - memory rows: ``peak_rss_delta_bytes`` (what the solve added to the worker's
#       resident set); time rows: ``ref_seconds`` / ``ref_cpu_seconds`` (a fixed
#       reference solve timed next to the repeat, same worker, same core);
#       ``worker`` and ``cpu`` (core the worker was pinned to) on measured rows.
#       meta.json: options.warmup, options.order_seed, load averages, CPU
#       frequency and governor, hostname. Older runs are read with these columns
#       empty, and :func:`schema_gaps` says what they lack.
#   4 - time rows: ``repeats_taken`` (how many timed repeats the cell took) and
#       ``stop_reason`` (why no more: stable | max | fixed | failed, see
#       harness.measure.stopping): the adaptive stop may take fewer than
#       options.repeats. A ``ref_cpu_seconds`` may be shared by the repeats of
#       one worker within 0.5 s (timer.reference says so). meta.json: ``phases``
#       (where the session's time went), options.adaptive. Version 1-3 runs are
#       read with the two columns empty: they took all their repeats.
#   5 - time rows: ``loops`` (solves in the timed sample: a fast solve is timed as
#       a calibrated loop of back-to-back solves of the board, and ``seconds`` /
#       ``cpu_seconds`` are the sample divided by it; the reference likewise), and
#       ``first_seconds`` / ``first_cpu_seconds`` (the cell's first solve, timed
#       alone with cold caches: single-shot latency, never the default time).
#       Before, every repeat was one solve right after gc.collect() and the
#       previous repeat's reference solve: a 20 us solve read 125-170 us.
#       options.min_sample_seconds. Version 1-4 runs are read with the three
#       columns empty (one solve per repeat, timed cold).
#: Versions this harness reads (older ones are migrated on reading).
READABLE_VERSIONS = (1, 2, 3, 4, 5)
SUPPORTED_SCHEMAS = READABLE_VERSIONS

ROWS_FILE = "rows.csv"
META_FILE = "meta.json"
REJECTED_FILE = "rows.rejected.csv"
STATUSES = ("solved", "unsolvable", "timeout", "memout", "error", "invalid", "skipped")

# The status vocabulary, defined once (runner, analysis, report, plots, compare).
#: Best first; statuses in one group are equally good or bad. An answer (a path, or
#: "unsolvable" for an unsolvable board) is best, a refusal loses coverage, a wrong
#: answer is worst.
SEVERITY_GROUPS = (
    ("solved", "unsolvable"),
    ("skipped",),
    ("timeout", "memout"),
    ("error",),
    ("invalid",),
)
#: status -> its group's rank: a higher rank is a worse outcome (a regression).
SEVERITY = {s: rank for rank, group in enumerate(SEVERITY_GROUPS) for s in group}
#: Every status, best to worst: which of an instance's repeats stands for it.
WORST_LAST = tuple(s for group in SEVERITY_GROUPS for s in group)
#: Correct answers.
ANSWERED = SEVERITY_GROUPS[0]
#: Failures of a pass, worst first (a refusal, "skipped", is not one).
PROBLEMS = ("invalid", "error", "memout", "timeout")
MEASURES = ("time", "memory")
#: How the time rows' message begins when the cell's first solve took far longer
#: than a later one of the same board (harness.measure.rows.keeps_state): solved,
#: but its times may be flattered. The report looks for it.
STATE_KEPT = "possible answer cache"
#: Longest text kept in ``moves`` / ``message``; a runaway solver's output is cut.
MAX_TEXT = 4000


class ResultsError(Exception):
    """A run directory that cannot be read or written; the message names the file."""


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One pass (a timed repeat or the memory pass) of one config on one instance."""

    run_id: str
    dataset: str
    instance: str
    size: str  # "3x3"
    goal: str  # goal name or its tokens
    solvable: bool
    optimal_length: int | None  # from the dataset (or the 3x3 oracle); None if unknown
    solver: str  # registry name
    heuristic: str  # "none" for blind solvers
    config: str  # display label, "astar_dict[manhattan]"
    measure: str  # "time" | "memory"
    repeat: int  # 0..R-1 for time rows, 0 for the memory row
    status: str  # one of STATUSES
    message: str  # why, for anything but a clean solve; "" otherwise
    moves: str | None  # the returned move string (None: none returned)
    path_length: int | None
    is_optimal: bool | None  # None unless path_length and optimal_length are known
    expanded: int | None
    generated: int | None
    max_frontier: int | None
    iterations: int | None
    seconds: float | None  # wall time of the solve call (time rows only)
    cpu_seconds: float | None  # CPU time of the worker process during the call
    peak_bytes: int | None  # tracemalloc peak (memory rows only)
    peak_rss_bytes: int | None  # worker's peak resident set (memory rows only)
    h_start: int | None  # heuristic at the start board (None for blind solvers)
    extra: str  # JSON object of per-algorithm counters, "" when none
    raw_seconds: float | None = None  # external programs: wall before start-up
    raw_cpu_seconds: float | None = None  # subtraction, and CPU likewise
    # ---- schema 3
    #: memory rows: worker's peak RSS during the solve minus its RSS just before
    peak_rss_delta_bytes: int | None = None
    #: time rows: the reference solve timed right after this repeat (same worker)
    ref_seconds: float | None = None
    ref_cpu_seconds: float | None = None
    worker: int | None = None  # worker slot that measured the row
    cpu: int | None = None  # the core that worker was pinned to (None: not pinned)
    # ---- schema 4
    #: time rows: how many timed repeats the cell took (the adaptive stop may
    #: take fewer than options.repeats)
    repeats_taken: int | None = None
    #: time rows: why the cell took no more (harness.measure.stopping.STOP_REASONS)
    stop_reason: str = ""
    # ---- schema 5
    #: time rows: solves in the timed sample; seconds / cpu_seconds are per solve
    loops: int | None = None
    #: time rows: the cell's first solve, timed alone with cold caches (single-shot
    #: latency); the same on every time row of the cell
    first_seconds: float | None = None
    first_cpu_seconds: float | None = None

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return row_key(
            self.config, self.dataset, self.instance, self.measure, self.repeat
        )


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(ResultRow))
#: The columns of a version 1 / 2 ``rows.csv`` (read with the newer ones empty).
COLUMNS_V1: tuple[str, ...] = COLUMNS[: COLUMNS.index("extra") + 1]
COLUMNS_V2: tuple[str, ...] = COLUMNS[: COLUMNS.index("raw_cpu_seconds") + 1]
COLUMNS_V3: tuple[str, ...] = COLUMNS[: COLUMNS.index("cpu") + 1]
COLUMNS_V4: tuple[str, ...] = COLUMNS[: COLUMNS.index("stop_reason") + 1]
#: stop_reason of a cell whose remaining repeats were skipped as unable to move
#: its median (a resume or reuse must not take them)
STOPPED_STABLE = "stable"


def stopped_early(rows: Iterable[dict[str, str]]) -> bool:
    """Whether a cell's stored rows say its timed repeats stopped early on
    purpose (the adaptive stop): the repeats it lacks are not missing."""
    return any(
        r.get("measure") == "time" and r.get("stop_reason") == STOPPED_STABLE
        for r in rows
    )


def row_key(config: str, dataset: str, instance: str, measure: str, repeat: int):
    """The identity of a stored row: a resumed run never writes a key twice."""
    return (config, dataset, instance, measure, int(repeat))


# ------------------------------------------------------------------ run ids


def git_info(root: Path | None = None) -> dict[str, Any]:
    """``{"commit": sha or None, "dirty": bool or None}`` of the harness checkout."""
    root = root or Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit or None, "dirty": bool(status.strip())}


def make_run_id(git: dict[str, Any], now: datetime | None = None) -> str:
    """``20261202T170000Z-3f9c2a1b`` (+ ``-dirty``); ``nogit`` outside a checkout."""
    now = now or datetime.now(UTC)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    commit = (git.get("commit") or "nogit")[:8]
    return f"{stamp}-{commit}" + ("-dirty" if git.get("dirty") else "")


def new_run_dir(out_dir: Path | str, run_id: str) -> Path:
    """Create ``out_dir/run_id`` (or ``run_id-2``, ``-3``... if taken) and return it;
    an existing directory is never reused."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ResultsError(
            f"cannot create results folder {out}: {err.strerror}"
        ) from None
    for n in range(1, 1000):
        path = out / (run_id if n == 1 else f"{run_id}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as err:
            raise ResultsError(f"cannot create {path}: {err.strerror}") from None
        return path
    raise ResultsError(f"{out}: too many runs named {run_id}")


# --------------------------------------------------------------------- meta


def environment_meta() -> dict[str, Any]:
    """Python, package versions, platform and CPU: what a reader needs to compare."""
    from importlib.metadata import PackageNotFoundError, version

    packages = {}
    for name in PACKAGES:
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            packages[name] = None
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": packages,
        "platform": platform.platform(),
        "hostname": platform.node(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": _affinity(),
        "cpu_frequency": cpu_frequency(),
        "load_average_start": load_average(),
    }


#: Packages whose versions meta.json records (compare warns when they differ).
PACKAGES = (
    "npuzzle-harness",
    "numpy",
    "numba",
    "llvmlite",
    "pandas",
    "matplotlib",
    "rich",
    "typer",
)


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _affinity() -> list[int] | None:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None


def cpu_frequency() -> dict[str, Any]:
    """Per-core current frequency (MHz) and governor where the kernel exposes them
    (``/sys/devices/system/cpu/cpu*/cpufreq``); else the MHz ``/proc/cpuinfo``
    reports, with ``source`` saying which. Many VMs expose neither honestly."""
    cores: dict[str, dict[str, Any]] = {}
    base = Path("/sys/devices/system/cpu")
    for d in sorted(base.glob("cpu[0-9]*/cpufreq")):
        entry: dict[str, Any] = {}
        for name, key in (
            ("scaling_cur_freq", "mhz"),
            ("scaling_governor", "governor"),
        ):
            try:
                text = (d / name).read_text().strip()
            except OSError:
                continue
            entry[key] = round(int(text) / 1000) if key == "mhz" else text
        if entry:
            cores[d.parent.name] = entry
    if cores:
        return {"source": "cpufreq", "cores": cores}
    mhz = []
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("cpu mhz"):
                mhz.append(round(float(line.split(":", 1)[1])))
    except (OSError, ValueError):
        pass
    if mhz:
        return {"source": "/proc/cpuinfo (nominal on many VMs)", "mhz": mhz}
    return {"source": "not readable"}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def timer_meta() -> dict[str, Any]:
    """The clocks used for the solve call and their resolutions."""
    perf = time.get_clock_info("perf_counter")
    cpu = time.get_clock_info("process_time")
    return {
        "wall_clock": f"time.perf_counter_ns ({perf.implementation})",
        "perf_counter_resolution_s": perf.resolution,
        "cpu_clock": f"time.process_time_ns ({cpu.implementation})",
        "process_time_resolution_s": cpu.resolution,
    }


def write_meta(run_dir: Path, meta: dict[str, Any]) -> None:
    """Replace ``meta.json`` atomically (temp file, fsync, rename)."""
    meta = {"schema_version": SCHEMA_VERSION, **meta}
    path = Path(run_dir) / META_FILE
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=2, sort_keys=False, default=str)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def find_run_dir(token: str, results_dir: Path | str) -> Path:
    """A stored run named by its path or by its run id under ``results_dir``;
    ResultsError naming every place looked in otherwise."""
    candidates = list(dict.fromkeys((Path(token), Path(results_dir) / token)))
    for candidate in candidates:
        if (candidate / META_FILE).is_file():
            return candidate
    looked = " or ".join(str(c) for c in candidates)
    raise ResultsError(f"run {token!r}: no {META_FILE} in {looked}")


def read_meta(run_dir: Path | str) -> dict[str, Any]:
    """``meta.json`` of a run; ResultsError if missing, malformed or of another
    schema version."""
    path = Path(run_dir) / META_FILE
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file (not a run directory?)") from None
    except (OSError, ValueError) as err:
        raise ResultsError(f"{path}: cannot read: {err}") from None
    if not isinstance(meta, dict):
        raise ResultsError(f"{path}: not a JSON object")
    version = meta.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise ResultsError(
            f"{path}: schema_version {version!r} is not supported by this harness "
            f"(it reads versions {', '.join(map(str, READABLE_VERSIONS))}); use the "
            "harness version that wrote it"
        )
    return meta


def schema_gaps(meta: dict[str, Any]) -> list[str]:
    """What a run of an older schema lacks, one phrase each ([] for the current)."""
    version = meta.get("schema_version")
    if version in (1, 2):
        return [
            f"schema {version} run: no peak_rss_delta_bytes (memory is the worker's "
            "absolute peak RSS, which includes what earlier cells left in the worker)",
            "no reference solve beside each cell (time ratios are raw CPU time, "
            "exposed to machine drift between runs)",
            "no warm-up count, interleaving seed or load average recorded",
            COLD_TIMES,
        ]
    if version in (3, 4):
        return [COLD_TIMES]
    return []


#: What every run before schema 5 lacks (see schema_gaps).
COLD_TIMES = (
    "one solve per timed repeat, right after the harness's own bookkeeping "
    "(gc.collect(), the previous repeat's reference solve): a solve under a "
    "millisecond was timed with cold caches, up to 5x its own time (schema 5 "
    "times calibrated loops)"
)


# --------------------------------------------------------------------- rows


_NEWLINES = re.compile(r"[\r\n]+")


def _one_line(text: str) -> str:
    text = _NEWLINES.sub(" ", text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    return _one_line(str(value))


def format_rows(rows: Iterable[ResultRow]) -> str:
    """CSV text of ``rows`` (no header), exactly one ``\\n``-terminated line per row."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow([_cell(v) for v in astuple(row)])
    return buf.getvalue()


def append_rows(run_dir: Path, rows: Iterable[ResultRow]) -> int:
    """Append rows to ``rows.csv`` (header first if new) in one write, then fsync.
    Returns how many rows were written."""
    rows = list(rows)
    path = Path(run_dir) / ROWS_FILE
    text = format_rows(rows)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if os.fstat(fd).st_size == 0:
            text = ",".join(COLUMNS) + "\n" + text
        data = text.encode("utf-8")
        while data:
            written = os.write(fd, data)
            data = data[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    return len(rows)


def repair_rows(run_dir: Path) -> int:
    """Cut a torn last line (no final newline: the writer was killed mid-write) off
    ``rows.csv`` so appends start on a fresh line. Returns the bytes removed."""
    path = Path(run_dir) / ROWS_FILE
    if not path.exists():
        return 0
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # Walk back to the last newline; rows are short, so read a tail window.
        window = min(size, 1 << 20)
        fh.seek(size - window)
        tail = fh.read(window)
        cut = tail.rfind(b"\n")
        keep = size - window + cut + 1 if cut >= 0 else 0
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return size - keep


def _row_problem(values: list[str], width: int = len(COLUMNS)) -> str | None:
    """Why one parsed rows.csv line cannot be a stored row (None: it can);
    ``width``: the header's number of columns."""
    if len(values) != width:
        return f"{len(values)} fields, expected {width}"
    row = dict(zip(COLUMNS, values, strict=False))
    if row["measure"] not in ("time", "memory") or not row["repeat"].isdigit():
        return f"measure {row['measure']!r} / repeat {row['repeat']!r} unreadable"
    return None


def quarantine_rows(run_dir: Path | str) -> int:
    """Move every complete line of ``rows.csv`` that is not a readable row into
    ``rows.rejected.csv`` (appended, raw), keep the rest in order, and return how
    many lines moved. A resume then re-measures the cells those lines belonged to.
    A header that is not this schema's is not repaired (ResultsError)."""
    path = Path(run_dir) / ROWS_FILE
    if not path.exists():
        return 0
    repair_rows(run_dir)  # a torn last line is cut first, as on every resume
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines(True)
    if not lines:
        return 0
    if tuple(next(csv.reader([lines[0]]))) != COLUMNS:
        read_row_dicts(run_dir)  # raises with the header's problem
    keep, rejected = [lines[0]], []
    for line in lines[1:]:
        values = next(csv.reader([line]), [])
        (rejected if _row_problem(values) else keep).append(line)
    if not rejected:
        return 0
    with open(Path(run_dir) / REJECTED_FILE, "a", encoding="utf-8") as fh:
        fh.writelines(rejected)
    tmp = path.with_suffix(".csv.tmp")
    tmp.write_text("".join(keep), encoding="utf-8")
    os.replace(tmp, path)
    return len(rejected)


def read_row_dicts(run_dir: Path | str) -> list[dict[str, str]]:
    """The stored rows as dicts of strings; a torn last line is dropped. ResultsError
    for a header that is not this schema's or a malformed complete line."""
    path = Path(run_dir) / ROWS_FILE
    if not path.exists():
        return []
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        raw = raw[: raw.rfind(b"\n") + 1]  # the torn last line never counts
    lines = raw.decode("utf-8", errors="replace").splitlines()
    if not lines:
        return []
    header = next(csv.reader([lines[0]]))
    width = len(header)
    if tuple(header) in (COLUMNS_V1, COLUMNS_V2, COLUMNS_V3, COLUMNS_V4):
        # an older schema: the later columns read as empty
        header = list(COLUMNS)
    if tuple(header) != COLUMNS:
        missing = [c for c in COLUMNS if c not in header]
        unknown = [c for c in header if c not in COLUMNS]
        raise ResultsError(
            f"{path}: line 1: columns do not match schema {SCHEMA_VERSION}"
            + (f" (missing: {', '.join(missing)})" if missing else "")
            + (f" (unknown: {', '.join(unknown)})" if unknown else "")
        )
    out = []
    for number, values in enumerate(csv.reader(lines[1:]), start=2):
        problem = _row_problem(values, width)
        if problem:
            raise ResultsError(f"{path}: line {number}: {problem}")
        values += [""] * (len(COLUMNS) - width)
        out.append(dict(zip(COLUMNS, values, strict=True)))
    return out


def stored_keys(run_dir: Path | str) -> set[tuple[str, str, str, str, int]]:
    """Keys of the rows already stored (what a resume must not redo)."""
    return {
        row_key(
            r["config"], r["dataset"], r["instance"], r["measure"], int(r["repeat"])
        )
        for r in read_row_dicts(run_dir)
    }


#: Derived by the readers, never stored: see :func:`mark_contradicted_labels`.
CONTRADICTED = "label_contradicted"


def mark_contradicted_labels(frame):
    """Add the boolean column ``label_contradicted`` and empty ``is_optimal`` on
    every row of an instance whose dataset label some row proved wrong: a replayed
    path (status ``solved``) shorter than ``optimal_length``. The label is then no
    optimum, so no row of that instance can be called optimal or not. Derived from
    stored columns, so it holds for runs written before it existed."""
    import pandas as pd

    if len(frame) == 0:
        frame[CONTRADICTED] = pd.Series(dtype=bool)
        return frame
    length = pd.to_numeric(frame["path_length"], errors="coerce")
    label = pd.to_numeric(frame["optimal_length"], errors="coerce")
    proof = (frame["status"] == "solved").fillna(False) & (length < label).fillna(False)
    keys = ["dataset", "instance"]
    wrong = set(map(tuple, frame.loc[proof, keys].astype(str).to_numpy()))
    hit = (
        pd.Series(
            [tuple(k) in wrong for k in frame[keys].astype(str).to_numpy()],
            index=frame.index,
        )
        if wrong
        else pd.Series(False, index=frame.index)
    )
    frame[CONTRADICTED] = hit.astype(bool)
    if wrong:
        frame["is_optimal"] = frame["is_optimal"].where(~hit)
    return frame


def contradicted_labels(rows) -> list[dict[str, Any]]:
    """One entry per (dataset, instance) whose label ``rows`` contradict:
    ``dataset``, ``instance``, ``label`` (the dataset's optimum), ``found`` (the
    shortest replayed path) and ``config`` (who found it). ``rows`` is a frame from
    a reader (the ``label_contradicted`` column set)."""
    import pandas as pd

    if len(rows) == 0 or CONTRADICTED not in rows or not rows[CONTRADICTED].any():
        return []
    hit = rows[rows[CONTRADICTED] & (rows["status"] == "solved")].copy()
    hit["_len"] = pd.to_numeric(hit["path_length"], errors="coerce")
    out = []
    for (dataset, instance), g in hit.groupby(["dataset", "instance"], sort=True):
        best = g.sort_values(["_len", "config"]).iloc[0]
        out.append({
            "dataset": str(dataset), "instance": str(instance),
            "label": int(best["optimal_length"]), "found": int(best["_len"]),
            "config": str(best["config"]),
        })  # fmt: skip
    return out


def stored_contradictions(
    results_dir: Path | str, dataset: str, checksum: str | None = None
) -> list[dict[str, Any]]:
    """Contradicted labels of ``dataset`` found by the runs stored under
    ``results_dir`` (entries as :func:`contradicted_labels`, plus ``run_id``), one
    per instance, shortest path first found. Runs of another version of the dataset
    (``checksum`` differs) and unreadable runs are passed over. Pure Python: no
    pandas, so ``harness datasets show`` stays quick."""
    best: dict[str, dict[str, Any]] = {}
    folder = Path(results_dir)
    if not folder.is_dir():
        return []
    for meta_path in sorted(folder.glob(f"*/{META_FILE}")):
        run_dir = meta_path.parent
        try:
            meta = read_meta(run_dir)
            if dataset not in (meta.get("datasets") or {}):
                continue
            want = meta["datasets"][dataset].get("sha256")
            if checksum is not None and want is not None and want != checksum:
                continue
            rows = read_row_dicts(run_dir)
        except (ResultsError, OSError, ValueError, AttributeError):
            continue
        for row in rows:
            if row["dataset"] != dataset or row["status"] != "solved":
                continue
            try:
                found, label = int(row["path_length"]), int(row["optimal_length"])
            except ValueError:
                continue
            have = best.get(row["instance"])
            if found < label and (have is None or found < have["found"]):
                best[row["instance"]] = {
                    "dataset": dataset, "instance": row["instance"], "label": label,
                    "found": found, "config": row["config"],
                    "run_id": meta.get("run_id", run_dir.name),
                }  # fmt: skip
    return [best[k] for k in sorted(best)]


def contradiction_text(entry: dict[str, Any]) -> str:
    """One line for one :func:`contradicted_labels` entry."""
    return (
        f"{entry['dataset']} {entry['instance']}: the dataset labels it "
        f"{entry['label']} moves, but {entry['config']} found a valid "
        f"{entry['found']}-move path"
    )


def utc_now() -> str:
    """ISO 8601 UTC time with seconds, ``2026-12-02T17:00:00Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def python_argv() -> list[str]:
    """The command line as typed (program name shortened to its file name)."""
    return [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv else []
