"""The documentation site builds with ``mkdocs build --strict``: a broken link, a
missing anchor, a page outside the nav or a missing included file fails CI here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _build(tmp_path: Path, config: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "--config-file", str(config), "--site-dir", str(tmp_path / "site")],
        cwd=config.parent, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = _build(tmp_path, ROOT / "mkdocs.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    # the included files arrive whole: the results format and the changelog
    assert "rows.csv" in (site / "results" / "index.html").read_text()
    assert "Changelog of figures" in (site / "changelog" / "index.html").read_text()
    for page in (ROOT / "docs").glob("*.md"):
        assert (site / page.stem / "index.html").exists() or page.stem == "index"


def test_the_readme_links_to_files_that_exist() -> None:
    import re

    readme = (ROOT / "README.md").read_text()
    targets = [t for t in re.findall(r"\]\(([^)#]+)", readme) if "://" not in t]
    assert len(targets) >= 10
    missing = [t for t in targets if not (ROOT / t).is_file()]
    assert not missing, f"README links to missing files: {missing}"


def test_the_help_states_the_main_job_time_the_benchmarks_page_measured() -> None:
    """`harness --help` and `harness run --help` quote the main job's wall time as
    docs/benchmarks.md states it (a re-measured figure moves all three)."""
    import re

    from typer.testing import CliRunner

    from harness.cli import app

    table = (ROOT / "docs" / "benchmarks.md").read_text()
    (row,) = [r for r in table.splitlines() if r.startswith("| main job wall (")]
    (figure,) = re.findall(r"\*\*([\d.]+(?:-[\d.]+)? s)\*\*", row)
    for args in ([], ["run"]):
        shown = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "200"})
        assert figure in " ".join(shown.stdout.split()), args
