"""The README's and the documentation's promises that a test can keep: the two set-up
commands lead the README, the plugin examples of docs/plugins.md (solver, blind
solver, heuristic, generator, report plot) work exactly as printed, the experiment
file is the committed one, the cluster commands run, and every `harness` command line
in a code block names commands and options that exist; the README's and
docs/architecture.md's Layout blocks match harness/'s tree."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.analysis import read_run
from harness.cli import app
from harness.solver import scoped_registry

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: Every page of the site, by file name (docs/*.md).
PAGES = {p.name: p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}
DOCS = "\n".join([README, *PAGES.values()])


def _blocks(language: str, text: str | None = None) -> list[str]:
    """The fenced blocks of one language, in the README and every page by default."""
    return re.findall(rf"```{language}\n(.*?)```", text or DOCS, flags=re.S)


def test_readme_opens_with_the_two_commands() -> None:
    before_prose = README.split("\n\nThe first command")[0]
    commands = [b.strip() for b in _blocks("bash", README) if b.strip() in before_prose]
    assert len(commands) == 2
    main_job, tests = commands
    assert main_job.endswith("harness run --solvers all")
    assert tests.endswith("pytest -q")
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert tests in ci, ".ci/run must run the README's test command as written"


def test_writing_a_solver_example_runs_as_a_plugin(tmp_path: Path) -> None:
    (example,) = [b for b in _blocks("python") if '@register("my_greedy"' in b]
    plugin = tmp_path / "my_greedy.py"
    plugin.write_text(example)
    out = tmp_path / "results"
    result = CliRunner().invoke(
        app,
        ["run", "--plugin", str(plugin), "--solvers", "my_greedy,astar_dict",
         "--datasets", "8-seeds", "--repeats", "1", "--no-memory", "--jobs", "1",
         "--no-report", "--quiet", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    meta, rows = read_run(Path(result.output.strip().splitlines()[-1]))
    # the plugin's own code was measured, not a built-in of the same name
    assert meta["solvers"]["my_greedy[manhattan]"]["module"].startswith(
        "harness_plugin_my_greedy_"
    )
    greedy = rows[rows.solver == "my_greedy"]
    assert len(greedy) == 3 and set(greedy.status) == {"solved"}
    assert (greedy.path_length >= greedy.optimal_length).all()
    assert (greedy.generated > 0).all()


def test_writing_a_solver_lists_the_whole_capability_vocabulary() -> None:
    from harness.heuristics import KERNEL_INTERFACES, Capability

    section = PAGES["plugins.md"].split("## Writing a solver")[1].split("\n## ")[0]
    prose = " ".join(section.split("```")[2::2])  # outside the code blocks
    spelt = {c for c in Capability
             if c.name in ("EVALUATE", "NO_TABLES", "TILE_COST", "COSTS")}  # fmt: skip
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
    assert "harness report results/<run-id> --plugin my_plots.py" in DOCS


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "compare-heuristics.toml"


def test_experiment_file_example_is_the_committed_file() -> None:
    (block,) = [b for b in _blocks("toml") if "compare three heuristics" in b]
    assert block == EXAMPLE.read_text()
    assert "harness run --config examples/compare-heuristics.toml" in DOCS


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


def test_docs_images_exist_and_are_small() -> None:
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", PAGES["measurement.md"])
    assert images, "the measurement page shows figures from the main job"
    for image in images:
        data = (ROOT / "docs" / image).read_bytes()
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


def test_blind_solver_example_declines_by_goal_and_keeps_its_descriptions(
    tmp_path: Path,
) -> None:
    (example,) = [b for b in _blocks("python") if '@register("iddfs_blind"' in b]
    plugin = tmp_path / "my_blind.py"
    plugin.write_text(example)
    with scoped_registry():
        listed = CliRunner().invoke(app, ["solvers", "--plugin", str(plugin)])
        assert listed.exit_code == 0, listed.output
        lines = [ln for ln in listed.output.splitlines() if ln.strip()]
        line = {ln.split()[0].rstrip(":"): ln for ln in lines}
        assert "Iterative-deepening DFS up to 10 moves" in line["iddfs_blind"]
        assert "Declines every board" in line["never"]
        result = CliRunner().invoke(
            app,
            ["run", "--plugin", str(plugin), "--solvers", "iddfs_blind",
             "--datasets", "8-mini,8-seeds-spiral", "--repeats", "1", "--no-memory",
             "--jobs", "1", "--no-report", "--quiet", "--out", str(tmp_path / "r")],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    _, rows = read_run(Path(result.output.strip().splitlines()[-1]))
    assert set(rows.heuristic) == {"none"}
    spiral = rows[rows.dataset == "8-seeds-spiral"]
    assert set(spiral.status) == {"skipped"}
    assert spiral.message.str.contains("standard goal only").all()
    mini = rows[rows.dataset == "8-mini"]
    shallow = mini[mini.optimal_length <= 10]
    assert len(shallow) == 11 and set(shallow.status) == {"solved"}
    assert (shallow.path_length == shallow.optimal_length).all()
    assert set(mini[mini.optimal_length > 10].status) == {"skipped"}
    assert (mini.status == "unsolvable").sum() == 4


def test_the_home_page_has_the_readme_commands() -> None:
    opening = _blocks("bash", README)[:2]
    assert _blocks("bash", PAGES["index.md"])[:2] == opening


def test_python_and_toml_blocks_parse() -> None:
    import ast
    import tomllib

    for block in _blocks("python"):
        ast.parse(block)
    for block in _blocks("toml"):
        tomllib.loads(block)


def _harness_lines(block: str) -> list[list[str]]:
    """Each `harness ...` command of a bash block as words, up to a pipe or `&&`."""
    import shlex

    text = block.replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            words = list(lexer)
        except ValueError:  # an unbalanced quote in prose-like lines: not a command
            continue
        for i, word in enumerate(words):
            if word.endswith("harness") and (i == 0 or words[i - 1] in "|&&;"):
                rest = words[i + 1 :]
                cut = [j for j, w in enumerate(rest) if set(w) <= set("|&;<>")]
                found.append(rest[: cut[0]] if cut else rest)
    return found


def test_every_harness_command_in_the_docs_names_real_commands_and_options() -> None:
    """A renamed option or command breaks its example in the docs here, not for a
    reader: every `harness` line of a bash block resolves to a command, and every
    `--option` it gives is one that command takes."""
    import typer.main

    root = typer.main.get_command(app)
    checked = 0
    for block in _blocks("bash"):
        for words in _harness_lines(block):
            command, rest = root, list(words)
            # a group (harness, harness datasets) holds its subcommands by name
            while isinstance(command, type(root)) and rest and rest[0][:1] != "-":
                sub = command.commands.get(rest[0])
                assert sub is not None, f"harness {' '.join(words)}: no {rest[0]!r}"
                command, rest = sub, rest[1:]
            names = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            names |= {"--help"}
            for word in rest:
                if word.startswith("--"):
                    option = word.split("=")[0]
                    assert option in names, f"harness {' '.join(words)}: {option}"
            checked += 1
    assert checked > 40


def test_layout_section_lists_every_package_and_nothing_else() -> None:
    """README "Layout": one line per package and top-level module of harness/
    (``harness/puzzle.py, solver.py``: names after the first are beside it)."""
    block = README.split("## Layout\n", 1)[1].split("```", 2)[1]
    listed = set()
    for line in block.splitlines():
        if not line.startswith("harness/"):
            continue
        names = line.split("  ")[0].removeprefix("harness/").split(", ")
        listed |= {name.strip() for name in names}
    root = Path(__file__).resolve().parents[1] / "harness"
    packages = {
        f"{init.parent.relative_to(root).as_posix()}/"
        for init in root.rglob("__init__.py")
        if init.parent != root
    }
    modules = {p.name for p in root.glob("*.py") if p.name != "__init__.py"}
    assert listed == packages | modules


def test_architecture_layout_names_every_package_and_module_of_the_tree() -> None:
    """docs/architecture.md "Layout": one entry per package (and top-level module)
    of harness/, each package's entry naming every module in it, and no entry for
    a package or module that is gone."""
    block = PAGES["architecture.md"].split("## Layout\n", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    key = None
    for line in block.splitlines():
        if line[:11].strip() not in ("", "harness/"):
            break  # the next top-level folder (solvers/, tests/, ...)
        if line[11:12].strip():
            key, _, text = line[11:].partition(" ")
            entries[key] = text
        elif key is not None:
            entries[key] += " " + line.strip()
    root = ROOT / "harness"
    folders = {d for d in root.rglob("*") if d.is_dir() and d.name != "__pycache__"}
    expected = {f"{d.relative_to(root).as_posix()}/" for d in folders}
    expected |= {p.name for p in root.glob("*.py") if p.name != "__init__.py"}
    assert set(entries) == expected
    for folder in folders:
        text = entries[f"{folder.relative_to(root).as_posix()}/"].lower()
        for module in folder.glob("*.py"):
            if module.stem != "__init__":
                assert re.search(rf"\b{module.stem}\b", text), (folder, module.stem)


def test_the_docs_state_the_regression_thresholds_the_cli_uses() -> None:
    """docs/regression.md once gave history a 1.25x threshold while the CLI used
    1.10x: every `--min-ratio` it mentions is followed by the defaults the
    comparer uses (normalized, then raw)."""
    from harness.core.defaults import MIN_RATIO, MIN_RATIO_RAW

    page = PAGES["regression.md"]
    mentions = [m.end() for m in re.finditer(r"`--min-ratio`", page)]
    assert len(mentions) >= 2  # harness compare and harness history
    for end in mentions:
        stated = re.findall(r"(\d+\.\d+)x", page[end : end + 120])[:2]
        assert stated == [f"{MIN_RATIO:.2f}", f"{MIN_RATIO_RAW:.2f}"], page[end:end+120]


def test_the_tour_runs_as_written(tmp_path: Path, monkeypatch) -> None:
    """The tour once imported a boards.txt that did not exist: every file it names
    is in the checkout, and its import line runs (into tmp_path)."""
    import shlex

    for text in (README, PAGES["getting-started.md"]):
        tour = text.split("## A 30-second tour")[1].split("```bash\n")[1].split("```")[0]
        for name in re.findall(r"[\w./-]+\.(?:txt|jsonl|toml)\b", tour):
            assert (ROOT / name).is_file(), f"the tour names {name}, not in the checkout"
    line = next(ln for ln in tour.splitlines() if "harness datasets import" in ln)
    monkeypatch.chdir(ROOT)
    args = shlex.split(line.split("#")[0])[1:]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "my-boards.jsonl").is_file()
