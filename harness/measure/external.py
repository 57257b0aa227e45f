"""External solvers: any program that speaks the online-judge format.

The program reads a board on standard input (``2 3 4 1 5 x 7 6 8``, ``x`` the blank)
and prints the blank's moves (``ullddrurdllurdruldr``) or ``unsolvable``. With
``batch`` it reads many boards, one per line, and answers one line each, staying
alive between boards. Register one with ``--exec NAME=COMMAND`` (see
:func:`parse_exec`) or a ``[[external]]`` table in a ``.toml`` plugin file (see
:func:`load_toml`); both become ordinary registry entries, so the runner selects,
judges (replay, optimality) and stores them like any solver.

Measurement is the child's, not the worker's:

- one board per process: wall time from spawn to reaping, CPU time (user + sys) and
  peak RSS (``ru_maxrss``) from ``wait4``'s rusage of the child;
- batch: wall time from writing the line to reading the answer; CPU time from the
  child's per-thread ``schedstat`` (ns) in ``/proc``; peak RSS from its ``VmHWM``.

Start-up (spawn, loader, interpreter, reading the input) is measured apart, on the
goal board, whose answer is the empty path; the rows carry the raw times
(``raw_seconds``, ``raw_cpu_seconds``) and the start-up-subtracted ones
(``seconds``, ``cpu_seconds``). Programs report no counters, so the counter columns
are empty, not zero. A program that overruns the time limit is killed with its whole
process group; a crash is an error naming the signal.

Standard library only (workers import this module).
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import selectors
import shlex
import shutil
import signal
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.puzzle import Board, BoardError, Grid, format_board, goal_board, grid

#: Start-up is the median of this many solves of the goal board.
STARTUP_RUNS = 5
#: Output beyond this many characters is dropped (a runaway program).
MAX_OUTPUT_CHARS = 1_000_000
#: After the program exits, how long to wait for its pipes to close (grandchildren).
DRAIN_SECONDS = 0.2
EXEC_PREFIX = "exec:"
#: A start-up-subtracted time below this (noise: the solve cost less than the
#: start-up's own jitter) is recorded as this.
FLOOR_SECONDS = 1e-6
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_MOVES = re.compile(r"[udlrUDLR]*")
_OPTION = r"(?:optimal|batch|(?:sizes|goal|timeout)=[^,=\s]+)"
_EXEC = re.compile(
    rf"\s*([^:=\s]+)\s*(?::\s*({_OPTION}(?:,{_OPTION})*))?\s*=(.*)", re.S
)


class ExternalError(Exception):
    """The program failed on a board: crashed, exited non-zero, printed something
    that is not an answer, or overran its time. ``outcome``: error | timeout."""

    def __init__(self, message: str, outcome: str = "error") -> None:
        super().__init__(message)
        self.outcome = outcome


@dataclass(frozen=True, slots=True)
class Program:
    """An external solver: the command and what it declares."""

    name: str
    command: tuple[str, ...]
    batch: bool = False
    optimal: bool = False
    sizes: tuple[str, ...] = ()  # "3x3", ...; empty: any size
    goal: str = "standard"  # the goal the program solves toward
    budget_seconds: float = 60.0
    description: str = ""
    target: str = ""  # the plugin target that registers it again in a worker

    def refuses(self, g: Grid, depth: int | None, heuristic: str | None) -> str | None:
        if self.sizes and g.label not in self.sizes:
            return f"{self.name} declares sizes {', '.join(self.sizes)}"
        return None

    def goal_for(self, g: Grid) -> Board:
        return goal_board(self.goal, g)

    def refuses_goal(self, goal: Board, g: Grid) -> str | None:
        """A reason when ``goal`` is not the one the program solves toward: it reads
        only the start board, so it cannot be told another goal."""
        if goal != self.goal_for(g):
            return (
                f"{self.name} solves toward the {self.goal} goal only "
                f"({format_board(self.goal_for(g))})"
            )
        return None

    def source_sha256(self) -> str:
        """Hash of the command line and of every file it names (the executable,
        a script given to an interpreter): changes when the program does."""
        digest = hashlib.sha256("\0".join(self.command).encode())
        for i, arg in enumerate(self.command):
            path = shutil.which(arg) if i == 0 else None
            path = path or (arg if "/" in arg or i > 0 else None)
            try:
                if path and os.path.isfile(path):
                    digest.update(Path(path).read_bytes())
            except OSError:
                pass
        return digest.hexdigest()


# ------------------------------------------------------------- declaring


def _check_command(command: tuple[str, ...], where: str) -> tuple[str, ...]:
    """The command with its program made absolute if it is a path; ValueError with
    a one-line reason if the program does not exist or cannot be run."""
    if not command or not command[0]:
        raise ValueError(f"{where}: empty command")
    program = command[0]
    if "/" in program:
        path = Path(program).expanduser().resolve()
        if not path.exists():
            raise ValueError(f"{where}: program {program!r} does not exist")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise ValueError(f"{where}: program {program!r} is not executable")
        return (str(path), *command[1:])
    if shutil.which(program) is None:
        raise ValueError(f"{where}: program {program!r} not found on PATH")
    return command


def _sizes(values: Any, where: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = [v for v in re.split(r"[+\s,]+", values) if v]
    out = []
    for value in values:
        try:
            g = grid(*map(int, str(value).lower().split("x")))
        except (BoardError, ValueError, TypeError):
            raise ValueError(f"{where}: size {value!r} is not ROWSxCOLS") from None
        out.append(g.label)
    return tuple(out)


def make_program(
    name: str,
    command: tuple[str, ...] | list[str],
    *,
    batch: bool = False,
    optimal: bool = False,
    sizes: Any = (),
    goal: str = "standard",
    timeout: float | None = None,
    description: str = "",
    target: str = "",
    where: str = "",
) -> Program:
    """A checked :class:`Program`; ValueError naming ``where`` on bad values."""
    where = where or name
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"{where}: name {name!r}: use lower-case letters, digits, _")
    if not isinstance(command, list | tuple) or not all(
        isinstance(c, str) for c in command
    ):
        raise ValueError(f"{where}: command must be a list of strings")
    for key, value in (("batch", batch), ("optimal", optimal)):
        if not isinstance(value, bool):
            raise ValueError(f"{where}: {key} must be true or false, not {value!r}")
    if goal not in ("standard", "spiral", "blank-first"):
        raise ValueError(f"{where}: goal {goal!r}: standard, spiral or blank-first")
    budget = 60.0 if timeout is None else timeout
    if not isinstance(budget, int | float) or not budget > 0:
        raise ValueError(f"{where}: timeout {timeout!r}: a positive number of seconds")
    return Program(
        name=name,
        command=_check_command(tuple(command), where),
        batch=batch,
        optimal=optimal,
        sizes=_sizes(sizes, where),
        goal=goal,
        budget_seconds=float(budget),
        description=description
        or f"external program: {shlex.join(command)}" + (" (batch)" if batch else ""),
        target=target,
    )


def parse_exec(text: str) -> Program:
    """``NAME[:OPTION,...]=COMMAND`` -> Program. Options: ``optimal``, ``batch``,
    ``sizes=3x3+4x4``, ``goal=spiral``, ``timeout=SECONDS``. ValueError otherwise."""
    where = f"--exec {text!r}"
    m = _EXEC.match(text)
    if not m or not m.group(3).strip():
        raise ValueError(
            f"{where}: expected NAME=COMMAND or NAME:OPTION,...=COMMAND (options: "
            "optimal, batch, sizes=3x3+4x4, goal=NAME, timeout=S)"
        )
    name, opts, command = m.group(1), m.group(2) or "", m.group(3)
    kwargs: dict[str, Any] = {}
    for opt in filter(None, (o.strip() for o in opts.split(","))):
        key, has_value, value = opt.partition("=")
        if key in ("optimal", "batch") and not has_value:
            kwargs[key] = True
        elif key in ("sizes", "goal") and has_value:
            kwargs[key] = value
        elif key == "timeout" and has_value:
            try:
                kwargs["timeout"] = float(value)
            except ValueError:
                raise ValueError(f"{where}: timeout={value!r}: not a number") from None
        else:  # unreachable: _EXEC admits only the options above
            raise ValueError(f"{where}: unknown option {opt!r}")
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    program = make_program(name.strip(), argv, where=where, **kwargs)
    # Workers register it again from this canonical form (absolute program path).
    canon = ",".join(
        ["optimal"] * program.optimal
        + ["batch"] * program.batch
        + ([f"sizes={'+'.join(program.sizes)}"] if program.sizes else [])
        + ([f"goal={program.goal}"] if program.goal != "standard" else [])
        + ([f"timeout={program.budget_seconds:g}"] if "timeout" in kwargs else [])
    )
    target = f"{EXEC_PREFIX}{program.name}{':' + canon if canon else ''}=" + shlex.join(
        program.command
    )
    return _with_target(program, target)


def _with_target(program: Program, target: str) -> Program:
    from dataclasses import replace

    return replace(program, target=target)


def load_toml(path: str | Path) -> list[Program]:
    """Every ``[[external]]`` table of a TOML file, checked; ValueError naming the
    file and table otherwise. Program paths are relative to the file's folder."""
    import tomllib

    path = Path(path).resolve()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ValueError(f"{path}: cannot read: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{path}: not TOML: {err}") from None
    tables = data.get("external")
    if not isinstance(tables, list) or not tables:
        raise ValueError(f"{path}: no [[external]] table")
    unknown_top = set(data) - {"external"}
    if unknown_top:
        raise ValueError(f"{path}: unknown key(s) {', '.join(sorted(unknown_top))}")
    known = {
        "name", "command", "batch", "optimal", "sizes", "goal", "timeout",
        "description",
    }  # fmt: skip
    programs = []
    for number, table in enumerate(tables, start=1):
        where = f"{path.name}: [[external]] #{number}"
        if not isinstance(table, dict):
            raise ValueError(f"{where}: not a table")
        unknown = set(table) - known
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        if "name" not in table or "command" not in table:
            raise ValueError(f"{where}: needs name and command")
        command = table["command"]
        if isinstance(command, str):
            command = shlex.split(command)
        if isinstance(command, list) and command and isinstance(command[0], str):
            if "/" in command[0] and not os.path.isabs(command[0]):
                command = [str(path.parent / command[0]), *command[1:]]
        where = f"{path.name}: [[external]] {table['name']!r}"
        programs.append(
            make_program(
                table["name"],
                command,
                batch=table.get("batch", False),
                optimal=table.get("optimal", False),
                sizes=table.get("sizes", ()),
                goal=table.get("goal", "standard"),
                timeout=table.get("timeout"),
                description=str(table.get("description", "")),
                target=str(path),
                where=where,
            )
        )
    return programs


def register_program(program: Program) -> str:
    """Add ``program`` to the solver registry; returns its name."""
    from harness.solver import register_spec

    register_spec(
        program.name,
        solve=_make_solve(program),
        optimal=program.optimal,
        description=program.description,
        refuses=program.refuses,
        prepare=_make_prepare(program),
        budget_seconds=program.budget_seconds,
        sizes=", ".join(program.sizes) if program.sizes else "any",
        external=program,
    )
    return program.name


def load_plugin(target: str) -> list[str]:
    """Any ``--plugin`` target: the external programs of an ``exec:NAME=COMMAND``
    target or a ``.toml`` file, else a Python module or ``.py`` file
    (:func:`harness.solver.load_plugin`). The names registered; ImportError with a
    one-line reason otherwise."""
    if target.startswith(EXEC_PREFIX) or target.endswith(".toml"):
        return load_target(target)
    from harness.solver import load_plugin as load_python_plugin

    return load_python_plugin(target)


def load_target(target: str) -> list[str]:
    """Register the programs of a plugin target (``exec:...`` or a ``.toml`` path);
    ImportError with a one-line reason otherwise."""
    try:
        if target.startswith(EXEC_PREFIX):
            programs = [parse_exec(target[len(EXEC_PREFIX) :])]
        else:
            programs = load_toml(target)
    except ValueError as err:
        raise ImportError(str(err)) from None
    return [register_program(p) for p in programs]


# ------------------------------------------------------------- other machines


def programs_of(target: str) -> list[Program]:
    """The programs a plugin target declares (``exec:`` or ``.toml``), as this
    process registered them (else parsed anew); [] for a Python plugin."""
    if not (target.startswith(EXEC_PREFIX) or target.endswith(".toml")):
        return []
    from harness.solver import all_solvers

    found = [
        spec.external
        for spec in all_solvers().values()
        if spec.external is not None and spec.external.target == target
    ]
    if found:
        return found
    if target.startswith(EXEC_PREFIX):
        return [parse_exec(target[len(EXEC_PREFIX) :])]
    return load_toml(target)


def toml_text(programs: list[Program]) -> str:
    """``[[external]]`` tables that declare ``programs`` exactly as registered here
    (program paths absolute): what a ``.toml`` plugin becomes when shipped to
    another machine, independent of the file's folder."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float):
            return repr(float(v))
        if isinstance(v, list | tuple):
            return "[" + ", ".join(value(x) for x in v) + "]"
        import json

        return json.dumps(str(v), ensure_ascii=False).replace("\x7f", "\\u007f")

    out = []
    for p in programs:
        out.append("[[external]]")
        for key, v in (
            ("name", p.name), ("command", list(p.command)), ("batch", p.batch),
            ("optimal", p.optimal), ("sizes", list(p.sizes)), ("goal", p.goal),
            ("timeout", p.budget_seconds), ("description", p.description),
        ):  # fmt: skip
            out.append(f"{key} = {value(v)}")
        out.append("")
    return "\n".join(out)


def needed_files(program: Program) -> list[str]:
    """What must exist on a machine that runs ``program``: its executable (a path,
    or a bare name looked up on PATH) and every file its command names by absolute
    path (a script given to an interpreter)."""
    first = program.command[0]
    return [first] + [
        a for a in program.command[1:] if os.path.isabs(a) and os.path.isfile(a)
    ]


def file_sha256(path: str) -> str:
    """sha256 of a program file (a bare name: the one PATH finds); "" if none."""
    found = path if "/" in path else shutil.which(path)
    try:
        return hashlib.sha256(Path(found).read_bytes()).hexdigest() if found else ""
    except OSError:
        return ""


def missing_here(path: str, executable: bool) -> str | None:
    """Why ``path`` cannot be used on this machine (None: it can)."""
    if "/" not in path:
        return None if shutil.which(path) else "is not on its PATH"
    if not os.path.isfile(path):
        return "does not exist"
    if executable and not os.access(path, os.X_OK):
        return "is not executable"
    return None


# ------------------------------------------------------------- one process


@dataclass(slots=True)
class Measured:
    """One answer of the program and what it cost."""

    moves: str | None  # None: "unsolvable"
    seconds: float
    cpu_seconds: float | None
    peak_rss_bytes: int | None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # start_new_session: group id == pid
    except (ProcessLookupError, PermissionError):
        pass


def _tail(data: bytes, limit: int = 160) -> str:
    text = " ".join(data.decode("utf-8", "replace").split())
    return text if len(text) <= limit else "..." + text[-limit:]


def _describe_exit(status: int, stderr: bytes) -> str:
    if os.WIFSIGNALED(status):
        how = f"was killed by {_signal_name(os.WTERMSIG(status))}"
    else:
        how = f"exited with code {os.WEXITSTATUS(status)}"
    said = _tail(stderr)
    return f"program {how}" + (f" (stderr: {said})" if said else "")


def parse_answer(text: str) -> str | None:
    """The move string (lower case) or None for ``unsolvable``; ExternalError for
    anything else (more than one line, other characters)."""
    lines = [line.strip() for line in text.strip().splitlines()]
    if len(lines) > 1:
        raise ExternalError(
            f"printed {len(lines)} lines ({_tail(text.encode(), 80)!r}), "
            "expected one: a move string or 'unsolvable'"
        )
    answer = lines[0] if lines else ""
    if answer.lower() == "unsolvable":
        return None
    if _MOVES.fullmatch(answer):
        return answer.lower()
    shown = answer if len(answer) <= 60 else answer[:57] + "..."
    raise ExternalError(
        f"printed {shown!r}: not a move string (u d l r) or 'unsolvable'"
    )


def _spawn(
    program: Program, memory_limit_mb: int | None, *, traced: bool = False
) -> subprocess.Popen:
    try:
        process = subprocess.Popen(
            program.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: killed as a whole
            bufsize=0,
            preexec_fn=_trace_me if traced else None,
        )
    except OSError as err:
        raise ExternalError(
            f"cannot start {program.command[0]}: {err.strerror}"
        ) from None
    if memory_limit_mb:
        limit = memory_limit_mb * 1024 * 1024
        try:  # set just after the spawn: a tiny window, but no fork+preexec cost
            resource.prlimit(process.pid, resource.RLIMIT_AS, (limit, limit))
        except (OSError, ValueError, AttributeError):  # prlimit is Linux-only
            pass
    return process


def run_once(
    program: Program,
    board: Board,
    timeout: float,
    memory_limit_mb: int | None = None,
    *,
    peak: bool = False,
) -> Measured:
    """Start the program, give it ``board``, reap it: answer and rusage.
    ExternalError (outcome ``timeout`` or ``error``) when it fails.

    ``peak`` (the untimed memory pass): the program runs under ptrace, which stops
    it at its exit to read its own ``VmHWM``. ``ru_maxrss`` is not enough: Linux
    carries the high-water mark of the process that spawned it (this Python worker,
    tens of MB) across ``exec`` into it. Where ptrace is refused, ru_maxrss it is."""
    line = (format_board(board) + "\n").encode()
    traced = peak and _libc_ptrace() is not None
    t0 = time.perf_counter_ns()
    process = _spawn(program, memory_limit_mb, traced=traced)
    deadline = time.monotonic() + timeout
    out, err = bytearray(), bytearray()
    hwm: list[int] = []
    try:
        status, usage = _talk(
            process, line, out, err, deadline, timeout, hwm if traced else None
        )
    finally:
        _kill_group(process.pid)  # leftovers of a shell or a forked helper
        for pipe in (process.stdin, process.stdout, process.stderr):
            try:
                pipe.close()
            except OSError:
                pass
    t1 = time.perf_counter_ns()
    if status != 0:
        raise ExternalError(_describe_exit(status, bytes(err)))
    if len(out) > MAX_OUTPUT_CHARS:
        raise ExternalError(f"printed more than {MAX_OUTPUT_CHARS:,} characters")
    moves = parse_answer(out.decode("utf-8", "replace"))
    return Measured(
        moves,
        (t1 - t0) / 1e9,
        usage.ru_utime + usage.ru_stime,
        hwm[-1] if hwm else usage.ru_maxrss * 1024,  # KiB on Linux
    )


def _talk(process, line, out, err, deadline, timeout, hwm=None):
    """Write the input, collect output until the program exits; (status, rusage).
    Kills the process group at the deadline (ExternalError ``timeout``). With
    ``hwm`` (a list) the child is traced: its peak RSS at exit is appended."""
    pid = process.pid
    try:
        process.stdin.write(line)
    except BrokenPipeError:
        pass  # exited without reading: its exit status tells
    try:
        process.stdin.close()
    except BrokenPipeError:
        pass
    sel = selectors.DefaultSelector()
    pidfd = _pidfd(pid)
    streams = {process.stdout.fileno(): out, process.stderr.fileno(): err}
    for fd in streams:
        sel.register(fd, selectors.EVENT_READ)
    if pidfd is not None:
        sel.register(pidfd, selectors.EVENT_READ)
    reaped = None
    try:
        while reaped is None:
            left = deadline - time.monotonic()
            if left <= 0:
                _kill_group(pid)
                _reap_killed(pid)
                process.returncode = -signal.SIGKILL
                raise ExternalError(
                    f"no answer within the {timeout:g} s time limit; program killed "
                    "with its process group",
                    "timeout",
                )
            # A pidfd wakes us at exit, but not at a ptrace stop: poll then.
            poll = pidfd is not None and hwm is None
            for key, _ in sel.select(left if poll else min(left, 0.001)):
                if key.fd in streams:
                    _read(key.fd, streams[key.fd], sel)
            done_pid, status, usage = os.wait4(pid, os.WNOHANG)
            if done_pid == pid and os.WIFSTOPPED(status):
                _on_trace_stop(pid, status, hwm)
            elif done_pid == pid:
                reaped = (status, usage)
                process.returncode = os.waitstatus_to_exitcode(status)
        # The program is gone; take what is left in the pipes (a grandchild holding
        # them open is not waited for long).
        end = time.monotonic() + DRAIN_SECONDS
        while streams.keys() & {k.fd for k in sel.get_map().values()}:
            left = end - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(left):
                if key.fd in streams:
                    _read(key.fd, streams[key.fd], sel)
                elif key.fd == pidfd:
                    sel.unregister(pidfd)
    finally:
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
    return reaped


# ptrace, for the peak RSS of the memory pass (Linux x86-64 / arm64 request numbers).
_PTRACE_TRACEME, _PTRACE_CONT, _PTRACE_SETOPTIONS = 0, 7, 0x4200
_PTRACE_O_TRACEEXIT, _PTRACE_EVENT_EXIT = 0x40, 6
_PTRACE: Any = None


def _libc_ptrace() -> Any:
    """libc's ptrace, or None off Linux or where ctypes cannot find it."""
    global _PTRACE
    if _PTRACE is None:
        _PTRACE = False
        if os.uname().sysname == "Linux":
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).ptrace
                fn.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                               ctypes.c_void_p]  # fmt: skip
                fn.restype = ctypes.c_long
                _PTRACE = fn
            except (OSError, AttributeError):
                pass
    return _PTRACE or None


def _trace_me() -> None:
    """In the child before exec: be traced; it stops with SIGTRAP at the exec.
    If the kernel refuses, the child runs untraced (ru_maxrss is then used)."""
    _PTRACE(_PTRACE_TRACEME, 0, None, None)


def _on_trace_stop(pid: int, status: int, hwm: list[int] | None) -> None:
    """Handle one ptrace stop and let the child go on: at the exec, ask for a
    stop at exit; at the exit, read the peak RSS while the memory still exists;
    pass any other signal on."""
    ptrace = _libc_ptrace()
    sig, event = os.WSTOPSIG(status), status >> 16
    deliver = 0
    if event == _PTRACE_EVENT_EXIT:
        kb = _status_kb(pid, "VmHWM")
        if kb is not None and hwm is not None:
            hwm.append(kb * 1024)
    elif sig == signal.SIGTRAP and event == 0:  # the exec
        ptrace(_PTRACE_SETOPTIONS, pid, None, _PTRACE_O_TRACEEXIT)
    else:
        deliver = sig
    ptrace(_PTRACE_CONT, pid, None, deliver)


def _reap_killed(pid: int) -> None:
    """Reap a child sent SIGKILL (a traced one may stop once more on the way)."""
    while True:
        _, status, _ = os.wait4(pid, 0)
        if not os.WIFSTOPPED(status):
            return
        _libc_ptrace()(_PTRACE_CONT, pid, None, 0)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None  # then poll


def _read(fd: int, buf: bytearray, sel) -> None:
    chunk = os.read(fd, 65536)
    if not chunk:
        sel.unregister(fd)
    elif len(buf) <= MAX_OUTPUT_CHARS:
        buf.extend(chunk)


# ------------------------------------------------------------- batch process


def _cpu_ns(pid: int) -> int | None:
    """CPU time (ns) of every thread of ``pid`` so far, from ``schedstat``."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as fh:
                total += int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total


def _status_kb(pid: int, key: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


class BatchProcess:
    """A batch program kept alive between boards: one line in, one line out."""

    def __init__(self, program: Program, memory_limit_mb: int | None) -> None:
        self.program = program
        self.memory_limit_mb = memory_limit_mb
        self.process = _spawn(program, memory_limit_mb)
        self._buf = bytearray()
        os.set_blocking(self.process.stdout.fileno(), False)
        os.set_blocking(self.process.stderr.fileno(), False)
        self._err = bytearray()

    @property
    def pid(self) -> int:
        return self.process.pid

    def ask(self, board: Board, timeout: float, *, reset_peak: bool = False):
        """Send one board; (answer text, wall s, CPU s or None, peak RSS or None).
        ExternalError when the program dies or overruns (then it is killed)."""
        pid = self.process.pid
        if reset_peak:
            try:
                with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as fh:
                    fh.write("5")
            except OSError:
                pass
        line = (format_board(board) + "\n").encode()
        c0 = _cpu_ns(pid)
        t0 = time.perf_counter_ns()
        try:
            self.process.stdin.write(line)
        except BrokenPipeError:
            pass  # it died: reading sees EOF
        answer = self._read_line(time.monotonic() + timeout, timeout)
        t1 = time.perf_counter_ns()
        c1 = _cpu_ns(pid)
        cpu = (c1 - c0) / 1e9 if c0 is not None and c1 is not None else None
        hwm = _status_kb(pid, "VmHWM")
        return answer, (t1 - t0) / 1e9, cpu, hwm * 1024 if hwm is not None else None

    def _read_line(self, deadline: float, timeout: float) -> str:
        fd = self.process.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            sel.register(self.process.stderr.fileno(), selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close(kill=True)
                    raise ExternalError(
                        f"no answer within the {timeout:g} s time limit; program "
                        "killed with its process group",
                        "timeout",
                    )
                for key, _ in sel.select(left):
                    try:
                        chunk = os.read(key.fd, 65536)
                    except BlockingIOError:
                        continue
                    if key.fd != fd:
                        self._err = (self._err + chunk)[-4096:]
                        if not chunk:
                            sel.unregister(key.fd)
                        continue
                    if not chunk:  # EOF: the program is gone
                        status = self._reap()
                        raise ExternalError(
                            _describe_exit(status, bytes(self._err))
                            if status
                            else "program exited before answering"
                        )
                    self._buf.extend(chunk)
                    if len(self._buf) > MAX_OUTPUT_CHARS:
                        self.close(kill=True)
                        raise ExternalError(
                            f"printed more than {MAX_OUTPUT_CHARS:,} characters "
                            "without a newline"
                        )
        line, _, rest = bytes(self._buf).partition(b"\n")
        self._buf = bytearray(rest)
        return line.decode("utf-8", "replace")

    def _reap(self) -> int:
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            _, status, _ = os.wait4(self.process.pid, 0)
        except ChildProcessError:
            status = 0
        self.process.returncode = os.waitstatus_to_exitcode(status)
        _kill_group(self.process.pid)
        return status

    def alive(self) -> bool:
        return self.process.returncode is None and self.process.poll() is None

    def close(self, *, kill: bool = False) -> None:
        if self.process.returncode is None:
            if not kill:
                try:
                    self.process.stdin.close()
                    self.process.wait(1.0)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            _kill_group(self.process.pid)
            try:
                self.process.wait(5.0)
            except subprocess.TimeoutExpired:
                pass
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()
            except OSError:
                pass


# ------------------------------------------------------------- start-up


@dataclass(slots=True)
class Startup:
    """Cost of answering the goal board (the empty path): what every solve pays
    before searching. Batch: ``launch_seconds`` is spawn to first answer."""

    seconds: float | None = None
    cpu_seconds: float | None = None
    launch_seconds: float | None = None
    runs: int = 0
    error: str = ""

    def note(self) -> str:
        if self.error:
            return f"start-up not measured ({self.error}); no time subtracted"
        cpu = "n/a" if self.cpu_seconds is None else f"{1e3 * self.cpu_seconds:.3f} ms"
        text = (
            f"start-up on the goal board {1e3 * self.seconds:.3f} ms wall, {cpu} CPU "
            f"(median of {self.runs}), subtracted from seconds/cpu_seconds"
        )
        if self.launch_seconds is not None:
            text += f"; launch to first answer {1e3 * self.launch_seconds:.1f} ms"
        return text


#: Worker-local state: start-up per (program, size, goal), live batch processes.
_STARTUPS: dict[tuple, Startup] = {}
_BATCH: dict[tuple, BatchProcess] = {}


def _key(program: Program, g: Grid, goal: Board) -> tuple:
    return (program.name, program.command, g.rows, g.cols, goal)


def measure_startup(
    program: Program, g: Grid, goal: Board, memory_limit_mb: int | None = None
) -> Startup:
    """Median cost of the goal board over :data:`STARTUP_RUNS` solves; a program
    that fails on it gets a Startup with ``error`` (its passes then fail on their
    own, with their own status)."""
    timeout = program.budget_seconds
    walls, cpus = [], []
    launch = None
    try:
        if program.batch:
            t0 = time.perf_counter_ns()
            session = _batch(program, g, goal, memory_limit_mb, fresh=True)
            answer, *_ = session.ask(goal, timeout)
            launch = (time.perf_counter_ns() - t0) / 1e9
            _expect_empty(answer)
            for _ in range(STARTUP_RUNS):
                answer, wall, cpu, _ = session.ask(goal, timeout)
                _expect_empty(answer)
                walls.append(wall)
                cpus.append(cpu)
        else:
            for _ in range(STARTUP_RUNS):
                m = run_once(program, goal, timeout, memory_limit_mb)
                if m.moves != "":
                    raise ExternalError(f"answered {m.moves!r}, expected an empty line")
                walls.append(m.seconds)
                cpus.append(m.cpu_seconds)
    except ExternalError as err:
        return Startup(error=f"on the goal board: {err}")
    return Startup(
        seconds=statistics.median(walls),
        cpu_seconds=None if None in cpus else statistics.median(cpus),
        launch_seconds=launch,
        runs=len(walls),
    )


def _expect_empty(answer: str) -> None:
    if parse_answer(answer) != "":
        raise ExternalError(f"answered {answer.strip()!r}, expected an empty line")


def _batch(
    program: Program,
    g: Grid,
    goal: Board,
    memory_limit_mb: int | None,
    *,
    fresh: bool = False,
) -> BatchProcess:
    """The live batch process for this size and goal, started if needed."""
    key = _key(program, g, goal)
    session = _BATCH.get(key)
    if session is not None and (
        fresh or not session.alive() or session.memory_limit_mb != memory_limit_mb
    ):  # (the start-up was measured in a process started without the pass's limit)
        session.close(kill=True)
        session = None
    if session is None:
        session = BatchProcess(program, memory_limit_mb)
        _BATCH[key] = session
        if not fresh:  # a restart after a failure: warm it like the first start
            answer, *_ = session.ask(goal, program.budget_seconds)
            _expect_empty(answer)
    return session


def _make_prepare(program: Program):
    def prepare(g: Grid, goal: Board, heuristic: Any) -> str:
        startup = measure_startup(program, g, goal)
        _STARTUPS[_key(program, g, goal)] = startup
        return startup.note()

    return prepare


def _make_solve(program: Program):
    """An in-process solve for ``harness solve``: one process per board (a batch
    program answers a one-line input too). Raises ExternalError on failure."""

    def solve(start, goal, g, *, counters, heuristic):
        reason = program.refuses_goal(goal, g)
        if reason:
            raise ExternalError(reason)
        return run_once(program, start, program.budget_seconds).moves

    solve.__module__ = __name__
    solve.__qualname__ = f"external:{program.name}"
    return solve


# ------------------------------------------------------------- worker passes


@dataclass(slots=True)
class PassResult:
    """What a pass hands back to the worker (turned into its Attempt there)."""

    outcome: str  # returned | timeout | error
    moves: str | None = None
    seconds: float | None = None
    cpu_seconds: float | None = None
    raw_seconds: float | None = None
    raw_cpu_seconds: float | None = None
    peak_rss_bytes: int | None = None
    message: str = ""
    extra: dict = field(default_factory=dict)


def run_pass(
    program: Program,
    g: Grid,
    start: Board,
    goal: Board,
    *,
    measure: str,
    timeout: float,
    memory_limit_mb: int | None,
) -> PassResult:
    """One timed or memory pass of ``program`` on ``start``."""
    reason = program.refuses_goal(goal, g)
    if reason:
        return PassResult("error", message=reason)
    key = _key(program, g, goal)
    startup = _STARTUPS.get(key)
    if startup is None:  # no prepare ran (a caller outside the worker)
        startup = _STARTUPS[key] = measure_startup(program, g, goal)
    try:
        if program.batch:
            session = _batch(program, g, goal, memory_limit_mb)
            answer, wall, cpu, rss = session.ask(
                start, timeout, reset_peak=measure == "memory"
            )
            moves = parse_answer(answer)
        else:
            m = run_once(
                program, start, timeout, memory_limit_mb, peak=measure == "memory"
            )
            moves, wall, cpu, rss = m.moves, m.seconds, m.cpu_seconds, m.peak_rss_bytes
    except ExternalError as err:
        return PassResult(err.outcome, message=str(err))
    out = PassResult("returned", moves=moves, raw_seconds=wall, raw_cpu_seconds=cpu)
    if measure == "memory":
        out.peak_rss_bytes = rss
    if startup.seconds is not None:
        # Noise can make a tiny solve cheaper than the goal board: floor it, so
        # ratios and log axes still work (the raw time is kept beside it).
        out.seconds = max(FLOOR_SECONDS, wall - startup.seconds)
    if startup.cpu_seconds is not None and cpu is not None:
        out.cpu_seconds = max(FLOOR_SECONDS, cpu - startup.cpu_seconds)
    return out


def kill_program_groups(worker_pid: int) -> int:
    """Kill the process group of every program a worker started (its children
    that lead their own session), before the worker itself is killed: a program
    runs in its own session, so it would outlive a killed worker. Linux ``/proc``;
    returns how many groups were killed."""
    killed = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after "pid (comm)": state ppid pgrp session ...
        ppid, session = int(fields[1]), int(fields[3])
        if ppid == worker_pid and session == int(entry):
            _kill_group(int(entry))
            killed += 1
    return killed


def close_all() -> None:
    """Stop every live batch process (worker shutdown, tests)."""
    for session in _BATCH.values():
        session.close()
    _BATCH.clear()
    _STARTUPS.clear()


# ------------------------------------------------------------- reporting


def report_sentence(meta: dict) -> list[str]:
    """What the report says about a run's external programs: which time it plots."""
    names = sorted(
        label
        for label, info in (meta.get("solvers") or {}).items()
        if isinstance(info, dict) and info.get("external")
    )
    if not names:
        return []
    return [
        f"{', '.join(names)} "
        f"{'is an external program' if len(names) == 1 else 'are external programs'}"
        ": the times shown and plotted for "
        f"{'it' if len(names) == 1 else 'them'} are start-up-subtracted (the cost of "
        "answering the goal board, in the set-up notes, taken off each solve and "
        "floored at 1 us); the "
        "raw times are in rows.csv's raw_seconds and raw_cpu_seconds. Programs "
        "report no counters; their peak RSS is the program's own VmHWM (read at its "
        "exit under ptrace, or ru_maxrss where ptrace is refused)."
    ]
