"""How a measuring worker names what went wrong in a pass: the time limit's alarm,
an exception and where it arose, text folded to one line."""

from __future__ import annotations

import os
import traceback
from typing import Any

from harness.measure.tasks import Attempt, Pass, Task


class AlarmTimeout(BaseException):
    """Raised by the alarm inside the solve call. BaseException: a solver's
    ``except Exception`` must not swallow it."""


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def timed_out(task: Task, p: Pass) -> Attempt:
    """The outcome of a pass the time limit stopped."""
    message = f"exceeded the {task.timeout:g} s time limit"
    return Attempt(p.measure, p.repeat, "timeout", message=message)


def caused_by_alarm(err: BaseException | None) -> bool:
    """Whether the time limit's alarm raised ``err`` or an exception it wraps (numba's
    dispatcher wraps it when the alarm fires inside compiled code: "SystemError:
    ... returned a result with an exception set", the alarm's exception its cause)."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, AlarmTimeout):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


def describe_error(err: BaseException) -> str:
    """``ValueError: bad thing (solver.py:12)``: the exception and where it arose."""
    where = ""
    tb = traceback.extract_tb(err.__traceback__)
    if tb:
        last = tb[-1]
        where = f" ({os.path.basename(last.filename)}:{last.lineno})"
    text = str(err)
    return (
        one_line(f"{type(err).__name__}: {text}" if text else type(err).__name__)
        + where
    )


def counters_dict(counters: Any) -> dict[str, Any]:
    """A solver's counters as ints; a counters object the solver mangled is
    described under ``_error``, not raised."""
    try:
        out = {k: int(v) for k, v in counters.as_dict().items()}
    except Exception as err:  # a solver that mangled its counters object
        return {"_error": describe_error(err)}
    return out
