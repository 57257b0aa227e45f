"""Are the harness's own dependencies still the versions it allows?

Installing another package into the same environment can move them: a plugin's
solver package that pins ``numpy<1.24`` downgrades numpy, and pandas, built against
a newer numpy, then fails to import with a message about C extensions that names
neither. :func:`requirement_problems` compares what is installed with the ranges
in the harness's own metadata (pyproject.toml), standard library only, so that
the harness can say which package moved and how to put it back.
"""

from __future__ import annotations

import re
from importlib import metadata

DISTRIBUTION = "npuzzle-harness"
_SPEC = re.compile(r"(<=|>=|==|!=|<|>|~=)\s*([0-9][0-9A-Za-z.*+-]*)")


def _version(text: str) -> tuple[int, ...]:
    """The leading numeric release of a version: "2.4.6" -> (2, 4, 6),
    "1.23.5rc1" -> (1, 23, 5)."""
    parts = []
    for piece in text.split("."):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group()))
        if digits.group() != piece:
            break
    return tuple(parts)


def _holds(installed: tuple[int, ...], op: str, bound: tuple[int, ...]) -> bool:
    width = max(len(installed), len(bound))
    a = installed + (0,) * (width - len(installed))
    b = bound + (0,) * (width - len(bound))
    return {
        "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b,
        "==": a == b, "!=": a != b, "~=": a >= b,
    }[op]  # fmt: skip


def requirement_problems(distribution: str = DISTRIBUTION) -> list[str]:
    """One sentence per runtime dependency of ``distribution`` that is missing or
    installed outside its allowed range (extras are not checked); [] when all
    hold or the distribution's metadata cannot be read."""
    try:
        required = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []
    problems = []
    for line in required:
        spec, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", spec.strip())
        if not name:
            continue
        wanted = spec.strip()[name.end():].strip().strip("()")
        package = name.group()
        try:
            have = metadata.version(package)
        except metadata.PackageNotFoundError:
            problems.append(f"{package} is not installed (the harness needs {line})")
            continue
        bad = [
            f"{op}{bound}"
            for op, bound in _SPEC.findall(wanted)
            if "*" not in bound and not _holds(_version(have), op, _version(bound))
        ]
        if bad:
            ranges = wanted.replace(" ", "")
            problems.append(
                f"{package} {have} is installed, but the harness needs "
                f"{package}{ranges}: a package installed since probably moved it; "
                f"pip install '{package}{ranges}' puts it back"
            )
    return problems
