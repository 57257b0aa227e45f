"""Bounded and greedy solvers: parameters in configs, the claimed bound checked by
the judge, and the searches themselves (the shared tests in test_solvers.py run
every config against exact distances and its bound; these check the promises
the shared tests cannot see)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from known_boards import G3, KNOWN
from typer.testing import CliRunner

from harness.analysis import load_run, read_run
from harness.cli import app
from harness.configs import ConfigKey, parse_config, select_solvers
from harness.core.judge import judge
from harness.heuristics import make_heuristic
from harness.measure.resume import plan_from_meta
from harness.puzzle import apply_moves, goal_board, grid
from harness.solver import Counters

PLUGIN = str(Path(__file__).parent / "plugins" / "misbehaving.py")
QUICK = ["--repeats", "1", "--no-memory", "--jobs", "0", "--no-report", "--quiet"]
HARD = [k for k in KNOWN if k.optimum and k.optimum >= 19]  # 19, 30 and 31 moves


def invoke(*args: str):
    return CliRunner().invoke(app, ["run", *map(str, args)])


def _run_dir(result) -> Path:
    assert result.exit_code == 0, result.output
    return Path(result.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ configs


def test_parameters_parse_once_into_one_canonical_label() -> None:
    same = ["wastar[manhattan,w=1.5]", "wastar[manhattan, w=1.50]",
            "wastar[manhattan,w=3/2]", "wastar[w=1.5]"]  # fmt: skip
    configs = {parse_config(t) for t in same}
    assert len(configs) == 1
    (config,) = configs
    assert config.label == "wastar[manhattan,w=1.5]"
    assert config.params == (("w", Fraction(3, 2)),) and config.bound == Fraction(3, 2)
    # defaults are written out, so a run says which weight it used
    assert parse_config("wastar").label == "wastar[manhattan,w=2]"
    assert parse_config("awastar[linear_conflict]").label == (
        "awastar[linear_conflict,w=2,effort=4]"
    )
    assert parse_config("wastar[manhattan,w=4/3]").label == "wastar[manhattan,w=4/3]"
    assert parse_config("greedy").bound is None
    assert parse_config("astar_dict").bound == 1
    # the key travels to workers and files as values, and comes back equal
    key = config.key
    assert key.resolve() == config and ConfigKey.from_stored(key.stored()) == key
    assert json.loads(json.dumps(key.stored())) == ["wastar", "manhattan", {"w": "1.5"}]
    assert ConfigKey.from_stored(["astar_dict", "manhattan"]).resolve() == (
        parse_config("astar_dict[manhattan]")
    )
    labels = {c.label for c in select_solvers("all")}
    assert {"wastar[manhattan,w=2]", "greedy[manhattan]"} <= labels


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("wastar[manhattan,w=0.5]", "w '0.5' must be at least 1"),
        ("wastar[manhattan,w=1_5]", "w '1_5' is not a number"),  # not w=15
        ("wastar[manhattan,w=١٢]", "w '\\u0661\\u0662' is not a number"),
        ("wastar[manhattan,w=abc]", "'abc' is not a number"),
        ("wastar[manhattan,w=1.234]", "too fine"),
        ("wastar[manhattan,w=2,w=3]", "parameter 'w' given twice"),
        ("wastar[manhattan,x=2]", "solver 'wastar' has no parameter 'x'; it takes: w"),
        ("greedy[manhattan,w=2]", "has no parameter 'w'; it takes: no parameters"),
        ("wastar[manhattan,w]", "'w' is not PARAM=VALUE"),
        ("wastar[pdb663,w=2]", "does not take heuristic 'pdb663'"),
    ],
)
def test_bad_parameters_are_one_line_errors(token: str, message: str) -> None:
    with pytest.raises(KeyError) as err:
        parse_config(token)
    assert message in err.value.args[0] and "\n" not in err.value.args[0]
    result = invoke("--solvers", token, "--datasets", "8-seeds", "--dry-run")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert message in result.output


# ------------------------------------------------------------- the judge


def test_the_judge_checks_a_path_against_its_bound() -> None:
    k = next(k for k in KNOWN if k.optimum == 19)
    path = "".join(parse_config("astar_dict").solve(
        k.start, k.goal, k.grid, counters=Counters(), heuristic=None))  # fmt: skip
    back = {"u": "d", "d": "u", "l": "r", "r": "l"}
    detour = path + path[-1:].translate(str.maketrans(back)) + path[-1:]  # 21 moves
    fine = judge(detour, k.start, k.goal, k.grid, solvable=True, optimum=19,
                 bound=Fraction(6, 5))  # fmt: skip
    assert fine.status == "solved" and fine.is_optimal is False  # 21 <= 22.8
    over = judge(detour, k.start, k.goal, k.grid, solvable=True, optimum=19,
                 bound=Fraction(11, 10))  # fmt: skip
    assert over.status == "invalid"
    assert over.message == (
        "path of 21 moves, but the optimum is 19 and the solver's bound allows at "
        "most 1.1 x 19 = 20.9 moves"
    )
    exact = judge(detour, k.start, k.goal, k.grid, solvable=True, optimum=19, bound=1)
    assert exact.status == "invalid" and "declares itself optimal" in exact.message
    free = judge(detour, k.start, k.goal, k.grid, solvable=True, optimum=19)
    assert free.status == "solved"  # no bound claimed: nothing to break


def test_a_solver_past_its_bound_is_invalid_with_the_bound_in_the_message(tmp_path):
    from plugins.tiny import make_dataset, walk

    import harness

    goal = goal_board("standard", G3)
    boards = [walk(goal, G3, 10 + 2 * i, seed=i) for i in range(4)]
    frame = harness.run(["overshoot[w=1.25]", "greedy", "astar_dict"],
                        [make_dataset("walks", boards)], plugins=[PLUGIN],
                        repeats=1, memory_pass=False, jobs=0, warmup=0,
                        reference=False, out=tmp_path)  # fmt: skip
    meta, rows = read_run(frame.attrs["run_dir"])
    over = rows[rows.config == "overshoot[w=1.25]"]
    solvable = over[over.solvable]
    assert set(solvable.status) == {"invalid"}
    for r in solvable.itertuples():
        limit = Fraction(5, 4) * r.optimal_length
        assert r.path_length > limit
        assert (f"the solver's bound allows at most 1.25 x {r.optimal_length} = "
                f"{float(limit):g} moves") in r.message  # fmt: skip
    assert set(over.bound) == {1.25}
    greedy = rows[(rows.config == "greedy[manhattan]") & rows.solvable]
    assert set(greedy.status) == {"solved"} and greedy.bound.isna().all()
    assert (greedy.suboptimality == greedy.path_length / greedy.optimal_length).all()
    optimal = rows[(rows.config == "astar_dict[manhattan]") & rows.solvable]
    assert set(optimal.bound) == {1.0} and set(optimal.suboptimality) == {1.0}
    assert meta["solvers"]["overshoot[w=1.25]"]["params"] == {"w": "1.25"}
    assert meta["solvers"]["overshoot[w=1.25]"]["guarantee"] == "bounded by w"


# ------------------------------------------------------------ the searches


def _solve(label: str, start, goal, g):
    config = parse_config(label)
    h = make_heuristic(config.heuristic, goal, g)
    if config.spec.prepare is not None:
        config.spec.prepare(g, goal, h)
    counters = Counters()
    return config.solve(start, goal, g, counters=counters, heuristic=h), counters


@pytest.mark.parametrize("mode", ["wastar[{h},w=1.5]", "greedy[{h}]",
                                  "awastar[{h},w=3,effort=2]"])  # fmt: skip
@pytest.mark.parametrize("heuristic", ["manhattan", "linear_conflict", "misplaced"])
def test_compiled_searches_answer_and_count_exactly_as_the_python_ones(
    mode: str, heuristic: str
) -> None:
    """Same order (f, then h, then push order), same reopening and pruning: the
    compiled kernel must give the same path and every counter, extras included."""
    g4 = grid(4)
    goal4 = goal_board("standard", g4)
    boards = [(k.start, k.goal, k.grid) for k in HARD[:3]]
    walk = "ulldrurdlluurrddlluurdldrulurdd"
    boards.append((apply_moves(goal4, walk, g4), goal4, g4))
    pure = mode.format(h=heuristic)
    name, _, rest = pure.partition("[")
    for start, goal, g in boards:
        a = _solve(pure, start, goal, g)
        b = _solve(f"{name}_jit[{rest}", start, goal, g)
        assert a == b, (pure, start)


def test_weight_one_is_optimal_and_weights_trade_length_for_nodes() -> None:
    k = max(HARD, key=lambda k: k.optimum)
    lengths, nodes = {}, {}
    for w in ("1", "1.5", "3"):
        label = f"wastar_jit[manhattan,w={w}]"
        moves, counters = _solve(label, k.start, k.goal, k.grid)
        lengths[w], nodes[w] = len(moves), counters.expanded
    assert lengths["1"] == k.optimum
    assert nodes["1"] > nodes["1.5"] > nodes["3"]


def test_anytime_improves_its_first_solution_and_proves_optimality() -> None:
    """With effort to spare, the search runs its open list dry: the path is then
    optimal and the counters say so; its first solution is weighted A*'s."""
    k = next(k for k in HARD if k.grid == G3)
    first, _ = _solve("wastar[manhattan,w=5]", k.start, k.goal, k.grid)
    moves, counters = _solve("awastar[manhattan,w=5,effort=1000]", k.start, k.goal,
                             k.grid)  # fmt: skip
    extra = counters.extra
    assert extra["first_length"] == len(first) > k.optimum
    assert extra["proved"] == 1 and len(moves) == k.optimum
    assert extra["improvements"] >= 1
    quick, counters = _solve("awastar[manhattan,w=5,effort=0]", k.start, k.goal, k.grid)
    assert quick == first and counters.extra["proved"] == 0


def test_greedy_never_reopens_a_board() -> None:
    k = max(HARD, key=lambda k: k.optimum)
    _, counters = _solve("greedy[manhattan]", k.start, k.goal, k.grid)
    assert "stale" not in counters.extra  # a board is pushed once, so never stale


# ------------------------------------------------- runs, files and reports


def test_without_an_optimum_rows_say_quality_is_against_the_best_found(tmp_path):
    """Unlabelled 4x4 boards: suboptimality is over the shortest path any config
    of the run found, and the rows say so; stored rows leave it empty."""
    from plugins.tiny import make_dataset, walk

    import harness

    g4 = grid(4)
    goal = goal_board("standard", g4)
    boards = [walk(goal, g4, 24 + 2 * i, seed=i) for i in range(3)]
    ds = make_dataset("unlabelled44", boards, g4, goal, label=False)
    frame = harness.run(["greedy[manhattan]", "wastar[manhattan,w=1.25]"], [ds],
                        repeats=1, memory_pass=False, jobs=0,
                        out=tmp_path)  # fmt: skip
    run_dir = Path(frame.attrs["run_dir"])
    stored = [json.loads(json.dumps(r)) for r in _csv_rows(run_dir)]
    assert {r["suboptimality"] for r in stored} == {""}  # no optimum: nothing stored
    solved = frame[frame.status == "solved"]
    assert set(solved.quality_basis) == {"best found"}
    best = solved.groupby("instance").path_length.transform("min")
    assert (solved.best_length == best).all()
    assert (solved.suboptimality == solved.path_length / best).all()
    assert (solved.suboptimality >= 1).all()
    greedy = solved[solved.config == "greedy[manhattan]"]
    assert (greedy.suboptimality > 1).any()  # greedy wanders; weighted A* is shorter
    from harness.analysis import summary

    run = load_run(run_dir)
    table = summary(run.rows, meta=run.meta)
    assert set(table.quality_basis) == {"best found"}


def _csv_rows(run_dir: Path) -> list[dict[str, str]]:
    from harness.results import read_row_dicts

    return read_row_dicts(run_dir)


def test_a_weight_sweep_round_trips_through_files_resume_and_reuse(tmp_path):
    """Each weight is its own config from the experiment file to the stored
    options, and back: a resume rebuilds the same configs, and --reuse copies a
    cell only to the config of the same weight."""

    exp = tmp_path / "sweep.toml"
    exp.write_text(
        'solvers = ["wastar", "greedy"]\nheuristics = ["manhattan"]\n'
        'params = { w = [1, 1.5, "5/2"] }\ndatasets = ["8-seeds"]\n'
    )
    dry = invoke("--config", exp, "--dry-run")
    assert dry.exit_code == 0, dry.output
    for label in ("wastar[manhattan,w=1]", "wastar[manhattan,w=1.5]",
                  "wastar[manhattan,w=2.5]", "greedy[manhattan]"):  # fmt: skip
        assert label in dry.stdout
    assert "greedy x w = 1, 1.5, 5/2: greedy has no parameter 'w'" in dry.stdout
    out = tmp_path / "results"
    first = _run_dir(invoke("--config", exp, *QUICK, "--out", out))
    meta = json.loads((first / "meta.json").read_text())
    assert ["wastar", "manhattan", {"w": "2.5"}] in meta["options"]["configs"]
    plan = plan_from_meta(meta)
    assert {c.label for c in plan.configs} == {
        "wastar[manhattan,w=1]", "wastar[manhattan,w=1.5]",
        "wastar[manhattan,w=2.5]", "greedy[manhattan]",
    }  # fmt: skip
    _, rows = read_run(first)
    assert set(rows[rows.config == "wastar[manhattan,w=2.5]"].bound) == {2.5}
    loud = [a for a in QUICK if a != "--quiet"]
    again = invoke("--solvers", "wastar[manhattan,w=5/2],wastar[manhattan,w=2]",
                   "--datasets", "8-seeds", *loud, "--out", out, "--reuse", first)
    assert _run_dir(again)
    assert "reused 3 finished cells" in again.stderr  # w=5/2 is w=2.5; w=2 is new


def test_the_report_draws_quality_against_time_and_says_it_in_words(tmp_path):
    """The quality figures and sentences, from a run of an optimal, two weighted
    and a greedy config (the figures' functions directly: write_report draws a
    dozen other plots too)."""
    import harness
    from harness.report import quality
    from harness.report.findings import findings
    from harness.report.styles import style_map
    from harness.report.tables import display_table

    frame = harness.run(["astar_dict", "wastar[manhattan,w=1.5]",
                         "wastar[manhattan,w=3]", "greedy"], "8-seeds", repeats=1,
                        memory_pass=False, jobs=0, warmup=0, reference=False,
                        out=tmp_path)  # fmt: skip
    run = load_run(frame.attrs["run_dir"])
    inst = run.instances()
    styles = style_map(inst["config"].unique())
    scatter, caption = quality.quality_scatter(inst, styles)
    assert len(scatter.axes[0].collections) == 4 and caption  # a point per config
    curves, caption = quality.coverage_vs_bound(inst, styles, 60.0)
    families = {line.get_label() for line in curves.axes[0].lines}
    assert families == {"astar_dict[manhattan]", "wastar[manhattan]",
                        "greedy[manhattan]"}  # fmt: skip
    points = quality.quality_points(inst)
    assert points.pareto[points.cpu_seconds.idxmin()]  # nothing is faster
    shortest = points[points.suboptimality == points.suboptimality.min()]
    assert shortest.suboptimality.iloc[0] == 1 and shortest.pareto.any()
    said = [t for t in findings(run) if " of optimal (worst " in t]
    front = points[points.pareto & (points.bound != 1)]
    assert len(said) == len(front) >= 1
    assert all("faster than astar_dict[manhattan]" in t or "slower than" in t
               for t in said)  # fmt: skip
    table = display_table(run.summary(), "answers")
    assert {"claimed bound", "worst length / optimal"} <= set(table.columns)
    assert set(table["claimed bound"]) == {"optimal", "1.5x optimal", "3x optimal",
                                           "none"}  # fmt: skip


@pytest.mark.parametrize("heuristic", ["linear_conflict", "misplaced",
                                       "walking_distance", "pdb44"])  # fmt: skip
def test_every_heuristic_keeps_the_bound(heuristic: str, exact_distance) -> None:
    """``--solvers all`` (and so test_solvers.py) takes the bounded family with
    manhattan only: the other heuristics, on every known board, here."""
    from harness.configs import every_config

    configs = [c for c in every_config() if c.spec.in_all == "default"
               and c.heuristic == heuristic]  # fmt: skip
    assert configs
    for config in configs:
        for k in KNOWN:
            if config.refuses(k.grid, k.optimum):
                continue
            if not config.spec.name.endswith("_jit") and heuristic == "misplaced" and (
                k.optimum or 0
            ) > 25:
                continue  # seconds each in Python; the _jit twin runs the same search
            moves, _ = _solve(config.label, k.start, k.goal, k.grid)
            exact = exact_distance(k.start, k.goal, k.grid)
            if exact is None:
                assert moves is None
                continue
            assert apply_moves(k.start, moves, k.grid) == k.goal
            assert exact <= len(moves), config.label
            if config.bound is not None:
                assert len(moves) <= config.bound * exact, config.label


@pytest.mark.parametrize("heuristic", ["manhattan", "linear_conflict", "pdb44",
                                       "walking_distance"])  # fmt: skip
def test_weighted_ida_at_weight_one_is_ida_star(heuristic: str) -> None:
    """wida_star runs the IDA* kernels with a weight: at w = 1 every answer and
    counter must be ida_star_jit's, and at w = 2 within twice the optimum."""
    for k in HARD:
        a = _solve(f"wida_star[{heuristic},w=1]", k.start, k.goal, k.grid)
        b = _solve(f"ida_star_jit[{heuristic}]", k.start, k.goal, k.grid)
        assert a == b
        moves, _ = _solve(f"wida_star[{heuristic},w=2]", k.start, k.goal, k.grid)
        assert k.optimum <= len(moves) <= 2 * k.optimum
