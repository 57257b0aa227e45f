"""External programs as declared: :class:`Program`, parsed from ``--exec
NAME=COMMAND`` or a ``.toml`` file's ``[[external]]`` tables; and what another
machine needs to run them (the files they name, a TOML text to send).

Standard library only (workers import this module).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.puzzle import Board, BoardError, Grid, format_board, goal_board, grid

EXEC_PREFIX = "exec:"
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_OPTION = r"(?:optimal|batch|(?:sizes|goal|timeout)=[^,=\s]+)"
_EXEC = re.compile(
    rf"\s*([^:=\s]+)\s*(?::\s*({_OPTION}(?:,{_OPTION})*))?\s*=(.*)", re.S
)


class ExternalError(Exception):
    """The program failed on a board: crashed, exited non-zero, printed something
    that is not an answer, or overran its time. ``outcome``: error | timeout."""

    def __init__(self, message: str, outcome: str = "error") -> None:
        super().__init__(message)
        self.outcome = outcome


@dataclass(frozen=True, slots=True)
class Program:
    """An external solver: the command and what it declares."""

    name: str
    command: tuple[str, ...]
    batch: bool = False
    optimal: bool = False
    sizes: tuple[str, ...] = ()  # "3x3", ...; empty: any size
    goal: str = "standard"  # the goal the program solves toward
    budget_seconds: float = 60.0
    description: str = ""
    target: str = ""  # the plugin target that registers it again in a worker

    def refuses(self, g: Grid, depth: int | None, heuristic: str | None) -> str | None:
        if self.sizes and g.label not in self.sizes:
            return f"{self.name} declares sizes {', '.join(self.sizes)}"
        return None

    def goal_for(self, g: Grid) -> Board:
        return goal_board(self.goal, g)

    def refuses_goal(self, goal: Board, g: Grid) -> str | None:
        """A reason when ``goal`` is not the one the program solves toward: it reads
        only the start board, so it cannot be told another goal."""
        if goal != self.goal_for(g):
            return (
                f"{self.name} solves toward the {self.goal} goal only "
                f"({format_board(self.goal_for(g))})"
            )
        return None

    def source_sha256(self) -> str:
        """Hash of the command line and of every file it names (the executable,
        a script given to an interpreter): changes when the program does."""
        digest = hashlib.sha256("\0".join(self.command).encode())
        for i, arg in enumerate(self.command):
            path = shutil.which(arg) if i == 0 else None
            path = path or (arg if "/" in arg or i > 0 else None)
            try:
                if path and os.path.isfile(path):
                    digest.update(Path(path).read_bytes())
            except OSError:
                pass
        return digest.hexdigest()


# ------------------------------------------------------------- declaring


def _check_command(command: tuple[str, ...], where: str) -> tuple[str, ...]:
    """The command with its program made absolute if it is a path; ValueError with
    a one-line reason if the program does not exist or cannot be run."""
    if not command or not command[0]:
        raise ValueError(f"{where}: empty command")
    program = command[0]
    if "/" in program:
        path = Path(program).expanduser().resolve()
        if not path.exists():
            raise ValueError(f"{where}: program {program!r} does not exist")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise ValueError(f"{where}: program {program!r} is not executable")
        return (str(path), *command[1:])
    if shutil.which(program) is None:
        raise ValueError(f"{where}: program {program!r} not found on PATH")
    return command


def _sizes(values: Any, where: str) -> tuple[str, ...]:
    if isinstance(values, str):
        values = [v for v in re.split(r"[+\s,]+", values) if v]
    out = []
    for value in values:
        try:
            g = grid(*map(int, str(value).lower().split("x")))
        except (BoardError, ValueError, TypeError):
            raise ValueError(f"{where}: size {value!r} is not ROWSxCOLS") from None
        out.append(g.label)
    return tuple(out)


def make_program(
    name: str,
    command: tuple[str, ...] | list[str],
    *,
    batch: bool = False,
    optimal: bool = False,
    sizes: Any = (),
    goal: str = "standard",
    timeout: float | None = None,
    description: str = "",
    target: str = "",
    where: str = "",
) -> Program:
    """A checked :class:`Program`; ValueError naming ``where`` on bad values."""
    where = where or name
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"{where}: name {name!r}: use lower-case letters, digits, _")
    if not isinstance(command, list | tuple) or not all(
        isinstance(c, str) for c in command
    ):
        raise ValueError(f"{where}: command must be a list of strings")
    for key, value in (("batch", batch), ("optimal", optimal)):
        if not isinstance(value, bool):
            raise ValueError(f"{where}: {key} must be true or false, not {value!r}")
    if goal not in ("standard", "spiral", "blank-first"):
        raise ValueError(f"{where}: goal {goal!r}: standard, spiral or blank-first")
    budget = 60.0 if timeout is None else timeout
    if not isinstance(budget, int | float) or not budget > 0:
        raise ValueError(f"{where}: timeout {timeout!r}: a positive number of seconds")
    return Program(
        name=name,
        command=_check_command(tuple(command), where),
        batch=batch,
        optimal=optimal,
        sizes=_sizes(sizes, where),
        goal=goal,
        budget_seconds=float(budget),
        description=description
        or f"external program: {shlex.join(command)}" + (" (batch)" if batch else ""),
        target=target,
    )


def parse_exec(text: str) -> Program:
    """``NAME[:OPTION,...]=COMMAND`` -> Program. Options: ``optimal``, ``batch``,
    ``sizes=3x3+4x4``, ``goal=spiral``, ``timeout=SECONDS``. ValueError otherwise."""
    where = f"--exec {text!r}"
    m = _EXEC.match(text)
    if not m or not m.group(3).strip():
        raise ValueError(
            f"{where}: expected NAME=COMMAND or NAME:OPTION,...=COMMAND (options: "
            "optimal, batch, sizes=3x3+4x4, goal=NAME, timeout=S)"
        )
    name, opts, command = m.group(1), m.group(2) or "", m.group(3)
    kwargs: dict[str, Any] = {}
    for opt in filter(None, (o.strip() for o in opts.split(","))):
        key, has_value, value = opt.partition("=")
        if key in ("optimal", "batch") and not has_value:
            kwargs[key] = True
        elif key in ("sizes", "goal") and has_value:
            kwargs[key] = value
        elif key == "timeout" and has_value:
            try:
                kwargs["timeout"] = float(value)
            except ValueError:
                raise ValueError(f"{where}: timeout={value!r}: not a number") from None
        else:  # unreachable: _EXEC admits only the options above
            raise ValueError(f"{where}: unknown option {opt!r}")
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    program = make_program(name.strip(), argv, where=where, **kwargs)
    # Workers register it again from this canonical form (absolute program path).
    canon = ",".join(
        ["optimal"] * program.optimal
        + ["batch"] * program.batch
        + ([f"sizes={'+'.join(program.sizes)}"] if program.sizes else [])
        + ([f"goal={program.goal}"] if program.goal != "standard" else [])
        + ([f"timeout={program.budget_seconds:g}"] if "timeout" in kwargs else [])
    )
    target = f"{EXEC_PREFIX}{program.name}{':' + canon if canon else ''}=" + shlex.join(
        program.command
    )
    return _with_target(program, target)


def _with_target(program: Program, target: str) -> Program:
    from dataclasses import replace

    return replace(program, target=target)


def load_toml(path: str | Path) -> list[Program]:
    """Every ``[[external]]`` table of a TOML file, checked; ValueError naming the
    file and table otherwise. Program paths are relative to the file's folder."""
    import tomllib

    path = Path(path).resolve()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ValueError(f"{path}: cannot read: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{path}: not TOML: {err}") from None
    tables = data.get("external")
    if not isinstance(tables, list) or not tables:
        raise ValueError(f"{path}: no [[external]] table")
    unknown_top = set(data) - {"external"}
    if unknown_top:
        raise ValueError(f"{path}: unknown key(s) {', '.join(sorted(unknown_top))}")
    known = {
        "name", "command", "batch", "optimal", "sizes", "goal", "timeout",
        "description",
    }  # fmt: skip
    programs = []
    for number, table in enumerate(tables, start=1):
        where = f"{path.name}: [[external]] #{number}"
        if not isinstance(table, dict):
            raise ValueError(f"{where}: not a table")
        unknown = set(table) - known
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        if "name" not in table or "command" not in table:
            raise ValueError(f"{where}: needs name and command")
        command = table["command"]
        if isinstance(command, str):
            command = shlex.split(command)
        if isinstance(command, list) and command and isinstance(command[0], str):
            if "/" in command[0] and not os.path.isabs(command[0]):
                command = [str(path.parent / command[0]), *command[1:]]
        where = f"{path.name}: [[external]] {table['name']!r}"
        programs.append(
            make_program(
                table["name"],
                command,
                batch=table.get("batch", False),
                optimal=table.get("optimal", False),
                sizes=table.get("sizes", ()),
                goal=table.get("goal", "standard"),
                timeout=table.get("timeout"),
                description=str(table.get("description", "")),
                target=str(path),
                where=where,
            )
        )
    return programs


# ------------------------------------------------------------- other machines


def programs_of(target: str) -> list[Program]:
    """The programs a plugin target declares (``exec:`` or ``.toml``), as this
    process registered them (else parsed anew); [] for a Python plugin."""
    if not (target.startswith(EXEC_PREFIX) or target.endswith(".toml")):
        return []
    from harness.solver import all_solvers

    found = [
        spec.external
        for spec in all_solvers().values()
        if spec.external is not None and spec.external.target == target
    ]
    if found:
        return found
    if target.startswith(EXEC_PREFIX):
        return [parse_exec(target[len(EXEC_PREFIX) :])]
    return load_toml(target)


def toml_text(programs: list[Program]) -> str:
    """``[[external]]`` tables that declare ``programs`` exactly as registered here
    (program paths absolute): what a ``.toml`` plugin becomes when shipped to
    another machine, independent of the file's folder."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float):
            return repr(float(v))
        if isinstance(v, list | tuple):
            return "[" + ", ".join(value(x) for x in v) + "]"
        import json

        return json.dumps(str(v), ensure_ascii=False).replace("\x7f", "\\u007f")

    out = []
    for p in programs:
        out.append("[[external]]")
        for key, v in (
            ("name", p.name), ("command", list(p.command)), ("batch", p.batch),
            ("optimal", p.optimal), ("sizes", list(p.sizes)), ("goal", p.goal),
            ("timeout", p.budget_seconds), ("description", p.description),
        ):  # fmt: skip
            out.append(f"{key} = {value(v)}")
        out.append("")
    return "\n".join(out)


def needed_files(program: Program) -> list[str]:
    """What must exist on a machine that runs ``program``: its executable (a path,
    or a bare name looked up on PATH) and every file its command names by absolute
    path (a script given to an interpreter)."""
    first = program.command[0]
    return [first] + [
        a for a in program.command[1:] if os.path.isabs(a) and os.path.isfile(a)
    ]


def file_sha256(path: str) -> str:
    """sha256 of a program file (a bare name: the one PATH finds); "" if none."""
    found = path if "/" in path else shutil.which(path)
    try:
        return hashlib.sha256(Path(found).read_bytes()).hexdigest() if found else ""
    except OSError:
        return ""


def missing_here(path: str, executable: bool) -> str | None:
    """Why ``path`` cannot be used on this machine (None: it can)."""
    if "/" not in path:
        return None if shutil.which(path) else "is not on its PATH"
    if not os.path.isfile(path):
        return "does not exist"
    if executable and not os.access(path, os.X_OK):
        return "is not executable"
    return None

