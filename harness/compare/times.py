"""Time compared per solver config: the ratio of medians, normalized by the
reference solve, its bootstrap interval (:mod:`harness.compare.noise`) and the
verdict."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from harness.analysis.verdict import ratio_words
from harness.compare.model import (
    CELL_KEY,
    CLOCK_WORDS,
    CLOCKS,
    GOOD_STATUSES,
    REFERENCE_OF,
    Comparison,
    Thresholds,
    TimeVerdict,
)

if TYPE_CHECKING:
    import pandas as pd

# ------------------------------------------------------------------------- time


def compare_times(
    base_rows: pd.DataFrame,
    new_rows: pd.DataFrame,
    both: pd.DataFrame,
    comp: Comparison,
) -> None:
    """Fill each config's TimeVerdict from the cells solved alike in both runs
    (and the same per dataset part in ``comp.parts``)."""
    import numpy as np

    from harness.compare import noise

    th = comp.thresholds
    same_good = both[
        (both.status_b == both.status_n) & both.status_b.isin(GOOD_STATUSES)
    ]
    keys = same_good[CELL_KEY]
    b_t = base_rows[base_rows.measure == "time"].merge(keys, on=CELL_KEY)
    n_t = new_rows[new_rows.measure == "time"].merge(keys, on=CELL_KEY)
    looped = [_has_any(t, "loops") for t in (b_t, n_t)]
    if looped[0] != looped[1]:
        old = "base" if looped[1] else "new"
        comp.notes.append(
            f"times not compared: the {old} run timed one solve per repeat right "
            "after the harness's own bookkeeping (schema 4 or older: cold caches, "
            "up to 5x a fast solve's own time), the other calibrated loops; "
            "measure both with this harness"
        )
        return
    metric = CLOCKS[th.time]
    if metric == "seconds":  # wall time, asked for: every time row records it
        missing = [w for w, t in (("base", b_t), ("new", n_t)) if not _has_all(t, metric)]
        if missing:
            comp.notes.append(
                f"times not compared: the {' and '.join(missing)} run's time rows "
                "lack wall time (seconds)"
            )
            return
    elif not (_has_all(b_t, metric) and _has_all(n_t, metric)):
        metric = "seconds"
        comp.notes.append("timing on wall time: cpu_seconds missing in a run")
    comp.metric = metric
    reference = REFERENCE_OF[metric]  # the reference solve on the same clock
    normalized = bool(
        th.normalize and _has_all(b_t, reference) and _has_all(n_t, reference)
    )
    comp.normalized = normalized
    if not normalized and th.normalize:
        comp.notes.append(
            "times are raw (a run has no reference solve beside its cells): "
            "ratios carry the machine's drift between runs, so the threshold is "
            f"{th.threshold(False):.2f}x"
        )

    def per_run(rows: pd.DataFrame, norm: bool) -> list[dict[tuple, np.ndarray]]:
        if "_run" not in rows.columns:
            rows = rows.assign(_run=0)
        return [
            noise.cell_values(g, metric, norm, CELL_KEY, reference)
            for _, g in rows.groupby("_run", sort=True)
        ]

    b_runs, n_runs = per_run(b_t, normalized), per_run(n_t, normalized)
    b_raw, n_raw = (
        (per_run(b_t, False), per_run(n_t, False)) if normalized else (b_runs, n_runs)
    )

    def estimate(cells: pd.DataFrame, rng) -> tuple:
        """(Estimate, dropped, raw ratio, run spread) over ``cells``' instances."""
        timed, dropped = [], 0
        for k in sorted(map(tuple, cells[CELL_KEY].itertuples(index=False))):
            if not all(k in r for r in b_runs + n_runs):
                continue
            raw_b = np.median(np.concatenate([r[k] for r in b_raw]))
            raw_n = np.median(np.concatenate([r[k] for r in n_raw]))
            if max(raw_b, raw_n) < th.time_threshold:
                dropped += 1
                continue
            timed.append(k)
        est = noise.estimate(
            b_runs,
            n_runs,
            timed,
            confidence=th.confidence,
            resamples=th.resamples,
            rng=rng,
            run_shift=th.run_shift(normalized),
        )
        raw = (
            noise.estimate(b_raw, n_raw, timed, resamples=1, rng=rng).ratio
            if normalized
            else est.ratio
        )
        spread = [noise.run_spread(side, timed) for side in (b_runs, n_runs)]
        return est, dropped, raw, max((x for x in spread if x), default=None)

    rng = np.random.default_rng(th.seed)
    per_config = {
        config: estimate(cells, rng)
        for config, cells in same_good.groupby("config", sort=True)
    }
    ref_ratio = None
    if th.reference:
        ref = per_config.get(th.reference)
        if ref is None or ref[0].ratio is None:
            comp.warnings.append(
                f"reference config {th.reference!r} has no timed cells in common; "
                "ratios are not normalised"
            )
        else:
            ref_ratio = ref[0].ratio
            comp.notes.append(
                f"time ratios divided by reference {th.reference}'s {ref_ratio:.3f}"
            )
    if th.calibration is not None:
        comp.notes.append(th.calibration.describe())
    if 1 in (len(b_runs), len(n_runs)):
        source = "the noise floor" if th.calibration is not None else "the default"
        comp.notes.append(
            "one run on a side: its intervals include the shift of a whole run "
            f"(up to {th.run_shift(normalized):.2f}x between identical runs, "
            f"{source}), since its repeats share the run's drift"
        )

    def verdict_of(config: str, found: tuple) -> TimeVerdict:
        est, dropped, raw, spread = found
        ratio, low, high = est.ratio, est.low, est.high
        if ref_ratio and config != th.reference and ratio is not None:
            ratio, low, high = ratio / ref_ratio, low / ref_ratio, high / ref_ratio
        verdict = _verdict(
            config,
            metric,
            est.instances,
            dropped,
            ratio,
            low,
            high,
            est.has_noise_estimate,
            th,
            normalized,
        )
        verdict = replace(verdict, raw_ratio=raw, runs=est.runs, run_spread=spread)
        if ref_ratio and config == th.reference:
            # the yardstick measures the machine, not the code: never a regression
            verdict = replace(
                verdict,
                regression=False,
                improvement=False,
                verdict=f"reference (machine drift {ratio:.2f}x)",
            )
        return verdict

    for config, found in per_config.items():
        comp.configs[config].time = verdict_of(config, found)

    # The same verdict per dataset part, from its own random stream (the configs'
    # verdicts above do not depend on it).
    first = b_t.groupby(CELL_KEY)["solvable"].first()
    unsolvable = {k for k, v in first.items() if str(v) == "False"}  # NA: solvable
    kinds = same_good.assign(
        boards=[
            "unsolvable" if k in unsolvable else "solvable"
            for k in map(tuple, same_good[CELL_KEY].itertuples(index=False))
        ]
    )
    rng = np.random.default_rng(th.seed)
    for (config, dataset, boards), cells in kinds.groupby(
        ["config", "dataset", "boards"], sort=True
    ):
        comp.parts[(config, dataset, boards)] = verdict_of(
            config, estimate(cells, rng)
        )


def _verdict(
    config: str,
    metric: str,
    instances: int,
    dropped: int,
    ratio: float | None,
    low: float | None,
    high: float | None,
    noisy: bool,
    th: Thresholds,
    normalized: bool = False,
) -> TimeVerdict:
    threshold = th.threshold(normalized)
    significant = slow = fast = False
    if ratio is None:
        why = (
            f"all {dropped} instance(s) under {th.time_threshold:g} s"
            if dropped
            else "no instance timed in both runs"
        )
        instances, low, high, noisy = 0, None, None, False
        text = f"not timed ({why})"
    else:
        clock = CLOCK_WORDS[metric]  # the verdict names the clock it judged
        size = ratio_words(ratio)
        size = f"same {clock}" if size == "same speed" else f"{size} in {clock}"
        if instances < th.min_instances:
            # a handful of instances cannot tell a change from the run's drift
            text = (f"too few instances ({instances} timed, need "
                    f"{th.min_instances}; {size})")  # fmt: skip
        elif not noisy:  # cannot happen with >= min_instances; for min_instances=1
            slow, fast = ratio >= threshold, ratio <= 1 / threshold
            text = f"{size}, no noise estimate (1 instance, 1 repeat)"
        else:
            significant = low > 1 or high < 1
            slow = significant and ratio >= threshold
            fast = significant and ratio <= 1 / threshold
            if slow or fast:
                text = f"{size}, significant"
            elif significant:
                text = f"{size}, significant but under the {threshold:.2f}x threshold"
            else:
                text = f"within noise ({size})"
    return TimeVerdict(
        config, metric, instances=instances, dropped_fast=dropped, ratio=ratio,
        low=low, high=high, has_noise_estimate=noisy, significant=significant,
        regression=slow, improvement=fast, verdict=text, normalized=normalized,
        threshold=threshold,
    )  # fmt: skip


def _has_any(rows: pd.DataFrame, col: str) -> bool:
    return col in rows.columns and bool(rows[col].notna().any())


def _has_all(rows: pd.DataFrame, col: str) -> bool:
    return col in rows.columns and len(rows) > 0 and bool(rows[col].notna().all())
