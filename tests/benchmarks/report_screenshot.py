"""The first viewport of a run's report.html in Debian's chromium (1,400x900), as
docs/ shows it: what a reader sees before scrolling. Needs chromium
(/usr/bin/chromium) and playwright (the test extra).

    python tests/benchmarks/report_screenshot.py results/<run-id> docs/report_first_screen.png

The PNG is reduced to a 64-colour palette (text and tables survive it; the docs
keep images under 150 KB).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def screenshot(run_dir: Path, out: Path, width: int, height: int) -> None:
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        browser = pw.chromium.launch_persistent_context(
            profile, executable_path="/usr/bin/chromium", args=FLAGS, headless=True,
            viewport={"width": width, "height": height},
        )  # fmt: skip
        try:
            page = browser.new_page()
            page.goto((run_dir / "report.html").resolve().as_uri())
            page.screenshot(path=str(out))
        finally:
            browser.close()
    Image.open(out).convert("RGB").quantize(64).save(out, optimize=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    screenshot(args.run_dir, args.out, args.width, args.height)
    print(f"{args.out}: {args.out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
