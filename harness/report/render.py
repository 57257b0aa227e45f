"""A report's pages: :class:`Section` (one block of a report) and the two
renderings of a title and its sections, Markdown and self-contained HTML (plots
embedded as data URIs, inline CSS, no scripts, nothing fetched)."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from harness.report.tables import html_table, markdown_table


@dataclass(slots=True)
class Section:
    """One block of the report, rendered to both Markdown and HTML."""

    title: str
    level: int = 2
    paragraphs: list[str] = field(default_factory=list)
    bullets: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[Any] = field(default_factory=list)  # plots.Plot


def markdown_page(title: str, sections: list[Section]) -> str:
    out = [f"# {title}", ""]
    for s in sections:
        out += ["#" * s.level + " " + s.title, ""]
        for p in s.paragraphs:
            out += [p, ""]
        if s.bullets:
            out += [f"- {b}" for b in s.bullets] + [""]
        for caption, frame in s.tables:
            if caption:
                out += [f"**{caption}**", ""]
            out += [markdown_table(frame), ""]
        for f in s.figures:
            out += [
                f"### {f.title}",
                "",
                f.caption,
                "",
                f"![{f.title}](plots/{f.path.name})",
                "",
            ]
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1300px;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem;border-bottom:2px solid #333;padding-bottom:.3rem}
h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #bbb}
h3{font-size:1.05rem;margin:1.4rem 0 .4rem}
.scroll{overflow-x:auto;margin:.4rem 0 1.2rem}
table{border-collapse:collapse;font-size:.85rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right;white-space:nowrap}
th{background:#eee;vertical-align:bottom;white-space:normal;max-width:7.5rem}
td.text,th.text{text-align:left}
td.text{white-space:normal;max-width:40rem}
tbody tr:nth-child(even){background:#f7f7f7}
ul.findings li{margin:.25rem 0}
figure{margin:1rem 0 2rem;page-break-inside:avoid}
figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:.9rem;color:#444;margin-top:.3rem}
p.caption{font-weight:600;margin:.8rem 0 .2rem}
@media print{body{max-width:none;margin:0}a{color:inherit}}
"""


def html_page(title: str, sections: list[Section]) -> str:
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
    ]
    for s in sections:
        parts.append(f"<h{s.level}>{esc(s.title)}</h{s.level}>")
        parts += [f"<p>{esc(p)}</p>" for p in s.paragraphs]
        if s.bullets:
            parts.append(
                '<ul class="findings">'
                + "".join(f"<li>{esc(b)}</li>" for b in s.bullets)
                + "</ul>"
            )
        for caption, frame in s.tables:
            if caption:
                parts.append(f'<p class="caption">{esc(caption)}</p>')
            parts.append(html_table(frame))
        for f in s.figures:
            data = base64.b64encode(f.path.read_bytes()).decode("ascii")
            parts.append(
                f'<figure id="{esc(f.path.stem)}"><h3>{esc(f.title)}</h3>'
                f'<img src="data:image/png;base64,{data}" alt="{esc(f.title)}" '
                f'data-file="plots/{esc(f.path.name)}">'
                f"<figcaption>{esc(f.caption)} (plots/{esc(f.path.name)})"
                "</figcaption></figure>"
            )
    parts.append("</body></html>")
    return "\n".join(parts)
