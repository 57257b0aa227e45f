"""Instruction counts: how far two runs of the same code differ (A/A), and whether
a known slowdown is caught from one run per side. Prints figures, asserts nothing.

    python tests/benchmarks/instructions_aa.py [--solvers LIST] [--datasets 8-mini]

Three ``harness run --instructions`` runs of the same configs, each with the probe
solver ``aa_probe`` (tests/benchmarks/aa_probe.py: A* plus ``AA_PROBE_EXTRA`` of
the same search again, uncounted, so only its cost changes): the probe doing no
extra work, 5% more, and 30% more.

1. A/A: every config but the probe, run 1 against run 2 and run 1 against run 3:
   per cell new / base instructions per solve; the worst cell and the worst
   config's geometric mean over its cells (goal: every config within 0.5%).
2. Detection: ``harness compare --no-time`` on the probe, run 1 against run 2
   (+5%) and against run 3 (+30%): its instruction ratio and verdict, one run
   per side, at compare's default threshold (1%).
3. The gate (``--gate``, or alone with ``--gate-only``): the instructions gate's
   check (:mod:`harness.compare.instructions_gate`) on the probe over the gate's
   3x3 boards: a baseline counted with the probe unchanged, then the unchanged
   probe again (must pass) and the probe +5% (must fail), at the gate's
   tolerance (1%).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "benchmarks" / "aa_probe.py"
PROBE_CONFIG = "aa_probe[manhattan]"
SOLVERS = ("ida_star_jit[manhattan],ida_star_jit[pdb44],astar_cantor_jit[manhattan],"
           "wastar_jit[manhattan],astar_dict[manhattan],astar_cantor[manhattan]")  # fmt: skip
HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} / {five:.1f} on {os.cpu_count()} cores"


def run(out: Path, solvers: str, datasets: str, extra: float) -> Path:
    env = {**os.environ, "AA_PROBE_EXTRA": str(extra)}
    args = [*HARNESS, "run", "--solvers", f"{solvers},{PROBE_CONFIG}",
            "--plugin", str(PROBE), "--datasets", datasets, "--instructions",
            "--repeats", "1", "--warmup", "0", "--no-memory", "--no-report",
            "--quiet", "--out", str(out)]  # fmt: skip
    t0 = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        sys.exit(f"harness run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    print(f"  run (probe +{extra:.0%}) {time.monotonic() - t0:.0f} s wall, {load()}")
    return Path(proc.stdout.strip().splitlines()[-1])


def counts(run_dir: Path) -> pd.Series:
    rows = pd.read_csv(run_dir / "rows.csv")
    timed = rows[(rows.measure == "time") & rows.instructions.notna()]
    return timed.groupby(["config", "instance"]).instructions.first()


def aa(base: Path, new: Path) -> list[str]:
    a, b = counts(base), counts(new)
    both = pd.concat([a, b], axis=1, keys=["a", "b"]).dropna()
    both = both[both.index.get_level_values("config") != PROBE_CONFIG]
    both = both[both.a > 0]
    ratio = both.b / both.a
    lines = []
    worst_config = ("", 1.0)
    for config, r in ratio.groupby(level="config"):
        gmean = math.exp(r.map(math.log).mean())
        cell = r.sub(1).abs().max()
        lines.append(
            f"    {config:<32} {len(r):>3} cells  geomean {gmean:.5f}  worst cell "
            f"{100 * cell:.3f}% ({r.sub(1).abs().idxmax()[1]})"
        )
        if abs(gmean - 1) >= abs(worst_config[1] - 1):
            worst_config = (config, gmean)
    worst = ratio.sub(1).abs()
    where = worst.idxmax()
    within = (worst <= 0.005).mean()
    lines.append(
        f"  worst cell {100 * worst.max():.3f}% ({where[0]} on {where[1]}); worst "
        f"config geomean {100 * abs(worst_config[1] - 1):.3f}% ({worst_config[0]}); "
        f"cells within 0.5%: {100 * within:.1f}% of {len(worst)}"
    )
    return lines


def detect(base: Path, new: Path, extra: float) -> str:
    proc = subprocess.run(
        [*HARNESS, "compare", str(base), str(new), "--no-time", "--format", "json"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    data = json.loads(proc.stdout)
    v = data["configs"][PROBE_CONFIG]["instructions"]
    return (
        f"  probe +{extra:.0%} work: instructions {v['ratio']:.4f}x (cells "
        f"{v['low']:.4f}-{v['high']:.4f}), per node {v['per_node_ratio']:.4f}x: "
        f"{'REGRESSION' if v['regression'] else 'not caught'} ({v['verdict']}); "
        f"compare exit {proc.returncode}"
    )


def gate() -> None:
    """Part 3: the instructions gate on the probe, unchanged and +5%."""
    from harness.compare import instructions_gate as ig
    from harness.configs import parse_config
    from harness.solver import load_plugin

    load_plugin(str(PROBE))
    probe = [parse_config(PROBE_CONFIG)]

    def count(extra: float) -> dict:
        os.environ["AA_PROBE_EXTRA"] = str(extra)  # (the counting process's)
        t0 = time.monotonic()
        got = ig.compute(1, configs=probe, plugins=(str(PROBE),))
        print(f"  counted the probe +{extra:.0%} on {len(got['boards'])} boards: "
              f"{time.monotonic() - t0:.0f} s wall, {load()}")  # fmt: skip
        return got

    base, same, slower = count(0.0), count(0.0), count(0.05)
    for name, new in (("unchanged", same), ("+5%", slower)):
        lines = ig.diff(base, new, ig.TOLERANCE)
        a = sum(v for v in base["results"][PROBE_CONFIG].values() if v)
        b = sum(v for v in new["results"][PROBE_CONFIG].values() if v)
        print(f"  gate, probe {name} against the baseline: {b / a:.5f}x -> "
              + ("FAILS: " + "; ".join(lines) if lines else "passes"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solvers", default=SOLVERS)
    ap.add_argument("--datasets", default="8-mini")
    ap.add_argument("--out", type=Path, default=Path("/tmp/instructions-aa"))
    ap.add_argument("--gate", action="store_true", help="also part 3, the gate")
    ap.add_argument("--gate-only", action="store_true", help="part 3 alone")
    args = ap.parse_args()
    if args.gate or args.gate_only:
        print(f"instructions gate on the probe ({load()})")
        gate()
        if args.gate_only:
            return
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"instructions A/A and detection on {args.datasets} ({load()})")
    runs = {x: run(args.out, args.solvers, args.datasets, x) for x in (0.0, 0.05, 0.30)}
    print("A/A, run 1 against run 2 (every config but the probe):")
    print("\n".join(aa(runs[0.0], runs[0.05])))
    print("A/A, run 1 against run 3:")
    print("\n".join(aa(runs[0.0], runs[0.30])))
    print("detection, one run per side:")
    print(detect(runs[0.0], runs[0.05], 0.05))
    print(detect(runs[0.0], runs[0.30], 0.30))


if __name__ == "__main__":
    main()
