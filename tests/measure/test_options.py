"""Each run option is declared once (harness.core.options): the command line,
meta.json, a resume and the worker's task all carry it under its one name, and a
resumed run's stored options are checked again as the command line checks them
(issue 35, item 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import harness
from harness.core.numbers import parse_int
from harness.core.options import BY_NAME, IN_TASK, INHERITED, OPTIONS
from harness.measure import resume, runner
from harness.measure.executors.inline import InlineExecutor
from in_process import harness as cli

TINY = str(Path(__file__).resolve().parents[1] / "plugins" / "tiny.py")
SOLVER, DATASET = "astar_dict[manhattan]", "8-seeds"  # 3 boards: 3 cells

#: A value other than the default for every option: a new option without one
#: here fails test_every_option_has_a_sample_that_its_check_takes.
SAMPLES = {
    "plugins": [TINY],
    "repeats": 2,
    "timeout": 30.0,
    "memory_limit_mb": 2048,
    "memory_pass": False,
    "instructions": True,
    "gc": True,
    "setup_timeout": 120.0,
    "warmup": 2,
    "order_seed": 7,
    "adaptive": 0.0,
    "min_sample_seconds": 0.002,
    "reference": False,
    "pin": False,
    "interleave": False,
    "pairs": [[SOLVER, DATASET]],
    "jobs": 0,
}


def _cli_arguments() -> list[str]:
    """The samples as ``harness run`` flags, from the table (bool flags set
    their sample; every other flag takes its value)."""
    out = []
    for option in OPTIONS:
        value = SAMPLES[option.name]
        if not option.flag:
            continue
        if isinstance(value, bool) or option.name == "adaptive":
            given = option.flag.split("/")[0 if value else -1]
            if option.flag.startswith("--no-"):  # --no-memory
                given = option.flag if not value else ""
            out += [given] if given else []
        elif isinstance(value, list):
            out += [a for v in value for a in (option.flag, str(v))]
        else:
            out += [option.flag, str(value)]
    return out


def test_every_option_has_a_sample_that_its_check_takes():
    assert set(SAMPLES) == set(BY_NAME)
    for option in OPTIONS:
        assert option.problem(SAMPLES[option.name]) is None, option.name
        assert SAMPLES[option.name] != option.default, option.name
        assert option.help and (option.flag or option.name in
                                ("reference", "pin", "interleave", "pairs"))  # fmt: skip


def test_each_option_round_trips_cli_meta_resume_task(tmp_path, monkeypatch):
    """CLI -> meta.json -> resume -> the worker's task, option by option."""
    # The counting phase under callgrind (tests/measure/test_instructions.py)
    # would take most of this test's time: here it records that the plan asked
    # for it, on the first run and on the resume, and counts nothing.
    asked = []

    def count_for_run(plan, *_, **__):
        asked.append(plan.instructions)
        return {}

    monkeypatch.setattr(runner, "count_for_run", count_for_run)
    out = tmp_path / "runs"
    made = cli("run", "--solvers", SOLVER, "--datasets", DATASET, "--no-report",
               "--out", str(out), *_cli_arguments(), env={"CI": "1"})  # fmt: skip
    assert made.returncode == 0, made.stderr
    run_dir = Path(made.stdout.strip().splitlines()[-1])
    stored = json.loads((run_dir / "meta.json").read_text())["options"]
    for option in INHERITED:
        if option.flag:  # the command line gave it: stored under its one name
            assert stored[option.name] == SAMPLES[option.name], option.name
    # drop the last cell's rows: the resume measures it again, in tasks
    rows = (run_dir / "rows.csv").read_text().splitlines(True)
    last = rows[-1].split(",")[2]
    (run_dir / "rows.csv").write_text(
        "".join(r for r in rows if r.split(",")[2] != last)
    )
    tasks = []

    class Recording(InlineExecutor):
        def submit(self, task):
            tasks.append(task)
            super().submit(task)

    harness.run(resume=run_dir.name, out=out, executor_factory=lambda *_: Recording())
    assert tasks
    assert asked == [SAMPLES["instructions"]] * 2
    for option in IN_TASK:
        if option.flag:
            assert getattr(tasks[0], option.name) == SAMPLES[option.name], option.name


def test_options_only_python_takes_round_trip_through_meta(tmp_path):
    """The options without a flag (``harness.run()`` keywords) are stored and
    resumed under the same names."""
    python_only = {o.name: SAMPLES[o.name] for o in INHERITED if not o.flag}
    frame = harness.run(SOLVER, DATASET, repeats=1, memory_pass=False, jobs=0,
                        out=tmp_path, **python_only)  # fmt: skip
    meta = json.loads((Path(frame.attrs["run_dir"]) / "meta.json").read_text())
    plan = resume.plan_from_meta(meta)
    for name, value in python_only.items():
        assert meta["options"][name] == value, name
        resumed = getattr(plan, name)
        assert (sorted(map(list, resumed)) if name == "pairs" else resumed) == value


# ------------------------------------- issue 35: numbers on the command line

#: A number typed after each numeric flag of the table, as the one parser
#: (harness.core.numbers) reads it: click's int()/float() took ``1_0`` as 10
#: and Arabic-Indic ``\u0661\u0662`` as 12.
NUMBERED = [o for o in OPTIONS if o.parse is not None and "/" not in o.flag]
CASES = [
    (option, text)
    for option in NUMBERED
    for text in ["1_0", "\u0661\u0662", "nan"]
    + (["1e3"] if option.parse is parse_int else [])
]


@pytest.mark.parametrize("option,text", CASES, ids=lambda v: getattr(v, "flag", v))
def test_a_flag_given_no_number_is_one_line_naming_it_and_the_text(option, text):
    got = cli("run", option.flag, text, "--dry-run", "--solvers", SOLVER,
              "--datasets", DATASET)  # fmt: skip
    assert got.returncode == 2, (got.stdout, got.stderr)
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {option.flag} {ascii(text)} "), lines[0]


def test_every_numeric_flag_reads_its_sample_as_text():
    """The round trip's flags are text; each reads back as the sample's value."""
    for option in NUMBERED:
        assert option.read(str(SAMPLES[option.name])) == SAMPLES[option.name]
        assert option.read(f" {SAMPLES[option.name]} ") == SAMPLES[option.name]


# ------------------------------------------------- issue 35, item 6: resume


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stored")
    made = cli("run", "--solvers", SOLVER, "--datasets", "8-seeds", "--repeats", "1",
               "--no-memory", "--jobs", "0", "--no-report", "--out", str(out))  # fmt: skip
    assert made.returncode == 0, made.stderr
    return Path(made.stdout.strip().splitlines()[-1])


PROBES = [
    ("repeats", 1_000_000_000), ("repeats", -5), ("timeout", -1),
    *((name, bad) for name in ("setup_timeout", "adaptive", "order_seed", "pairs",
                               "min_sample_seconds")
      for bad in (None, "abc", [1])),
]  # fmt: skip


@pytest.mark.parametrize("name,bad", PROBES)
def test_a_stored_option_the_command_line_would_refuse_stops_the_resume(
    stored_run, tmp_path, name, bad
):
    """A hand-edited meta.json cannot make a resume hang (a billion repeats),
    record every cell as a timeout (timeout -1) or end in an internal error: one
    line naming meta.json and the field, exit 2."""
    run_dir = tmp_path / stored_run.name
    shutil.copytree(stored_run, run_dir)
    meta = json.loads((run_dir / "meta.json").read_text())
    meta["options"][name] = bad
    (run_dir / "meta.json").write_text(json.dumps(meta))
    got = cli("run", "--resume", run_dir.name, "--out", str(tmp_path), "--no-report")
    assert got.returncode == 2, (got.stdout, got.stderr)
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], lines
    assert "meta.json" in lines[0] and name in lines[0], lines[0]
