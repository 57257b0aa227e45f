"""``harness solvers``: every solver and heuristic, what each promises and the sizes
it takes."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli.common import app
from harness.cli.progress import setting_up, setup_lines
from harness.cli.solve import (
    DEFAULT_SMALL,
    EXEC_OPTION,
    PLUGIN_OPTION,
    default_solver,
    load_extensions,
)
from harness.puzzle import MAX_SIDE, MIN_SIDE


def _guarantee(spec) -> str:
    """What ``harness solvers`` says a solver promises of its paths."""
    if spec.optimal:
        return "optimal"
    if spec.bounded_by:
        return (f"not optimal, bounded: every path at most {spec.bounded_by} x the "
                "optimum")  # fmt: skip
    return "not optimal, no bound on the path length"


@app.command("solvers")
def list_solvers(
    plugin: Annotated[list[str] | None, PLUGIN_OPTION] = None,
    exec_: Annotated[list[str] | None, EXEC_OPTION] = None,
) -> None:
    """List every solver and heuristic: description, optimality, accepted sizes."""
    from harness.heuristics import all_heuristics
    from harness.puzzle import grid
    from harness.solver import all_solvers, entry_point_names, format_value

    with setting_up("loading the solvers, heuristics and plugins", setup_lines()):
        load_extensions(plugin, exec_)
        specs = all_solvers()
        all_heuristics()
    typer.echo("Solvers (use NAME, NAME[HEURISTIC] or NAME[HEURISTIC,PARAM=VALUE] "
               "with --solver / --solvers):")  # fmt: skip
    for name, spec in specs.items():
        typer.echo(f"  {name}: {spec.description or '(no description)'}")
        costs = "; takes tile costs (--cost)" if spec.costs else ""
        typer.echo(f"      {_guarantee(spec)}; sizes: {spec.sizes}{costs}")
        for p in spec.params:
            typer.echo(f"      parameter {p.name} (default {format_value(p.default)})"
                       f": {p.help}")  # fmt: skip
        if spec.heuristics:
            hs = ", ".join(
                f"{h} (default)" if h == spec.default_heuristic else h
                for h in spec.heuristics
            )
            typer.echo(f"      heuristics: {hs}")
        elif spec.external is not None:
            typer.echo(f"      program: {' '.join(spec.external.command)}; "
                       f"goal {spec.external.goal}; no counters")  # fmt: skip
        else:
            typer.echo("      blind (no heuristic)")
    sizes = [grid(r, c) for r in range(MIN_SIDE, MAX_SIDE + 1) for c in range(r, 6)]
    typer.echo("Heuristics (all admissible lower bounds; none counts the blank):")
    for name, info in all_heuristics().items():
        accepted = [g.label for g in sizes if not info.refuses(g)]
        where = "any size" if len(accepted) == len(sizes) else ", ".join(accepted)
        typer.echo(f"  {name}: {info.description}")
        typer.echo(f"      sizes: {where or 'none'}")
    plugins = [n for n in entry_point_names() if n not in specs]
    if plugins:
        typer.echo("Plugins offered by installed packages (loaded when named):")
        for name in plugins:
            typer.echo(f"  {name}")
    larger = ", ".join(
        f"{g.label} {default_solver(g)}" for g in (grid(4), grid(3, 4), grid(5))
    )
    typer.echo(f"Default for `harness solve`: {DEFAULT_SMALL} up to 3x3; {larger}.")
