"""A/A test of `harness compare`: how often identical runs are called different, and
how often a known slowdown is caught. Prints both rates; figures, not assertions.

    python tests/benchmarks/aa_noise.py [--pairs 10] [--extra 0.30] [--out DIR]
                                        [--calibrate [FILE]] [--jobs N]

1. False alarms: ``--pairs`` pairs of identical default runs of
   ``harness run --solvers "astar_dict[manhattan],ida_star,astar_cantor"
   --datasets 8-strata``, back to back, each pair judged by ``harness compare``.
   Goal: no pair with a regression, at most 1 of the 3 x pairs config verdicts
   significant.
   (Without --memory the runs skip the untimed memory pass: it leaves the timed
   rows alone and would double the script's time.)
2. Detection: the same pairs with the plugin solver ``aa_probe`` added
   (tests/benchmarks/aa_probe.py), whose second run does ``--extra`` more work (the
   same search plus that fraction of it again; same counters, same path). Goal: a
   regression verdict for ``aa_probe`` in at least 9 of 10 pairs.

``--combined`` runs both at once, halving the time: each pair runs the three
configs and ``aa_probe``; the three are identical code in both runs (their verdicts
are the false alarms), the probe does ``--extra`` more work in the second run (its
verdicts are the detections).

``--calibrate FILE`` stores the noise floor measured in part 1 (the largest
normalized config ratio of the identical pairs, and the same on raw CPU time) where
``harness compare`` finds it (``results/noise_floor.json`` by default, or
``--calibration FILE``). The load average is printed beside the rates: on a shared
machine it is part of the result.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "benchmarks" / "aa_probe.py"
SOLVERS = "astar_dict[manhattan],ida_star,astar_cantor"
DATASET = "8-strata"
HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]
PROBE_CONFIG = "aa_probe[manhattan]"
#: Extra `harness run` options (``--no-memory`` unless --memory is given).
RUN_OPTIONS: list[str] = []


def load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def harness_run(out: Path, solvers: str, extra: float | None, jobs: int | None) -> Path:
    env = dict(os.environ)
    env.pop("AA_PROBE_EXTRA", None)
    args = [*HARNESS, "run", "--solvers", solvers, "--datasets", DATASET]
    args += ["--out", str(out), "--no-report", "--quiet", *RUN_OPTIONS]
    if extra is not None:
        env["AA_PROBE_EXTRA"] = str(extra)
        args += ["--plugin", str(PROBE)]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        sys.exit(f"harness run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def harness_compare(base: Path, new: Path, extra_args: list[str]) -> dict:
    proc = subprocess.run(
        [*HARNESS, "compare", str(base), str(new), "--format", "json", *extra_args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if proc.returncode not in (0, 1):
        sys.exit(f"harness compare failed ({proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout)


def pairs(
    label: str,
    n: int,
    out: Path,
    solvers: str,
    extra: float | None,
    jobs: int | None,
    compare_args: list[str],
) -> list[dict]:
    """``n`` pairs, each base then new, each judged; one line per pair."""
    results = []
    for i in range(n):
        t0 = time.monotonic()
        base = harness_run(out, solvers, 0.0 if extra is not None else None, jobs)
        new = harness_run(out, solvers, extra, jobs)
        comp = harness_compare(base, new, compare_args)
        times = {
            c: v["time"]
            for c, v in comp["configs"].items()
            if v.get("time") is not None
        }
        shown = "  ".join(
            f"{c.split('[')[0]} {t['ratio']:.3f} (raw {t['raw_ratio']:.2f})"
            + ("*" if t["significant"] else "")
            + ("R" if t["regression"] else "")
            for c, t in sorted(times.items())
            if t["ratio"] is not None
        )
        print(
            f"{label} pair {i + 1:2d}: exit {comp['exit_code']}  {shown}  "
            f"[{time.monotonic() - t0:.0f} s, {load()}]",
            flush=True,
        )
        results.append({"base": str(base), "new": str(new), "compare": comp})
    return results


def verdicts(results: list[dict], configs: set[str] | None = None) -> list[dict]:
    return [
        {**v["time"], "config": c}
        for r in results
        for c, v in r["compare"]["configs"].items()
        if v.get("time") is not None and (configs is None or c in configs)
    ]


def spread(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    return f"{min(values):.3f}-{max(values):.3f}" if values else "-"


def false_alarms(results: list[dict]) -> tuple[str, list[dict]]:
    """The line on identical code: configs other than the probe."""
    v = [x for x in verdicts(results) if x["config"] != PROBE_CONFIG]
    if not v:
        return "no verdicts", v
    regress_pairs = sum(
        any(
            c != PROBE_CONFIG and (t.get("time") or {}).get("regression")
            for c, t in r["compare"]["configs"].items()
        )
        for r in results
    )
    signif = sum(x["significant"] for x in v)
    line = (
        f"false alarms: {regress_pairs} of {len(results)} pairs with a regression "
        f"verdict on unchanged code; {signif} of {len(v)} config verdicts "
        f"significant; normalized ratios {spread([x['ratio'] for x in v])}, raw CPU "
        f"ratios {spread([x['raw_ratio'] for x in v])}; threshold "
        f"{v[0]['threshold']:.2f}x"
    )
    return line, v


def detections(results: list[dict], extra: float) -> str:
    probe = verdicts(results, {PROBE_CONFIG})
    if not probe:
        return "no verdicts"
    pr = [x["ratio"] for x in probe]
    geo = math.exp(sum(math.log(r) for r in pr) / len(pr))
    raw = [x["raw_ratio"] for x in probe]
    return (
        f"detection: aa_probe +{extra:.0%} work called a regression in "
        f"{sum(x['regression'] for x in probe)} of {len(probe)} pairs (normalized "
        f"ratios {spread(pr)}, geomean {geo:.3f}; raw {spread(raw)}; for "
        f"{1 + extra:.2f}x the work)"
    )


def calibrate(path: Path, results: list[dict], v: list[dict]) -> None:
    sys.path.insert(0, str(ROOT))
    from harness.compare.noise import Calibration, floor_from_ratios, write_calibration

    meta = json.loads((Path(results[0]["base"]) / "meta.json").read_text())
    cal = Calibration(
        floor=round(floor_from_ratios([x["ratio"] for x in v]), 4),
        raw_floor=round(floor_from_ratios([x["raw_ratio"] for x in v]), 4),
        pairs=len(results),
        verdicts=len(v),
        hostname=str(meta.get("hostname", "")),
        cpu_model=str(meta.get("cpu_model", "")),
        measured_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        command=" ".join(["python", *sys.argv]),
        load_average=[round(x, 2) for x in os.getloadavg()],
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_calibration(path, cal)
    print(f"calibration written to {path}: {cal.describe()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--extra", type=float, default=0.30, help="extra work, fraction")
    ap.add_argument("--out", type=Path, default=None, help="folder for the runs")
    ap.add_argument("--jobs", type=int, default=None, help="harness run --jobs")
    ap.add_argument("--min-ratio", type=float, default=None, help="compare option")
    ap.add_argument("--memory", action="store_true", help="keep the memory pass")
    ap.add_argument("--combined", action="store_true", help="A/A and detection at once")
    ap.add_argument("--skip-detection", action="store_true")
    ap.add_argument("--skip-aa", action="store_true")
    ap.add_argument(
        "--calibrate",
        nargs="?",
        const=ROOT / "results" / "noise_floor.json",
        type=Path,
        default=None,
        help="write the measured noise floor here (default results/noise_floor.json)",
    )
    args = ap.parse_args()
    if not args.memory:
        RUN_OPTIONS.append("--no-memory")
    out = args.out or Path(tempfile.mkdtemp(prefix="aa-noise-"))
    out.mkdir(parents=True, exist_ok=True)
    # judged with the defaults only: no calibration file in the runs' folder
    compare_args = ["--results-dir", str(out)]
    if args.min_ratio is not None:
        compare_args += ["--min-ratio", str(args.min_ratio)]
    print(f"runs in {out}; jobs {args.jobs or 'default'}; start: {load()}", flush=True)
    summary: dict = {"out": str(out), "load_start": load(), "argv": sys.argv}
    started = time.monotonic()
    lines = []
    if args.combined:
        both = pairs(
            f"A/A+{args.extra:.0%}",
            args.pairs,
            out,
            f"{SOLVERS},{PROBE_CONFIG}",
            args.extra,
            args.jobs,
            compare_args,
        )
        line, v = false_alarms(both)
        lines += [line, detections(both, args.extra)]
        summary["pairs"] = both
        if args.calibrate is not None and v:
            calibrate(args.calibrate, both, v)
    else:
        if not args.skip_aa:
            aa = pairs("A/A", args.pairs, out, SOLVERS, None, args.jobs, compare_args)
            line, v = false_alarms(aa)
            lines.append(line)
            summary["aa"] = aa
            if args.calibrate is not None and v:
                calibrate(args.calibrate, aa, v)
        if not args.skip_detection:
            det = pairs(
                f"+{args.extra:.0%}",
                args.pairs,
                out,
                f"{SOLVERS},{PROBE_CONFIG}",
                args.extra,
                args.jobs,
                compare_args,
            )
            lines.append(detections(det, args.extra))
            summary["detection"] = det
    for line in lines:
        print(line, flush=True)
    summary.update(lines=lines, load_end=load())
    summary["minutes"] = round((time.monotonic() - started) / 60, 1)
    (out / "aa_summary.json").write_text(json.dumps(summary, indent=1))
    print(f"end: {load()}; {summary['minutes']} min; details in {out}/aa_summary.json")


if __name__ == "__main__":
    main()
