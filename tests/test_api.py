"""harness.run() and harness run write a run's report once, through one function
(harness.api.write_run_report): a report that cannot be written is a warning
(API) or a note (CLI) and, for both, meta.json's report_error."""

from __future__ import annotations

import pytest

from harness import results as res


def test_the_api_records_why_no_report_was_written(tmp_path, monkeypatch):
    import harness.report

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(harness.report, "write_report", broken)
    with pytest.warns(UserWarning, match="no report written"):
        rows = harness.run(
            "astar_dict[manhattan]", "8-seeds", repeats=1, memory_pass=False,
            jobs=0, out=tmp_path, report=True,
        )  # fmt: skip
    meta = res.read_meta(rows.attrs["run_dir"])
    assert "No space left" in meta["report_error"]
    assert meta["complete"]
