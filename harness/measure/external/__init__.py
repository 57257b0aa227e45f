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

The package: :mod:`~harness.measure.external.programs` (declaring, shipping to other
machines), :mod:`~harness.measure.external.process` (one process per board, batch
processes), :mod:`~harness.measure.external.passes` (registering, start-up, the
worker's passes, reporting). Their public names are re-exported here.

Standard library only (workers import this package).
"""

from harness.measure.external.passes import (
    FLOOR_SECONDS,
    STARTUP_RUNS,
    PassResult,
    Startup,
    close_all,
    kill_program_groups,
    load_plugin,
    load_target,
    measure_startup,
    register_program,
    report_sentence,
    run_pass,
    worker_pass,
)
from harness.measure.external.process import (
    DRAIN_SECONDS,
    MAX_OUTPUT_CHARS,
    BatchProcess,
    Measured,
    kill_group,
    parse_answer,
    run_once,
)
from harness.measure.external.programs import (
    EXEC_PREFIX,
    ExternalError,
    Program,
    file_sha256,
    load_toml,
    make_program,
    missing_here,
    needed_files,
    parse_exec,
    programs_of,
    toml_text,
)

__all__ = [
    "BatchProcess",
    "DRAIN_SECONDS",
    "EXEC_PREFIX",
    "ExternalError",
    "FLOOR_SECONDS",
    "MAX_OUTPUT_CHARS",
    "Measured",
    "PassResult",
    "Program",
    "STARTUP_RUNS",
    "Startup",
    "close_all",
    "file_sha256",
    "kill_group",
    "kill_program_groups",
    "load_plugin",
    "load_target",
    "load_toml",
    "make_program",
    "measure_startup",
    "missing_here",
    "needed_files",
    "parse_answer",
    "parse_exec",
    "programs_of",
    "register_program",
    "report_sentence",
    "run_once",
    "run_pass",
    "toml_text",
    "worker_pass",
]
