"""What the measuring side reads from the operating system: ``/proc`` (resident
set, its peak, CPU time per thread, child processes) and the C library (heap trim,
parent-death signal, ptrace). Linux first; elsewhere every probe answers None or
does nothing, and the callers fall back (``ru_maxrss``, no trace).

Standard library only (workers import this module).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from typing import Any

# ------------------------------------------------------------------- /proc


def status_kb(key: str, pid: int | str = "self") -> int | None:
    """A ``kB`` field of ``/proc/<pid>/status`` (VmRSS, VmHWM, VmSize...), or None."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_peak_rss(pid: int | str = "self") -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) to the current RSS; False if the
    kernel does not allow it (then ru_maxrss, a lifetime peak, is the fallback)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_bytes(reset_ok: bool) -> int | None:
    """This process's peak RSS: VmHWM after a successful reset, else ru_maxrss."""
    if reset_ok:
        kb = status_kb("VmHWM")
        if kb is not None:
            return kb * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cpu_ns(pid: int) -> int | None:
    """CPU time (ns) of every thread of ``pid`` so far, from ``schedstat``."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as fh:
                total += int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total


def group_leaders_of(parent: int) -> list[int]:
    """The children of ``parent`` that lead a process group of their own (a program
    started by ``setsid``, ``start_new_session``), from ``/proc/<pid>/stat``; []
    without /proc."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
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
        if ppid == parent and session == int(entry):
            found.append(int(entry))
    return found


def children_with_sessions() -> list[tuple[int, int]]:
    """(pid, session id) of this process's children (Linux
    ``/proc/self/task/*/children``); [] where that is not readable."""
    found = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as fh:
                pids = [int(p) for p in fh.read().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                    found.append((pid, int(f.read().rsplit(")", 1)[1].split()[3])))
            except (OSError, IndexError, ValueError):
                continue
    return found


def become_subreaper() -> bool:
    """Linux: descendants orphaned below this process are reparented to it, not to
    init (``PR_SET_CHILD_SUBREAPER``), so what a program's children leave in
    process groups of their own (``setsid``) can still be found and ended. True if
    set."""
    c = libc()
    if c is None or not sys.platform.startswith("linux"):
        return False
    return c.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER


def pin_to_core(cpu: int | None) -> int | None:
    """Pin this process to one core (Linux); the core, or None if not pinned."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return None
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return None
    return cpu


# ------------------------------------------------------------------- libc

_LIBC: Any = None


def libc() -> Any:
    """The C library already linked into this interpreter (None if unavailable)."""
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _LIBC = False
    return _LIBC or None


def trim_heap() -> None:
    """Hand freed heap back to the OS so the next pass's RSS starts from live data."""
    c = libc()
    if c is not None and hasattr(c, "malloc_trim"):
        c.malloc_trim(0)


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies (a killed harness leaves no
    orphan solving on)."""
    c = libc()
    if c is not None and sys.platform.startswith("linux"):
        c.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


# ptrace, for the peak RSS of a program's memory pass (Linux x86-64 / arm64
# request numbers).
_PTRACE_TRACEME, _PTRACE_CONT, _PTRACE_SETOPTIONS = 0, 7, 0x4200
_PTRACE_O_TRACEEXIT, _PTRACE_EVENT_EXIT = 0x40, 6
_PTRACE: Any = None


def libc_ptrace() -> Any:
    """libc's ptrace, or None off Linux or where ctypes cannot find it."""
    global _PTRACE
    if _PTRACE is None:
        _PTRACE = False
        if os.uname().sysname == "Linux":
            try:
                fn = ctypes.CDLL(None, use_errno=True).ptrace
                fn.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                               ctypes.c_void_p]  # fmt: skip
                fn.restype = ctypes.c_long
                _PTRACE = fn
            except (OSError, AttributeError):
                pass
    return _PTRACE or None


def trace_me() -> None:
    """In the child before exec: be traced; it stops with SIGTRAP at the exec.
    If the kernel refuses, the child runs untraced (ru_maxrss is then used)."""
    _PTRACE(_PTRACE_TRACEME, 0, None, None)


def on_trace_stop(pid: int, status: int, hwm: list[int] | None) -> None:
    """Handle one ptrace stop and let the child go on: at the exec, ask for a
    stop at exit; at the exit, read the peak RSS while the memory still exists;
    pass any other signal on."""
    ptrace = libc_ptrace()
    sig, event = os.WSTOPSIG(status), status >> 16
    deliver = 0
    if event == _PTRACE_EVENT_EXIT:
        kb = status_kb("VmHWM", pid)
        if kb is not None and hwm is not None:
            hwm.append(kb * 1024)
    elif sig == signal.SIGTRAP and event == 0:  # the exec
        ptrace(_PTRACE_SETOPTIONS, pid, None, _PTRACE_O_TRACEEXIT)
    else:
        deliver = sig
    ptrace(_PTRACE_CONT, pid, None, deliver)


def reap_killed(pid: int) -> None:
    """Reap a child sent SIGKILL (a traced one may stop once more on the way)."""
    while True:
        _, status, _ = os.wait4(pid, 0)
        if not os.WIFSTOPPED(status):
            return
        libc_ptrace()(_PTRACE_CONT, pid, None, 0)
