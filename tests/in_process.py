"""``harness`` run in the test's own process (typer's CliRunner), answering like
``subprocess.run``: option and error tests use it, a fresh interpreter costs a
second or more each. Subprocesses stay for what needs one (signals, start-up,
import costs). As in :func:`harness.cli.main`, a UserError is one ``error:``
line with status 2; any other uncaught exception is shown as a traceback, so
the tests' "no traceback" checks still see it."""

from __future__ import annotations

import subprocess
import traceback

from typer.testing import CliRunner

from harness.cli import UserError, app


def harness(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess:
    result = CliRunner().invoke(app, list(args), env=env, input=stdin)
    code, stderr = result.exit_code, result.stderr
    err = result.exception
    if isinstance(err, UserError):
        code, stderr = 2, stderr + f"error: {err}\n"
    elif err is not None and not isinstance(err, SystemExit):
        stderr += "".join(traceback.format_exception(err))
    return subprocess.CompletedProcess(["harness", *args], code, result.stdout, stderr)
