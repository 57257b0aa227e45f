"""Experiment files (harness.measure.experiment): grids, unions, errors naming the line."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.measure import experiment
from harness.measure.experiment import ExperimentError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    return path


def test_grid_is_solvers_times_heuristics_times_datasets(tmp_path) -> None:
    exp = experiment.load(_write(tmp_path, """
solvers = ["ida_star", "astar_dict"]
heuristics = ["manhattan", "misplaced"]
datasets = ["8-seeds", "8-mini"]
repeats = 2
timeout = 5
"""))
    assert exp.configs == [
        "ida_star[manhattan]", "ida_star[misplaced]",
        "astar_dict[manhattan]", "astar_dict[misplaced]",
    ]  # fmt: skip
    assert all(ds == ["8-seeds", "8-mini"] for ds in exp.pairs.values())
    assert len(exp.pair_set()) == 8
    assert exp.options == {"repeats": 2, "timeout": 5}
    assert len(exp.sha256) == 64


def test_union_of_grids_and_what_is_not_formed(tmp_path) -> None:
    exp = experiment.load(_write(tmp_path, """
solvers = ["bfs", "astar_dict"]
heuristics = ["manhattan", "walking_distance"]
datasets = ["8-seeds"]

[[grid]]
configs = ["ida_star_jit[pdb44]"]

[[grid]]
solvers = ["ida_star"]
datasets = ["8-mini", "8-seeds"]
"""))
    assert exp.pairs == {
        "bfs": ["8-seeds"],
        "astar_dict[manhattan]": ["8-seeds"],
        "ida_star_jit[pdb44]": ["8-seeds"],  # inherits the top-level datasets
        "ida_star[manhattan]": ["8-mini", "8-seeds"],
        # ida_star x walking_distance is not formed either
    }
    assert exp.datasets == ["8-seeds", "8-mini"]
    assert any(t.startswith("bfs x manhattan, walking_distance: bfs is blind")
               for t in exp.not_formed)  # fmt: skip
    # each config is parsed once and handed to the run as a value
    from harness.configs import ConfigKey

    assert list(exp.values) == list(exp.pairs)
    assert [c.key for c in exp.values.values()] == [
        ConfigKey("bfs", None), ConfigKey("astar_dict", "manhattan"),
        ConfigKey("ida_star_jit", "pdb44"), ConfigKey("ida_star", "manhattan"),
    ]  # fmt: skip
    assert any(t.startswith("astar_dict[walking_distance]: astar_dict does not take")
               for t in exp.not_formed)  # fmt: skip


@pytest.mark.parametrize(
    "text, message",
    [
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nrepeat = 3\n',
         "line 3: unknown key 'repeat'"),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\n\nrepeats = 0\n',
         "line 4: repeats = 0: must be a whole number from 1 to 1,000"),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\ntimeout = "10"\n',
         "line 3: timeout = '10': must be more than 0 and at most 86,400 seconds"),
        ('datasets = ["8-seeds"]\nsolvers = ["bfz"]\n',
         "line 2: unknown solver 'bfz'"),
        ('solvers = ["bfs"]\n\ndatasets = ["8-nope"]\n',
         "line 3: dataset '8-nope'"),
        ('solvers = ["ida_star"]\nheuristics = ["manhatan"]\ndatasets = ["8-seeds"]\n',
         "line 2: unknown heuristic 'manhatan'"),
        ('datasets = ["8-seeds"]\n[[grid]]\nsolvers = ["bfs"]\n\n[[grid]]\nsolver = ["bfs"]\n',
         "line 6: unknown key 'solver' in [[grid]]"),
        ('datasets = ["8-seeds"]\n[[grid]]\nsolvers = ["bfs"]\n[[grid]]\ndatasets = ["8-mini"]\n',
         "line 4: no solvers or configs (grid 2)"),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nexecutor = "spark"\n',
         "line 3: executor = 'spark': must be one of \"local\", \"dask\" or \"inline\""),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nscheduler = "tcp://h:8786"\n',
         "line 3: scheduler = 'tcp://h:8786' needs executor = \"dask\""),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nexecutor = "dask"\njobs = 0\n',
         "line 4: jobs = 0: the dask executor needs at least 1 worker"),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nexecutor = "dask"\n'
         'scheduler = "tcp://h:8786"\njobs = 2\n',
         "line 5: jobs = 2 applies to the local Dask cluster the harness starts"),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nexecutor = "dask"\n'
         'scheduler = ""\n', "line 4: scheduler = '': must be a Dask scheduler address"),
        ('solvers = ["bfs"\n', "not valid TOML"),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nmemory_pass = 1\n',
         "line 3: memory_pass = 1: must be true or false"),
        ('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nmin_sample_seconds = -0.1\n',
         "line 3: min_sample_seconds = -0.1: must be 0 (one solve per sample) to 10 "
         "seconds"),
    ],
)  # fmt: skip
def test_bad_files_name_the_line(tmp_path, text, message) -> None:
    with pytest.raises(ExperimentError) as err:
        experiment.load(_write(tmp_path, text))
    assert message in str(err.value)
    assert str(err.value).startswith(str(tmp_path / "experiment.toml"))


def test_dask_executor_and_scheduler_become_run_arguments(tmp_path) -> None:
    exp = experiment.load(_write(tmp_path, """
solvers = ["bfs"]
datasets = ["8-seeds"]
executor = "dask"
scheduler = "tcp://10.0.0.5:8786"
repeats = 2
memory_pass = false
gc = true
"""))  # fmt: skip
    args = experiment.run_arguments(exp)
    assert args["executor"] == "dask" and args["scheduler"] == "tcp://10.0.0.5:8786"
    assert "jobs" not in args
    assert [c.label for c in args["solvers"]] == ["bfs"]  # configs, not labels
    assert args["datasets"] == ["8-seeds"]
    assert args["pairs"] == {("bfs", "8-seeds")}
    assert args["repeats"] == 2
    assert args["memory_pass"] is False and args["gc"] is True
    assert "min_sample_seconds" not in args  # the run's default applies
    timed = experiment.load(_write(tmp_path, 'solvers = ["bfs"]\n'
                                   'datasets = ["8-seeds"]\nmin_sample_seconds = 0\n'))
    assert experiment.run_arguments(timed)["min_sample_seconds"] == 0
    local = experiment.load(_write(tmp_path, 'solvers = ["bfs"]\n'
                                   'datasets = ["8-seeds"]\nexecutor = "inline"\n'))
    assert experiment.run_arguments(local)["jobs"] == 0
    assert "executor" not in experiment.run_arguments(local)
    dask_here = experiment.load(_write(tmp_path, 'solvers = ["bfs"]\n'
                                       'datasets = ["8-seeds"]\nexecutor = "dask"\n'
                                       "jobs = 2\n"))  # a LocalCluster of 2 workers
    assert experiment.run_arguments(dask_here)["jobs"] == 2


def test_matrix_counts_runs_skips_and_reasons(tmp_path) -> None:
    exp = experiment.load(_write(tmp_path, """
solvers = ["bfs"]
datasets = ["8-seeds", "8-mini"]
"""))

    def cell(config, dataset, refusal=None):
        return SimpleNamespace(config=SimpleNamespace(label=config),
                               dataset=SimpleNamespace(name=dataset), refusal=refusal)

    cells = [cell("bfs", "8-seeds")] * 3 + [cell("bfs", "8-mini")] * 30 + [
        cell("bfs", "8-mini", "too deep")] * 6  # fmt: skip
    lines = experiment.matrix(exp, cells, reused={("bfs", "8-mini"): 10})
    assert "1 configs, 2 datasets, 39 cells" in lines[0]
    assert lines[3].split() == ["bfs", "3", "run", "20", "run", "+10", "reused,", "6", "skip"]
    assert "total: 23 cells to run, 10 reused, 6 skipped" in lines[4]
    assert "  bfs on 8-mini: 6 cells: too deep" in lines


def test_dataset_files_are_loaded_by_path_relative_or_absolute(tmp_path) -> None:
    """A dataset file named by an absolute path ran as an unknown dataset name."""
    from harness.datasets import save_dataset, select_datasets

    mini = select_datasets("8-mini")[0]
    elsewhere = tmp_path / "sets"
    absolute = save_dataset(mini, elsewhere / "8-mini.jsonl")
    save_dataset(mini, tmp_path / "8-mini.jsonl")
    exp = experiment.load(_write(tmp_path, f'solvers = ["bfs"]\ndatasets = '
                                 f'["{absolute}"]\n'))  # fmt: skip
    assert exp.dataset_specs == [str(absolute)]
    near = experiment.load(_write(tmp_path, 'solvers = ["bfs"]\n'
                                  'datasets = ["8-mini.jsonl", "8-seeds"]\n'))
    assert near.dataset_specs == [str(tmp_path / "8-mini.jsonl"), "8-seeds"]
    assert select_datasets(exp.dataset_specs[0])[0].checksum == mini.checksum


def test_a_grid_past_the_cell_limit_is_refused_before_it_is_formed(
    tmp_path, monkeypatch
) -> None:
    """A 10 KB file of 1000 x 1001 parameter values ran --dry-run past 120 s at
    1.7 GB (issue 35 item 9): refused at once, with the count."""
    import time

    from harness.measure import plan

    weights = ", ".join(f"{1 + i / 100:.2f}" for i in range(1000))
    efforts = ", ".join(str(i) for i in range(1001))
    path = _write(tmp_path, f"""solvers = ["awastar"]
heuristics = ["manhattan"]
datasets = ["8-seeds"]
params = {{ w = [{weights}], effort = [{efforts}] }}
""")
    started = time.process_time()
    with pytest.raises(ExperimentError, match=r"line 4: awastar: 1,001,000 param"):
        experiment.load(path)
    assert time.process_time() - started < 5  # parsing 2,001 values, no product
    # the union of grids is counted too, and the command line's grid
    monkeypatch.setattr(experiment, "MAX_CELLS", 5)
    monkeypatch.setattr(plan, "MAX_CELLS", 5)
    with pytest.raises(ExperimentError, match="6 cells .configs x instances.: more"):
        experiment.load(_write(tmp_path, """
solvers = ["bfs"]
datasets = ["8-seeds"]
[[grid]]
solvers = ["ida_star"]
heuristics = ["manhattan"]
"""))
    with pytest.raises(plan.RunError, match="9 cells"):
        plan.make_plan(["bfs", "table", "ida_star[manhattan]"], "8-seeds", use_oracle=False)
