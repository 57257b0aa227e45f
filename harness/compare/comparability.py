"""Whether two runs can be compared, and what the comparison must say about them:
schema versions, datasets, environments, hosts, load, cells missing on one side,
solver sources that changed. Each check raises Incomparable or adds to the
comparison's warnings and notes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from harness.compare.model import (
    SUPPORTED_SCHEMAS,
    Comparison,
    ConfigSummary,
    Incomparable,
)

if TYPE_CHECKING:
    import pandas as pd

def check_schema(base_meta: dict, new_meta: dict) -> None:
    versions = [m.get("schema_version") for m in (base_meta, new_meta)]
    for which, v in zip(("base", "new"), versions, strict=True):
        if v not in SUPPORTED_SCHEMAS:
            raise Incomparable(
                f"{which} run has schema version {v!r}; this harness reads "
                f"{', '.join(map(str, SUPPORTED_SCHEMAS))}"
            )


def schema_notes(metas: list[dict], comp: Comparison) -> None:
    """What an older run lacks, once per run id."""
    from harness.results import schema_gaps

    for meta in metas:
        gaps = schema_gaps(meta)
        if gaps:
            comp.notes.append(f"run {meta.get('run_id', '?')}: " + "; ".join(gaps))


def check_datasets(
    base_meta: dict,
    new_meta: dict,
    base_rows: pd.DataFrame,
    new_rows: pd.DataFrame,
    comp: Comparison,
) -> list[str]:
    """Names of the datasets both runs used with identical boards."""
    b = _dataset_hashes(base_meta, base_rows)
    n = _dataset_hashes(new_meta, new_rows)
    common = sorted(set(b) & set(n))
    if not common:
        raise Incomparable(
            f"no dataset in common: base used {name_list(b)}; new used {name_list(n)}"
        )
    for name in common:
        if b[name] and n[name] and b[name] != n[name]:
            raise Incomparable(
                f"dataset {name!r} has different boards: sha256 {b[name][:12]} "
                f"(base) vs {n[name][:12]} (new)"
            )
        if not (b[name] and n[name]):
            comp.warnings.append(
                f"dataset {name!r}: no checksum in meta.json; assuming the same boards"
            )
    for label, only in (("base", set(b) - set(n)), ("new", set(n) - set(b))):
        if only:
            comp.notes.append(
                f"dataset(s) only in {label} (not compared): {name_list(only)}"
            )
    return common


def _dataset_hashes(meta: dict, rows: pd.DataFrame) -> dict[str, str]:
    info = meta.get("datasets") or {}
    names = set(info) | set(rows["dataset"].dropna().unique())
    return {name: str((info.get(name) or {}).get("sha256") or "") for name in names}


def host_warnings(base_metas: list[dict], new_metas: list[dict], comp) -> None:
    """Where the cells ran (meta.json placement; a Dask run's hosts): cells per
    host and a run measured on several CPU models (notes), cells measured on other
    models (a warning) or other hosts of one model (a note) in the two runs, and
    batches whose cells were lost with their Dask worker (a warning)."""
    from harness.results import placement

    for which, metas in (("base", base_metas), ("new", new_metas)):
        for meta in metas:
            label = f"{which} run {meta.get('run_id', '')}"
            # (each cell is compared with itself: only a cell measured on another
            # model in the other run is a warning, below)
            comp.notes += [
                n.rstrip(".") for n in placement.mixed_models_warning(meta, label)
            ]
            comp.notes += [n.rstrip(".") for n in placement.hosts_sentence(meta, label)]
            comp.warnings += [
                f"{label}: {s.rstrip('.')}"
                for s in placement.lost_batch_sentences(meta)
                if "recorded as errors" in s
            ]
    for base in base_metas:
        for new in new_metas:
            warnings, notes = placement.model_differences(base, new)
            comp.warnings += warnings
            comp.notes += notes


def _placed(meta: dict) -> bool:
    from harness.results.placement import cell_hosts

    return bool(cell_hosts(meta))


def environment_warnings(base_meta: dict, new_meta: dict, comp: Comparison) -> None:
    for key, what in (
        ("python", "Python version"),
        ("cpu_model", "CPU model"),
        ("platform", "platform"),
        ("cpu_count", "CPU count"),
    ):
        if key == "cpu_model" and _placed(base_meta) and _placed(new_meta):
            continue  # the hosts that measured, not the client: _host_warnings
        b, n = base_meta.get(key), new_meta.get(key)
        if b is not None and n is not None and b != n:
            comp.warnings.append(
                f"{what} differs: {_short(b)} vs {_short(n)}; time ratios mix "
                "code and machine changes"
            )
    bp, np_ = base_meta.get("packages") or {}, new_meta.get("packages") or {}
    for name in sorted(set(bp) & set(np_)):
        if name == "npuzzle-harness":
            continue  # the code under comparison
        if bp[name] and np_[name] and bp[name] != np_[name]:
            comp.warnings.append(
                f"package {name} differs: {bp[name]} vs {np_[name]}; time ratios "
                "mix code and environment changes"
            )
    b_opt, n_opt = base_meta.get("options") or {}, new_meta.get("options") or {}
    for key in sorted(set(b_opt) | set(n_opt)):
        if key in (
            "repeats",
            "timeout",
            "memory_limit_mb",
            "warmup",
            "jobs",
        ) and b_opt.get(key) != n_opt.get(key):
            comp.notes.append(
                f"option {key} differs: {b_opt.get(key)} vs {n_opt.get(key)}"
            )
    for which, meta in (("base", base_meta), ("new", new_meta)):
        if meta.get("complete") is False:
            comp.warnings.append(f"{which} run {meta.get('run_id', '')} is incomplete")


def load_warnings(base_metas: list[dict], new_metas: list[dict], comp) -> None:
    """A load above half the cores at the start or end of a run: other processes
    competed for the cores, and the times are noisier than the floor assumes."""
    for which, metas in (("base", base_metas), ("new", new_metas)):
        for meta in metas:
            cores = meta.get("cpu_count") or 0
            loads = [
                (when, (meta.get(f"load_average_{when}") or [None])[0])
                for when in ("start", "end")
            ]
            high = [
                (w, x) for w, x in loads if x is not None and cores and x > cores / 2
            ]
            if high:
                seen = ", ".join(f"{x:.1f} at the {w}" for w, x in high)
                comp.warnings.append(
                    f"{which} run {meta.get('run_id', '')}: load average {seen} on "
                    f"{cores} cores (above half): other work competed for the CPU"
                )


def missing_cells(
    merged: pd.DataFrame, base_meta: dict, new_meta: dict, comp: Comparison
) -> None:
    """Cells of a compared config that only one run has."""
    for side, which, meta in (
        ("left_only", "new", new_meta),
        ("right_only", "base", base_meta),
    ):
        lost = merged[merged._merge == side]
        if len(lost):
            why = " (that run is incomplete)" if meta.get("complete") is False else ""
            first = lost.iloc[0]
            comp.warnings.append(
                f"{len(lost)} cell(s) missing from the {which} run{why}, e.g. "
                f"{first.config} on {first.dataset}/{first.instance}"
            )


def source_changes(
    base_meta: dict, new_meta: dict, configs: Iterable[str], comp: Comparison
) -> None:
    b, n = base_meta.get("solvers") or {}, new_meta.get("solvers") or {}
    for config in sorted(configs):
        hb = (b.get(config) or {}).get("source_sha256")
        hn = (n.get(config) or {}).get("source_sha256")
        if hb and hn:
            comp.configs.setdefault(config, ConfigSummary(config)).source_changed = (
                hb != hn
            )


def name_list(items: Iterable[str]) -> str:
    items = sorted(items)
    shown = ", ".join(items[:6]) + (
        f" (+{len(items) - 6} more)" if len(items) > 6 else ""
    )
    return shown or "nothing"


def _short(value: Any) -> str:
    text = str(value)
    return repr(text if len(text) <= 60 else text[:57] + "...")
