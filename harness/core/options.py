"""The run options, each declared once (:data:`OPTIONS`).

An :class:`Option` gives an option's one name (the Python keyword of
``harness.run()``, the experiment file's key, the meta.json key and the field of
the plan and the worker's task), its command-line flag, type, default, range
check and help text, and whether a resumed run inherits it from its meta.json.
The command line, ``harness.run()``, experiment files, meta.json, resume (which
re-checks every stored value as the command line checks it) and the worker's
task derive from this table; a renamed option is a meta.json migration step
(harness.results.runmeta), never a second spelling.

Standard library only (workers and the stored-run readers import it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import MISSING, dataclass, field, make_dataclass
from typing import Any

from harness.core import defaults
from harness.core.machine import core_count
from harness.core.numbers import (
    NumberError,
    parse_float,
    parse_int,
    take_float,
    take_int,
)

#: Upper bounds of --timeout / --setup-timeout (seconds) and --memory-limit (MB).
#: Larger values overflow the alarm, the parent's poll or RLIMIT_AS somewhere
#: below us; a day per solve and 1 TiB are far beyond any benchmark here.
MAX_SECONDS = 86_400.0
MAX_MEMORY_LIMIT_MB = 1_048_576
#: Upper bound of --repeats and --warmup: every pass of every cell is planned up
#: front (a billion repeats grew the parent to 1 GB in 15 s, silently); pyperf
#: takes 20 values by default and 60 when rigorous, so 1,000 leaves room.
MAX_REPEATS = 1_000
MAX_WARMUP = 100
#: Worker processes per core this process may use, at most: beyond one per core
#: workers wait for a core (their wall times with them), and each takes ~70 MB.
MAX_JOBS_PER_CORE = 4
#: Order seeds are int64 (random.Random takes any int; meta.json's readers and
#: pandas keep whole numbers within int64).
MIN_SEED, MAX_SEED = -(2**63), 2**63 - 1

Check = Callable[[Any], "str | None"]


# ------------------------------------------------------------------ checks


def whole(low: int, high: int, words: str) -> Check:
    """A whole number from ``low`` to ``high`` (a JSON or TOML integer: not a
    bool, not a float); ``words`` say the range."""

    def check(value: Any) -> str | None:
        try:
            take_int(value, "", minimum=low, maximum=high)
        except NumberError as err:
            kind = err.problem == "is not a whole number"
            return "must be a whole number" if kind else f"must be {words}"
        return None

    return check


def number(ok: Callable[[float], bool], words: str) -> Check:
    """A finite number (not a bool) for which ``ok`` holds; ``words`` say which."""

    def check(value: Any) -> str | None:
        try:
            return None if ok(take_float(value, "")) else f"must be {words}"
        except NumberError:
            return f"must be {words}"

    return check


def true_or_false(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def texts(value: Any) -> str | None:
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return None
    return "must be a list of text"


def _jobs(value: Any) -> str | None:
    cores = core_count()
    problem = whole(0, MAX_JOBS_PER_CORE * cores, "")(value)
    if problem in (None, "must be a whole number"):
        return problem
    return (
        f"must be 0 to {MAX_JOBS_PER_CORE * cores} here ({MAX_JOBS_PER_CORE} per "
        f"core of the {cores} this process may use): more workers only wait "
        "for a core, and each takes ~70 MB"
    )


def _pairs(value: Any) -> str | None:
    pair = lambda p: (  # noqa: E731
        isinstance(p, list | tuple) and len(p) == 2 and all(isinstance(x, str) for x in p)
    )
    if isinstance(value, list | tuple | set) and all(pair(p) for p in value):
        return None
    return "must be a list of [config, dataset] pairs"


_SECONDS = "more than 0 and at most 86,400 seconds (a day)"


# ------------------------------------------------------------------ the table


@dataclass(frozen=True, slots=True)
class Option:
    """One run option, declared once (see the module docstring).

    ``name``: Python keyword, experiment-file key, meta.json key, plan and task
    field. ``flag``: how ``harness run`` spells it ("" : not on the command
    line). ``check``: None, or the one-line problem of a value (what follows
    ``--flag VALUE:``). ``none``: what None means ("" : None is not a value).
    ``stored_none``: meta.json may hold null for it (a run's None is stored as
    it is; an order seed or a pair list is always chosen when a run begins).
    ``inherited``: a resumed run takes it from its meta.json (giving it again
    is an error). ``in_task``: the worker's task carries it. ``in_file``: an
    experiment file may set it. ``parse``: its type, for a number the
    :mod:`harness.core.numbers` parser of its text (``parse_int`` or
    ``parse_float``; None: not a number). ``off``: the value of the flag's
    ``--no-`` half (``--adaptive/--no-adaptive``). ``metavar``: the command
    line's name of its value (default: from ``parse``)."""

    name: str
    flag: str
    default: Any
    check: Check
    help: str
    none: str = ""
    stored_none: bool = False
    inherited: bool = True
    in_task: bool = False
    in_file: bool = True
    parse: Callable[..., Any] | None = None
    off: Any = None
    metavar: str = ""

    def problem(self, value: Any) -> str | None:
        """Why ``value`` cannot be this option's (None: it can)."""
        if value is None:
            return None if self.none else self.check(value) or "must be given"
        return self.check(value)

    @property
    def spelled(self) -> str:
        """How an error names it on the command line (the flag, else the name)."""
        return self.flag or self.name

    @property
    def kind(self) -> str:
        """The type of its meta.json value as the stored-run readers name it
        (:data:`harness.results.store.OPTION_TYPES`): "whole number", "number",
        "bool", "list of text" or "list", "or null" where None is a value."""
        if self.parse is not None:
            base = "whole number" if self.parse is parse_int else "number"
        elif isinstance(self.default, bool):
            base = "bool"
        else:  # a list: of text (plugins), or of [config, dataset] pairs
            base = "list of text" if self.check is texts else "list"
        return base + (" or null" if self.none or self.stored_none else "")

    def read(self, text: str) -> Any:
        """The value of ``text`` typed after the flag, read by the one number
        parser (ASCII digits, no ``_``, finite, int64): NumberError naming the
        flag and the text otherwise. The range is :meth:`problem`'s."""
        assert self.parse is not None, f"{self.name} is not a number"
        return self.parse(text, self.spelled)


OPTIONS: tuple[Option, ...] = (
    Option("plugins", "--plugin", (), texts,
           "Load solvers from a module or .py file (repeatable). Nothing else "
           "outside the harness is loaded."),
    Option("repeats", "--repeats", defaults.REPEATS,
           whole(1, MAX_REPEATS, f"a whole number from 1 to {MAX_REPEATS:,}"),
           "Timed repeats per cell, at most (each one sample); counters must "
           "agree.",
           parse=parse_int),
    Option("timeout", "--timeout", None,
           number(lambda v: 0 < v <= MAX_SECONDS, _SECONDS),
           "Seconds per solve, for every solver (at most 86400).",
           none="each solver's own budget", stored_none=True,
           parse=parse_float, metavar="SECONDS"),
    Option("memory_limit_mb", "--memory-limit", defaults.MEMORY_LIMIT_MB,
           whole(0, MAX_MEMORY_LIMIT_MB, f"0 (no limit) to {MAX_MEMORY_LIMIT_MB:,} MB"),
           "MB of address space one solve may add to its worker (0: no limit).",
           none="no limit", stored_none=True, in_task=True,
           parse=parse_int),
    Option("memory_pass", "--no-memory", True, true_or_false,
           "Skip the untimed memory pass."),
    Option("instructions", "--instructions", False, true_or_false,
           "Also count instructions per solve under valgrind's callgrind (the "
           "rows' instructions column): a phase before the timed cells, one "
           "process per config, a loop of solves counted and divided; no time is "
           "taken under valgrind. Deterministic where time drifts, but blind to "
           "cache misses and branch mispredictions. Costs seconds of start-up per "
           "config. Needs valgrind and a C compiler."),
    Option("gc", "--gc", False, true_or_false,
           "Leave the garbage collector on during timed solves.", in_task=True),
    Option("setup_timeout", "--setup-timeout", defaults.SETUP_TIMEOUT,
           number(lambda v: 0 < v <= MAX_SECONDS, _SECONDS),
           "Seconds allowed for one solver set-up (tables, compilation).",
           in_task=True,
           parse=parse_float, metavar="SECONDS"),
    Option("warmup", "--warmup", defaults.WARMUP,
           whole(0, MAX_WARMUP, f"a whole number from 0 to {MAX_WARMUP:,}"),
           "Untimed solves per cell before the timed repeats (without one, "
           "repeat 0 ran 4-10% slower: first-touch page faults).",
           parse=parse_int),
    Option("order_seed", "--order-seed", None,
           whole(MIN_SEED, MAX_SEED, "a whole number within int64"),
           "Seed of the interleaved order (instance by instance, configs rotated "
           "per instance); default a fresh one, recorded in meta.json.",
           none="a fresh one", in_file=False,
           parse=parse_int),
    Option("adaptive", "--adaptive/--no-adaptive", defaults.ADAPTIVE,
           number(lambda v: 0 <= v < 1, "0 (off) to under 1"),
           "Stop a cell's timed repeats once the ones left could not move its "
           "median (wall, CPU and normalised time) by more than "
           f"{defaults.ADAPTIVE:.0%}: a stable cell takes 2 of 3. --no-adaptive "
           "takes all --repeats. The rows say how many were taken and why.",
           in_task=True, in_file=False,
           parse=parse_float, off=0.0),
    Option("min_sample_seconds", "--min-sample-time", defaults.MIN_SAMPLE_SECONDS,
           number(lambda v: 0 <= v <= defaults.MAX_MIN_SAMPLE_SECONDS,
                  f"0 (one solve per sample) to "
                  f"{defaults.MAX_MIN_SAMPLE_SECONDS:g} seconds"),
           "Each timed repeat is one sample of at least this much CPU time: a "
           "faster solve is timed as a loop of k back-to-back solves of the same "
           "board (k found in the warm-up; the rows' loops column) right after k "
           "untimed warm solves, and recorded as the sample over k. Batch external"
           " programs get k lines of the board the same way; the start-up (the "
           "goal board's line: reading, parsing, printing) is subtracted, so their"
           " time is the search alone, where an in-process solver's includes its "
           "Python entry (for the compiled ones the solvability check, array "
           "conversion and move string: about 2-15 us a call). One-process-per-"
           "board programs are timed one cold process per solve. The cell's first "
           "solve is kept apart (first_cpu_seconds: cold, single-shot). 0: one "
           "solve per sample.", in_task=True,
           parse=parse_float, metavar="SECONDS"),
    Option("reference", "", True, true_or_false,
           "Time a reference solve after every timed repeat, on the same core.",
           in_task=True, in_file=False),
    Option("pin", "", True, true_or_false, "Pin worker i to core i.", in_file=False),
    Option("interleave", "", True, true_or_false,
           "Run instance by instance, every config on it in one worker.",
           in_file=False),
    Option("pairs", "", None, _pairs,
           "Only these (config label, dataset name) pairs (an experiment's grid).",
           none="every config on every dataset", in_file=False),
    Option("jobs", "--jobs", None, _jobs,
           "Worker processes, worker i pinned to core i. Each core drifts on "
           "its own, but every timed repeat is followed by a reference solve on "
           "the same core and harness compare divides by it, so comparisons hold "
           "with one worker per core (A/A rates in docs/benchmarks.md); 0 runs in "
           "this process without isolation (debugging).", none="CPU cores",
           inherited=False,
           parse=parse_int),
)  # fmt: skip

BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
#: What a resumed run takes from its meta.json.
INHERITED = tuple(o for o in OPTIONS if o.inherited)
#: What the worker's task carries.
IN_TASK = tuple(o for o in OPTIONS if o.in_task)


def option_fields(
    class_name: str, options: Iterable[Option], *, default: Any = MISSING, doc: str
) -> type:
    """A dataclass whose fields are ``options`` (keyword-only, under their one
    names; ``default`` for all, or none: every one must be given), the base of
    a class that carries them: ``session.RunOptions`` (each None: not given)
    and ``plan.Plan`` (each resolved). Adding an option to the table adds the
    field to both."""
    types = {"whole number": "int", "number": "float", "bool": "bool"}
    fields = [
        (o.name, types.get(o.kind.removesuffix(" or null"), "Any"),
         field(default=default, kw_only=True))
        for o in options
    ]  # fmt: skip
    return make_dataclass(class_name, fields, slots=True, namespace={"__doc__": doc})


def option_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be the option ``name``'s (None: it can); one place
    for the command line, the API, experiment files and resumed runs."""
    return BY_NAME[name].problem(value)


def stored_problem(options: dict[str, Any], where: str) -> str | None:
    """The first inherited option of a stored run's meta.json ``options`` that
    the command line would refuse, as one line naming ``where`` (the file) and
    the field; None when every stored value is one a run could have."""
    for option in INHERITED:
        if option.name not in options:
            continue
        value = options[option.name]
        if value is None and not option.stored_none:
            problem = option.check(value) or "must be given"
        else:
            problem = option.problem(value)
        if problem:
            shown = repr(value) if isinstance(value, str) else _json(value)
            return f"{where}: options.{option.name} = {shown}: {problem}"
    return None


def _json(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."
