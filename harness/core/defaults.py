"""Defaults, defined once: the library, the worker and the CLI options refer here.

Standard library only (workers import it)."""

from __future__ import annotations

from pathlib import Path

#: A solver's time limit per solve unless it registers its own ``budget_seconds``.
BUDGET_SECONDS = 60.0
#: Seconds allowed for one solver set-up in a worker (tables, compilation).
SETUP_TIMEOUT = 600.0
#: Where runs are stored and looked up, relative to the working directory.
RESULTS_DIR = Path("results")
#: Timed repeats per cell, each one sample of `loops` solves (with the adaptive stop:
#: at most).
REPEATS = 3
#: Adaptive stop: a cell stops repeating once the repeats left could not move its
#: median by more than this factor (harness.measure.stopping); 0: all repeats.
ADAPTIVE = 0.04
#: MB of address space one solve may add to its worker (0: no limit).
MEMORY_LIMIT_MB = 4096
#: A timed sample is this many seconds of CPU at least: a solve faster than that is
#: timed as a loop of k back-to-back solves of the same board (k found in the
#: warm-up, pyperf/timeit style) and recorded as the sample over k. A 20 us solve
#: timed once, after the harness's own bookkeeping, read 125-170 us (cold caches);
#: 0: one solve per sample.
MIN_SAMPLE_SECONDS = 0.001
#: ... and at most this (a repeat is a few samples).
MAX_MIN_SAMPLE_SECONDS = 10.0
#: Untimed solves per cell before the timed repeats: without one, repeat 0 ran 4-10%
#: slower than the rest in every run (first-touch page faults, caches).
WARMUP = 1
#: ``harness compare`` / ``history`` / ``report OLD NEW``: a config's time ratio must
#: reach this (and be significant) to count as a regression, on normalized times
#: (each repeat divided by the reference solve beside it); see docs/benchmarks.md
#: for the A/A figures behind it. The docs state it (tests/test_readme.py checks).
MIN_RATIO = 1.10
#: ... and on raw CPU time (a run without the reference): on a shared 2-core
#: machine 95% of identical pairs stayed within 1.52-1.78x per config.
MIN_RATIO_RAW = 1.80
