"""A run directory on disk: its id and folder, ``meta.json`` written and read,
``rows.csv`` appended (flushed and fsynced), repaired after a kill, quarantined
rows, and the rows and keys already stored."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.core.files import append_durably, write_atomic
from harness.core.jsontext import loads
from harness.core.numbers import NumberError, parse_float, parse_int
from harness.core.options import INHERITED
from harness.results.columns import (
    column_names,
    columns,
    core_columns,
    empty_text,
    header_problem,
)
from harness.results.runmeta import RunMeta, check_version, load_meta
from harness.results.schema import (
    BOOL_TOKENS,
    MAX_TEXT,
    MEASURES,
    META_FILE,
    REJECTED_FILE,
    ROWS_FILE,
    SCHEMA_VERSION,
    STATUSES,
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


def discard_new_run(run_dir: Path | str) -> None:
    """Remove a run directory this process has just made (:func:`new_run_dir`)
    and measured nothing into (its lock, a first meta.json), because the run
    could not start: a failed start leaves no empty run behind."""
    shutil.rmtree(run_dir, ignore_errors=True)


def write_meta(run_dir: Path, meta: RunMeta | dict[str, Any]) -> None:
    """Replace ``meta.json`` atomically (temp file, fsync, rename); OSError naming
    it when it cannot be written (the old meta.json then stays). A dict is
    written as it is, under the current schema version (tools and tests that
    edit a stored file)."""
    if isinstance(meta, RunMeta):
        meta = meta.to_json()
    else:
        meta = {"schema_version": SCHEMA_VERSION, **meta}
    write_atomic(Path(run_dir) / META_FILE, meta_text(meta) + "\n")


def meta_text(value: Any, level: int = 0) -> str:
    """JSON with objects (and lists holding objects) indented, other lists on one
    line: a 20,000-cell run's placement encodes in ~10 ms instead of ~60 ms
    (``indent`` forces json's pure-Python encoder), and meta.json is rewritten
    every second while a run goes."""
    pad = "  " * (level + 1)
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        items = [
            f"{pad}{json.dumps(k)}: {meta_text(v, level + 1)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(value, list | tuple) and any(isinstance(v, dict) for v in value):
        items = [pad + meta_text(v, level + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * level + "]"
    if isinstance(value, dict):
        return json.dumps(value, default=str, indent=2).replace("\n", "\n" + pad[2:])
    return json.dumps(value, default=str)


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
    """``meta.json`` of a run as stored (its own version's keys; typed and
    migrated: :func:`read_run_meta`); ResultsError if missing, malformed or of a
    version this harness cannot read."""
    path = Path(run_dir) / META_FILE
    try:
        meta = loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file (not a run directory?)") from None
    except (OSError, ValueError) as err:
        raise ResultsError(f"{path}: cannot read: {err}") from None
    if not isinstance(meta, dict):
        raise ResultsError(f"{path}: not a JSON object")
    check_version(meta, str(path))
    problem = meta_problem(meta)
    if problem:
        raise ResultsError(f"{path}: {problem} (edited by hand?)")
    return meta


def read_run_meta(run_dir: Path | str) -> RunMeta:
    """``meta.json`` of a run of any readable version, migrated to the current
    one and typed (:func:`~harness.results.runmeta.load_meta`); ResultsError as
    :func:`read_meta`."""
    return load_meta(read_meta(run_dir), str(Path(run_dir) / META_FILE))


#: The type of each meta.json entry the readers use, where present: "object",
#: "object of objects", "list", "list of objects", "list of text", "text",
#: "text or null", "bool", "number or null", "whole number".
META_TYPES = {
    "run_id": "text", "started_utc": "text", "finished_utc": "text or null",
    "git": "object", "packages": "object", "timer": "object", "phases": "object",
    "options": "object", "datasets": "object of objects",
    "solvers": "object of objects", "hosts": "object of objects",
    "workers": "object of objects", "placement": "object",
    "setup": "list of objects", "resumes": "list of objects",
    "executors": "list of objects", "merged_from": "list of objects",
    "lost_batches": "list of objects", "warnings": "list of text",
    "interrupted": "bool", "complete": "bool",
}  # fmt: skip
#: meta.json's ``options``: the run options' types from their one declaration
#: (harness.core.options), and what a run stores beside them.
OPTION_TYPES = {o.name: o.kind for o in INHERITED} | {
    "solvers": "list of text", "datasets": "list of text", "configs": "list",
    "timeout_by_config": "object", "jobs_by_session": "list",
}  # fmt: skip


def _is(value: Any, kind: str) -> bool:
    if kind.endswith(" or null"):
        return value is None or _is(value, kind.removesuffix(" or null"))
    if kind == "object of objects":
        values = value.values() if isinstance(value, dict) else [None]
        return all(isinstance(v, dict) for v in values)
    if kind.startswith("list of "):
        item = {"objects": dict, "text": str}[kind.removeprefix("list of ")]
        return isinstance(value, list) and all(isinstance(v, item) for v in value)
    if kind == "whole number":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    types = {"object": dict, "list": list, "text": str, "bool": bool}
    return isinstance(value, types[kind])


def meta_problem(meta: dict[str, Any]) -> str | None:
    """The first entry of a meta.json whose type is not the one the harness
    writes (None: all are), e.g. ``"solvers" is null, expected an object``."""
    options = meta.get("options")
    checks = [("", meta, META_TYPES)]
    if isinstance(options, dict):
        checks.append(("options.", options, OPTION_TYPES))
    for where, scope, table in checks:
        for key, kind in table.items():
            if key in scope and not _is(scope[key], kind):
                shown = json.dumps(scope[key], default=str)
                shown = shown if len(shown) <= 40 else shown[:37] + "..."
                return f'"{where}{key}" is {shown}, expected {_article(kind)}'
    return None


def _article(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


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
    kind = type(value)
    if kind is str:  # the common case first: a row is written per cell
        if len(value) <= MAX_TEXT and "\n" not in value and "\r" not in value:
            return value
        return _one_line(value)
    if kind is bool:
        return "True" if value else "False"
    if kind is int:
        return str(value)
    if kind is float:
        return repr(value)
    if isinstance(value, float):  # e.g. numpy's float64
        return repr(float(value))
    return _cell(str(value))


def format_rows(rows: Iterable[ResultRow]) -> str:
    """CSV text of ``rows`` (no header), exactly one ``\\n``-terminated line per row:
    the core fields, then each registered column (its empty value when the row
    has none)."""
    core = [c.name for c in core_columns()]
    added = [(c.name, c.empty) for c in columns()[len(core) :]]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow(
            [_cell(getattr(row, c)) for c in core]
            + [_cell(row.more.get(name, empty)) for name, empty in added]
        )
    return buf.getvalue()


def append_rows(run_dir: Path, rows: Iterable[ResultRow]) -> int:
    """Append rows to ``rows.csv`` (header first if new) in one write, then fsync.
    Returns how many rows were written; OSError naming the file if it cannot."""
    rows = list(rows)
    header = (",".join(column_names()) + "\n").encode("utf-8")
    append_durably(Path(run_dir) / ROWS_FILE, format_rows(rows).encode("utf-8"), header)
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


def _kinds(header: Iterable[str]) -> list[str]:
    """The kind of each column of a header (text for one not declared)."""
    kind = {c.name: c.kind for c in columns()}
    return [kind.get(name, "text") for name in header]


def _field_problem(column: str, kind: str, value: str) -> str | None:
    """Why one field cannot be its column's kind (None: it can). Numbers are read
    by :mod:`harness.core.numbers` (ASCII digits, int64, finite), so a value the
    typed reader or pandas would misread (``1_0``, ``١٢``, 2**63) is refused here,
    by every reader and by ``--repair`` alike."""
    if kind == "text" or value == "":
        return None
    try:
        if kind == "int":
            parse_int(value, column)
        elif kind == "float":
            parse_float(value, column)
        elif value.strip().lower() not in BOOL_TOKENS:
            return f"{column} {value[:40]!r} is not True/False"
    except NumberError as err:
        return str(err)
    return None


def _row_problem(
    values: list[str], header: tuple[str, ...], kinds: list[str]
) -> str | None:
    """Why one parsed rows.csv line cannot be a stored row (None: it can);
    ``header``: the file's columns, ``kinds``: theirs (:func:`_kinds`). Every
    field is checked against its column's kind, so every reader, and
    ``--repair``, agree on what is unreadable."""
    if len(values) != len(header):
        return f"{len(values)} fields, expected {len(header)}"
    row = dict(zip(header, values, strict=True))
    if row["measure"] not in MEASURES or not _is_count(row["repeat"]):
        return f"measure {row['measure']!r} / repeat {row['repeat']!r} unreadable"
    if row["status"] not in STATUSES:
        return f"status {row['status'][:40]!r} is not one of {', '.join(STATUSES)}"
    for column in ("dataset", "instance", "config"):
        if not row[column]:
            return f"empty {column}"
    for column, kind, value in zip(header, kinds, values, strict=True):
        if "\x00" in value:
            return f"{column} holds NUL bytes"
        problem = _field_problem(column, kind, value)
        if problem:
            return problem
    return None


def _is_count(text: str) -> bool:
    try:
        parse_int(text, "repeat", minimum=0)
    except NumberError:
        return False
    return True


def _parse_line(line: str) -> list[str]:
    try:
        return next(csv.reader([line]), [])
    except csv.Error:  # e.g. a NUL byte in older Pythons
        return ["\x00"]


def _lines(path: Path) -> list[str]:
    """The complete lines of a rows file (a torn last line never counts)."""
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        raw = raw[: raw.rfind(b"\n") + 1]
    return raw.decode("utf-8", errors="replace").splitlines(True)


def _duplicate_text(row: dict[str, str], first: int) -> str:
    return (
        f"repeats the row of line {first} ({row['config']} on {row['dataset']} "
        f"{row['instance']}, {row['measure']} {row['repeat']}): two processes "
        "wrote this run at once"
    )


def repair_hint(run_dir: Path | str) -> str:
    """How to set a run's unreadable and duplicate lines aside (one clause)."""
    run_dir = Path(run_dir)
    return (
        f"`harness run --resume {run_dir.name} --out {run_dir.parent} --repair` "
        f"moves such lines to {REJECTED_FILE} (the first copy of a row stays)"
    )


def quarantine_rows(run_dir: Path | str) -> int:
    """Move every complete line of ``rows.csv`` that is not a readable row, or
    repeats the key of an earlier row (two writers at once), into
    ``rows.rejected.csv`` (appended, raw); keep the rest in order; return how
    many lines moved. A resume then re-measures the cells those lines belonged to.
    A header that is not this schema's is not repaired (ResultsError)."""
    path = Path(run_dir) / ROWS_FILE
    if not path.exists():
        return 0
    repair_rows(run_dir)  # a torn last line is cut first, as on every resume
    lines = _lines(path)
    if not lines:
        return 0
    header = tuple(_parse_line(lines[0]))
    if header != column_names():
        read_row_dicts(run_dir)  # raises with the header's problem
    keep, rejected, seen = [lines[0]], [], set()
    index, kinds = _key_index(header), _kinds(header)
    for line in lines[1:]:
        values = _parse_line(line)
        bad = _row_problem(values, header, kinds)
        if not bad:
            key = tuple(values[i] for i in index)
            bad = key in seen
            seen.add(key)
        (rejected if bad else keep).append(line)
    if not rejected:
        return 0
    append_durably(Path(run_dir) / REJECTED_FILE, "".join(rejected).encode("utf-8"))
    write_atomic(path, "".join(keep))
    return len(rejected)


def _key_index(header: tuple[str, ...]) -> tuple[int, ...]:
    """Where a row's key fields are in a line of a file with ``header``."""
    return tuple(
        header.index(c) for c in ("config", "dataset", "instance", "measure", "repeat")
    )


def read_row_dicts(run_dir: Path | str) -> list[dict[str, str]]:
    """The stored rows as dicts of strings; a torn last line is dropped. ResultsError
    naming the file and line for a header that is not this schema's, a line that
    is not a readable row, or a row whose key an earlier line already has."""
    path = Path(run_dir) / ROWS_FILE
    if not path.exists():
        return []
    try:
        lines = _lines(path)
    except OSError as err:
        raise ResultsError(f"{path}: cannot read: {err.strerror}") from None
    if not lines:
        return []
    header = tuple(_parse_line(lines[0]))
    problem = header_problem(header)
    if problem:
        raise ResultsError(f"{path}: line 1: {problem}")
    # An older schema's run (or one without a plugin loaded now): the columns
    # its header lacks read as their empty value.
    missing = {c: empty_text(c) for c in column_names() if c not in header}
    index, kinds = _key_index(header), _kinds(header)
    out = []
    first: dict[tuple, int] = {}
    for number, line in enumerate(lines[1:], start=2):
        values = _parse_line(line)
        problem = _row_problem(values, header, kinds)
        if problem:
            raise ResultsError(
                f"{path}: line {number}: {problem}; {repair_hint(run_dir)}"
            )
        row = dict(zip(header, values, strict=True))
        row.update(missing)
        key = tuple(values[i] for i in index)
        if key in first:
            raise ResultsError(
                f"{path}: line {number}: {_duplicate_text(row, first[key])}; "
                f"{repair_hint(run_dir)}"
            )
        first[key] = number
        out.append(row)
    return out


def append_problem(run_dir: Path | str) -> str | None:
    """Why the rows this harness writes now cannot be appended to the run's
    rows.csv (None: they can): its header is not :func:`column_names`, e.g. a
    plugin column loaded now but not when the run began, or the reverse."""
    path = Path(run_dir) / ROWS_FILE
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            header = tuple(_parse_line(fh.readline()))
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"{path}: cannot read: {err.strerror}"
    current = column_names()
    if header in ((), current):
        return None
    lacks = [c for c in current if c not in header]
    extra = [c for c in header if c not in current]
    return (
        f"{path}: its columns differ from the rows this run would add"
        + (f" (it has no {', '.join(lacks)}: loaded by a plugin now?)" if lacks else "")
        + (f" (it has {', '.join(extra)}: load the plugin that adds it)" if extra else "")
    )


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
