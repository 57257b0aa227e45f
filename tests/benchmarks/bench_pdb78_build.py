"""pdb78 build and cache-load figures (issue 13 section 1; not a pytest file).

    .venv/bin/python tests/benchmarks/bench_pdb78_build.py              # build + load
    .venv/bin/python tests/benchmarks/bench_pdb78_build.py --load-only  # $NPUZZLE_CACHE
    .venv/bin/python tests/benchmarks/bench_pdb78_build.py --against-push 1

The build runs in a child process with an empty cache folder (tables and numba's
compiled code: compilation is included), and the parent reads the child's resource
usage like ``/usr/bin/time``: wall, user + system CPU, peak RSS. The built tables'
checksums are compared with the reference tables' (the builder's output is
deterministic). Then fresh child processes load the tables from that cache; each
prints the table load (read + checksum, from ``TableInfo.seconds``) and the whole
``pdb_set`` call, with numpy and the kernels already imported. Goals: build <= 60 s
wall and <= 1.5 GiB peak RSS on the 2-core machine, load < 1 s. Run it on a quiet
machine: it prints the load average beside every figure. ``--against-push N``
builds N pairs instead, alternating a push-only build (no backward layers,
``PULL_RATIO = 0``) and the default one, each from its own empty cache, and prints
each pair's wall and CPU ratios and both builds' checksums.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

#: sha256 of the pdb78 tables' payloads (the cache headers' "sha256"), as built by
#: every version of the builder so far.
REFERENCE = {
    (1, 2, 3, 4, 5, 6, 7):
        "69c903fad7bfeab276c50c4fc5acdd8b5983be3bbdf4b4064908efe433ef0c3e",
    (8, 9, 10, 11, 12, 13, 14, 15):
        "7bc9918008b08af77fa478f2b7b35dbd25fba3bb9cfbdd1c1cf97575e39604d5",
}

#: States (placement, blank region) of each pdb78 table: the blank regions of every
#: free-cell set times k! (pdb_build.build_packed's progress total).
STATES = {7: 139_849_920, 8: 1_425_191_040}

BUILD = """
import json, sys, time
t0 = time.perf_counter()
from harness.heuristics import pdb, pdb_build
if "--push-only" in sys.argv:
    pdb_build.PULL_RATIO = 0
from harness.puzzle import goal_board, grid
g = grid(4)
s = pdb.pdb_set("pdb78", goal_board("blank-first", g), g)
print(json.dumps({"total": time.perf_counter() - t0, "tables": [
    [list(i.goal_squares), i.source, i.seconds] for i in s.infos]}))
"""

LOAD = """
import json, time
import numpy
from harness import kernels
from harness.heuristics import pdb
from harness.puzzle import goal_board, grid
g = grid(4)
t0 = time.perf_counter()
s = pdb.pdb_set("pdb78", goal_board("blank-first", g), g)
print(json.dumps({"total": time.perf_counter() - t0, "tables": [
    [list(i.goal_squares), i.source, i.seconds] for i in s.infos]}))
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def child(code: str, cache: str, *args: str) -> tuple[dict, float, float, int]:
    """Run ``code`` in a child Python with NPUZZLE_CACHE=cache: (its JSON line, wall
    seconds, CPU seconds, peak RSS in bytes)."""
    env = {**os.environ, "NPUZZLE_CACHE": cache}
    env.pop("NUMBA_CACHE_DIR", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=env,
                            stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"bench_pdb78_build: the child failed (exit {proc.returncode})")
    return (json.loads(out.strip().splitlines()[-1]), wall,
            usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)


def checksums(cache: str) -> None:
    folder = os.path.join(cache, "pdb")
    for cells, expected in REFERENCE.items():
        name = f"4x4-blank0-cells{'.'.join(map(str, cells))}.4bit.bin"
        try:
            with open(os.path.join(folder, name), "rb") as f:
                head = json.loads(f.readline())
        except OSError:
            print(f"  {name}: missing")
            continue
        digest = head.get("sha256") or head.get("digest", "?")
        same = "equal to the reference" if digest == expected else "DIFFERS"
        print(f"  {name}: sha256 {digest[:16]}... {same}")


def bench_build(cache: str) -> None:
    print(f"== build from an empty cache ({load()})")
    result, wall, cpu, rss = child(BUILD, cache)
    for cells, source, seconds in result["tables"]:
        print(f"  table {len(cells)} tiles: {source} in {seconds:.1f} s")
    print(f"  wall {wall:.1f} s (goal <= 60), CPU {cpu:.1f} s (user + system), "
          f"peak RSS {rss / 2**30:.2f} GiB (goal <= 1.5)")
    searched = STATES[7] + STATES[8] / 2  # the 8-tile table: half, by its mirror
    print(f"  states (placement, blank region): 7-tile {STATES[7] / 1e6:.1f} M, "
          f"8-tile {STATES[8] / 1e6:.1f} M (half searched); CPU "
          f"{cpu / searched * 1e9:.0f} ns per searched state, compilation included")
    print(f"  after: {load()}")
    checksums(cache)


def against_push(pairs: int) -> None:
    """Push-only and default builds alternated, each from an empty cache."""
    for i in range(pairs):
        order = ("push-only", "default") if i % 2 == 0 else ("default", "push-only")
        got = {}
        for kind in order:
            with tempfile.TemporaryDirectory(prefix="pdb78-") as cache:
                print(f"== pair {i + 1}, {kind} build ({load()})")
                flags = ("--push-only",) if kind == "push-only" else ()
                _result, wall, cpu, rss = child(BUILD, cache, *flags)
                print(f"  wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS "
                      f"{rss / 2**30:.2f} GiB; after: {load()}")
                checksums(cache)
                got[kind] = (wall, cpu)
        push, default = got["push-only"], got["default"]
        print(f"== pair {i + 1}: default / push-only: wall {default[0] / push[0]:.3f}, "
              f"CPU {default[1] / push[1]:.3f}")


def bench_load(cache: str, repeats: int) -> None:
    print(f"== load from the cache, {repeats} fresh processes ({load()})")
    tables, totals = [], []
    for _ in range(repeats):
        result, _wall, _cpu, _rss = child(LOAD, cache)
        if any(source != "cache" for _c, source, _s in result["tables"]):
            sys.exit("bench_pdb78_build: the tables were not loaded from the cache")
        tables.append(sum(s for _c, _source, s in result["tables"]))
        totals.append(result["total"])
    print(f"  tables read + checked: best {min(tables):.3f} s, "
          f"median {sorted(tables)[len(tables) // 2]:.3f} s (goal < 1)")
    print(f"  whole pdb_set (arrays for the kernels too): best {min(totals):.3f} s, "
          f"median {sorted(totals)[len(totals) // 2]:.3f} s")
    print(f"  after: {load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load-only", action="store_true",
                    help="only time loads from $NPUZZLE_CACHE (must hold pdb78)")
    ap.add_argument("--keep", metavar="DIR",
                    help="build into DIR (must be empty or new) and keep it")
    ap.add_argument("--repeats", type=int, default=5, help="load repeats (5)")
    ap.add_argument("--against-push", type=int, metavar="N",
                    help="N pairs of push-only and default builds, alternated")
    args = ap.parse_args()
    if args.against_push:
        against_push(args.against_push)
        return
    if args.load_only:
        cache = os.environ.get("NPUZZLE_CACHE")
        if not cache:
            sys.exit("bench_pdb78_build: --load-only needs NPUZZLE_CACHE")
        bench_load(cache, args.repeats)
        return
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        if os.listdir(args.keep):
            sys.exit(f"bench_pdb78_build: --keep {args.keep}: not empty")
        bench_build(args.keep)
        bench_load(args.keep, args.repeats)
        return
    with tempfile.TemporaryDirectory(prefix="pdb78-") as cache:
        bench_build(cache)
        bench_load(cache, args.repeats)


if __name__ == "__main__":
    main()
