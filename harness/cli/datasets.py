"""``harness datasets list|show|generate|rebuild``: inspect and make dataset files."""

from __future__ import annotations

import csv
import io
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand

from harness.cli.common import app, fail, load_plugins, number, size_and_goal
from harness.core import defaults

datasets_app = typer.Typer(
    no_args_is_help=True,
    help="List, inspect, generate and rebuild benchmark datasets.",
)
app.add_typer(datasets_app, name="datasets")


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


class _GenerateCommand(TyperCommand):
    """Help lists the registered generators when shown, so those of ``--plugin``
    (given before ``--help``) appear too; the library is imported only then."""

    def format_help(self, ctx, formatter) -> None:
        from harness.datasets import all_generators

        for param in self.params:
            if param.name == "generator":
                param.help = "How boards are drawn: " + "; ".join(
                    f"{name}: {info.description}"
                    for name, info in all_generators().items()
                ) + "."
        super().format_help(ctx, formatter)


def _load_plugins(values: list[str] | None) -> list[str] | None:
    """Eager ``--plugin``: load before the generator argument is checked."""
    load_plugins(values)
    return values


def depth_range(summary: dict) -> str:
    low, high = summary["min_depth"], summary["max_depth"]
    if low is None:
        return "-"
    return str(low) if low == high else f"{low}..{high}"


def _csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else [],
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _print_table(title: str | None, columns: list[str], rows: list[list[str]]) -> None:
    from harness.core.tables import print_table

    print_table(columns, rows, right=range(1, len(columns)), title=title)


@datasets_app.command("list")
def list_command(
    format: Annotated[
        Format, typer.Option("--format", "-f", help="Output format.")
    ] = Format.table,
) -> None:
    """Every dataset on the search path: size, goal, instances, depths, solvability.

    Searched, first match wins: $NPUZZLE_DATASETS, ./datasets, the repository's
    datasets/; committed datasets missing from all of them are built from their
    recipes. A file that does not load is reported on stderr (exit status 1).
    """
    from harness.datasets import (
        DatasetError,
        dataset_names,
        list_datasets,
        load_dataset,
        summarize,
    )

    files = dict(list_datasets())
    rows, broken = [], []
    for name in dataset_names():
        try:
            s = summarize(load_dataset(files.get(name, name)))
        except DatasetError as err:
            broken.append(str(err))
            continue
        rows.append({
            "name": name, "size": s["size"], "goal": s["goal"],
            "instances": s["instances"], "depths": depth_range(s),
            "solvable": s["solvable"], "unsolvable": s["unsolvable"],
            "path": s["path"] or "built-in",
        })
    if format is Format.json:
        typer.echo(json.dumps(rows, indent=2))
    elif format is Format.csv:
        typer.echo(_csv(rows), nl=False)
    elif rows:
        _print_table(None, ["name", "size", "goal", "instances", "depths", "solvable",
                            "unsolvable"],
                     [[str(r[k]) for k in list(r)[:-1]] for r in rows])
    else:
        typer.echo("no datasets found (searched $NPUZZLE_DATASETS, ./datasets and "
                   "the repository's datasets/)")
    for message in broken:
        typer.echo(f"error: {message}", err=True)
    if broken:
        raise typer.Exit(1)


@datasets_app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="Dataset name or path to a .jsonl file.")],
    format: Annotated[
        Format, typer.Option("--format", "-f", help="Output format.")
    ] = Format.table,
    instances: Annotated[
        bool, typer.Option("--instances", help="Also list every instance.")
    ] = False,
    results_dir: Annotated[
        Path,
        typer.Option(
            help="Where stored runs are searched for labels they contradicted."
        ),
    ] = defaults.RESULTS_DIR,
) -> None:
    """Summary and optimal-depth histogram of one dataset (validated on load), and
    the labels that runs stored in --results-dir proved wrong."""
    from harness.datasets import DatasetError, load_dataset, summarize
    from harness.puzzle import format_board
    from harness.results import contradiction_text, stored_contradictions

    try:
        ds = load_dataset(name)
    except DatasetError as err:
        raise fail(str(err)) from None
    s = summarize(ds)
    wrong = stored_contradictions(results_dir, ds.name, ds.checksum)
    s["contradicted_labels"] = wrong
    listing = [
        {"id": i.id, "board": format_board(i.start), "solvable": i.solvable,
         "optimal_length": i.optimal_length, "optimal_source": i.optimal_source}
        for i in ds.instances
    ]
    if format is Format.json:
        s["histogram"] = {str(k): v for k, v in s["histogram"].items()}
        if instances:
            s["instance_list"] = listing
        typer.echo(json.dumps(s, indent=2, ensure_ascii=False))
        return
    if format is Format.csv:
        if instances:
            typer.echo(_csv(listing), nl=False)
            return
        rows = [{"dataset": ds.name, "depth": d, "count": c}
                for d, c in s["histogram"].items()]
        if s["unknown_depth"]:
            rows.append({"dataset": ds.name, "depth": "unknown",
                         "count": s["unknown_depth"]})
        if s["unsolvable"]:
            rows.append({"dataset": ds.name, "depth": "unsolvable",
                         "count": s["unsolvable"]})
        typer.echo(_csv(rows), nl=False)
        return
    params = " ".join(f"{k}={v}" for k, v in s["params"].items())
    depths_known = [i for i in ds.instances if i.optimal_length is not None]
    for label, value in [
        ("name", s["name"]),
        ("path", s["path"] or "built in (made from its recipe in "
                              "harness/datasets/catalogue.py)"),
        ("size", s["size"]),
        ("goal", f"{s['goal']} ({format_board(ds.goal)})"),
        ("instances", f"{s['instances']} ({s['solvable']} solvable, "
                      f"{s['unsolvable']} unsolvable, {s['unknown_depth']} of "
                      "unknown depth)"),
        ("depths", f"{depth_range(s)}, mean {s['mean_depth']}"
                   if s["mean_depth"] is not None else "-"),
        ("optimum from", ", ".join(s["optimal_sources"]) or "-"),
        ("cross-checked", "; ".join(
            f"{n} of {len(depths_known)} labels again by {by}"
            for by, n in s["cross_checked"].items()
        ) or "-"),
        ("generator", f"{s['generator']} {params} seed={s['seed']}"),
        ("command", s["command"] or "-"),
        ("description", s["description"] or "-"),
        ("sha256", s["sha256"]),
        ("contradicted", f"{len(wrong)} label(s), by runs in {results_dir}"
                         if wrong else f"none found in {results_dir}"),
    ]:
        typer.echo(f"{label:>13}: {value}")
    for entry in wrong:
        typer.echo(f"  label contradicted: {contradiction_text(entry)} "
                   f"(run {entry['run_id']})")
    if s["histogram"]:
        peak = max(s["histogram"].values())
        rows = [[str(d), str(c), "#" * max(1, round(30 * c / peak))]
                for d, c in s["histogram"].items()]
        _print_table("optimal depth histogram", ["depth", "boards", ""], rows)
    if instances:
        _print_table("instances", ["id", "board", "solvable", "optimal", "source"],
                     [[r["id"], r["board"], str(r["solvable"]).lower(),
                       "-" if r["optimal_length"] is None else str(r["optimal_length"]),
                       r["optimal_source"] or "-"] for r in listing])


def progress_bar():
    """(callback, closer) showing a rich bar on a terminal, nothing otherwise."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.progress import Progress

    bar = Progress(transient=True)
    bar.start()
    task = bar.add_task("labelling", total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return update, bar.stop


def _length(text: str | None) -> int | str | None:
    """``--length``: a plain number stays a number (the header stores it so)."""
    if text is None or not text.strip().isdigit():
        return text
    return int(text)


@datasets_app.command("generate", cls=_GenerateCommand)
def generate_command(
    generator: Annotated[
        str, typer.Argument(metavar="GENERATOR", help="How boards are drawn.")
    ],
    name: Annotated[str, typer.Option(help="Dataset name (file NAME.jsonl).")],
    size: Annotated[str, typer.Option(help="Board size ROWSxCOLS, e.g. 3x3.")] = "3x3",
    count: Annotated[
        int, typer.Option(parser=number("--count", whole=True, minimum=0),
                          help="Boards (depth_strata: boards per depth).")
    ] = 100,
    seed: Annotated[
        int, typer.Option(parser=number("--seed", whole=True, minimum=0),
                          help="Seed of the bit stream.")
    ] = 0,
    goal: Annotated[
        str, typer.Option(help="standard, spiral, blank-first or board tokens.")
    ] = "standard",
    length: Annotated[
        str | None,
        typer.Option(
            help="random_walk: blank moves per walk, or several lengths (30,40 or "
                 "30..90: --count walks of each)."
        ),
    ] = None,
    depth: Annotated[
        str | None,
        typer.Option(
            help="depth_strata: depths, e.g. 0..31 or 20,22.", show_default="all"
        ),
    ] = None,
    unsolvable: Annotated[
        int, typer.Option(parser=number("--unsolvable", whole=True, minimum=0),
                          help="depth_strata: also this many unsolvable boards.")
    ] = 0,
    label: Annotated[
        str,
        typer.Option(help="Optimal lengths: auto (oracle up to 3x3), oracle, none or "
                          "solver:NAME[HEURISTIC]."),
    ] = "auto",
    cross_check: Annotated[
        str | None,
        typer.Option(
            help="Solve again with solver:NAME[HEURISTIC] every board labelled at "
                 "most --cross-check-depth moves; a different length is an error."
        ),
    ] = None,
    cross_check_depth: Annotated[
        int | None,
        typer.Option(parser=number("--cross-check-depth", whole=True, minimum=0),
                     help="Deepest label --cross-check checks."),
    ] = None,
    description: Annotated[str, typer.Option(help="Free text for the header.")] = "",
    out: Annotated[Path, typer.Option(help="Folder to write NAME.jsonl in.")] = Path(
        "datasets"
    ),
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin", is_eager=True, callback=_load_plugins,
            help="Load generators (and solvers) from a module or .py file "
                 "(repeatable; before --help to list its generators).",
        ),
    ] = None,
) -> None:
    """Generate a dataset deterministically from (generator, parameters, seed)."""
    from harness.datasets import (
        DatasetError,
        generate,
        parse_depths,
        save_dataset,
        summarize,
    )

    g, target = size_and_goal(size, goal)
    path = out / f"{name}.jsonl"
    if path.exists() and not force:
        raise fail(f"{path} already exists (use --force to overwrite)")
    update, close = progress_bar()
    try:
        ds = generate(
            generator, g, target, name=name, seed=seed, count=count,
            length=_length(length), depths=parse_depths(depth) if depth else None,
            unsolvable=unsolvable, label=label, cross_check=cross_check,
            cross_check_depth=cross_check_depth, description=description,
            progress=update,
        )
        written = save_dataset(ds, out, force=force)
    except DatasetError as err:
        raise fail(str(err)) from None
    finally:
        close()
    s = summarize(ds)
    typer.echo(f"wrote {written}: {s['instances']} instances, depths {depth_range(s)}, "
               f"sha256 {ds.checksum[:12]}")


@datasets_app.command("rebuild")
def rebuild_command(
    names: Annotated[
        list[str] | None,
        typer.Argument(
            help="Committed datasets to rebuild.", show_default="all of them"
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder to write to.", show_default="the repository's datasets/"
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option("--check", help="Write nothing; exit 1 if any file differs."),
    ] = False,
) -> None:
    """Rebuild the committed datasets from their recipes (datasets/catalogue.py)."""
    from harness.datasets import (
        DatasetError,
        catalogue,
        dumps_dataset,
        save_dataset,
    )

    folder = out or catalogue.repo_datasets_dir()
    if folder is None:
        raise fail("not in a source checkout: name the folder with --out")
    differ = []
    update, close = progress_bar()
    try:
        for name in names or list(catalogue.RECIPES):
            ds = catalogue.build(name)
            path = folder / f"{name}.jsonl"
            same = path.is_file() and path.read_bytes() == dumps_dataset(ds).encode()
            if check:
                typer.echo(f"{name}: {'ok' if same else 'DIFFERS'} ({path})")
                if not same:
                    differ.append(name)
            else:
                save_dataset(ds, folder, force=True)
                typer.echo(f"{name}: {'unchanged' if same else 'written'} ({path})")
    except DatasetError as err:
        raise fail(str(err)) from None
    finally:
        close()
    if differ:
        typer.echo(f"error: {len(differ)} dataset file(s) differ from their recipes: "
                   f"{', '.join(differ)}", err=True)
        raise typer.Exit(1)
