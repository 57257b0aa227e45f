"""Fast-solver benchmark: prints the figures of issue 7 (not a pytest file).

    .venv/bin/python tests/benchmarks/bench_korf.py            # all, a few minutes
    .venv/bin/python tests/benchmarks/bench_korf.py --rebuild  # PDB BFS from scratch

Sections: machine load; kernel set-up (compile or numba-cache load); pattern
database build / cache-load time and size; Korf's 100 with ida_star_jit[pdb663]
(total solve time, nodes per instance, every length checked against the published
optimum), repeated; IDA* + Manhattan node counts against Korf's published ones on
the cheaper instances; node rates of every registered solver, pure and compiled, on
fixed 3x3 boards; the 31-move 3x3 board per compiled solver. Set-up is never inside
a solve time: the runner's contract, and this script's too.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from importlib.resources import files

from harness.configs import select_solvers
from harness.heuristics import Heuristic, all_heuristics, make_heuristic, pdb
from harness.puzzle import apply_moves, goal_board, grid, is_solvable, parse_board
from harness.solver import Counters, all_solvers

G3, G4 = grid(3), grid(4)
PUBLISHED = {  # Korf & Felner 2002; Felner, Korf & Hanan 2004 (C, 2002-era CPU)
    "pdb663": "6-6-3: 617,555 nodes, 0.163 s per instance",
    "pdb78": "7-8 mirrored: 36,710 nodes, 0.034 s per instance",
}


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def korf100() -> list[tuple[int, tuple[int, ...], int, int]]:
    text = files("harness").joinpath("data/korf100.tsv").read_text()
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            i, tiles, length, nodes = line.split("\t")
            board = tuple(map(int, tiles.split()))
            rows.append((int(i), board, int(length), int(nodes)))
    return rows


def timed_solve(spec, board, goal, g, h):
    """(moves, counters, wall seconds, CPU seconds) of one solve (``spec``: a
    SolverSpec or a SolverConfig: both have ``solve``)."""
    counters = Counters()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    moves = spec.solve(board, goal, g, counters=counters, heuristic=h)
    return moves, counters, time.perf_counter() - wall0, time.process_time() - cpu0


def section(title: str) -> None:
    print(f"\n== {title} ({load()})")


# ------------------------------------------------------------------ set-up


def bench_setup() -> None:
    section("kernel set-up: compile or load from numba's cache (prepare)")
    from harness import kernels

    print(f"numba cache enabled: {kernels.CACHE_ENABLED}")
    specs = all_solvers()
    cases = [
        ("ida_star_jit", "manhattan", G4, "blank-first"),
        ("ida_star_jit", "linear_conflict", G4, "blank-first"),
        ("ida_star_jit", "walking_distance", G4, "blank-first"),
        ("ida_star_jit", "pdb663", G4, "blank-first"),
        ("astar_cantor_jit", "manhattan", G3, "standard"),
        ("table", None, G3, "standard"),
    ]
    for name, hname, g, goal_name in cases:
        goal = goal_board(goal_name, g)
        t0 = time.perf_counter()
        h = make_heuristic(hname, goal, g) if hname else None
        t1 = time.perf_counter()
        specs[name].prepare(g, goal, h)
        t2 = time.perf_counter()
        label = f"{name}[{hname}]" if hname else name
        print(f"  {label:34s} heuristic {t1 - t0:6.2f} s   prepare {t2 - t1:6.2f} s")


def bench_pdb(rebuild: bool, with_78: bool) -> None:
    section("pattern databases: build (BFS in numba) and cache load")
    goal = goal_board("blank-first", G4)
    names = ["pdb555", "pdb663"] + (["pdb78"] if with_78 else [])
    saved = os.environ.get("NPUZZLE_CACHE")
    scratch = tempfile.TemporaryDirectory() if rebuild else None
    try:
        if scratch is not None:
            os.environ["NPUZZLE_CACHE"] = scratch.name
        for name in names:
            pdb.clear_memory()
            cpu0 = time.process_time()
            first = pdb.pdb_set(name, goal, G4)
            cpu = time.process_time() - cpu0
            print(f"  first:  {first.summary()}  [CPU {cpu:.1f} s]")
            for info in first.infos:
                print(
                    f"          group {info.goal_squares}: {info.entries:,} entries, "
                    f"max {info.max_value if info.max_value >= 0 else '(4-bit)'}, "
                    f"{info.source} in {info.seconds:.2f} s"
                )
            pdb.clear_memory()
            again = pdb.pdb_set(name, goal, G4)
            print(f"  again:  {again.summary()}")
    finally:
        pdb.clear_memory()
        if scratch is not None:
            if saved is None:
                del os.environ["NPUZZLE_CACHE"]
            else:
                os.environ["NPUZZLE_CACHE"] = saved
            scratch.cleanup()


# ------------------------------------------------------------------ Korf


def bench_korf_pdb(name: str, repeats: int, mirror: bool = True) -> tuple:
    """Korf's 100 with ida_star_jit[name]; (wall, CPU, generated) of the last run."""
    goal = goal_board("blank-first", G4)
    spec = all_solvers()["ida_star_jit"]
    # mirror=False: the same tables without the mirrored lookup
    s = pdb.pdb_set(name, goal, G4, mirror=mirror)
    h = Heuristic(name, goal, G4, s.estimate, data=s)
    spec.prepare(G4, goal, h)
    label = f"ida_star_jit[{name}]" + ("" if mirror else " without the mirror")
    section(f"Korf's 100: {label}")
    rows = korf100()
    for run in range(1, repeats + 1):
        wall = cpu = 0.0
        generated = expanded = wrong = 0
        slowest = (0.0, 0)
        for ident, board, length, _ in rows:
            moves, c, w, t = timed_solve(spec, board, goal, G4, h)
            wall += w
            cpu += t
            generated += c.generated
            expanded += c.expanded
            if moves is None or len(moves) != length:
                wrong += 1
            elif apply_moves(board, moves, G4) != goal:
                wrong += 1
            slowest = max(slowest, (w, ident))
        print(
            f"  run {run}: total {wall:6.2f} s wall, {cpu:6.2f} s CPU; "
            f"{generated / 100:,.0f} generated / {expanded / 100:,.0f} expanded "
            f"per instance; {generated / cpu / 1e6:.1f} M nodes/s (CPU); "
            f"slowest #{slowest[1]} {slowest[0]:.2f} s; "
            f"{100 - wrong}/100 optimal"
        )
    if name in PUBLISHED and mirror:
        print(f"  published (C): {PUBLISHED[name]}")
    return wall, cpu, generated


def bench_korf_cli(name: str) -> None:
    """Korf's 100 through ``harness solve`` (all boards on standard input): the sum
    of the per-board solve times that --stats prints (set-up excluded), and the
    process's wall time (interpreter, set-up and table load included)."""
    import re
    import subprocess
    import sys

    section(f"Korf's 100 through harness solve --solver ida_star_jit[{name}]")
    text = "".join(" ".join(map(str, board)) + "\n" for _i, board, _l, _n in korf100())
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", "from harness.cli import main; main()", "solve",
         "--size", "4x4", "--goal", "blank-first", "--solver",
         f"ida_star_jit[{name}]", "--stats"],
        input=text, capture_output=True, text=True, check=False,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(f"  failed: {proc.stderr.strip()}")
        return
    seconds = [float(x) for x in re.findall(r", ([0-9.]+) s, ", proc.stderr)]
    lengths = [len(line) for line in proc.stdout.split()]
    optimal = sum(a == b for a, (_i, _b, b, _n) in zip(lengths, korf100(), strict=True))
    print(
        f"  solves: {sum(seconds):.2f} s in total (sum of --stats times), "
        f"{optimal}/100 at the published length; whole command {wall:.2f} s wall"
    )


def bench_korf_manhattan(count: int) -> None:
    goal = goal_board("blank-first", G4)
    spec = all_solvers()["ida_star_jit"]
    rows = sorted(korf100(), key=lambda r: r[3])[:count]
    section(f"IDA* on Korf's {count} cheapest instances (by published Manhattan count)")
    for hname in ("manhattan", "linear_conflict", "walking_distance"):
        h = make_heuristic(hname, goal, G4)
        spec.prepare(G4, goal, h)
        exact = nodes = 0
        wall = cpu = 0.0
        for ident, board, length, published in rows:
            moves, c, w, t = timed_solve(spec, board, goal, G4, h)
            assert moves is not None and len(moves) == length, ident
            exact += c.generated == published
            nodes += c.generated
            wall += w
            cpu += t
            if hname == "manhattan" and c.generated != published:
                print(f"  #{ident}: {c.generated:,} generated, published {published:,}")
        same = ""
        if hname == "manhattan":
            same = f"; {exact}/{count} equal to Korf's counts"
        print(
            f"  {hname:17s} {nodes:13,d} nodes in {wall:6.2f} s wall "
            f"({cpu:6.2f} s CPU): {nodes / cpu / 1e6:5.1f} M nodes/s{same}"
        )


# ------------------------------------------------------------------ rates


def rate_boards() -> list[tuple[int, ...]]:
    """12 fixed uniformly random solvable 3x3 boards (standard goal)."""
    import random

    rng = random.Random("bench-3x3")
    goal = goal_board("standard", G3)
    out = []
    while len(out) < 12:
        cells = list(range(9))
        rng.shuffle(cells)
        if is_solvable(tuple(cells), goal, G3):
            out.append(tuple(cells))
    return out


def bench_rates() -> None:
    section("node rates, every registered solver, 12 random 3x3 boards (standard goal)")
    goal = goal_board("standard", G3)
    boards = rate_boards()
    print(
        f"  {'solver':34s} {'generated':>11s} {'CPU s':>8s} {'nodes/s':>10s} "
        f"{'ms/board':>9s}"
    )
    for config in select_solvers("all"):  # bounded solvers at their default weight
        name, hname, spec = config.spec.name, config.heuristic, config.spec
        if hname and all_heuristics()[hname].refuses(G3):
            continue  # a 4x4 pattern database
        if config.refuses(G3, 31):
            continue
        if name == "ida_star" and hname == "misplaced":
            continue  # minutes in pure Python at these depths
        h = make_heuristic(hname, goal, G3) if hname else None
        if spec.prepare is not None:
            spec.prepare(G3, goal, h)
        generated = 0
        cpu = 0.0
        for board in boards:
            _, c, _, t = timed_solve(config, board, goal, G3, h)
            generated += c.generated
            cpu += t
        print(
            f"  {config.label:34s} {generated:11,d} {cpu:8.3f} "
            f"{generated / cpu if cpu else 0:10,.0f} {1e3 * cpu / len(boards):9.3f}"
        )


def bench_31(rounds: int = 7) -> None:
    section(
        "the 31-move 3x3 board (8 6 7 / 2 5 4 / 3 x 1), best and median of "
        f"{rounds} after warm-up"
    )
    goal = goal_board("standard", G3)
    board = parse_board("8 6 7 2 5 4 3 x 1", G3)
    specs = all_solvers()
    for name, hname in (
        ("table", None),
        ("ida_star_jit", "manhattan"),
        ("ida_star_jit", "linear_conflict"),
        ("ida_star_jit", "walking_distance"),
        ("ida_star_jit", "pdb44"),
        ("astar_cantor_jit", "manhattan"),
        ("astar_cantor_jit", "linear_conflict"),
        ("ida_star", "manhattan"),
        ("astar_dict", "manhattan"),
    ):
        spec = specs[name]
        h = make_heuristic(hname, goal, G3) if hname else None
        if spec.prepare:
            spec.prepare(G3, goal, h)
        timed_solve(spec, board, goal, G3, h)  # warm-up
        walls = []
        for _ in range(rounds):
            moves, c, w, _ = timed_solve(spec, board, goal, G3, h)
            assert moves is not None and len(moves) == 31
            walls.append(w)
        label = f"{name}[{hname}]" if hname else name
        print(
            f"  {label:34s} best {1e3 * min(walls):8.3f} ms  median "
            f"{1e3 * statistics.median(walls):8.3f} ms  ({c.generated:,} generated)"
        )


def bench_4x4_pure_vs_jit() -> None:
    section("4x4 IDA* + Manhattan, pure vs compiled, Korf #79 and #12")
    goal = goal_board("blank-first", G4)
    h = make_heuristic("manhattan", goal, G4)
    specs = all_solvers()
    specs["ida_star_jit"].prepare(G4, goal, h)
    rows = {r[0]: r for r in korf100()}
    for ident in (79, 12):
        _, board, _, published = rows[ident]
        for name in ("ida_star", "ida_star_jit"):
            _, c, w, t = timed_solve(specs[name], board, goal, G4, h)
            print(
                f"  #{ident} {name:13s} {c.generated:,} generated (published "
                f"{published:,}) in {w:.3f} s wall, {t:.3f} s CPU: "
                f"{c.generated / t / 1e6:.2f} M nodes/s"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="Korf 100 runs")
    parser.add_argument(
        "--manhattan",
        type=int,
        default=40,
        help="how many of the cheapest Korf instances with Manhattan (0: none)",
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="build the PDBs in a scratch cache to time the BFS",
    )
    parser.add_argument(
        "--with-78",
        action="store_true",
        help="build pdb78 even when it is not cached (about 1.4 GB of RAM, minutes "
        "on 2 cores; with --rebuild, from scratch); Korf's 100 with pdb78 runs "
        "whenever its tables are cached",
    )
    parser.add_argument("--skip-rates", action="store_true")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}, {load()}")
    bench_setup()
    bench_pdb(args.rebuild, args.with_78)
    rates = {"pdb663": bench_korf_pdb("pdb663", args.repeats)}
    bench_korf_pdb("pdb663", 1, mirror=False)
    bench_korf_pdb("pdb555", 1)
    goal = goal_board("blank-first", G4)
    if args.with_78 or pdb.cached("pdb78", goal, G4):
        rates["pdb78"] = bench_korf_pdb("pdb78", args.repeats)
    else:
        print("\n(pdb78 not cached: --with-78 builds it)")
    for name in rates:
        bench_korf_cli(name)
    section("Korf's 100, side by side (last run of each)")
    for name, (wall, cpu, generated) in rates.items():
        print(
            f"  ida_star_jit[{name}]: {wall:6.2f} s wall, {generated / 100:>9,.0f} "
            f"nodes per instance, {generated / cpu / 1e6:5.1f} M nodes/s (CPU)"
        )
    if args.manhattan > 0:
        bench_korf_manhattan(args.manhattan)
    bench_4x4_pure_vs_jit()
    bench_31()
    if not args.skip_rates:
        bench_rates()
    print(f"\ndone ({load()})")


if __name__ == "__main__":
    main()
