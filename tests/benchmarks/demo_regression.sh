#!/usr/bin/env bash
# Issue 6 "Done when", reproducible: the regression checks catch what they must and
# stay quiet on unchanged code. Uses temporary git worktrees of HEAD, never touches
# the checkout it is run from. Figures go to stdout and $DEMO/summary.txt.
#
#   tests/benchmarks/demo_regression.sh [DEMO_DIR]      (PAIRS=10 BENCH_PAIRS=3 by default)
#
# 1. timing: a worktree whose astar_dict does its whole search twice per solve (a
#    deliberate 2x slowdown; ida_star is the unchanged control) against an
#    untouched worktree: `harness compare` on two `harness run` results, and
#    pytest-benchmark --benchmark-compare-fail on the benchmark suite;
# 2. counters: a worktree whose astar_dict breaks f-ties shallowest-first, and
#    one whose linear_conflict drops its conflict term (a weaker heuristic):
#    `python -m harness.compare.gate` against the committed baseline;
# 3. noise: PAIRS pairs of runs of unchanged code compared, BENCH_PAIRS pairs of
#    benchmark-suite runs compared; every alarm is counted.
set -u -o pipefail

ROOT=$(git rev-parse --show-toplevel)
PY=${PYTHON:-$ROOT/.venv/bin/python}
DEMO=${1:-$(mktemp -d /tmp/npuzzle-demo.XXXXXX)}
PAIRS=${PAIRS:-10}
BENCH_PAIRS=${BENCH_PAIRS:-3}
SOLVERS="astar_dict[manhattan],astar_dict[linear_conflict],ida_star[linear_conflict]"
DATASET=${DATASET:-8-mini}
mkdir -p "$DEMO"
SUMMARY=$DEMO/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

tree() {  # tree NAME: a fresh worktree of HEAD at $DEMO/NAME
    git -C "$ROOT" worktree remove --force "$DEMO/$1" 2>/dev/null
    git -C "$ROOT" worktree add --quiet --detach "$DEMO/$1" HEAD
}
patch_file() {  # patch_file FILE OLD NEW: exact one-time replacement, or fail
    "$PY" - "$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"demo patch: {old!r} not found exactly once in {path}")
open(path, "w").write(text.replace(old, new))
EOF
}
harness_in() {  # harness_in TREE ARGS...: that tree's code, not the installed one
    local t=$1; shift
    (cd "$t" && PYTHONPATH="$t" "$PY" -c 'from harness.cli import main; main()' "$@")
}
run_in() {  # run_in TREE: one small harness run; prints the run directory
    harness_in "$1" run --solvers "$SOLVERS" --datasets "$DATASET" --repeats 5 \
        --jobs 1 --no-memory --no-report -q --out "$DEMO/results" 2>/dev/null | tail -1
}
bench_in() {  # bench_in TREE ARGS...: the benchmark suite, timed on CPU time
    (cd "$1" && shift && PYTHONPATH="$PWD" "$PY" -m pytest -q -p no:cacheprovider \
        tests/benchmarks --benchmark-enable --benchmark-timer=time.process_time \
        --benchmark-storage="file://$DEMO/bench" "$@")
}

say "demo directory: $DEMO  (HEAD $(git -C "$ROOT" rev-parse --short HEAD))"
tree base
tree slow
cat >>"$DEMO/slow/solvers/astar_dict.py" <<'PATCH'


# DEMO: a deliberate 2x slowdown - every astar_dict solve does its whole search twice.
def _demo_twice(start, goal, grid, *, counters, heuristic=None):
    solve(start, goal, grid, counters=Counters(), heuristic=heuristic)
    return solve(start, goal, grid, counters=counters, heuristic=heuristic)


def _demo_install() -> None:
    from dataclasses import replace

    from harness import solver as registry

    spec = registry._REGISTRY["astar_dict"]
    registry._REGISTRY["astar_dict"] = replace(spec, solve=_demo_twice)


_demo_install()
PATCH
tree tiebreak
# a worse tie-break: on equal f, the shallowest board first (g before push order)
patch_file "$DEMO/tiebreak/solvers/astar_dict.py" \
    "heappush(heap, (g + h_child, tie, g, child))" \
    "heappush(heap, (g + h_child, g * 10**9 + tie, g, child))"
tree weaker
patch_file "$DEMO/weaker/harness/heuristics.py" \
    "return md.estimate(board) + 2 * extra" "return md.estimate(board) + 0 * extra"

say ""
say "== 1a. timing: harness compare, base vs astar_dict searching twice (2x work)"
base_run=$(run_in "$DEMO/base")
slow_run=$(run_in "$DEMO/slow")
harness_in "$DEMO/base" compare "$base_run" "$slow_run" | tee -a "$SUMMARY"
say "exit status: $? (expected 1)"

say ""
say "== 1b. timing: pytest-benchmark, base saved, 2x astar_dict compared (median:25%)"
bench_in "$DEMO/base" --benchmark-save=base >"$DEMO/bench-base.log" 2>&1
bench_in "$DEMO/slow" --benchmark-compare --benchmark-compare-fail=median:25% \
    --benchmark-save=slow >"$DEMO/bench-slow.log" 2>&1
status=$?
grep "has failed" "$DEMO/bench-slow.log" | sed 's/^[[:space:]]*/  /' | tee -a "$SUMMARY"
say "pytest exit status: $status (expected non-zero)"
say "median ratios slowed/base (pytest-benchmark, CPU time):"
"$PY" - "$DEMO/bench" <<'EOF' | tee -a "$SUMMARY"
import json, pathlib, sys
files = sorted(pathlib.Path(sys.argv[1]).rglob("*.json"))
base, new = (json.loads(f.read_text()) for f in files[-2:])
b = {x["name"]: x["stats"]["median"] for x in base["benchmarks"]}
n = {x["name"]: x["stats"]["median"] for x in new["benchmarks"]}
for name in sorted(b):
    if "astar_dict" in name or "reference" in name or "ida_star[manhattan]" in name:
        print(f"  {name:<58} {n[name] / b[name]:5.2f}x")
EOF

say ""
say "== 2. counters gate on algorithmic changes (committed baseline)"
for t in base tiebreak weaker; do
    (cd "$DEMO/$t" && PYTHONPATH="$PWD" "$PY" -m harness.compare.gate) >"$DEMO/gate-$t.log" 2>&1
    status=$?
    say "-- $t: exit $status; $(head -1 "$DEMO/gate-$t.log")"
    sed -n '2,6p' "$DEMO/gate-$t.log" | tee -a "$SUMMARY"
done
tie_run=$(run_in "$DEMO/tiebreak")
harness_in "$DEMO/base" compare "$base_run" "$tie_run" --no-time \
    | grep -E "^astar|^result|^  astar" | head -8 | tee -a "$SUMMARY"

say ""
say "== 3a. noise: $PAIRS pairs of harness runs of unchanged code"
alarms=0
for i in $(seq 1 "$PAIRS"); do
    a=$(run_in "$DEMO/base")
    b=$(run_in "$DEMO/base")
    out=$(harness_in "$DEMO/base" compare "$a" "$b" --format json)
    code=$?
    [ "$code" -ne 0 ] && alarms=$((alarms + 1))
    ratios=$(echo "$out" | "$PY" -c '
import json, sys
configs = json.load(sys.stdin)["configs"]
print("  ".join("%s %.3f" % (k, v["time"]["ratio"]) for k, v in configs.items()))')
    say "pair $i: exit $code  $ratios"
done
say "harness compare alarms on unchanged code: $alarms of $PAIRS"

say ""
say "== 3b. noise: $BENCH_PAIRS pairs of benchmark-suite runs of unchanged code"
balarms=0
for i in $(seq 1 "$BENCH_PAIRS"); do
    bench_in "$DEMO/base" --benchmark-save="same$i" >"$DEMO/bench-same$i-a.log" 2>&1
    bench_in "$DEMO/base" --benchmark-compare --benchmark-compare-fail=median:25% \
        >"$DEMO/bench-same$i-b.log" 2>&1
    code=$?
    n=$(grep -c "has failed" "$DEMO/bench-same$i-b.log")
    [ "$code" -ne 0 ] && balarms=$((balarms + 1))
    say "pair $i: pytest exit $code, $n benchmark(s) over median:25%"
done
say "pytest-benchmark alarms on unchanged code: $balarms of $BENCH_PAIRS"

for t in base slow tiebreak weaker; do
    git -C "$ROOT" worktree remove --force "$DEMO/$t"
done
say ""
say "summary written to $SUMMARY"
