"""Children that a test interrupts with SIGINT, whoever started the suite.

A shell starts a background job (``pytest ... &`` in a script) with SIGINT ignored,
and an ignored signal stays ignored across ``exec``: a harness started from such a
suite would never see the test's Ctrl-C and run to its end. ``preexec_fn=
default_sigint`` gives the child the disposition a terminal's foreground job has.
"""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """In the forked child, before exec: SIGINT back to its default action."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
