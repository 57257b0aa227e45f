"""The README's headline from a stored run: the verdict of every block
(harness.analysis.verdict, the function the terminal summary and the reports use)
and the podium of the main block as Markdown, so the README names the winner the
run's own report names.

    python tests/benchmarks/headline.py results/<run-id> [--rows 8]

Paste the output under the README's "Headline result" and say the run's commit,
date and load beside it.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from harness.analysis import load_run
from harness.analysis.verdict import run_verdicts
from harness.report.first_screen import main_block, podium_frame
from harness.report.tables import markdown_table


def headline(run_dir: str, rows: int) -> str:
    run = load_run(run_dir)
    said = run_verdicts(run)
    block = main_block(said)
    if block is None:
        return "the run holds no result rows"
    frame = podium_frame(block)
    # the podium's searches, then the first bounded search and the lookup
    shown = frame[frame["place"].str.fullmatch(r"\d+")].head(rows)
    extra = frame[frame["place"].isin(["bounded 1", "lookup"])]
    unranked = frame[frame["place"] == "unranked"].head(1)
    table = markdown_table(
        pd.concat([shown, extra, unranked], ignore_index=True)
    )
    lines = [f"- {v.sentence()}" for v in said]
    return "\n".join([*lines, "", f"Podium of {block.dataset}:", "", table])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--rows", type=int, default=8, help="optimal searches shown")
    args = parser.parse_args()
    print(headline(args.run_dir, args.rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
