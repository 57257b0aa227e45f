"""npuzzle-harness: benchmark sliding-tile puzzle solvers honestly.

The package imports nothing heavy at start-up; ``harness.run`` (which needs pandas)
is loaded on first use.
"""

from __future__ import annotations

__all__ = ["run", "__version__"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "run":
        from harness.api import run

        return run
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
