"""The verdict of a run: per dataset block, which config wins, by how much, and why.

Written once, here; the terminal summary, ``harness report --format table/md``,
report.md and report.html, the findings and the README's headline all say what
:func:`verdicts` returns, so they cannot name different winners.

Per block (a dataset, or its solvable / unsolvable part):

- **common boards**: those answered by every config that answered any board of
  the block (:func:`harness.analysis.aggregate.common_instances`); configs that
  answered none are named in the block's header with the solver's reason;
- **contenders**: configs that claim optimality (bound 1) and answered every
  common board at the optimum. They are ranked by the geometric mean, over the
  common boards, of the per-solve time: the winner is the first;
- the winner's lead: the runner-up's time ratio with a 95% interval (paired per
  board, bootstrapped over the boards with a fixed seed, so the same rows always
  give the same words), and **why**: that ratio split into nodes (geometric mean
  of boards expanded) and time per node, ``ratio = nodes ratio x per-node ratio``;
- **bounded** configs (bound > 1, e.g. weighted A* with w = 2) are ranked apart,
  among those that stayed within their bound on every common board;
- **lookups** (a solver that reads answers from a precomputed table, meta.json's
  ``search: false``) are stated apart: a lookup, not a search;
- everything else that answered (a greedy search, or an "optimal" config that
  returned a longer path) is listed with its share of optimal answers.

Ratios are never floored: a 1 us lookup and a 30 us search are 30x apart, not tied.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from harness.analysis.aggregate import answered_mask, common_instances, sig
from harness.analysis.keys import GROUP

#: Geometric means count a time below 0.1 us as 0.1 us and 0 nodes as 1 (a
#: 0-move board expands nothing); both far below every real value.
_MIN_SECONDS = 1e-7
_MIN_NODES = 1.0
#: Bootstrap resamples of the paired ratio's interval, and its fixed seed.
_RESAMPLES = 2000
_SEED = 20261204
#: A nodes or per-node ratio within this of 1 is called "about as many".
TIE = 1.05
#: Fewer common boards than this give no interval (a bootstrap over 3 boards
#: would look precise and mean nothing).
MIN_BOARDS = 5
#: Without an interval, a ratio under 1 + NOISE is called level (timing noise).
NOISE = 0.10


@dataclass(frozen=True, slots=True)
class Standing:
    """One config's place in a block: its geometric means over the common boards
    and its time ratio to the block's (or its group's) first, with the 95%
    interval of that ratio (1, 1, 1 for the first)."""

    config: str
    gmean_ms: float
    gmean_nodes: float
    ratio: float = 1.0
    low: float = 1.0
    high: float = 1.0
    bound: float | None = 1.0
    optimal_share: float = 1.0
    #: why a config is not ranked (others only), e.g. "no bound on its path length"
    note: str = ""

    @property
    def significant(self) -> bool:
        """The interval of the ratio excludes 1 (slower beyond the spread over
        the boards); False without an interval."""
        return math.isfinite(self.low) and self.low > 1.0


@dataclass(frozen=True, slots=True)
class Why:
    """The runner-up's time ratio split in two: nodes (its geometric mean of nodes
    expanded over the winner's) times time per node; ``nodes * per_node`` is the
    time ratio."""

    nodes: float
    per_node: float

    def text(self) -> str:
        """'1.9x fewer nodes, 1.2x less time per node' (the winner's side)."""
        return f"{_factor(self.nodes, 'fewer', 'more')} nodes, " + _factor(
            self.per_node, "less", "more"
        ) + " time per node"


@dataclass(slots=True)
class BlockVerdict:
    """The verdict of one dataset block (see the module docstring)."""

    dataset: str
    boards: int
    common: int
    ranked: list[Standing] = field(default_factory=list)
    bounded: list[Standing] = field(default_factory=list)
    lookups: list[Standing] = field(default_factory=list)
    #: answered every common board but not a contender (its ``note`` says why),
    #: most optimal answers first
    others: list[Standing] = field(default_factory=list)
    #: answered no board of the block: (config, the solver's reason)
    none: list[tuple[str, str]] = field(default_factory=list)
    #: answered some boards but not all: (config, boards answered), most first
    partial: list[tuple[str, int]] = field(default_factory=list)
    why: Why | None = None

    @property
    def winner(self) -> Standing | None:
        return self.ranked[0] if self.ranked else None

    @property
    def runner_up(self) -> Standing | None:
        return self.ranked[1] if len(self.ranked) > 1 else None

    def header(self) -> str:
        """'8-mini: 32 boards, 32 answered by every config; 4 configs answered
        none: a, b, c, d (they decline 3x3)'."""
        text = f"{self.dataset}: {_n(self.boards, 'board')}"
        if self.common != self.boards:
            text += f", {self.common} answered by every config that answered any"
        if self.none:
            names = ", ".join(c for c, _ in self.none)
            reasons = {_reason_kind(r) for _, r in self.none}
            alike = len(reasons) == 1 and "" not in reasons
            why = f" ({reasons.pop()})" if alike else ""
            text += f"; {_n(len(self.none), 'config')} answered none: {names}{why}"
        return text

    def places(self) -> dict[str, str]:
        """Each config's place in words: '1', '2', ... among the optimal searches,
        'bounded 1', ..., 'lookup', 'unranked' (answered, but not within a
        bound), 'answered none'."""
        out = {s.config: str(i) for i, s in enumerate(self.ranked, 1)}
        out |= {s.config: f"bounded {i}" for i, s in enumerate(self.bounded, 1)}
        out |= {s.config: "lookup" for s in self.lookups}
        out |= {s.config: "unranked" for s in self.others}
        out |= {c: "answered none" for c, _ in self.none}
        return out

    def sentence(self, named: bool = True) -> str:
        """One sentence: who wins, by how much, why; lookups and bounded apart.
        ``named``: start with the block's name."""
        text = self._sentence()
        return text if named else text.split(": ", 1)[1]

    def _sentence(self) -> str:
        if self.winner is None:
            if not self.common:
                return (f"{self.dataset}: no board was answered by every config, so "
                        "no time is compared.")  # fmt: skip
            return (f"{self.dataset}: no optimal search answered all "
                    f"{self.common} common boards at the optimum.")  # fmt: skip
        w, r = self.winner, self.runner_up
        text = (f"{self.dataset}: {w.config} wins, {duration(w.gmean_ms)} per solve "
                f"(geometric mean over {_n(self.common, 'common board')})")  # fmt: skip
        if r is None:
            text += ", the only optimal search that answered them all"
        else:
            text += f", {lead_text(r)}"
            if self.why is not None:
                text += f": {self.why.text()}"
        text += "."
        if self.lookups:
            lk = self.lookups[0]
            text += (f" {lk.config} looks answers up in {duration(lk.gmean_ms)} (a "
                     "lookup, not a search).")  # fmt: skip
        if self.bounded:
            b = self.bounded[0]
            share = "" if b.optimal_share != b.optimal_share else (
                f", {_pct(b.optimal_share)} of its paths optimal")
            text += (f" Among bounded searches, {b.config} is fastest, "
                     f"{duration(b.gmean_ms)}{share}.")  # fmt: skip
        if self.partial:
            text += " Answered only some boards: " + names(
                f"{c} ({a} of {self.boards})" for c, a in self.partial) + "."
        return text


def lead_text(s: Standing, first: str = "") -> str:
    """How far ahead the first is of ``s``: '1.80x faster than X (95% interval
    1.54-2.05)', 'tied with X (...)', or, on fewer than :data:`MIN_BOARDS` boards,
    no interval."""
    who = first + " " if first else ""
    if not math.isfinite(s.low):
        few = "too few boards for an interval"
        if s.ratio < 1 + NOISE:
            return f"{who}level with {s.config} ({times(s.ratio)}x; {few})"
        return f"{who}{times(s.ratio)}x faster than {s.config} ({few})"
    interval = f"95% interval {times(s.low)}-{times(s.high)}"
    if not s.significant:
        return f"{who}tied with {s.config} ({times(s.ratio)}x, {interval})"
    return f"{who}{times(s.ratio)}x faster than {s.config} ({interval})"


def ratio_words(ratio: float) -> str:
    """A time ratio (new / old, or this / the first) in words: '1.38x slower',
    '2.00x faster', 'same speed' (within 0.5%). The one wording of a speed ratio:
    the verdict, compare and the findings say it alike."""
    if 1 / 1.005 < ratio < 1.005:
        return "same speed"
    return f"{times(ratio)}x slower" if ratio >= 1 else f"{times(1 / ratio)}x faster"


def winner_changes(base: list[BlockVerdict], new: list[BlockVerdict]) -> list[str]:
    """One line per block both verdict lists have: its winner in both, or how the
    winner changed ('8-mini (solvable): ida_star_jit[pdb44] in both')."""
    old = {v.dataset: v for v in base}
    out = []
    for v in new:
        before = old.get(v.dataset)
        if before is None:
            continue
        a = before.winner.config if before.winner else "no winner"
        b = v.winner.config if v.winner else "no winner"
        out.append(f"{v.dataset}: {b} in both" if a == b
                   else f"{v.dataset}: {a} in base, {b} in new")  # fmt: skip
    return out


def times(ratio: float) -> str:
    """A ratio as '1.04', '17.8', '1,234' (the caller adds the x)."""
    if ratio != ratio:
        return "–"
    if ratio < 10:
        return f"{ratio:.2f}"
    return f"{ratio:.1f}" if ratio < 100 else f"{ratio:,.0f}"


def duration(ms: float) -> str:
    """A per-solve time as people read it: '5.58 us', '0.331 ms', '1.2 s'."""
    if ms != ms:
        return "–"
    if ms < 1:
        return f"{sig(ms * 1e3)} us"
    if ms < 1000:
        return f"{sig(ms)} ms"
    return f"{sig(ms / 1e3)} s"


def verdicts(inst: pd.DataFrame, meta: dict | None = None) -> list[BlockVerdict]:
    """One :class:`BlockVerdict` per (run, dataset block) of the per-instance table
    (:func:`harness.analysis.instances`), in the table's dataset order. ``meta``:
    the run's meta.json, which says which solvers look answers up."""
    if inst.empty:
        return []
    lookups = lookup_configs(meta, inst)
    common = common_instances(inst)
    out = []
    for key, block in inst.groupby(GROUP, sort=False):
        boards = set(common[(common[GROUP] == pd.Series(key, index=GROUP)).all(axis=1)]
                     ["instance"])  # fmt: skip
        out.append(_block(str(key[1]), block, boards, lookups))
    return out


def run_verdicts(run) -> list[BlockVerdict]:
    """:func:`verdicts` of a loaded run (:class:`harness.analysis.Run`), once."""
    if "verdicts" not in run._cache:
        run._cache["verdicts"] = verdicts(run.instances(), run.meta)
    return run._cache["verdicts"]


def lookup_configs(
    meta: dict | None, inst: pd.DataFrame | None = None
) -> frozenset[str]:
    """Configs whose solver looks answers up instead of searching (meta.json's
    ``search: false``; runs stored before that field: the ``table`` solver)."""
    solvers = (meta or {}).get("solvers") or {}
    named = {
        c
        for c, s in solvers.items()
        if isinstance(s, dict) and not s.get("search", s.get("solver") != "table")
    }
    if inst is not None and "solver" in inst:
        named |= set(inst.loc[inst["solver"] == "table", "config"]) - set(solvers)
    return frozenset(named)


def family(config: str) -> str:
    """A config's family, for colours and filters: the solver without ``_jit``
    (astar_cantor_jit[manhattan] -> astar_cantor)."""
    return config.split("[", 1)[0].removesuffix("_jit")


def heuristic(config: str) -> str:
    """The heuristic of a config label, 'none' for a blind solver."""
    if "[" not in config:
        return "none"
    return config.split("[", 1)[1].rstrip("]").split(",", 1)[0]


# ------------------------------------------------------------------ internals


def _block(
    dataset: str, block: pd.DataFrame, boards: set[str], lookups: frozenset[str]
) -> BlockVerdict:
    ok = answered_mask(block)
    out = BlockVerdict(dataset, int(block["instance"].nunique()), len(boards))
    answered = set(block.loc[ok, "config"])
    for config, part in block.groupby("config", sort=True):
        got = int(answered_mask(part).sum())
        if not got:
            out.none.append((str(config), _first_reason(part)))
        elif got < out.boards:
            out.partial.append((str(config), got))
    out.partial.sort(key=lambda p: (-p[1], p[0]))
    if not boards:
        return out
    com = block[block["instance"].isin(boards) & block["config"].isin(answered)]
    times = com.pivot(index="instance", columns="config", values="seconds")
    nodes = com.pivot(index="instance", columns="config", values="expanded")
    ranked, bounded, looked = [], [], []
    for config, part in com.groupby("config", sort=True):
        bound = _bound(part)
        wrong = int((part["is_optimal"] == 0).sum())
        share = _optimal_share(part)
        if config in lookups:
            looked.append(_standing(config, times, nodes, bound, share))
        elif bound == 1.0 and not wrong and _known_optimal(part):
            ranked.append(_standing(config, times, nodes, bound, share))
        elif bound is not None and bound > 1.0 and _within(part, bound):
            bounded.append(_standing(config, times, nodes, bound, share))
        else:
            why = (
                f"returned a longer path on {wrong} of {len(part)} common boards"
                if bound == 1.0 and wrong
                else f"over its bound {bound:g} on some common board"
                if bound is not None and bound > 1.0
                else "no bound on its path length"
            )
            out.others.append(_standing(config, times, nodes, bound, share, why))
    out.ranked = _rank(ranked, times)
    out.bounded = _rank(bounded, times)
    out.lookups = _rank(looked, times)
    if len(out.ranked) > 1:
        w, r = out.ranked[:2]
        node_ratio = r.gmean_nodes / w.gmean_nodes
        out.why = Why(node_ratio, r.ratio / node_ratio)
    out.others.sort(key=lambda s: (-_nan0(s.optimal_share), s.config))
    return out


def _standing(config, times, nodes, bound, share, note: str = "") -> Standing:
    return Standing(
        str(config),
        1e3 * _gmean(times[config], _MIN_SECONDS),
        _gmean(nodes[config], _MIN_NODES),
        bound=bound,
        optimal_share=share,
        note=note,
    )


def _rank(group: list[Standing], times: pd.DataFrame) -> list[Standing]:
    """``group`` fastest first (ties by name), each with its ratio to the first and
    the ratio's paired bootstrap interval over the common boards."""
    # 12 significant digits: equal means that differ by float rounding tie
    group = sorted(group, key=lambda s: (float(f"{s.gmean_ms:.12g}"), s.config))
    if not group:
        return []
    first = np.log(np.maximum(times[group[0].config].to_numpy(float), _MIN_SECONDS))
    out = [group[0]]
    for s in group[1:]:
        mine = np.log(np.maximum(times[s.config].to_numpy(float), _MIN_SECONDS))
        low, high = _interval(mine - first)
        out.append(_with(s, ratio=s.gmean_ms / group[0].gmean_ms, low=low, high=high))
    return out


def _interval(log_ratios: np.ndarray) -> tuple[float, float]:
    """95% bootstrap interval of the geometric mean of per-board ratios (a fixed
    seed: the same boards give the same interval)."""
    v = log_ratios[np.isfinite(log_ratios)]
    if len(v) < MIN_BOARDS:
        return math.nan, math.nan
    rng = np.random.default_rng(_SEED)
    means = v[rng.integers(0, len(v), size=(_RESAMPLES, len(v)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(np.exp(low)), float(np.exp(high))


def _with(s: Standing, **changes) -> Standing:
    from dataclasses import replace

    return replace(s, **changes)


def _gmean(values: pd.Series, minimum: float) -> float:
    v = values.to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return float(np.exp(np.log(np.maximum(v, minimum)).mean())) if len(v) else math.nan


def _bound(part: pd.DataFrame) -> float | None:
    if "bound" not in part:
        return None
    b = part["bound"].dropna()
    return float(b.iloc[0]) if len(b) else None


def _known_optimal(part: pd.DataFrame) -> bool:
    """Every common board's answer is known optimal, or has no known optimum (an
    unsolvable board correctly reported, a board of unknown depth)."""
    return bool((part["is_optimal"].isna() | (part["is_optimal"] == 1)).all())


def _within(part: pd.DataFrame, bound: float) -> bool:
    if "suboptimality" not in part:
        return True
    s = part["suboptimality"].dropna()
    return bool((s <= bound + 1e-9).all())


def _optimal_share(part: pd.DataFrame) -> float:
    known = part["is_optimal"].dropna()
    return float(known.mean()) if len(known) else math.nan


def _first_reason(part: pd.DataFrame) -> str:
    msgs = part.loc[part["status"] == "skipped", "message"].dropna().astype(str)
    msgs = msgs[msgs != ""]
    if len(msgs):
        return str(msgs.mode().iat[0])
    statuses = part["status"].value_counts()
    return f"{statuses.index[0]} on every board" if len(statuses) else ""


def _reason_kind(reason: str) -> str:
    """A short common reason for the header: 'they decline 3x3' when every
    reason says the solver is for another board size."""
    found = re.search(r"(?:not apply to|declines?|only for) (\d+x\d+)", reason)
    return f"they decline {found.group(1)}" if found else ""


def _factor(ratio: float, fewer: str, more: str) -> str:
    if not math.isfinite(ratio):
        return "–"
    if 1 / TIE <= ratio <= TIE:
        return "about as many" if fewer == "fewer" else "about the same"
    return f"{sig(ratio, 2)}x {fewer}" if ratio > 1 else f"{sig(1 / ratio, 2)}x {more}"


def _pct(share: float) -> str:
    return "–" if share != share else f"{100 * share:.0f}%"


def _nan0(value: float) -> float:
    return 0.0 if value != value else value


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def names(items: Iterable[str], limit: int = 4) -> str:
    """'a, b, c and 2 more'."""
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
