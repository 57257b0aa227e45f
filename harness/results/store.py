"""A run directory on disk: its id and folder, ``meta.json`` written and read,
``rows.csv`` appended (flushed and fsynced), repaired after a kill, quarantined
rows, and the rows and keys already stored."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import astuple
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.results.runmeta import RunMeta
from harness.results.schema import (
    COLUMNS,
    COLUMNS_V1,
    COLUMNS_V2,
    COLUMNS_V3,
    COLUMNS_V4,
    COLUMNS_V5,
    MAX_TEXT,
    META_FILE,
    READABLE_VERSIONS,
    REJECTED_FILE,
    ROWS_FILE,
    SCHEMA_VERSION,
    ResultRow,
    ResultsError,
    row_key,
)

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


def write_meta(run_dir: Path, meta: RunMeta | dict[str, Any]) -> None:
    """Replace ``meta.json`` atomically (temp file, fsync, rename). A dict is
    written as it is, under the current schema version (tools and tests that
    edit a stored file)."""
    if isinstance(meta, RunMeta):
        meta = meta.to_json()
    else:
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
    if tuple(header) in (COLUMNS_V1, COLUMNS_V2, COLUMNS_V3, COLUMNS_V4, COLUMNS_V5):
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
def utc_now() -> str:
    """ISO 8601 UTC time with seconds, ``2026-12-02T17:00:00Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def python_argv() -> list[str]:
    """The command line as typed (program name shortened to its file name)."""
    return [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv else []
