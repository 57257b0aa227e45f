"""How ``harness run`` shows a run going: a rich bar on a terminal, plain status
lines in CI or a pipe, nothing with ``-q``; each a small class the run calls
(counting_began / counted while ``--instructions`` counts, start, started,
finished, estimate or no_estimate, setup_began / setup_ended, stop). A set-up (tables, compilation) of ``solve`` and ``solvers`` says what it
builds once it lasts a couple of seconds (:func:`setting_up`)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer

#: A set-up (tables to build, kernels to compile) that has lasted this long says
#: what it is doing: "any set-up over a couple of seconds says what it is doing".
SETUP_NOTICE_SECONDS = 2.0
#: ... and then, while it goes on, how long so far, this often.
SETUP_NOTICE_EVERY = 30.0


def to_stderr(text: str) -> None:
    """One line on standard error (progress and notes; stdout is the run folder)."""
    typer.echo(text, err=True)


def setup_lines() -> Callable[[str], None] | None:
    """Where ``harness solve`` and ``solvers`` say a long set-up: stderr on a
    terminal; None (quiet) in CI or a pipe, where their output is for programs."""
    return to_stderr if sys.stderr.isatty() and not is_ci() else None


@contextmanager
def setting_up(what: str, say: Callable[[str], None] | None) -> Iterator[None]:
    """Run the block; once it has lasted :data:`SETUP_NOTICE_SECONDS`, ``say``
    ``setting up: WHAT ...`` (then how long so far, every
    :data:`SETUP_NOTICE_EVERY` s), and at its end how long it took. A quick
    set-up says nothing; ``say`` None: nothing at all."""
    if say is None:
        yield
        return
    over = threading.Event()
    began = time.monotonic()
    said: list[bool] = []

    def watch() -> None:
        wait = SETUP_NOTICE_SECONDS
        while not over.wait(wait):  # (a thread: the set-up is one blocking call)
            so_far = duration_text(time.monotonic() - began)
            say(f"setting up: {what}, {so_far} so far" if said
                else f"setting up: {what} ...")  # fmt: skip
            said.append(True)
            wait = SETUP_NOTICE_EVERY

    watcher = threading.Thread(target=watch, name="setup-notice", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        over.set()
        watcher.join()
        if said:
            say(f"set up in {duration_text(time.monotonic() - began)}: {what}")


# ---------------------------------------------------------------- progress


def is_ci() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("TERM") == "dumb"


def make_progress(quiet: bool):
    if quiet:
        return QuietProgress()
    if is_ci() or not sys.stderr.isatty():
        return PlainProgress()
    return RichProgress()


class QuietProgress:
    """-q: nothing while the run goes; the summary tells what failed."""

    shows_estimate = False

    def start(self, total: int, done: int, failures: int) -> None: ...
    def started(self, config: str, dataset: str) -> None: ...
    def finished(self, done: int, failures: int, failure_line: str | None) -> None: ...
    def estimate(self, seconds_left: float) -> None: ...
    def no_estimate(self, why: str) -> None: ...
    def setup_began(self, config: str, worker: int) -> None: ...
    def setup_ended(self, config: str, worker: int, seconds: float | None) -> None: ...
    def observed(self, workload: Any, expected: float | None, took: float) -> None: ...
    def counting_began(self, cells: int, line: str) -> None: ...
    def counted(self, cells: int, line: str | None) -> None: ...
    def stop(self) -> None: ...


def duration_text(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class PlainProgress:
    """One line per failure, and a status line every 10% or 30 s (stderr)."""

    shows_estimate = True

    def __init__(self, every_seconds: float = 30.0) -> None:
        self.every = every_seconds
        self.total = self.done = self.first_done = 0
        self.started_at = self.last_line = 0.0
        self.current = ""
        self.next_share = 0.1
        self.left: float | None = None  # the runner's estimate (cost model)
        self.why = "no estimate yet"  # said instead, while there is none
        self._setups: dict[tuple[str, int], threading.Timer] = {}

    def estimate(self, seconds_left: float) -> None:
        self.left = seconds_left

    def no_estimate(self, why: str) -> None:
        self.left, self.why = None, why or "no estimate yet"

    def setup_began(self, config: str, worker: int) -> None:
        """A line once the set-up has lasted SETUP_NOTICE_SECONDS (a timer: the
        runner hears nothing more until the cell is done)."""
        line = f"setting up {config} (worker {worker}): tables, compilation ..."
        timer = threading.Timer(SETUP_NOTICE_SECONDS, to_stderr, (line,))
        timer.daemon = True
        self._setups[(config, worker)] = timer
        timer.start()

    def setup_ended(self, config: str, worker: int, seconds: float | None) -> None:
        timer = self._setups.pop((config, worker), None)
        if timer is None:
            return
        timer.cancel()
        if seconds is not None and seconds >= SETUP_NOTICE_SECONDS:
            to_stderr(f"set up {config} (worker {worker}) in {duration_text(seconds)}")

    def observed(self, workload: Any, expected: float | None, took: float) -> None: ...

    def counting_began(self, cells: int, line: str) -> None:
        to_stderr(line)

    def counted(self, cells: int, line: str | None) -> None:
        """A line per config counted (its cells and seconds): a status line,
        as the cells' are, without one per cell."""
        if line:
            to_stderr(line)

    def start(self, total: int, done: int, failures: int) -> None:
        # the count is of cells to solve: those refused or stored are said once
        # here, not shown as progress already made ("123/943" at the start)
        self.total, self.done, self.first_done = total - done, 0, done
        self.started_at = self.last_line = time.monotonic()
        if done:
            to_stderr(f"{done} of {total} cells need no solving (refused or stored); "
                    f"{total - done} to run")  # fmt: skip

    def started(self, config: str, dataset: str) -> None:
        self.current = f"{config} on {dataset}"

    def finished(self, done: int, failures: int, failure_line: str | None) -> None:
        done -= self.first_done
        self.done = done
        if failure_line:
            to_stderr(failure_line)
        now = time.monotonic()
        share = done / self.total if self.total else 1.0
        if share >= self.next_share or now - self.last_line >= self.every:
            while self.next_share <= share:
                self.next_share += 0.1
            self.last_line = now
            elapsed = now - self.started_at
            # No estimate: said so, never the elapsed time over the cells done,
            # which prices a one-time set-up (52 s of compiling) as the pace of
            # every cell left ("40 min" for a 4-min job).
            left = self.why if self.left is None else f"~{duration_text(self.left)} left"
            to_stderr(
                f"[{done}/{self.total}] {100 * share:.0f}% "
                f"{duration_text(elapsed)} elapsed, {left}; "
                f"{failures} failed; last: {self.current}"
            )

    def stop(self) -> None:
        for timer in self._setups.values():
            timer.cancel()
        self._setups.clear()


class RichProgress:
    """A rich progress bar on stderr: cells, current config and dataset, failures."""

    shows_estimate = True

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True)
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("cells"),
            TimeElapsedColumn(),
            TextColumn("elapsed,"),
            TextColumn("{task.fields[left]}"),
            TextColumn("[red]{task.fields[failures]}"),
            console=self.console,
            transient=False,
        )
        self.task = None
        self.counting = None  # the counting phase's bar (--instructions)
        self.first_done = 0

    def counting_began(self, cells: int, line: str) -> None:
        self.console.print(line, highlight=False)
        self.bar.start()
        self.counting = self.bar.add_task(
            "counting instructions", total=cells, completed=0, failures="", left=""
        )

    def counted(self, cells: int, line: str | None) -> None:
        if line:
            self.bar.console.print(line, markup=False, highlight=False)
        if self.counting is not None:
            self.bar.update(self.counting, completed=cells)

    def start(self, total: int, done: int, failures: int) -> None:
        if done:  # refused or stored: said once, not counted as progress made
            self.console.print(f"{done} of {total} cells need no solving (refused "
                               f"or stored); {total - done} to run", highlight=False)
        self.first_done = done
        self.bar.start()  # (started already when instructions were counted)
        self.task = self.bar.add_task(
            "starting", total=total - done, completed=0,
            failures=self._fails(failures), left="",
        )  # fmt: skip

    def estimate(self, seconds_left: float) -> None:
        if self.task is not None:
            self.bar.update(self.task, left=f"~{duration_text(seconds_left)} left")

    def no_estimate(self, why: str) -> None:
        if self.task is not None:
            self.bar.update(self.task, left=why)

    def setup_began(self, config: str, worker: int) -> None:
        if self.task is not None:
            self.bar.update(self.task, description=f"setting up {config}")

    def setup_ended(self, config: str, worker: int, seconds: float | None) -> None:
        if seconds is not None and seconds >= SETUP_NOTICE_SECONDS:
            self.console.print(f"set up {config} (worker {worker}) in "
                               f"{duration_text(seconds)}", highlight=False)  # fmt: skip

    def observed(self, workload: Any, expected: float | None, took: float) -> None: ...

    @staticmethod
    def _fails(failures: int) -> str:
        return f"{failures} failed" if failures else ""

    def started(self, config: str, dataset: str) -> None:
        self.bar.update(self.task, description=f"{config} on {dataset}")

    def finished(self, done: int, failures: int, failure_line: str | None) -> None:
        if failure_line:
            self.bar.console.print(failure_line, markup=False, highlight=False)
        self.bar.update(self.task, completed=done - self.first_done,
                        failures=self._fails(failures))  # fmt: skip

    def stop(self) -> None:
        self.bar.stop()
