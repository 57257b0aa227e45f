"""What a run will do: the plan (configs x datasets and the options, checked), its
cells (config x instance, the refused ones with their reason), and the configs
whose set-up would take longer than ``--setup-timeout`` (skipped with the
estimate, before any worker starts)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import datasets as ds
from harness.configs import ConfigKey, SolverConfig, select_solvers
from harness.core import defaults
from harness.core.options import BY_NAME, INHERITED, option_fields, option_problem
from harness.datasets import Dataset, Instance
from harness.heuristics import all_heuristics, build_tables
from harness.measure.external import load_plugin, parse_exec
from harness.measure.tasks import Pass
from harness.puzzle import goal_name

DEFAULT_OUT = defaults.RESULTS_DIR


#: Upper bound of a run's cells (config x instance): every cell is planned up
#: front (a 10 KB experiment file of 10^6 configs ran --dry-run past 120 s and
#: 1.7 GB); at ~1.5 ms of the harness's own time per cell, 10^6 cells are
#: already 25 minutes before any solve. Larger sweeps are several runs (merge).
MAX_CELLS = 1_000_000


def check_option(name: str, value: Any) -> None:
    """RunError ``--flag VALUE: must be ...`` when ``value`` is out of range for
    the option ``name`` (harness.core.options)."""
    problem = option_problem(name, value)
    if problem:
        shown = f"{value:g}" if isinstance(value, float) else value
        raise RunError(f"{BY_NAME[name].spelled} {shown}: {problem}")


class RunError(Exception):
    """Bad selection or options, or a run that cannot be resumed: one line."""


#: The run options a plan carries, resolved (every one given: make_plan and a
#: resume fill them in from the table's defaults and the stored run). ``plugins``
#: is the plan's own field: the targets workers load.
PlanOptions = option_fields(
    "PlanOptions", [o for o in INHERITED if o.name != "plugins"],
    doc="The run options of a plan, each resolved (harness.core.options).",
)  # fmt: skip


@dataclass(slots=True)
class Plan(PlanOptions):
    """What to run and how: the grid of configs x datasets and the options
    (PlanOptions, from the table; ``memory_limit_mb`` None: no limit,
    ``order_seed`` chosen, ``pairs`` a set or None: every pair)."""

    configs: list[SolverConfig]
    datasets: list[Dataset]
    plugins: tuple[str, ...] = ()
    #: (dataset, instance id) -> optimum from the exact 3x3 oracle, when unlabelled
    oracle_optima: dict[tuple[str, str], int] = field(default_factory=dict)

    def timeout_for(self, config: SolverConfig) -> float:
        return self.timeout if self.timeout is not None else config.spec.budget_seconds

    def passes(self) -> tuple[Pass, ...]:
        warm = tuple(Pass("warmup", w) for w in range(self.warmup))
        timed = tuple(Pass("time", r) for r in range(self.repeats))
        return warm + timed + ((Pass("memory", 0),) if self.memory_pass else ())

    def optimum(self, dataset: Dataset, inst: Instance) -> int | None:
        if inst.optimal_length is not None:
            return inst.optimal_length
        return self.oracle_optima.get((dataset.name, inst.id))

    def options(self, jobs: int) -> dict[str, Any]:
        """meta.json's ``options``: every option under its one name
        (harness.core.options), the configs and datasets, each config's time
        limit and the workers."""
        stored = {o.name: getattr(self, o.name) for o in INHERITED}
        stored["plugins"] = list(self.plugins)
        if self.pairs is None:
            del stored["pairs"]
        else:
            stored["pairs"] = sorted([c, d] for c, d in self.pairs)
        return {
            "solvers": [c.label for c in self.configs],
            # the same configs as values, what a resume rebuilds the plan from
            "configs": [c.key.stored() for c in self.configs],
            "datasets": [d.name for d in self.datasets],
            **stored,
            "timeout_by_config": {c.label: self.timeout_for(c) for c in self.configs},
            "jobs": jobs,
        }


def resolve_plugins(plugins: Iterable[str]) -> tuple[str, ...]:
    """Load each plugin (module name or .py path) here; return the targets workers
    load (paths made absolute). RunError naming the plugin if one fails."""
    out = []
    for target in plugins:
        path = Path(target)
        if target.startswith("exec:"):
            try:  # canonical form: the program's path made absolute for workers
                target = parse_exec(target[5:]).target
            except ValueError as err:
                raise RunError(str(err)) from None
        elif target.endswith((".py", ".toml")) or path.is_file():
            target = str(path.resolve()) if path.exists() else target
        try:
            load_plugin(target)
        except ImportError as err:
            where = "" if target.startswith("exec:") else f"--plugin {target}: "
            raise RunError(f"{where}{err}") from None
        if target not in out:
            out.append(target)
    return tuple(out)


def resolve_solvers(
    spec: str | Sequence[str | SolverConfig | ConfigKey],
) -> list[SolverConfig]:
    """``"all"``, ``"a,b[h]"`` or a list of labels / configs / config keys ->
    configs. Only the labels are parsed; configs and keys stay values."""
    items = [spec] if isinstance(spec, str) else list(spec)
    out: list[SolverConfig] = []
    try:
        for item in items:
            if isinstance(item, SolverConfig):
                out.append(item)
            elif isinstance(item, ConfigKey):
                out.append(item.resolve())
            else:
                out.extend(select_solvers(item))
        if not out:
            select_solvers("")  # the one-line "names no solver" error
    except KeyError as err:
        raise RunError(f"--solvers: {err.args[0] if err.args else err}") from None
    return list(dict.fromkeys(out))


def stored_configs(options: dict[str, Any]) -> list[SolverConfig]:
    """The configs of a stored run's options: its ``configs`` values (solver,
    heuristic), looked up in the registry; the labels of ``solvers`` only for a
    run stored before ``configs`` was recorded."""
    if "configs" not in options:
        return resolve_solvers(options["solvers"])
    try:
        keys = [ConfigKey.from_stored(entry) for entry in options["configs"]]
        return list(dict.fromkeys(key.resolve() for key in keys))
    except KeyError as err:
        raise RunError(f"stored config: {err.args[0] if err.args else err}") from None


def resolve_datasets(spec: str | Dataset | Sequence[str | Dataset]) -> list[Dataset]:
    """``"default"``, ``"all"``, ``"a,b"`` (names or paths) or Dataset objects."""
    if isinstance(spec, Dataset):
        items: list[str | Dataset] = [spec]
    elif isinstance(spec, str):
        items = [spec]
    else:
        items = list(spec)
    out: list[Dataset] = []
    for item in items:
        if isinstance(item, Dataset):
            out.append(item)
            continue
        try:
            out.extend(ds.select_datasets(str(item)))
        except (ValueError, OSError) as err:  # DatasetError is a ValueError
            raise RunError(f"--datasets: {err}") from None
    if not out:
        raise RunError("--datasets: no dataset named")
    names: dict[str, Dataset] = {}
    for d in out:
        if d.name in names and names[d.name].checksum != d.checksum:
            raise RunError(f"--datasets: two different datasets are named {d.name!r}")
        names[d.name] = d
    return list(names.values())


def check_instructions() -> None:
    """RunError (one line: what to install) when instructions cannot be counted
    here: no valgrind, no callgrind header, no C compiler."""
    from harness.measure.instructions.shim import missing

    problem = missing()
    if problem:
        raise RunError(problem)


def make_plan(
    solvers: str | Sequence[str | SolverConfig] = "all",
    datasets: str | Dataset | Sequence[str | Dataset] = "default",
    *,
    plugins: Iterable[str] = (),
    use_oracle: bool = True,
    **options: Any,
) -> Plan:
    """Resolve names into a :class:`Plan`; RunError (one line) on bad input.
    ``options``: the run options by their names (harness.core.options; those not
    given take their defaults), each checked as the command line checks it.
    ``order_seed`` None: a fresh one, recorded in meta.json."""
    unknown = sorted(set(options) - set(BY_NAME))
    if unknown:
        raise TypeError(f"make_plan() got unknown options {', '.join(unknown)}")
    values = {o.name: options.get(o.name, o.default) for o in INHERITED}
    del values["plugins"]
    for name, value in values.items():
        check_option(name, value)
    if values["memory_limit_mb"] == 0:
        values["memory_limit_mb"] = None  # 0 means no limit
    if values["order_seed"] is None:
        values["order_seed"] = random.randrange(2**31)
    if values["pairs"] is not None:
        values["pairs"] = {tuple(p) for p in values["pairs"]}
    values["min_sample_seconds"] = float(values["min_sample_seconds"])
    if values["instructions"]:
        check_instructions()
    plugin_targets = resolve_plugins(plugins)
    plan = Plan(
        configs=resolve_solvers(solvers),
        datasets=resolve_datasets(datasets),
        plugins=plugin_targets,
        **values,
    )
    cells = count_cells(plan.configs, plan.datasets, plan.pairs)
    if cells > MAX_CELLS:
        raise RunError(too_many_cells(cells))
    if use_oracle:
        plan.oracle_optima = oracle_optima(plan.datasets)
    return plan


def count_cells(
    configs: Sequence[SolverConfig],
    datasets: Sequence[Dataset],
    pairs: set[tuple[str, str]] | None = None,
) -> int:
    """How many cells (config x instance) the grid has, without forming them."""
    return sum(
        len(dataset.instances)
        for config in configs
        for dataset in datasets
        if pairs is None or (config.label, dataset.name) in pairs
    )


def too_many_cells(cells: int) -> str:
    """The refusal of a grid of ``cells`` cells (one clause, no location)."""
    return (
        f"{cells:,} cells (configs x instances): more than the {MAX_CELLS:,} a run "
        "may plan; split it into several runs (harness merge joins them)"
    )


def oracle_optima(datasets: Iterable[Dataset]) -> dict[tuple[str, str], int]:
    """Exact optima for solvable small-grid (<= 9 cells) instances the dataset left
    unlabelled, from :mod:`harness.core.oracle` when it is available."""
    wanted = [
        (d, i)
        for d in datasets
        for i in d.instances
        if i.solvable and i.optimal_length is None and i.grid.squares <= 9
    ]
    if not wanted:
        return {}
    try:
        from harness.core import oracle
        from harness.puzzle import rank
    except ImportError:
        return {}
    out = {}
    for d, inst in wanted:
        try:
            table = oracle.distances(inst.goal, inst.grid)
        except (ValueError, AttributeError):
            continue
        dist = int(table[rank(inst.start)])
        if dist >= 0:
            out[(d.name, inst.id)] = dist
    return out


@dataclass(frozen=True, slots=True)
class Cell:
    """One config on one instance; ``refusal`` says why the solver declined it."""

    config: SolverConfig
    dataset: Dataset
    instance: Instance
    refusal: str | None = None
    block: int | None = None  # interleaved order: the instance's block number


def plan_cells(plan: Plan) -> list[Cell]:
    """The grid in run order, refusals resolved.

    Interleaved (the default): instance by instance; on each instance every config,
    in an order that rotates by one position per instance, starting from a shuffle
    seeded by ``plan.order_seed``. Each config then samples the machine's drift
    all through the run instead of in one window of its own, and every config
    takes every position equally often. The cells of one instance form a block,
    run by one worker. Otherwise config by config (a worker reuses its set-up).
    """
    heuristics = all_heuristics()

    def cell(config: SolverConfig, dataset: Dataset, inst: Instance, block=None):
        depth = plan.optimum(dataset, inst)
        reason = _refusal(config, inst, depth, heuristics, dataset.cost_model)
        return Cell(config, dataset, inst, reason, block)

    def wanted(config: SolverConfig, dataset: Dataset) -> bool:
        return plan.pairs is None or (config.label, dataset.name) in plan.pairs

    if not plan.interleave:
        return [
            cell(config, dataset, inst)
            for config in plan.configs
            for dataset in plan.datasets
            if wanted(config, dataset)
            for inst in dataset.instances
        ]
    order = list(plan.configs)
    random.Random(plan.order_seed).shuffle(order)
    cells, block = [], 0
    for dataset in plan.datasets:
        for inst in dataset.instances:
            turn = block % len(order)
            chosen = [c for c in order[turn:] + order[:turn] if wanted(c, dataset)]
            for config in chosen:
                cells.append(cell(config, dataset, inst, block))
            block += 1 if chosen else 0
    return cells


def slow_setups(
    cells: list[Cell], setup_timeout: float, needed: Callable[[Cell], bool],
    say: Callable[[str], None],
) -> list[Cell]:
    """Heuristics whose tables take long to build (``setup_estimate``): a config
    whose estimate exceeds ``setup_timeout`` is declined cell by cell with the
    reason; otherwise the tables are built here, once, before any worker starts,
    with progress and an ETA through ``say`` (workers then load them from the
    cache). Only cells ``needed`` (not refused, not already stored) count."""
    from dataclasses import replace

    heuristics = all_heuristics()
    verdicts: dict[tuple, str | None] = {}
    out = []
    for cell in cells:
        info = heuristics.get(cell.config.heuristic or "")
        if info is None or info.setup_estimate is None or not needed(cell):
            out.append(cell)
            continue
        g, goal = cell.instance.grid, cell.instance.goal
        key = (info.name, g.rows, g.cols, goal)
        if key not in verdicts:
            verdicts[key] = _slow_setup(info, g, goal, setup_timeout, say)
        reason = verdicts[key]
        out.append(cell if reason is None else replace(cell, refusal=reason))
    return out


def _slow_setup(info, g, goal, setup_timeout: float, say) -> str | None:
    estimate = info.setup_estimate(goal, g)
    if estimate is None:
        return None
    if estimate > setup_timeout:
        return (
            f"set-up would take ~{estimate:.0f} s here (building the {info.name} "
            f"tables for {g.label} (not cached yet)), over --setup-timeout "
            f"{setup_timeout:g} s; raise it, or build them once with one solve: "
            f"harness solve --size {g.label} --goal \"{goal_name(goal, g)}\" "
            f"--solver \"ida_star_jit[{info.name}]\""
        )
    build_tables(info, goal, g, say, estimate)
    return None


def _refusal(
    config: SolverConfig, inst: Instance, depth: int | None, heuristics,
    cost_model: str = "unit",
) -> str | None:  # fmt: skip
    if config.heuristic is not None:
        info = heuristics.get(config.heuristic)
        reason = info.refuses(inst.grid) if info is not None else None
        if reason:
            return (
                f"heuristic {config.heuristic} does not apply to {inst.grid.label}: "
                f"{reason}"
            )
    if config.spec.external is not None:  # a program reads no goal: it has its own
        reason = config.spec.external.refuses_goal(inst.goal, inst.grid)
        if reason:
            return reason
    try:
        return config.refuses(inst.grid, depth, inst.goal, cost_model)
    except Exception as err:  # a plugin's refuses() itself is broken
        return f"(refuses() raised {type(err).__name__}: {err})"
