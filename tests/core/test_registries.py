"""The one extension mechanism: installed packages' entry points reach the
heuristic, generator and plot registries through harness.core.registries, and
scoped_registry forgets whatever a scope added to any of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core import registries
from harness.datasets import all_generators
from harness.heuristics import all_heuristics
from harness.report.plots import all_plots
from harness.solver import load_plugin, scoped_registry

PACKAGE = '''
from harness.datasets import Drawn, register_generator
from harness.heuristics import Heuristic, register_heuristic
from harness.report.plots import Plot, register_plot


@register_heuristic("ep_zero", "zero, from an entry point")
def ep_zero(goal, grid):
    return Heuristic("ep_zero", goal, grid, lambda board: 0)


@register_generator("ep_goal", "the goal, from an entry point")
def ep_goal(grid, goal, *, stream, count, **_):
    return Drawn([goal], {"count": 1})


@register_plot("ep_plot", "A plot from an entry point")
def ep_plot(data):
    return Plot("ep_plot", "A plot from an entry point", "", skipped="nothing")
'''


class _EntryPoint:
    """What importlib.metadata gives for one entry point; load() imports it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self):
        return load_plugin(str(self.path))


def test_entry_points_fill_every_registry_and_scopes_forget_them(
    tmp_path, monkeypatch
) -> None:
    package = tmp_path / "installed_package.py"
    package.write_text(PACKAGE)
    groups: list[str] = []

    def entry_points(group: str):
        groups.append(group)
        return [_EntryPoint(package)] if group == "npuzzle_harness.heuristics" else []

    with scoped_registry():
        monkeypatch.setattr(registries, "entry_points", entry_points)
        monkeypatch.setattr(registries, "_LOADED", set())
        # one package may offer all three; the first group listed imports it
        assert "ep_zero" in all_heuristics()
        assert "ep_goal" in all_generators() and "ep_plot" in all_plots()
        all_heuristics()
        all_generators()
        assert sorted(groups) == [
            "npuzzle_harness.generators", "npuzzle_harness.heuristics",
            "npuzzle_harness.plots",
        ]  # each group asked once  # fmt: skip
    monkeypatch.undo()
    assert "ep_zero" not in all_heuristics()
    assert "ep_goal" not in all_generators() and "ep_plot" not in all_plots()


def test_refuses_sees_the_goal_and_old_three_argument_refusals_still_work() -> None:
    from harness.puzzle import goal_board, grid
    from harness.solver import all_solvers, register

    g = grid(3)
    standard, spiral = goal_board("standard", g), goal_board("spiral", g)
    seen = []

    def with_goal(grid, depth, heuristic, goal):
        seen.append(goal)
        return None if goal == standard else "standard goal only"

    def solve(start, goal, grid, *, counters, heuristic):
        """One line of its own."""
        return ""

    with scoped_registry():
        register("t_goal", optimal=False, refuses=with_goal)(solve)
        register("t_old", optimal=False, refuses=lambda g, d, h: f"depth {d}")(solve)
        specs = all_solvers()
        assert specs["t_goal"].refuses(g, 5, None, goal=spiral) == "standard goal only"
        assert specs["t_goal"].refuses(g, 5, None, goal=standard) is None
        assert seen == [spiral, standard]
        assert specs["t_old"].refuses(g, 5, None, goal=spiral) == "depth 5"
        assert specs["t_old"].description == "One line of its own."


CLASHES = {
    "solver": '''
from harness.solver import register


@register("greedy", optimal=False)
def solve(start, goal, grid, *, counters, heuristic):
    return None
''',
    "heuristic": '''
from harness.heuristics import Heuristic, register_heuristic


@register_heuristic("manhattan", "zero, under a built-in's name")
def zero(goal, grid):
    return Heuristic("manhattan", goal, grid, lambda board: 0)
''',
    "dataset generator": '''
from harness.datasets import Drawn, register_generator


@register_generator("uniform", "the goal, under a built-in's name")
def uniform(grid, goal, *, stream, count, **_):
    return Drawn([goal], {"count": 1})
''',
    "plot": '''
from harness.report.plots import Plot, register_plot


@register_plot("cactus", "A plot under a built-in's name")
def cactus(data):
    return Plot("cactus", "x", "", skipped="nothing")
''',
}


@pytest.mark.parametrize("kind", CLASHES)
def test_a_plugin_named_like_a_built_in_is_refused_naming_both(kind, tmp_path):
    """Issue 32: a plugin solver named ``greedy`` was silently replaced by the
    built-in, and the user benchmarked code that was not theirs."""
    from harness.datasets import all_generators
    from harness.solver import all_solvers

    plugin = tmp_path / "mine.py"
    plugin.write_text(CLASHES[kind])
    registries_of = {"solver": all_solvers, "heuristic": all_heuristics,
                     "dataset generator": all_generators, "plot": all_plots}
    built_in = registries_of[kind]()
    name = next(n for n in built_in if f'"{n}"' in CLASHES[kind])
    with scoped_registry(), pytest.raises(ImportError) as err:
        load_plugin(str(plugin))
    message = str(err.value)
    assert "\n" not in message and f"{kind} {name!r} is registered twice" in message
    assert "by built-in " in message and str(plugin) in message
    assert registries_of[kind]()[name] is built_in[name]  # the built-in stays


def test_the_same_plugin_loaded_twice_is_no_clash(tmp_path):
    plugin = tmp_path / "twice.py"
    plugin.write_text(CLASHES["solver"].replace('"greedy"', '"twice_greedy"'))
    with scoped_registry():
        assert load_plugin(str(plugin)) == ["twice_greedy"]
        assert load_plugin(str(plugin)) == []  # replaced by itself
    other = tmp_path / "other.py"
    other.write_text(plugin.read_text())
    with scoped_registry(), pytest.raises(ImportError, match="registered twice"):
        load_plugin(str(plugin))
        load_plugin(str(other))
