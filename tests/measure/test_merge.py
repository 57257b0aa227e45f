"""harness.measure.reuse.merge: runs that do not overlap become one reportable run."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from where import DATA

from harness.analysis import read_run
from harness.measure import reuse

FAIR = DATA / "run_fair"


def _split(tmp_path: Path) -> tuple[Path, Path]:
    """run_fair as two runs: alpha's rows in one, beta's in the other."""
    rows = list(csv.DictReader((FAIR / "rows.csv").open()))
    meta = json.loads((FAIR / "meta.json").read_text())
    out = []
    for name, config, started in (
        ("a", "alpha[manhattan]", "2026-12-03T04:00:00Z"),
        ("b", "beta[manhattan]", "2026-12-03T05:00:00Z"),
    ):
        d = tmp_path / name
        d.mkdir()
        m = dict(meta, run_id=f"run-{name}", started_utc=started)
        (d / "meta.json").write_text(json.dumps(m))
        mine = [dict(r, run_id=f"run-{name}") for r in rows if r["config"] == config]
        with (d / "rows.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(mine)
        out.append(d)
    return out[0], out[1]


def test_disjoint_runs_merge_and_keep_their_origin(tmp_path) -> None:
    a, b = _split(tmp_path)
    merged, warnings = reuse.merge([a, b], tmp_path / "m")
    assert warnings == []
    meta, rows = read_run(merged)
    assert len(rows) == 40
    assert meta["run_id"] == "m"
    assert [(m["run_id"], m["cells"]) for m in meta["merged_from"]] == [
        ("run-a", 20), ("run-b", 20)
    ]
    # each row says which run measured it
    assert set(rows[rows.config == "alpha[manhattan]"].run_id) == {"run-a"}
    assert set(rows[rows.config == "beta[manhattan]"].run_id) == {"run-b"}


def test_overlap_is_an_error_unless_prefer_newest(tmp_path) -> None:
    a, b = _split(tmp_path)
    shutil.copytree(b, tmp_path / "b2")
    meta = json.loads((tmp_path / "b2" / "meta.json").read_text())
    meta["started_utc"] = "2026-12-03T06:00:00Z"
    meta["run_id"] = "run-b2"
    (tmp_path / "b2" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(reuse.ReuseError, match=r"beta\[manhattan\] on 8-fair/e01 is in both"):
        reuse.merge([a, b, tmp_path / "b2"], tmp_path / "m")
    assert not (tmp_path / "m").exists()
    merged, _ = reuse.merge([a, b, tmp_path / "b2"], tmp_path / "m", prefer="newest")
    _, rows = read_run(merged)
    assert len(rows) == 40
    # b2 started last, so it owns every beta cell (rows still say run-b: copied)
    counts = {m["path"]: m["cells"] for m in json.loads(
        (merged / "meta.json").read_text())["merged_from"]}  # fmt: skip
    assert counts == {str(a): 20, str(b): 0, str(tmp_path / "b2"): 20}


def test_different_solver_source_or_dataset_cannot_merge(tmp_path) -> None:
    a, b = _split(tmp_path)
    meta = json.loads((b / "meta.json").read_text())
    meta["solvers"]["alpha[manhattan]"]["source_sha256"] = "9" * 64
    (b / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(reuse.ReuseError, match="another solver source"):
        reuse.merge([a, b], tmp_path / "m")
    meta["solvers"]["alpha[manhattan]"]["source_sha256"] = "a" * 64
    meta["datasets"]["8-fair"]["sha256"] = "0" * 64
    (b / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(reuse.ReuseError, match="dataset 8-fair has other contents"):
        reuse.merge([a, b], tmp_path / "m")


def test_other_machine_is_a_warning(tmp_path) -> None:
    a, b = _split(tmp_path)
    meta = json.loads((b / "meta.json").read_text())
    meta["cpu_model"] = "Other CPU"
    (b / "meta.json").write_text(json.dumps(meta))
    merged, warnings = reuse.merge([a, b], tmp_path / "m")
    assert len(warnings) == 1 and "different cpu model" in warnings[0]
    assert warnings[0] in json.loads((merged / "meta.json").read_text())["warnings"]


def test_mismatch_names_the_first_difference() -> None:
    base = json.loads((FAIR / "meta.json").read_text())
    cfg = "alpha[manhattan]"
    assert reuse.mismatch(base, base, cfg, "8-fair") is None
    for change, why in (
        ({"python": "3.12.1"}, "different python"),
        ({"packages": {"numpy": "2.5.0"}}, "different packages"),
        ({"options": {**base["options"], "repeats": 3}}, "different options (repeats)"),
        ({"options": {**base["options"], "timeout": 20.0}}, "different options (timeout)"),
    ):
        assert reuse.mismatch(base, {**base, **change}, cfg, "8-fair") == why


def test_cli_merge_and_its_errors(tmp_path) -> None:
    from typer.testing import CliRunner

    from harness.cli import app

    a, b = _split(tmp_path)
    result = CliRunner().invoke(app, ["merge", str(a), str(b), "--out", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == str(tmp_path / "m")
    again = CliRunner().invoke(app, ["merge", str(a), str(a), "--out", str(tmp_path / "n")])
    assert again.exit_code == 2
    assert "given twice" in again.output and "Traceback" not in again.output
    bad = CliRunner().invoke(app, ["merge", str(a), str(b), "--out", str(tmp_path / "o"),
                                   "--prefer", "oldest"])  # fmt: skip
    assert bad.exit_code == 2 and "the only choice is 'newest'" in bad.output
    by_id = CliRunner().invoke(app, ["merge", a.name, b.name, "--results-dir",
                                     str(tmp_path), "--out", str(tmp_path / "p")])
    assert by_id.exit_code == 0, by_id.output
    missing = CliRunner().invoke(app, ["merge", str(a), "nope", "--out",
                                       str(tmp_path / "q")])
    assert missing.exit_code == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "run 'nope': no meta.json in nope or results/nope (see --results-dir)" in (
        missing.stderr)  # fmt: skip


def test_merge_unites_the_configs_values_as_it_does_the_labels(tmp_path) -> None:
    a, b = _split(tmp_path)
    for d, solver in ((a, "alpha"), (b, "beta")):
        meta = json.loads((d / "meta.json").read_text())
        meta["options"]["solvers"] = [f"{solver}[manhattan]"]
        meta["options"]["configs"] = [[solver, "manhattan"]]
        (d / "meta.json").write_text(json.dumps(meta))
    merged, warnings = reuse.merge([a, b], tmp_path / "m")
    assert warnings == []  # configs differ, as solvers do: not a measurement option
    opts = json.loads((merged / "meta.json").read_text())["options"]
    assert opts["solvers"] == ["alpha[manhattan]", "beta[manhattan]"]
    assert opts["configs"] == [["alpha", "manhattan"], ["beta", "manhattan"]]
    # a run stored before configs were recorded: no stale, partial list
    meta = json.loads((a / "meta.json").read_text())
    del meta["options"]["configs"]
    (a / "meta.json").write_text(json.dumps(meta))
    merged, _ = reuse.merge([a, b], tmp_path / "m2")
    opts = json.loads((merged / "meta.json").read_text())["options"]
    assert "configs" not in opts and len(opts["solvers"]) == 2


@pytest.mark.parametrize("victim", ["rows", "meta"])
def test_a_full_disk_during_merge_leaves_nothing_that_claims_completion(
    tmp_path, monkeypatch, victim
) -> None:
    """Issue 35 item 5: ENOSPC while merging gave `internal error: OSError` and a
    merged/ with complete: true and 323 of 667 rows. Now the directory appears
    whole (rows, then meta.json) or not at all, and the error names the file."""
    import errno
    import os

    from typer.testing import CliRunner

    from harness.cli import app
    from harness.results import store

    a, b = _split(tmp_path)
    module, name = (reuse, "append_durably") if victim == "rows" else (
        store, "write_atomic")  # fmt: skip
    real = getattr(module, name)

    def full(path, *args, **kwargs):
        real(path, *args, **kwargs)  # (the file is half there when a disk fills)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(module, name, full)
    out = tmp_path / "merged"
    got = CliRunner().invoke(app, ["merge", str(a), str(b), "--out", str(out)])
    assert got.exit_code == 2, got.output
    file = "rows.csv" if victim == "rows" else "meta.json"
    assert f"{out}/{file}: No space left on device; nothing merged" in got.stderr
    assert "internal error" not in got.output and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no temporary


def test_report_warns_about_an_incomplete_run(tmp_path) -> None:
    """A merge of a run that did not finish is incomplete; `harness report` on it
    says so on stderr before its tables (it exited 0 in silence)."""
    from typer.testing import CliRunner

    from harness.cli import app

    a, b = _split(tmp_path)
    meta = json.loads((b / "meta.json").read_text())
    (b / "meta.json").write_text(json.dumps(dict(meta, complete=False)))
    merged, _ = reuse.merge([a, b], tmp_path / "m")
    assert json.loads((merged / "meta.json").read_text())["complete"] is False
    got = CliRunner().invoke(app, ["report", str(merged), "--format", "csv"])
    assert got.exit_code == 0, got.output
    assert got.stderr.startswith("warning: Run m is incomplete (it did not finish)")
    whole = CliRunner().invoke(app, ["report", str(a), "--format", "csv"])
    assert "incomplete" not in whole.stderr
