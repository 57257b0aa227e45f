"""Bad input found by trying the harness as a new user would (issue 16 §1): each
case was a crash, a silent misreading or a traceback, and is now a one-line error
(exit 2) or a documented repair. The commands run in this process (CliRunner):
nothing here needs a fresh interpreter."""

from __future__ import annotations

import subprocess
from pathlib import Path

import in_process
import pytest
from where import PLUGINS

from harness import results as res
from harness.measure.plan import RunError, make_plan

ENV = {"CI": "1", "COLUMNS": "200"}
PLUGIN = str(PLUGINS / "misbehaving.py")


def harness(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return in_process.harness(*args, env=ENV, stdin=stdin)


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "option, value",
    [
        ("--timeout", "inf"),  # was OverflowError in the pool's wait
        ("--timeout", "1e8"),  # was "timeout is too large"
        ("--timeout", "1e12"),  # was every cell an error, then a crash
        ("--timeout", "nan"),
        ("--setup-timeout", "inf"),
        ("--setup-timeout", "1e12"),
    ],
)
def test_timeouts_beyond_a_day_are_refused_with_the_range(tmp_path, option, value):
    proc = harness(
        "run", "--solvers", "astar_dict", "--datasets", "8-seeds", option, value,
        "--out", str(tmp_path),
    )  # fmt: skip
    # inf and nan are not numbers to harness.core.numbers (299127e): refused as
    # text before any range applies; a finite value past a day gets the range
    finite = value not in ("inf", "nan")
    assert_one_line_error(proc, option, "at most 86,400 seconds" if finite
                          else f"'{value}' is not a number")  # fmt: skip
    assert list(tmp_path.iterdir()) == []  # no run folder left behind


@pytest.mark.parametrize("value", ["-5", "-1", "2000000"])
def test_memory_limit_out_of_range_is_refused(tmp_path, value):
    proc = harness(
        "run", "--solvers", "astar_dict", "--datasets", "8-seeds",
        "--memory-limit", value, "--out", str(tmp_path),
    )  # fmt: skip
    assert_one_line_error(proc, f"--memory-limit {value}", "0 (no limit)")
    assert list(tmp_path.iterdir()) == []


def test_library_refuses_the_same_values():
    for kwargs in (
        {"timeout": float("inf")},
        {"timeout": 1e8},
        {"setup_timeout": float("inf")},
        {"memory_limit_mb": -5},
    ):
        with pytest.raises(RunError):
            make_plan("astar_dict", "8-seeds", **kwargs)
    plan = make_plan("astar_dict", "8-seeds", timeout=86_400, memory_limit_mb=0)
    assert plan.timeout == 86_400 and plan.memory_limit_mb is None


def test_empty_selections_are_errors_naming_the_choices(tmp_path):
    solvers = assert_one_line_error(
        harness("run", "--solvers", "", "--out", str(tmp_path)),
        "--solvers", "names no solver", "'all'", "astar_dict", "bfs",
    )  # fmt: skip
    assert "harness solvers" in solvers
    assert_one_line_error(
        harness("run", "--solvers", " , ", "--out", str(tmp_path)), "names no solver"
    )
    datasets = assert_one_line_error(
        harness("run", "--datasets", "", "--out", str(tmp_path)),
        "--datasets", "names no dataset", "'default'", "8-seeds",
    )  # fmt: skip
    assert "harness datasets list" in datasets
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------ resume with a broken rows.csv


def tiny_run(tmp_path: Path) -> Path:
    proc = harness(
        "run", "--plugin", PLUGIN, "--solvers", "good_bfs", "--datasets", "8-seeds",
        "--repeats", "2", "--no-memory", "--jobs", "1", "--no-report", "-q",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1])


def test_resume_with_a_malformed_middle_row_is_a_user_error_then_repairable(tmp_path):
    run_dir = tiny_run(tmp_path)
    rows_file = run_dir / res.ROWS_FILE
    lines = rows_file.read_text().splitlines(True)
    assert len(lines) == 1 + 3 * 2  # header + 3 instances x 2 repeats
    broken = "garbage,in,the middle\n"
    removed = lines[3]
    rows_file.write_text("".join([*lines[:3], broken, *lines[4:]]))
    meta = res.read_meta(run_dir)
    meta = {k: v for k, v in meta.items() if k != "schema_version"}
    res.write_meta(run_dir, {**meta, "complete": False})

    proc = harness("run", "--resume", run_dir.name, "--out", str(tmp_path), "-q")
    assert_one_line_error(
        proc, "rows.csv: line 4: 3 fields, expected", "--repair", res.REJECTED_FILE
    )
    assert rows_file.read_text().count(broken) == 1  # nothing was touched

    fixed = harness(
        "run", "--resume", run_dir.name, "--repair", "--out", str(tmp_path), "-q",
        "--no-report",
    )  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    assert "1 unreadable or duplicate line(s) moved" in fixed.stderr
    assert (run_dir / res.REJECTED_FILE).read_text() == broken
    keys = [
        (r["instance"], r["measure"], r["repeat"]) for r in res.read_row_dicts(run_dir)
    ]
    assert len(keys) == len(set(keys)) == 3 * 2  # the lost row was measured again
    new_line = rows_file.read_text().splitlines(True)[-1]
    assert new_line.split(",")[2] == removed.split(",")[2]  # same instance
    meta = res.read_meta(run_dir)
    assert meta["complete"] and meta["resumes"][-1]["rows_rejected"] == 1


def test_repair_needs_resume(tmp_path):
    assert_one_line_error(
        harness("run", "--repair", "--out", str(tmp_path)), "--repair", "--resume"
    )


# ------------------------------------------------ a contradicted dataset label


@pytest.fixture(scope="module")
def wrong_label_file(tmp_path_factory) -> Path:
    """Three 4x4 boards 4 moves from the goal; t000 is labelled 6 (parity and the
    Manhattan bound both allow it, so the file loads)."""
    from dataclasses import replace

    from plugins.tiny import make_dataset, walk

    from harness.datasets import make_dataset as assemble
    from harness.datasets import save_dataset
    from harness.puzzle import goal_board, grid

    g = grid(4)
    goal = goal_board("standard", g)
    boards, seed = [], 0
    while len(boards) < 3:
        board = walk(goal, g, 4, seed=seed)
        seed += 1
        if board not in boards:
            boards.append(board)
    ds = make_dataset("wrong44", boards, g, goal)
    assert [i.optimal_length for i in ds.instances] == [4, 4, 4]
    insts = [replace(ds.instances[0], optimal_length=6), *ds.instances[1:]]
    wrong = assemble("wrong44", g, goal, generator="test", params={}, seed=None,
                     instances=insts)  # fmt: skip
    return save_dataset(wrong, tmp_path_factory.mktemp("wrong"))


def test_a_contradicted_label_is_first_class(tmp_path, wrong_label_file):
    out = tmp_path / "results"
    proc = harness(
        "run", "--solvers", "astar_dict[manhattan],ida_star[manhattan]",
        "--datasets", str(wrong_label_file), "--repeats", "1", "--no-memory",
        "--jobs", "1", "--strict", "-q", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # --strict: a wrong label fails the run
    lines = proc.stdout.splitlines()
    run_dir = Path(lines[-1])
    flagged = [line for line in lines if line.startswith("label contradicted: ")]
    assert flagged == [
        "label contradicted: wrong44 t000: the dataset labels it 6 moves, but "
        "astar_dict[manhattan] found a valid 4-move path; optimality of that "
        "instance is unknown"
    ]
    # the flag column, and is_optimal unknown on every row of that instance
    from harness import analysis

    _, rows = analysis.read_run(run_dir)
    t0 = rows["instance"] == "t000"
    assert rows.loc[t0, res.CONTRADICTED].all()
    assert not rows.loc[~t0, res.CONTRADICTED].any()
    assert rows.loc[t0, "is_optimal"].isna().all()
    assert rows.loc[~t0, "is_optimal"].fillna(False).all()
    # the report's findings open with it
    report = (run_dir / "report.md").read_text()
    findings = report.split("Dataset label contradicted: ", 1)
    assert len(findings) == 2 and "wrong44 t000" in findings[1].splitlines()[0]
    from harness.analysis import load_run
    from harness.report.findings import findings as run_findings

    assert run_findings(load_run(run_dir))[0].startswith("Dataset label contradicted")
    # without --strict the run succeeds
    lenient = harness(
        "run", "--solvers", "astar_dict[manhattan]",
        "--datasets", str(wrong_label_file),
        "--repeats", "1", "--no-memory", "--jobs", "1", "-q", "--no-report",
        "--out", str(out),
    )  # fmt: skip
    assert lenient.returncode == 0, lenient.stderr
    # `harness datasets show` lists what earlier runs found
    show = harness("datasets", "show", str(wrong_label_file), "--results-dir", str(out))
    assert show.returncode == 0, show.stderr
    assert "contradicted: 1 label(s)" in show.stdout
    assert (
        "label contradicted: wrong44 t000: the dataset labels it 6 moves" in show.stdout
    )
    clean = harness("datasets", "show", str(wrong_label_file),
                    "--results-dir", str(tmp_path / "none"))  # fmt: skip
    assert "contradicted: none found" in clean.stdout


def test_mark_contradicted_labels_blanks_every_config_on_the_instance():
    from harness.analysis import typed_rows

    frame = typed_rows([
        {**dict.fromkeys(res.column_names(), ""), "run_id": "r", "dataset": "d",
         "instance": i, "size": "3x3", "goal": "standard", "solvable": "True",
         "solver": c, "heuristic": "none", "config": c, "measure": "time",
         "repeat": "0", "status": "solved", "optimal_length": "6",
         "path_length": n, "is_optimal": opt}
        for i, c, n, opt in [("a", "optimal", "4", ""), ("a", "greedy", "6", "True"),
                             ("b", "greedy", "8", "False")]
    ], "rows.csv")  # fmt: skip
    assert list(frame[res.CONTRADICTED]) == [True, True, False]
    assert frame["is_optimal"].isna().tolist() == [True, True, False]
    assert res.contradicted_labels(frame) == [
        {"dataset": "d", "instance": "a", "label": 6, "found": 4, "config": "optimal"}
    ]


# ------------------------------------- issue 35 item 3: every number that enters


def _numeric_options() -> list[tuple[list[str], str, object]]:
    """(the command's words, the flag, its parser or None) of every option of
    every command whose declared type is a number (from the commands'
    signatures, as typer reads them)."""
    import inspect
    import typing

    import typer

    from harness.cli import app

    def commands(group: typer.Typer, words: list[str]):
        for command in group.registered_commands:  # typer's naming of an unnamed one
            name = command.name or command.callback.__name__.replace("_", "-")
            yield [*words, name], command.callback
        for sub in group.registered_groups:
            yield from commands(sub.typer_instance, [*words, sub.name])

    found = []
    for words, callback in commands(app, []):
        signature = inspect.signature(callback, eval_str=True)
        for name, param in signature.parameters.items():
            if typing.get_origin(param.annotation) is not typing.Annotated:
                continue
            kind, *extra = typing.get_args(param.annotation)
            kinds = set(typing.get_args(kind) or (kind,)) - {type(None)}
            info = next((e for e in extra if isinstance(e, typer.models.OptionInfo)),
                        None)  # fmt: skip
            if info is not None and kinds & {int, float}:
                flag = next((d for d in info.param_decls or () if d.startswith("--")),
                            "--" + name.replace("_", "-"))  # fmt: skip
                found.append((words, flag, info.parser))
    return found


def test_no_command_reads_a_number_with_click() -> None:
    """click's int()/float() take '1_0' as 10 and Arabic-Indic digits as numbers:
    every numeric flag goes through harness.core.numbers instead (harness run's
    run options by their table, the other commands' by harness.cli.common.number)."""
    options = _numeric_options()
    assert len(options) >= 12  # compare, gate, history, datasets generate...
    by_click = [(w, f) for w, f, parser in options
                if not getattr(parser, "__qualname__", "").startswith("number.")]  # fmt: skip
    assert by_click == []


@pytest.mark.parametrize(
    ("words", "flag"), [(w, f) for w, f, _ in _numeric_options()],
    ids=lambda v: v if isinstance(v, str) else " ".join(v),
)  # fmt: skip
def test_a_number_with_an_underscore_is_refused_naming_its_flag(words, flag) -> None:
    proc = harness(*words, flag, "1_0")
    assert_one_line_error(proc, flag, "'1_0'")
