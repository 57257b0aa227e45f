"""Where the output goes wrong (issue 35 items 12 and 13): a standard output that
cannot be written (``> /dev/full``) and Ctrl-C are one line on stderr, through
the real entry point (``harness.cli.main``) in a fresh interpreter: CliRunner
replaces both the output and typer's handling."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from signals import default_sigint

MAIN = [sys.executable, "-c", "from harness.cli import main; main()"]
ENV = {**os.environ, "CI": "1", "NPUZZLE_PRECOMPILE": "0"}
RUN = Path(__file__).parent.parent / "data" / "run_fixture"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args, stdin",
    [
        (["solve"], b"2 3 4 1 5 x 7 6 8\n"),
        (["compare", str(RUN), str(RUN)], None),
        (["datasets", "show", "8-seeds"], None),
        (["report", str(RUN), "--format", "csv"], None),  # said `error: None: ...`
    ],
)
def test_a_full_standard_output_is_one_line(args, stdin) -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*MAIN, *args], input=stdin, stdout=full,
                              stderr=subprocess.PIPE, env=ENV, timeout=120)  # fmt: skip
    said = proc.stderr.decode()
    assert proc.returncode == 1, said
    assert said == "error: cannot write the output: No space left on device\n"


def test_ctrl_c_is_exit_130_with_a_line() -> None:
    """typer turned Ctrl-C into a silent exit 130 before our handler saw it."""
    proc = subprocess.Popen([*MAIN, "solve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=ENV, preexec_fn=default_sigint)  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(b"2 3 4 1 5 x 7 6 8\n")  # stdin stays open: solve waits
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while _unread(proc.stdin) and time.monotonic() < deadline:
        time.sleep(0.05)  # not yet read: still starting up
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.decode().strip().splitlines()[-1] == "interrupted"


def _unread(pipe) -> int:
    """Bytes written to ``pipe`` that the child has not read yet."""
    import array
    import fcntl
    import termios

    count = array.array("i", [0])
    fcntl.ioctl(pipe.fileno(), termios.FIONREAD, count)
    return count[0]
