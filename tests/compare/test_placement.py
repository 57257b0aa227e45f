"""Where cells ran (meta.json hosts / workers / placement / lost_batches), as the
report and ``harness compare`` read it: cells per host, a warning when compared
times come from different CPU models, the Dask batches lost with their worker.
Synthetic runs of two hosts (tests/compare/test_compare.py's writer)."""

from __future__ import annotations

from pathlib import Path

from test_compare import INSTANCES, base_cells, write_run
from typer.testing import CliRunner

from harness.analysis import load_run
from harness.cli import app
from harness.compare import compare_runs
from harness.report.findings import compare_findings, findings

XEON, EPYC = "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", "AMD EPYC 7742 64-Core"
ASTAR, BFS = "astar_dict[manhattan]", "bfs"


def placed(where: dict, lost: list | None = None) -> dict:
    """meta.json keys for cells of each config measured on (host, CPU model), or
    on a list of them, one per instance."""
    hosts, workers, placement = {}, {}, {}
    for config, spots in where.items():
        spots = spots if isinstance(spots, list) else [spots] * len(INSTANCES)
        for inst, (host, model) in zip(INSTANCES, spots, strict=True):
            hosts[host] = {"cpu_model": model, "cpu_count": 4, "platform": "Linux",
                           "python": "CPython 3.11.9"}  # fmt: skip
            worker = f"tcp://{host}:40001"
            workers[worker] = {"host": host, "name": host, "nthreads": 1}
            placement.setdefault(worker, []).append([config, "3x3-d20", inst])
    meta = {"hosts": hosts, "workers": workers, "placement": placement}
    return meta | ({"lost_batches": lost} if lost else {})


def run(tmp_path: Path, name: str, where, client_cpu: str = "Client CPU", **kw):
    meta = {"cpu_model": client_cpu, **placed(where, **kw)}
    return write_run(tmp_path, name, base_cells(), seed=len(name), meta=meta)


def test_compare_warns_when_a_config_moved_to_another_cpu_model(tmp_path) -> None:
    base = run(tmp_path, "base", {ASTAR: ("node1", XEON), BFS: ("node1", XEON)})
    new = run(tmp_path, "new", {ASTAR: ("node2", EPYC), BFS: ("node1", XEON)},
              client_cpu="Laptop CPU")  # fmt: skip
    comp = compare_runs(base, new)
    assert [w for w in comp.warnings if "CPU" in w] == [
        f"CPU model differs between the runs on 8 cell(s) of 1 config(s) (e.g. "
        f"{ASTAR}: base on {XEON}, new on {EPYC}): those time ratios mix code and "
        "machine changes"
    ]  # the clients' CPUs (Client vs Laptop) measured nothing: not warned
    notes = "\n".join(comp.notes)
    # the new run alone mixes two models (its configs' times, not these ratios)
    assert f"new run new measured its cells on 2 CPU models ({EPYC}: 8 cells; " \
        f"{XEON}: 8 cells)" in notes  # fmt: skip
    assert f"Configs by model: {EPYC}: {ASTAR}; {XEON}: {BFS}" in notes
    assert (
        f"new run new was measured on 2 hosts: node1 ({XEON}, 4 cores, 1 worker): "
        f"8 cells; node2 ({EPYC}, 4 cores, 1 worker): 8 cells"
    ) in comp.notes
    shown = CliRunner().invoke(app, ["compare", str(base), str(new)])
    assert "CPU model differs between the runs on 8 cell(s) of 1" in shown.output
    assert "new run new was measured on 2 hosts" in shown.output


def test_compare_checks_models_cell_by_cell(tmp_path) -> None:
    """Both runs measured astar on both models, but not each instance on the same
    one: those cells' ratios mix machines."""
    half = [("node1", XEON)] * 4 + [("node2", EPYC)] * 4
    base = run(tmp_path, "base", {ASTAR: half, BFS: ("node1", XEON)})
    new = run(tmp_path, "new", {ASTAR: half[::-1], BFS: ("node1", XEON)})
    warned = [w for w in compare_runs(base, new).warnings if "CPU" in w]
    assert warned == [
        f"CPU model differs between the runs on 8 cell(s) of 1 config(s) (e.g. "
        f"{ASTAR}: base on {XEON}, new on {EPYC}): those time ratios mix code and "
        "machine changes"
    ]
    same = run(tmp_path, "same", {ASTAR: half, BFS: ("node1", XEON)})
    assert not [w for w in compare_runs(base, same).warnings if "CPU" in w]


def test_same_cpu_model_on_other_hosts_is_a_note_not_a_warning(tmp_path) -> None:
    base = run(tmp_path, "base", {ASTAR: ("node1", XEON), BFS: ("node1", XEON)})
    new = run(tmp_path, "new", {ASTAR: ("node3", XEON), BFS: ("node1", XEON)})
    comp = compare_runs(base, new)
    assert not [w for w in comp.warnings if "CPU model" in w], comp.warnings
    assert (
        "8 cell(s) of 1 config(s) ran on other hosts of the same CPU model in the "
        f"two runs (e.g. {ASTAR}: base on node1, new on node3)"
    ) in comp.notes
    # one host per run: no per-host counts, no mixed-model warning
    one = run(tmp_path, "one", {ASTAR: ("node1", XEON), BFS: ("node1", XEON)})
    assert not [s for s in findings(load_run(one)) if "host" in s or "CPU" in s]


def test_report_counts_hosts_warns_and_lists_lost_batches(tmp_path) -> None:
    lost = [
        {"batch": 7, "worker": "tcp://node2:40001", "host": "node2",
         "cells": [[ASTAR, "3x3-d20", i] for i in INSTANCES[:4]], "attempt": 1,
         "error": "KilledWorker: ('npuzzle-batch-7', ...)", "retried": True,
         "outcome": "queued again", "session": 0},
        {"batch": 9, "worker": "tcp://node2:40001", "host": "node2",
         "cells": [[ASTAR, "3x3-d20", INSTANCES[0]]], "attempt": 2,
         "error": "KilledWorker", "retried": False,
         "outcome": "cells recorded as error", "session": 0},
        {"batch": 8, "worker": "tcp://node2:40001", "host": "node2",
         "cells": [[BFS, "3x3-d20", INSTANCES[1]]], "attempt": 1,
         "error": "KilledWorker", "retried": True, "started": False,
         "outcome": "queued again (it had not started: it only waited on the "
                    "worker)", "session": 0},
    ]  # fmt: skip
    base = run(tmp_path, "base", {ASTAR: ("node1", XEON), BFS: ("node1", XEON)})
    new = run(tmp_path, "new", {ASTAR: ("node2", EPYC), BFS: ("node1", XEON)},
              lost=lost)  # fmt: skip
    said = findings(load_run(new))
    assert any("Run new measured its cells on 2 CPU models" in s for s in said)
    assert any(s.startswith("Run new was measured on 2 hosts: node1") for s in said)
    assert (
        f"Dask worker tcp://node2:40001 on node2 died under batch 7 (attempt 1, 4 "
        f"cells: {ASTAR} on 3x3-d20/{INSTANCES[0]}, {ASTAR} on 3x3-d20/"
        f"{INSTANCES[1]}, {ASTAR} on 3x3-d20/{INSTANCES[2]} and 1 more); its cells "
        "were queued again. Dask said: KilledWorker: ('npuzzle-batch-7', ...)"
    ) in said
    assert any("batch 9 (attempt 2" in s and "recorded as errors" in s for s in said)
    assert (
        "Dask worker tcp://node2:40001 on node2 died while batch 8 waited on it, not "
        f"started (attempt 1, 1 cells: {BFS} on 3x3-d20/{INSTANCES[1]}); its cells "
        "were queued again (not counted as a retry). Dask said: KilledWorker"
    ) in said
    # the comparison in a report of both runs says where the cells ran
    runs = [load_run(base), load_run(new)]
    from harness.report.comparison import comparison_table

    text = "\n".join(compare_findings(runs, comparison_table(runs)))
    assert f"CPU model differs between the runs on 8 cell(s) of 1 config(s) (e.g. " \
        f"{ASTAR}" in text  # fmt: skip
    assert "ran on a different CPU" not in text  # the clients' CPUs are not it
    # harness compare: a batch recorded as errors is a warning there too
    comp = compare_runs(base, new)
    assert any("batch 9" in w for w in comp.warnings)
    assert not any("batch 7" in w for w in comp.warnings)


def test_report_tables_the_hosts_of_a_run_measured_on_several(tmp_path) -> None:
    from harness.report.document import SummaryReport

    new = run(tmp_path, "new", {ASTAR: ("node2", EPYC), BFS: ("node1", XEON)})
    sections = SummaryReport(load_run(new), []).sections()
    tables = dict(next(s for s in sections if s.title == "Runs").tables)
    hosts = tables["Where the cells were measured"]
    assert hosts.to_dict("records") == [
        {"host": "node1", "CPU model": XEON, "cores": 4, "workers": 1, "cells": 8},
        {"host": "node2", "CPU model": EPYC, "cores": 4, "workers": 1, "cells": 8},
    ]
    facts = dict(zip(tables[""]["run"], tables[""]["value"], strict=True))
    assert facts["CPU"].endswith("(the client's: see where the cells were measured)")
    one = run(tmp_path, "one", {ASTAR: ("node1", XEON), BFS: ("node1", XEON)})
    tables = dict(next(s for s in SummaryReport(load_run(one), []).sections()
                       if s.title == "Runs").tables)  # fmt: skip
    assert "Where the cells were measured" not in tables  # one host, no Dask
