"""The necessary columns' cost in the parent of the main job: CPU seconds to count
the necessary set of every solvable board of the default datasets (8-seeds,
8-seeds-spiral, 8-mini) under each heuristic an optimal 3x3 search of
``--solvers all`` takes (blind too), in one process, imports included. Not a
pytest file. Run it twice with one empty cache: cold, then with the h values kept.

    T=$(mktemp -d); NPUZZLE_CACHE=$T python tests/benchmarks/necessary_cost.py
    NPUZZLE_CACHE=$T python tests/benchmarks/necessary_cost.py; rm -rf $T
"""

from __future__ import annotations

import time

START = time.process_time()

from harness.datasets.catalogue import load_dataset  # noqa: E402 (timed import)
from harness.heuristics import make_heuristic  # noqa: E402
from harness.kernels.necessary import necessary  # noqa: E402

NAMES = (None, "manhattan", "misplaced", "linear_conflict", "walking_distance", "pdb44")


def main() -> None:
    for name in ("8-seeds", "8-seeds-spiral", "8-mini"):
        ds = load_dataset(name)
        hs = {n: make_heuristic(n, ds.goal, ds.grid) if n else None for n in NAMES}
        for inst in ds.instances:  # instance by instance, as a run's rows come
            if inst.solvable:
                for n in NAMES:
                    necessary(inst.start, inst.goal, inst.grid, hs[n], n or "none")
    print(f"CPU {time.process_time() - START:.2f} s (imports and table loads included)")


if __name__ == "__main__":
    main()
