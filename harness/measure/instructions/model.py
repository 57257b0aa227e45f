"""What a count is: :class:`Count`, one cell's instructions per solve with the
counters and answer of a counted solve, and the constants both sides share.

Standard library only (the counting child imports it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: A count's solves may take this many times the cell's time limit: under
#: callgrind's instrumentation a solve runs ~20-100x slower than natively.
COUNT_TIMEOUT_FACTOR = 50.0
#: A counted solve shorter than this many instructions is counted again as a loop
#: of solves adding up to about this many (first-call effects divide away; a
#: ~40 us compiled solve is ~200,000 instructions); a longer one is the figure.
LOOP_TARGET = 10_000_000
#: At most this many solves in the counted loop.
MAX_LOOPS = 100
#: Set to "1" in a counting process's environment: count even on kernels it
#: compiled itself (its predecessors' compiles did not reach numba's cache).
COMPILED_OK = "NPUZZLE_COUNT_COMPILED_OK"
#: Fresh counting processes a config gets because its kernels were compiled,
#: not loaded from numba's cache (the next one loads them; then COMPILED_OK).
MAX_RESTARTS = 2


@dataclass(slots=True)
class Count:
    """One cell's count. ``outcome``: returned | timeout | error; ``instructions``
    per solve (the loop's count over ``loops``), None when not counted."""

    task: int  # Task.id
    outcome: str
    instructions: int | None = None
    loops: int = 0
    counters: dict[str, Any] | None = None
    moves: str | None = None
    moves_type: str = ""
    message: str = ""
    #: a solve of the count that counted or answered differently, if any
    check_counters: dict[str, Any] | None = None
    check_moves: str | None = None
