"""Findings: what stands out in stored runs, in plain words."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from harness.analysis import (
    ANSWERED,
    NOISE,
    PROBLEMS,
    Run,
)
from harness.analysis.verdict import ratio_words, run_verdicts
from harness.core.costs import format_cost
from harness.report.quality import quality_findings
from harness.report.yardstick import necessary_findings
from harness.results import (
    STATE_KEPT,
    contradicted_labels,
    contradiction_text,
    incomplete_sentence,
)
from harness.results.placement import (
    cell_hosts,
    hosts_sentence,
    lost_batch_sentences,
    mixed_models_warning,
    model_differences,
)

# ----------------------------------------------------------- what stands out


def findings(run: Run, verdicts: bool = True) -> list[str]:
    """Plain sentences about one run, computed from its rows and meta.json: the
    verdict per block (:mod:`harness.analysis.verdict`; ``verdicts=False`` leaves
    it out, for a page that shows it above), then wrong answers, failures,
    memory-pass failures, the expansions beside the necessary set
    (:mod:`harness.report.yardstick`: a why, after what went wrong), configs not
    optimal by design (compiled and pure-Python twins and datasets together),
    refusals."""
    speed, wrong, failed, memory, design, skips = [], [], [], [], [], []
    inst = run.instances()
    head = []
    if incomplete_sentence(run.meta):
        head.append(incomplete_sentence(run.meta))
    if inst.empty:
        return [*head, "The run holds no result rows."]
    for entry in contradicted_labels(run.rows):
        head.append(
            f"Dataset label contradicted: {contradiction_text(entry)}. The label is "
            "wrong, so no config's optimality on that instance is known "
            "(is_optimal left empty)."
        )
    from harness.measure.external import report_sentence

    head += report_sentence(run.meta)
    head += lost_batch_sentences(run.meta)
    head += mixed_models_warning(run.meta, f"Run {run.run_id}")
    head += hosts_sentence(run.meta, f"Run {run.run_id}")
    if verdicts:
        speed.extend(v.sentence() for v in run_verdicts(run))
    speed.extend(quality_findings(inst))
    for (dataset, config), cells in inst.groupby(["dataset", "config"], sort=True):
        for status in PROBLEMS:
            hit = cells[cells.status == status]
            if len(hit):
                first = hit.iloc[0]
                why = f": {first.message}" if first.message else ""
                (wrong if status == "invalid" else failed).append(
                    f"{config} on {dataset}: {_n(len(hit), status + ' result')} "
                    f"({_names(hit.instance)}){why}."
                )
        mixed = cells[(cells.answered_repeats > 0) & ~cells.status.isin(ANSWERED)]
        for _, r in mixed.iterrows():
            failed.append(
                f"{config} on {dataset}/{r.instance}: answered in {r.answered_repeats} "
                f"of {r.repeats} repeats but {r.status} in another; counted as "
                f"{r.status}."
            )
        kept = cells[
            cells.status.isin(ANSWERED)
            & cells.message.fillna("").str.startswith(STATE_KEPT)
        ]
        if len(kept):
            detail = str(kept.message.iloc[0]).split(": ", 1)[-1].split(": the")[0]
            speed.append(
                f"{config} on {dataset}: on {_n(len(kept), 'instance')} "
                f"({_names(kept.instance)}) the first solve of a board took far "
                f"longer than the later ones (e.g. {detail}), so its times may be "
                "flattered: the solver may keep answers or set-up between calls "
                "(first_cpu_seconds has each cell's first solve)."
            )
        skipped = cells[cells.status == "skipped"]
        if len(skipped):
            skips.append((config, dataset, len(skipped), skipped.message.iloc[0]))
        claims = (run.meta.get("solvers") or {}).get(config, {}).get("optimal")
        if claims:
            wrong.extend(_wrong_paths(config, dataset, cells))
        elif claims is False:
            design.extend(_by_design(config, dataset, cells))
        mem_bad = cells[
            cells.status.isin(ANSWERED)
            & cells.memory_status.notna()
            & ~cells.memory_status.isin(list(ANSWERED) + [""])
        ]
        if len(mem_bad):
            memory.append(
                f"{config}: the memory pass ended {mem_bad.memory_status.iloc[0]} on "
                f"{_n(len(mem_bad), 'instance')} of {dataset} that the timed pass "
                f"answered ({_names(mem_bad.instance)})."
            )
    return (head + speed + wrong + failed + memory + necessary_findings(inst)
            + _design_sentences(design) + _skip_sentences(skips))  # fmt: skip


def _skip_sentences(skips: list[tuple[str, str, int, str]]) -> list[str]:
    """One sentence per config (its datasets together), and configs declined for
    the same reason together: refusals are expected, so they should read short."""
    per_config: dict[str, tuple[list[str], int, str]] = {}
    for config, dataset, count, why in skips:
        datasets, total, _ = per_config.get(config, ([], 0, why))
        per_config[config] = ([*datasets, dataset], total + count, why)
    by_reason: dict[tuple[str, ...], list[str]] = {}
    for config, (datasets, total, why) in per_config.items():
        # The reason names the heuristic or solver; strip it to group alike ones.
        generic = why.replace(config.split("[")[-1].rstrip("]"), "*")
        by_reason.setdefault((generic, ", ".join(datasets), str(total)), []).append(
            config
        )
    out = []
    for (_, datasets, total), configs in by_reason.items():
        why = per_config[configs[0]][2]
        who = " and ".join(configs) if len(configs) < 3 else ", ".join(configs)
        each = " each" if len(configs) > 1 else ""
        if why and len(configs) > 1:
            why = f"e.g. {configs[0]}: {why}"
        out.append(
            f"{who} skipped {_n(int(total), 'instance')}{each} ({datasets})"
            + (f": {why}." if why else ".")
        )
    return out


def _wrong_paths(config: str, dataset: str, cells: pd.DataFrame) -> list[str]:
    """A config that claims optimality and returned a longer path: a bug."""
    solved = cells[(cells.status == "solved") & cells.is_optimal.notna()]
    worse = solved[solved.is_optimal == 0]
    if worse.empty:
        return []
    r = (
        worse.assign(excess=worse.path_length - worse.optimal_length)
        .sort_values("excess", ascending=False)
        .iloc[0]
    )
    return [
        f"{config} claims to be optimal but returned a longer path on "
        f"{len(worse)} of {len(solved)} solved instances of {dataset} "
        f"({r.instance}: {int(r.path_length)} moves, optimum "
        f"{int(r.optimal_length)}): a bug in the solver or its heuristic."
    ]


def _by_design(config: str, dataset: str, cells: pd.DataFrame) -> list[tuple]:
    """(config, dataset, optimal answers, solved, worst excess: "N moves over",
    or "cost C over the cheapest" under tile costs) of a config not optimal by
    design, where the optimum is known."""
    solved = cells[(cells.status == "solved") & cells.is_optimal.notna()]
    if solved.empty:
        return []
    worse = solved[solved.is_optimal == 0]
    excess = ""
    costed = "@" in dataset and "optimal_cost" in worse  # NAME@MODEL: tile costs
    if len(worse) and costed:  # tile costs: optimal is by cost, so is the excess
        over = (worse.path_cost - worse.optimal_cost).max()
        if over == over:
            excess = f"cost {format_cost(float(over))} over the cheapest"
    elif len(worse):
        excess = f"{int((worse.path_length - worse.optimal_length).max())} moves over"
    return [(config, dataset, len(solved) - len(worse), len(solved), excess)]


def _design_sentences(design: list[tuple]) -> list[str]:
    """One sentence per group of configs not optimal by design whose answers
    agree on every dataset (a compiled solver and its pure-Python twin find the
    same paths): the datasets together, not one sentence each."""
    per_config: dict[str, list[tuple]] = {}
    for config, dataset, good, solved, excess in design:
        per_config.setdefault(config, []).append((dataset, good, solved, excess))
    alike: dict[tuple, list[str]] = {}
    for config, facts in per_config.items():
        alike.setdefault(tuple(facts), []).append(config)
    out = []
    for facts, configs in alike.items():
        parts = [
            f"{good} of {solved} solved boards of {dataset}"
            + (f" (worst {excess})" if excess else "")
            for dataset, good, solved, excess in facts
        ]
        who = " and ".join(configs) if len(configs) < 3 else ", ".join(configs)
        out.append(
            f"{who} (not optimal by design) found an optimal path on "
            + "; ".join(parts) + "."
        )
    return out


def compare_findings(runs: Sequence[Run], table: pd.DataFrame) -> list[str]:
    """Sentences about how later runs differ from the first."""
    out = []
    base = runs[0]
    for other in runs[1:]:
        placed, notes = model_differences(base.meta, other.meta)
        if cell_hosts(base.meta) and cell_hosts(other.meta):
            # where the cells ran, not where the client ran (a Dask run)
            out += [f"{other.label} against {base.label}: {w}." for w in placed]
            out += [f"{other.label} against {base.label}: {n}." for n in notes]
        for key, what in (
            ("python", "Python"),
            ("cpu_model", "CPU"),
            ("platform", "platform"),
        ):
            if key == "cpu_model" and cell_hosts(base.meta) and cell_hosts(other.meta):
                continue
            a, b = base.meta.get(key), other.meta.get(key)
            if a != b:
                out.append(
                    f"{other.label} ran on a different {what} ({b}) than "
                    f"{base.label} ({a}): time ratios mix code and machine."
                )
    for new_run, part in table.groupby("new_run", sort=False):
        why = next((w for w in part.get("incomparable", ()) if w), "")
        if why:
            out.append(
                f"{new_run} cannot be compared with {part.old_run.iat[0]} ({why}): "
                "no time ratios or counter changes, only each run's own figures."
            )
        old_run = part.old_run.iat[0]
        for dataset, cells in part.groupby("dataset", sort=True):
            only_old = cells[cells.new_instances.isna()].config.tolist()
            only_new = cells[cells.old_instances.isna()].config.tolist()
            if len(only_old) == len(cells):
                out.append(f"{dataset} is only in {old_run}.")
                continue
            if len(only_new) == len(cells):
                out.append(f"{dataset} is only in {new_run}.")
                continue
            for run, configs in ((old_run, only_old), (new_run, only_new)):
                if configs:
                    out.append(
                        f"On {dataset}, only {run} has {_names(pd.Series(configs), 6)}."
                    )
            for _, r in cells.dropna(
                subset=["old_instances", "new_instances"]
            ).iterrows():
                out.extend(_cell_changes(r))
    return out


def _cell_changes(r: pd.Series) -> list[str]:
    where, out = f"{r.config} on {r.dataset}", []
    if r.new_answered != r.old_answered:
        out.append(
            f"{where}: {int(r.new_answered)} answered in {r.new_run} "
            f"against {int(r.old_answered)} in {r.old_run}."
        )
    if r.compared and abs(math.log(r.time_ratio)) > math.log1p(NOISE):
        text = (
            f"{where}: {ratio_words(r.time_ratio)} in {r.new_run} than in "
            f"{r.old_run} (geometric mean of {r.compared} per-instance "
            f"median {r.metric} ratios, {_interval(r)})"
        )
        if r.same_source and r.counters_changed == 0:
            text += (
                "; the solver's source and every counter are unchanged, so this is "
                "more likely the machine (load, clock) than the code"
            )
        out.append(text + ".")
    if r.counters_changed:
        out.append(
            f"{where}: counters changed on {_n(r.counters_changed, 'instance')}"
            f" ({'; '.join(r.changed_instances[:3])}"
            + ("; ..." if len(r.changed_instances) > 3 else "")
            + ")."
        )
    return out


def _interval(r: pd.Series) -> str:
    if not (math.isfinite(r.time_low) and math.isfinite(r.time_high)):
        return "no noise estimate"
    what = "significant" if r.significant else "within noise"
    if str(r.get("verdict", "")).startswith("too few instances"):
        what = f"too few instances ({int(r.compared)}) to call it"
    return f"95% interval {r.time_low:.2f}-{r.time_high:.2f}, {what}"


def _n(count: float, noun: str) -> str:
    count = int(count)
    return f"{count} {noun}" + ("" if count == 1 or noun.endswith("-instance") else "s")


def _names(names: pd.Series, limit: int = 3) -> str:
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
