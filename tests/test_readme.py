"""The README's promises that a test can keep: the two set-up commands lead the file,
and its "Writing a solver / heuristic / generator" and report plot examples work as
plugins exactly as printed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.analysis import read_run
from harness.cli import app
from harness.solver import scoped_registry

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_the_two_commands() -> None:
    before_prose = README.split("\n\nThe first command")[0]
    commands = [b.strip() for b in _blocks("bash") if b.strip() in before_prose]
    assert len(commands) == 2
    main_job, tests = commands
    assert main_job.endswith("harness run --solvers all")
    assert tests.endswith("pytest -q")
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert tests in ci, ".ci/run must run the README's test command as written"


def test_writing_a_solver_example_runs_as_a_plugin(tmp_path: Path) -> None:
    (example,) = [b for b in _blocks("python") if "@register(" in b]
    plugin = tmp_path / "my_greedy.py"
    plugin.write_text(example)
    out = tmp_path / "results"
    result = CliRunner().invoke(
        app,
        ["run", "--plugin", str(plugin), "--solvers", "greedy,astar_dict",
         "--datasets", "8-seeds", "--repeats", "1", "--no-memory", "--jobs", "1",
         "--no-report", "--quiet", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    _, rows = read_run(Path(result.output.strip().splitlines()[-1]))
    greedy = rows[rows.solver == "greedy"]
    assert len(greedy) == 3 and set(greedy.status) == {"solved"}
    assert (greedy.path_length >= greedy.optimal_length).all()
    assert (greedy.generated > 0).all()


def test_writing_a_solver_lists_the_whole_capability_vocabulary() -> None:
    from harness.heuristics import KERNEL_INTERFACES, Capability

    section = README.split("## Writing a solver")[1].split("\n## ")[0]
    prose = " ".join(section.split("```")[2::2])  # outside the code blocks
    spelt = {c for c in Capability if c.name in ("EVALUATE", "NO_TABLES", "TILE_COST")}
    for capability in spelt:
        assert f"`{capability.name}`" in prose
    for interface in KERNEL_INTERFACES:
        assert f'`kernel("{interface}")`' in prose
    kernels = {Capability(f"kernel:{i}") for i in KERNEL_INTERFACES}
    assert spelt | kernels == set(Capability), "a capability the README does not name"


def test_writing_a_heuristic_and_a_generator_examples_run_as_one_plugin(
    tmp_path: Path
) -> None:
    heuristic, generator = (
        [b for b in _blocks("python") if "@register_heuristic(" in b][0],
        [b for b in _blocks("python") if "@register_generator(" in b][0],
    )
    plugin = tmp_path / "my_plugin.py"
    plugin.write_text(heuristic + "\n\n" + generator)
    with scoped_registry():
        listed = CliRunner().invoke(app, ["solvers", "--plugin", str(plugin)])
        assert listed.exit_code == 0, listed.output
        assert "misplaced_plus:" in listed.output
        takes = [ln for ln in listed.output.splitlines() if "misplaced_plus" in ln]
        assert len(takes) >= 4  # astar_dict, astar_cantor, ida_star + its own line
        helped = CliRunner().invoke(
            app, ["datasets", "generate", "--plugin", str(plugin), "--help"]
        )
        assert helped.exit_code == 0, helped.output
        assert "long_walks" in helped.output
        made = CliRunner().invoke(
            app,
            ["datasets", "generate", "--plugin", str(plugin), "long_walks",
             "--size", "3x3", "--count", "3", "--length", "3", "--name", "walks",
             "--out", str(tmp_path)],
        )
        assert made.exit_code == 0, made.output
        result = CliRunner().invoke(
            app,
            ["run", "--plugin", str(plugin), "--solvers",
             "astar_dict[misplaced_plus],ida_star[misplaced_plus]",
             "--datasets", str(tmp_path / "walks.jsonl"), "--repeats", "1",
             "--no-memory", "--jobs", "1", "--no-report", "--quiet",
             "--out", str(tmp_path / "results")],
        )
    assert result.exit_code == 0, result.output
    _, rows = read_run(Path(result.output.strip().splitlines()[-1]))
    assert set(rows.heuristic) == {"misplaced_plus"}
    assert len(rows) == 6 and set(rows.status) == {"solved"}
    assert (rows.path_length == rows.optimal_length).all()


def test_writing_a_report_plot_example_runs_as_a_plugin(tmp_path: Path) -> None:
    (example,) = [b for b in _blocks("python") if "@register_plot(" in b]
    plugin = tmp_path / "my_plots.py"
    plugin.write_text(example)
    run = Path(__file__).parent / "data" / "run_fixture"
    with scoped_registry():
        result = CliRunner().invoke(
            app, ["report", str(run), "--plugin", str(plugin), "--out", str(tmp_path)]
        )
    assert result.exit_code == 0, result.output
    png = tmp_path / "plots" / "answered_count.png"
    assert f"wrote {png}" in result.stdout.splitlines() and png.stat().st_size > 1000
    assert "plots/answered_count.png" in (tmp_path / "report.html").read_text()
    assert "harness report results/<run-id> --plugin my_plots.py" in README


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "compare-heuristics.toml"


def test_experiment_file_example_is_the_committed_file() -> None:
    (block,) = [b for b in _blocks("toml") if "compare three heuristics" in b]
    assert block == EXAMPLE.read_text()
    assert "harness run --config examples/compare-heuristics.toml" in README


def test_experiment_file_example_dry_run_and_a_small_run(tmp_path: Path) -> None:
    dry = CliRunner().invoke(app, ["run", "--config", str(EXAMPLE), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    # 6 configs x (92 + 30) boards; A* with misplaced declines the 9 depth-30 boards
    assert "6 configs, 2 datasets, 732 cells" in dry.stdout
    assert "total: 723 cells to run, 0 reused, 9 skipped" in dry.stdout
    # The same file on the three seed boards runs in seconds.
    small = tmp_path / "small.toml"
    small.write_text(EXAMPLE.read_text().replace('["8-strata", "15-walks"]', '["8-seeds"]'))
    result = CliRunner().invoke(
        app, ["run", "--config", str(small), "--jobs", "1", "--no-report", "--quiet",
              "--out", str(tmp_path / "results")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    meta, rows = read_run(Path(result.output.strip().splitlines()[-1]))
    assert len(rows) == 6 * 3 and set(rows.status) == {"solved"}
    assert meta["experiment"]["file"] == "experiment.toml"


def test_readme_images_exist_and_are_small() -> None:
    root = Path(__file__).resolve().parents[1]
    images = re.findall(r"!\[[^\]]*\]\((docs/[^)]+)\)", README)
    assert images, "the README shows figures from the main job"
    for image in images:
        data = (root / image).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) < 150_000, image


def test_cluster_section_commands_run_as_printed(tmp_path: Path) -> None:
    """The "Running on a cluster" commands, on a free port instead of 8786: a
    scheduler, two single-threaded workers, and the harness run against them."""
    import shlex
    import signal
    import socket
    import subprocess
    import sys
    import time
    import tomllib

    psutil = pytest.importorskip("psutil")
    pytest.importorskip("distributed")
    root = Path(__file__).resolve().parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(dep.startswith("dask[distributed]") for dep in extras["dask"])
    assert "pip install 'npuzzle-harness[dask]'" in [b.strip() for b in _blocks("bash")]
    (block,) = [b for b in _blocks("bash") if "dask scheduler" in b]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    lines = [line.replace("8786", port) for line in block.strip().splitlines()]
    cluster, (harness_line,) = lines[:-1], lines[-1:]
    bindir = Path(sys.executable).parent
    procs = []
    log = open(tmp_path / "cluster.log", "ab")
    try:
        for line in cluster:
            words = shlex.split(line.rstrip("& "))
            assert words[0] == "dask"
            procs.append(
                subprocess.Popen(
                    [str(bindir / "dask"), *words[1:]],
                    cwd=tmp_path,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                )
            )
            if words[1] == "scheduler":
                time.sleep(1.0)  # the workers retry until it listens
        import distributed  # both workers up first (a loaded machine starts slowly)

        with distributed.Client(f"tcp://127.0.0.1:{port}", timeout="60s") as client:
            client.wait_for_workers(2, timeout=60)
        words = shlex.split(harness_line)
        assert words[:2] == ["harness", "run"]
        result = CliRunner().invoke(
            app,
            [*words[1:], "--out", str(tmp_path / "results"), "--no-report", "--quiet"],
        )
        assert result.exit_code == 0, result.output
        meta, rows = read_run(Path(result.output.strip().splitlines()[-1]))
        assert set(rows.status) == {"solved"} and (rows.measure == "memory").sum() == 6
        # 2 configs x 3 instances; each cell 2 or 3 timed repeats (adaptive stop)
        taken = rows[rows.measure == "time"].groupby(["config", "instance"])
        assert len(taken) == 6 and taken.size().between(2, 3).all()
        assert (taken.size() == taken.repeats_taken.first()).all()
        assert meta["executors"][0]["kind"] == "dask"
        assert meta["executors"][0]["slots"] == 2
        assert 1 <= len(meta["workers"]) <= 2 and set(meta["hosts"])
    finally:
        family = []
        for p in procs:
            try:
                top = psutil.Process(p.pid)
                family += [top, *top.children(recursive=True)]
            except psutil.NoSuchProcess:
                pass
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.wait(30)
        log.close()
    time.sleep(0.5)
    assert not [p for p in family if p.is_running() and p.status() != "zombie"]
