"""The CI workflows: a step that pipes a command into another must fail when the
first command fails.

GitHub Actions runs a ``run:`` step without ``shell:`` as ``bash -e {0}``: no
pipefail, so ``pytest ... | tee log`` has tee's status and a failed benchmark
comparison passes. An explicit ``shell: bash`` is ``bash --noprofile --norc -eo
pipefail {0}``; otherwise the script must ``set -o pipefail`` before its first pipe.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

WORKFLOW_DIR = Path(__file__).parent.parent / ".github" / "workflows"
WORKFLOWS = sorted(WORKFLOW_DIR.glob("*.y*ml"))

#: A pipe between two commands: a lone ``|`` (``||`` is an or-list).
_PIPE = re.compile(r"(?<![|])\|(?![|])")
_PIPEFAIL = re.compile(r"set\s+(-\w*\s+)*-\w*o\s+pipefail")


def _steps(text: str) -> list[dict[str, str]]:
    """Every step of every job: ``{"name", "run", "shell", "defaults_shell", "line"}``.

    A small reader for the subset of YAML that workflows use for steps (``- name:``
    items, ``run: |`` block scalars or one-line ``run:``, ``shell:``), enough to
    check scripts without a YAML dependency.
    """
    lines = text.splitlines()
    steps: list[dict[str, str]] = []
    defaults_shell = ""
    i = 0
    step: dict[str, str] | None = None
    step_indent = -1
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        if step is not None and indent <= step_indent:  # next item or a sibling key
            steps.append(step)
            step = None
        if stripped.startswith("- ") and (step is None):
            body = stripped[2:].strip()
            if re.match(r"(name|uses|run|id|if|shell|with|env|working-dir\w*):", body):
                step = {"name": "", "run": "", "shell": "", "line": str(i + 1)}
                step_indent = indent
                stripped = body
                indent += 2
        if step is None:
            m = re.match(r"shell:\s*(.*)", stripped)
            if m:  # a defaults.run.shell for the jobs below
                defaults_shell = m.group(1).strip()
            i += 1
            continue
        step["defaults_shell"] = defaults_shell
        m = re.match(r"(name|run|shell):\s*(.*)", stripped)
        if not m:
            i += 1
            continue
        key, value = m.group(1), m.group(2).strip()
        if key == "run" and value[:1] in ("|", ">"):
            block = []
            i += 1
            while i < len(lines):
                nxt = lines[i]
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                block.append(nxt.strip())
                i += 1
            step["run"] = "\n".join(block)
            continue
        if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]  # a quoted scalar
        step[key] = value
        i += 1
    if step is not None:
        steps.append(step)
    return steps


def _first_pipe(script: str) -> int | None:
    """Line index of the first command pipe (comments and quoted text ignored)."""
    for n, line in enumerate(script.splitlines()):
        code = re.sub(r"'[^']*'|\"[^\"]*\"", "", line.split(" #")[0])
        if code.lstrip().startswith("#"):
            continue
        if _PIPE.search(code):
            return n
    return None


def _has_pipefail_before(script: str, upto: int) -> bool:
    return any(_PIPEFAIL.search(line) for line in script.splitlines()[: upto + 1])


def pipefail_problems(text: str) -> list[str]:
    """One line per piped step that lacks pipefail."""
    out = []
    for step in _steps(text):
        pipe = _first_pipe(step.get("run", ""))
        if pipe is None:
            continue
        shell = step.get("shell") or step.get("defaults_shell") or ""
        if shell == "bash" or "pipefail" in shell:
            continue  # GitHub runs `shell: bash` as `bash -eo pipefail {0}`
        if _has_pipefail_before(step["run"], pipe):
            continue
        name = step.get("name") or f"step at line {step['line']}"
        out.append(f"{name!r} (line {step['line']}) pipes without pipefail")
    return out


def test_workflows_exist():
    assert WORKFLOWS, "no workflow found under .github/workflows"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_piped_step_has_pipefail(path: Path):
    assert pipefail_problems(path.read_text()) == []


def test_the_check_catches_a_step_without_pipefail():
    bad = """
jobs:
  timing:
    steps:
      - uses: actions/checkout@v4
      - name: Benchmarks
        run: |
          python -m pytest tests/benchmarks \\
            | tee bench.txt
      - name: fine, one line
        run: echo hi
      - name: set too late
        run: |
          make | tee log
          set -o pipefail
"""
    problems = pipefail_problems(bad)
    assert len(problems) == 2
    assert "'Benchmarks'" in problems[0] and "'set too late'" in problems[1]


def test_the_check_accepts_pipefail_and_bash_shell():
    good = """
jobs:
  timing:
    steps:
      - name: set first
        run: |
          set -euo pipefail
          make | tee log
      - name: explicit bash shell
        shell: bash
        run: make | tee log
      - name: or-list is not a pipe
        run: make || true
      - name: quoted bar
        run: echo "a|b" 'c | d'
"""
    assert pipefail_problems(good) == []


def test_the_timing_job_runs_base_and_head_alternating():
    text = (WORKFLOW_DIR / "bench.yml").read_text()
    step = next(s for s in _steps(text) if "A B A B" in s["name"])
    assert "for round in 1 2" in step["run"]
    assert 'harness compare "$base_runs" "$head_runs"' in step["run"]
