"""Running an external program: one process per board (``wait4``'s rusage; the
memory pass under ptrace for the program's own peak RSS), or a batch process kept
alive between boards (CPU time from ``schedstat``, peak RSS from ``VmHWM``).

Standard library only (workers import this module).
"""

from __future__ import annotations

import os
import re
import resource
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass

from harness.measure.external.programs import ExternalError, Program
from harness.measure.probes import (
    become_subreaper,
    children_with_sessions,
    cpu_ns,
    libc_ptrace,
    on_trace_stop,
    reap_killed,
    reset_peak_rss,
    status_kb,
    trace_me,
)
from harness.puzzle import Board, format_board

#: Output beyond this many characters is dropped (a runaway program).
MAX_OUTPUT_CHARS = 1_000_000
#: After the program exits, how long to wait for its pipes to close (grandchildren).
DRAIN_SECONDS = 0.2
#: A batch program whose output closed has this long to exit (and say why) before
#: it is killed: it can no longer answer.
EOF_GRACE_SECONDS = 1.0
_MOVES = re.compile(r"[udlrUDLR]*")


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


#: Whether this process is its programs' subreaper (set by :func:`adopt_orphans`,
#: which a measuring worker calls at start and a program's spawn calls anyway).
SUBREAPER = False
#: pids of this process's live batch programs (never leftovers)
_LIVE: set[int] = set()


def adopt_orphans() -> None:
    """Make this process the subreaper of its programs' descendants (Linux), so
    that :func:`end_leftovers` can end what they leave; once per process."""
    global SUBREAPER
    if not SUBREAPER:
        SUBREAPER = become_subreaper()


def other_sessions() -> frozenset[int]:
    """This process's children in sessions other than its own, now: what is not a
    program's leftover (a Dask cluster a test started, the pools of a harness
    embedded in another program). Empty unless SUBREAPER."""
    if not SUBREAPER:
        return frozenset()
    mine = os.getsid(0)
    return frozenset(p for p, sid in children_with_sessions() if sid != mine)


def end_leftovers(spared: frozenset[int] = frozenset()) -> int:
    """Kill and reap this process's children in sessions other than its own,
    except live batch programs and ``spared`` (:func:`other_sessions` taken before
    the program started): what a program's children left running after a
    ``setsid`` (the process-group kill misses them; as their subreaper, this
    process inherits them when their parents die). Returns how many; 0 unless
    SUBREAPER."""
    if not SUBREAPER:
        return 0
    mine, ended = os.getsid(0), 0
    for _ in range(16):  # each round may orphan a deeper generation
        left = [p for p, sid in children_with_sessions()
                if sid != mine and p not in _LIVE and p not in spared]  # fmt: skip
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in left:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        ended += len(left)
    return ended


def kill_group(pid: int) -> None:
    """Kill the process group ``pid`` leads (a program started by ``setsid``)."""
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
            preexec_fn=trace_me if traced else None,
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
    traced = peak and libc_ptrace() is not None
    adopt_orphans()
    spared = other_sessions()
    t0 = time.perf_counter_ns()
    process = _spawn(program, memory_limit_mb, traced=traced)
    deadline = time.monotonic() + timeout
    out, err = bytearray(), bytearray()
    hwm: list[int] = []
    try:
        try:
            status, usage = _talk(
                process, line, out, err, deadline, timeout, hwm if traced else None
            )
        finally:
            kill_group(process.pid)  # leftovers of a shell or a forked helper
            for pipe in (process.stdin, process.stdout, process.stderr):
                try:
                    pipe.close()
                except OSError:
                    pass
        t1 = time.perf_counter_ns()
    finally:
        # After the clock, and after a timeout or an error too: those that left
        # the group by setsid (a timeout skipped this and left sleepers to init).
        end_leftovers(spared)
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
                kill_group(pid)
                reap_killed(pid)
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
                on_trace_stop(pid, status, hwm)
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


class BatchProcess:
    """A batch program kept alive between boards: one line in, one line out."""

    def __init__(self, program: Program, memory_limit_mb: int | None) -> None:
        self.program = program
        self.memory_limit_mb = memory_limit_mb
        adopt_orphans()
        self._spared = other_sessions()
        self.process = _spawn(program, memory_limit_mb)
        _LIVE.add(self.process.pid)
        self._buf = bytearray()
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            os.set_blocking(pipe.fileno(), False)
        self._err = bytearray()

    @property
    def pid(self) -> int:
        return self.process.pid

    def ask(self, board: Board, timeout: float, *, reset_peak: bool = False):
        """Send one board; (answer text, wall s, CPU s or None, peak RSS or None).
        ExternalError when the program dies or overruns (then it is killed)."""
        pid = self.process.pid
        if reset_peak:
            reset_peak_rss(pid)
        [answer], wall, cpu = self.ask_many(board, 1, timeout)
        hwm = status_kb("VmHWM", pid)
        return answer, wall, cpu, hwm * 1024 if hwm is not None else None

    def ask_many(
        self, board: Board, loops: int, timeout: float
    ) -> tuple[list[str], float, float | None]:
        """Send ``loops`` lines of one board back to back (written as the program
        reads them) and read as many answers: (answers, wall s, CPU s or None) per
        line, a calibrated sample of the program's own loop. ``timeout`` bounds
        the whole exchange. ExternalError as :meth:`ask`."""
        pid = self.process.pid
        data = (format_board(board) + "\n").encode() * loops
        c0 = cpu_ns(pid)
        t0 = time.perf_counter_ns()
        answers = self._exchange(data, loops, time.monotonic() + timeout, timeout)
        t1 = time.perf_counter_ns()
        c1 = cpu_ns(pid)
        cpu = (c1 - c0) / 1e9 / loops if c0 is not None and c1 is not None else None
        return answers, (t1 - t0) / 1e9 / loops, cpu

    def _exchange(
        self, data: bytes, lines: int, deadline: float, timeout: float
    ) -> list[str]:
        """Write ``data`` while reading, until ``lines`` answer lines are in: a
        program's answers fill its pipe if nobody reads them, so writing all the
        input first could deadlock on a long loop."""
        out_fd = self.process.stdout.fileno()
        in_fd = self.process.stdin.fileno()
        err_fd = self.process.stderr.fileno()
        answers: list[str] = []
        sent = 0
        with selectors.DefaultSelector() as sel:
            sel.register(out_fd, selectors.EVENT_READ)
            sel.register(err_fd, selectors.EVENT_READ)
            if data:
                sel.register(in_fd, selectors.EVENT_WRITE)
            while True:
                while len(answers) < lines and b"\n" in self._buf:
                    line, _, rest = bytes(self._buf).partition(b"\n")
                    self._buf = bytearray(rest)
                    answers.append(line.decode("utf-8", "replace"))
                if len(answers) == lines:
                    if sent < len(data):
                        sel.unregister(in_fd)
                    return answers
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close(kill=True)
                    raise ExternalError(
                        f"no answer within the {timeout:g} s time limit; program "
                        "killed with its process group",
                        "timeout",
                    )
                for key, _ in sel.select(left):
                    if key.fd == in_fd:
                        try:
                            sent += os.write(in_fd, data[sent : sent + 65536])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            sent = len(data)  # it died: reading sees EOF
                        if sent >= len(data):
                            sel.unregister(in_fd)
                        continue
                    try:
                        chunk = os.read(key.fd, 65536)
                    except BlockingIOError:
                        continue
                    if key.fd == err_fd:
                        self._err = (self._err + chunk)[-4096:]
                        if not chunk:
                            sel.unregister(key.fd)
                        continue
                    if not chunk:  # EOF: it exited, or closed its output
                        status = self._reap(min(max(left, 0.0), EOF_GRACE_SECONDS))
                        if status is None:
                            raise ExternalError(
                                "closed its standard output without answering and "
                                "kept running; program killed with its process group"
                            )
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

    def _reap(self, grace: float) -> int | None:
        """The exit status once the program exits, within ``grace`` seconds; None
        if it lives on (its output closed): then its group is killed. A wait
        without a deadline blocked the worker as long as such a program slept."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        pid, end = self.process.pid, time.monotonic() + grace
        status: int | None = None
        while status is None:
            try:
                done, raw, _ = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                done, raw = pid, 0
            if done == pid:
                status = raw
            elif time.monotonic() >= end:
                break
            else:
                time.sleep(0.01)
        kill_group(pid)
        if status is None:
            try:
                os.waitpid(pid, 0)  # it was sent SIGKILL
            except ChildProcessError:
                pass
            self.process.returncode = -signal.SIGKILL
        else:
            self.process.returncode = os.waitstatus_to_exitcode(status)
        _LIVE.discard(pid)
        end_leftovers(self._spared)
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
            kill_group(self.process.pid)
            try:
                self.process.wait(5.0)
            except subprocess.TimeoutExpired:
                pass
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()
            except OSError:
                pass
        _LIVE.discard(self.process.pid)
        end_leftovers(self._spared)


