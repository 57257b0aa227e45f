"""Compile the compiled solvers' kernels into numba's cache before the suite runs.

``python tests/compile_kernels.py PART`` solves one shallow board with every
compiled solver of ``PART`` and every heuristic it takes (``solve`` and, where the
solver has one, ``solve_many``), so numba compiles each entry kernel for the types
the harness passes and caches it (and the small pattern databases) under
``$NPUZZLE_CACHE``. tests/conftest.py runs the parts in parallel processes, one a
core, on the xdist controller before the workers start: without this, a cold cache
has both workers (and the measuring processes they spawn) compile the same kernels.

The parts split the kernels a Python caller calls (not only the solvers): numba
saves a kernel's cache index whole, so two processes adding overloads of one
kernel at once can lose one (it is then compiled again on first use: slower,
never wrong). Nothing here checks an answer; the tests do.
"""

from __future__ import annotations

import sys

#: Compiled solvers (each with every heuristic it takes), in two parts of about
#: equal compile time (31 and 34 CPU s, cold): IDA*, its batch drivers and the
#: packed pattern database builder; best-first (wastar_jit's kernels are
#: greedy_jit's and awastar_jit's), weighted IDA*, Cantor A* and the tile-cost
#: kernels. The first part
#: builds the pattern databases first; the other part needs them last.
PARTS: dict[str, tuple[str, ...]] = {
    "ida": ("ida_star_jit",),
    "others": ("wastar_jit", "greedy_jit", "awastar_jit", "astar_cantor_jit",
               "wida_star", "ucs_jit"),  # fmt: skip
}


def compile_part(part: str) -> list[str]:
    """Solve one board per config of ``part``; the labels of the configs done."""
    import numpy as np

    from harness.configs import every_config
    from harness.heuristics import all_heuristics, make_heuristic
    from harness.puzzle import apply_moves, goal_board, grid
    from harness.solver import Counters

    slow = {n for n, info in all_heuristics().items() if info.setup_estimate}
    configs = [c for c in every_config() if c.spec.name in PARTS[part]
               and c.heuristic not in slow]  # fmt: skip
    # Pattern databases: the first part builds them first, the other uses them last.
    first = part == next(iter(PARTS))
    configs.sort(key=lambda c: (c.heuristic or "").startswith("pdb") != first)
    done = []
    for config in configs:
        for g in (grid(3), grid(4)):
            goal = goal_board("standard", g)
            start = apply_moves(goal, "ulldrr", g)  # a 6-move loop of the blank
            if config.refuses(g, 6, goal):
                continue
            try:
                h = make_heuristic(config.heuristic, goal, g) if config.heuristic else None
            except ValueError:  # the heuristic does not apply to this grid
                continue
            spec = config.spec
            if spec.prepare is not None:
                spec.prepare(g, goal, h)
            config.solve(start, goal, g, counters=Counters(), heuristic=h)
            if spec.solve_many is not None and not config.params:
                spec.solve_many(np.array([start], dtype=np.int8), goal, g, heuristic=h)
            done.append(f"{config.label} {g.label}")
            break
    if not first:  # the tile-cost kernels (harness/kernels/costs.py): one model
        from solvers._costs import prepare  # compiles both for every model's floats

        g = grid(3)
        goal = goal_board("standard", g)
        prepare(g, goal, make_heuristic("manhattan", goal, g, "heavy"), "heavy")
        prepare(g, goal, make_heuristic("pdb44", goal, g, "heavy"), "heavy")
        done.append(f"tile-cost kernels {g.label} (tile-additive, weighted PDB)")
    if first:  # the packed builder of pdb78/pdb6666 (tests build small tables)
        from harness.heuristics import pdb_build

        g = grid(3)
        squares = (3, 5, 6, 7, 8, 4)  # left-right symmetric: the mirror kernels too
        pdb_build.unpack(g, squares, pdb_build.build_packed(g, squares, 0, pull=0.5))
        done.append(f"pdb_build {squares} {g.label}")
    return done


if __name__ == "__main__":
    for line in compile_part(sys.argv[1]):
        print(line)
