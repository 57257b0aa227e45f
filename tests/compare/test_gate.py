"""The counters gate: the committed baseline still matches, and the gate's diff
catches what it exists to catch (moved counters, new or vanished solvers)."""

from __future__ import annotations

import copy
import json

import pytest

from harness.compare import gate
from harness.configs import SolverConfig, parse_config
from harness.core import oracle
from harness.heuristics import make_heuristic
from harness.puzzle import goal_board, grid
from harness.solver import _REGISTRY, Counters, SolverSpec, load_plugin

QUICK = ("astar_dict[manhattan]", "ida_star[misplaced]", "bfs")


def quick_configs() -> list[SolverConfig]:
    return [parse_config(label) for label in QUICK]


@pytest.fixture(scope="module")
def computed() -> dict:
    """The quick configs' counters, computed once for the module (a copy each)."""
    return gate.compute(quick_configs())


@pytest.fixture
def quick(computed) -> dict:
    return copy.deepcopy(computed)


def without(data: dict, *labels: str) -> dict:
    """``data`` as if computed without these configs."""
    out = copy.deepcopy(data)
    for label in labels:
        del out["results"][label]
    return out


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_counters_match_the_committed_baseline():
    lines = gate.check()
    assert not lines, "counters moved:\n" + "\n".join(lines)


@pytest.mark.parametrize(
    "board", [b for b in gate.BOARDS if b.size == "3x3"], ids=lambda b: b.name
)
def test_3x3_board_depths_are_exact(board):
    assert (
        oracle.distance(board.start_board, board.goal_board, board.grid) == board.depth
    )


def test_4x4_board_depth_is_exact():
    [board] = [b for b in gate.BOARDS if b.size == "4x4"]
    start, goal, g = board.start_board, board.goal_board, board.grid
    seen, layer, depth = {start}, [start], 0
    while goal not in seen:  # breadth-first from the start, layer by layer
        depth += 1
        assert depth <= board.depth, f"{board.name} is deeper than {board.depth}"
        nxt = []
        for b in layer:
            for _, child in g.successors(b):
                if child not in seen:
                    seen.add(child)
                    nxt.append(child)
        layer = nxt
    assert depth == board.depth


def test_gate_covers_every_builtin_solver_and_heuristic():
    labels = {c.label for c in gate.gate_configs()}
    assert {
        "bfs",
        "bidir_bfs",
        "astar_dict[misplaced]",
        "ida_star[linear_conflict]",
    } <= labels


def test_stored_baseline_is_readable_and_lists_its_update_command():
    data = gate.load()
    assert data["command"] == gate.UPDATE_COMMAND
    assert data["boards"] == {b.name: b.as_dict() for b in gate.BOARDS}


def test_round_trip_through_the_file_gives_no_diff(tmp_path, quick):
    path = tmp_path / "golden.json"
    path.write_text(gate.dumps(quick))
    assert json.loads(path.read_text()) == quick
    # computed again: the counters are deterministic
    assert gate.diff(gate.load(path), gate.compute(quick_configs())) == []


def test_moved_counter_is_one_readable_line(quick, computed):
    baseline = quick
    cell = baseline["results"]["bfs"]["3x3-d12"]
    cell["expanded"] -= 10
    cell["generated"] += 3
    now = computed["results"]["bfs"]["3x3-d12"]
    lines = gate.diff(baseline, computed)
    assert lines == [
        f"bfs on 3x3-d12: expanded {now['expanded'] - 10:,} -> {now['expanded']:,} "
        f"(+10, {100 * 10 / (now['expanded'] - 10):+.1f}%); generated "
        f"{now['generated'] + 3:,} -> {now['generated']:,} "
        f"(-3, {-100 * 3 / (now['generated'] + 3):+.1f}%)"
    ]


def test_weaker_heuristic_is_caught(monkeypatch):
    """A deliberate algorithmic change: manhattan quietly replaced by misplaced."""
    config = [parse_config("astar_dict[manhattan]")]
    baseline = gate.compute(config)

    def weaker(name, goal, g):
        return make_heuristic("misplaced" if name == "manhattan" else name, goal, g)

    monkeypatch.setattr(gate, "make_heuristic", weaker)
    lines = gate.diff(baseline, gate.compute(config))
    moved = {line.split(":")[0] for line in lines}
    assert "astar_dict[manhattan] on 3x3-d24" in moved
    assert all("expanded" in line for line in lines if "d00" not in line)


def test_solver_missing_from_the_baseline_fails_with_the_command(computed):
    lines = gate.diff(without(computed, "bfs"), computed)
    assert lines == ["bfs: not in baseline; run python -m harness.compare.gate --update"]


def test_solver_gone_from_the_registry_is_reported(computed):
    lines = gate.diff(computed, without(computed, "astar_dict[manhattan]"))
    assert lines == [
        "astar_dict[manhattan]: in the baseline but no longer registered; "
        "if removed on purpose, run python -m harness.compare.gate --update"
    ]


def test_changed_board_set_asks_for_an_update(quick, computed):
    baseline = quick
    baseline["boards"]["3x3-d05"]["start"] = "1 2 3 4 5 6 7 x 8"
    [line] = gate.diff(baseline, computed)
    assert "board set differs" in line and gate.UPDATE_COMMAND in line


def _fake(name: str, answer):
    def solve(start, goal, g, *, counters: Counters, heuristic=None):
        counters.expanded += 7
        return answer(start, goal, g)

    return SolverConfig(SolverSpec(name=name, solve=solve, optimal=True), None)


@pytest.mark.parametrize(
    ("answer", "board", "status"),
    [
        (lambda s, goal, g: None, "3x3-d05", "invalid: said unsolvable"),
        (
            lambda s, goal, g: "",
            "3x3-unsolvable",
            "invalid: returned a path for an unsolvable board",
        ),
        (lambda s, goal, g: "uu", "3x3-d05", "invalid: illegal path: move 2 ('u'): "),
        (lambda s, goal, g: "l", "3x3-d05", "invalid: path of 1 moves ends at "),
        (lambda s, goal, g: "lrlr", "3x3-d00", "invalid: path of 4 moves, but the "),
        (lambda s, goal, g: 1 / 0, "3x3-d05", "error"),
    ],
)
def test_wrong_answers_are_recorded_not_trusted(answer, board, status):
    [b] = [x for x in gate.BOARDS if x.name == board]
    out = gate.measure(_fake("fake", answer), b)
    assert out["status"].startswith(status)


def test_plugins_loaded_elsewhere_are_not_gated(tmp_path):
    plugin = tmp_path / "gate_probe.py"
    plugin.write_text(
        "from harness.solver import register\n"
        "@register('gate_probe_fake', optimal=False)\n"
        "def solve(start, goal, grid, *, counters, heuristic=None):\n"
        "    return None\n"
    )
    try:
        assert load_plugin(str(plugin)) == ["gate_probe_fake"]
        assert "gate_probe_fake" not in {c.label for c in gate.gate_configs()}
    finally:
        _REGISTRY.pop("gate_probe_fake", None)


def test_command_line_without_a_baseline_says_what_to_run(tmp_path, capsys):
    assert gate.main(["--baseline", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "run python -m harness.compare.gate --update" in err


def test_command_line_reports_moved_counters(tmp_path, capsys, monkeypatch, quick):
    monkeypatch.setattr(gate, "gate_configs", quick_configs)
    # the command's wiring, not the counters again: compute was run once above
    monkeypatch.setattr(gate, "compute", lambda *a, **k: copy.deepcopy(quick))
    path = tmp_path / "golden.json"
    assert gate.main(["--update", "--baseline", str(path)]) == 0
    assert gate.main(["--baseline", str(path)]) == 0
    data = json.loads(path.read_text())
    data["results"]["ida_star[misplaced]"]["3x3-d24"]["iterations"] += 1
    path.write_text(gate.dumps(data))
    assert gate.main(["--baseline", str(path)]) == 1
    out = capsys.readouterr().out
    assert "counters gate: 1 difference(s)" in out
    assert "ida_star[misplaced] on 3x3-d24: iterations" in out


def test_spiral_board_uses_the_spiral_goal():
    [b] = [x for x in gate.BOARDS if x.goal == "spiral"]
    assert (
        b.goal_board == goal_board("spiral", grid(3)) != goal_board("standard", grid(3))
    )


def test_4x4_quick_board_is_solved_by_bfs_within_its_limits():
    # the 4x4 board must stay shallow enough for every blind solver
    [b] = [x for x in gate.BOARDS if x.size == "4x4"]
    assert gate.measure(parse_config("bfs"), b)["status"] == "solved"
