"""A report's pages: :class:`Section` (one block of a report) and the two
renderings of a title and its sections, Markdown and self-contained HTML (plots
embedded as data URIs, inline CSS and a few KB of inline script that sorts and
filters the tables, nothing fetched).

Both pages open the same way: the sections marked ``top`` (the verdict, the
podium), then a table of contents with an anchor per section, then the sections,
each collapsible in HTML (``<details>``)."""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from harness.report.tables import html_table, markdown_table


@dataclass(slots=True)
class Section:
    """One block of the report, rendered to both Markdown and HTML. ``anchor``:
    its id (default: from the title); ``top``: shown before the table of
    contents, not collapsible; ``lead``: its bullets are verdict sentences ("name:
    text", the name set bold); ``more``: bullets behind a disclosure; ``folded``:
    (summary, caption, table) behind a disclosure, after the tables."""

    title: str
    level: int = 2
    paragraphs: list[str] = field(default_factory=list)
    bullets: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[Any] = field(default_factory=list)  # plots.Plot
    anchor: str = ""
    top: bool = False
    lead: bool = False
    more: list[str] = field(default_factory=list)
    folded: list[tuple[str, str, pd.DataFrame]] = field(default_factory=list)
    #: collapsed when the page opens (HTML); the rest start open
    closed: bool = False

    @property
    def id(self) -> str:
        return self.anchor or slug(self.title)


def slug(title: str) -> str:
    """'Results per dataset: run 2' -> 'results-per-dataset-run-2'."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"


def _unique_ids(sections: list[Section]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for s in sections:
        base = s.id
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def markdown_page(title: str, sections: list[Section]) -> str:
    out = [f"# {title}", ""]
    ids = _unique_ids(sections)
    toc_done = False
    for s, sid in zip(sections, ids, strict=True):
        if not s.top and not toc_done:
            out += _markdown_toc(sections, ids)
            toc_done = True
        out += [f'<a id="{sid}"></a>', "", "#" * s.level + " " + s.title, ""]
        for p in s.paragraphs:
            out += [p, ""]
        if s.bullets:
            out += [_md_bullet(b, s.lead) for b in s.bullets] + [""]
        if s.more:
            out += [f"<details><summary>{len(s.more)} more</summary>", ""]
            out += [f"- {b}" for b in s.more] + ["", "</details>", ""]
        for caption, frame in s.tables:
            if caption:
                out += [f"**{caption}**", ""]
            out += [markdown_table(frame), ""]
        for summary, caption, frame in s.folded:
            out += [f"<details><summary>{html.escape(summary)}</summary>", ""]
            if caption:
                out += [f"**{caption}**", ""]
            out += [markdown_table(frame), "", "</details>", ""]
        for f in s.figures:
            out += [
                f"### {f.title}",
                "",
                f.caption,
                "",
                f"![{f.title}](plots/{f.path.name})",
                "",
            ]
    if not toc_done:
        out += _markdown_toc(sections, ids)
    return "\n".join(out)


def _md_bullet(text: str, lead: bool) -> str:
    if lead and ": " in text:
        name, rest = text.split(": ", 1)
        return f"- **{name}**: {rest}"
    return f"- {text}"


def _markdown_toc(sections: list[Section], ids: list[str]) -> list[str]:
    return ["**Contents:** " + " · ".join(
        f"[{s.title}](#{sid})" for s, sid in zip(sections, ids, strict=True)), ""]


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
section.top{margin:0 0 1rem}
section.top h2{margin-top:1rem}
ul.verdict{font-size:1.05rem;padding-left:1.2rem;margin:.4rem 0}
ul.verdict li{margin:.35rem 0}
strong.winner{background:#fff3b0;padding:0 .15rem}
nav.toc{border:1px solid #ccc;background:#fafafa;padding:.4rem .8rem;margin:1rem 0}
nav.toc ol{margin:.2rem 0;padding-left:1.4rem;columns:2}
details.section{margin:1.2rem 0}
details.section>summary{list-style:none;cursor:pointer}
details.section>summary::-webkit-details-marker{display:none}
details.section>summary>h2::before{content:"\\25BE  ";color:#666}
details.section:not([open])>summary>h2::before{content:"\\25B8  "}
details.more>summary{cursor:pointer;color:#035;margin:.3rem 0}
th.sortable{cursor:pointer}
th[aria-sort=ascending]::after{content:" \\25B2"}
th[aria-sort=descending]::after{content:" \\25BC"}
label.filter{font-size:.85rem;display:block;margin:.4rem 0 0}
@media print{body{max-width:none;margin:0}a{color:inherit}
nav.toc,label.filter{display:none}}
"""


def html_page(title: str, sections: list[Section]) -> str:
    esc = html.escape
    ids = _unique_ids(sections)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
    ]
    toc_done = False
    for s, sid in zip(sections, ids, strict=True):
        if not s.top and not toc_done:
            parts.append(_html_toc(sections, ids))
            toc_done = True
        heading = f'<h{s.level} id="{esc(sid)}">{esc(s.title)}</h{s.level}>'
        if s.top:
            parts.append(f'<section class="top">{heading}')
        else:
            parts.append(f'<details class="section"{"" if s.closed else " open"}>'
                         f"<summary>{heading}</summary>")  # fmt: skip
        parts += _html_body(s)
        parts.append("</section>" if s.top else "</details>")
    if not toc_done:
        parts.append(_html_toc(sections, ids))
    parts.append(f"<script>{_script()}</script>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _html_body(s: Section) -> list[str]:
    esc, parts = html.escape, []
    parts += [f"<p>{esc(p)}</p>" for p in s.paragraphs]
    if s.bullets:
        parts.append(f'<ul class="{"verdict" if s.lead else "findings"}">'
                     + "".join(f"<li>{_bullet(b, s.lead)}</li>" for b in s.bullets)
                     + "</ul>")  # fmt: skip
    if s.more:
        parts.append(f'<details class="more"><summary>{len(s.more)} more</summary>'
                     '<ul class="findings">'
                     + "".join(f"<li>{esc(b)}</li>" for b in s.more)
                     + "</ul></details>")  # fmt: skip
    for caption, frame in s.tables:
        if caption:
            parts.append(f'<p class="caption">{esc(caption)}</p>')
        parts.append(html_table(frame))
    for summary, caption, frame in s.folded:
        parts.append(f'<details class="more"><summary>{esc(summary)}</summary>')
        if caption:
            parts.append(f'<p class="caption">{esc(caption)}</p>')
        parts += [html_table(frame), "</details>"]
    for f in s.figures:
        data = base64.b64encode(f.path.read_bytes()).decode("ascii")
        parts.append(
            f'<figure id="{esc(f.path.stem)}"><h3>{esc(f.title)}</h3>'
            f'<img src="data:image/png;base64,{data}" alt="{esc(f.title)}" '
            f'data-file="plots/{esc(f.path.name)}">'
            f"<figcaption>{esc(f.caption)} (plots/{esc(f.path.name)})"
            "</figcaption></figure>"
        )
    return parts


def _bullet(text: str, lead: bool) -> str:
    """A bullet; a verdict's block name bold, and its winner ("X wins") strong."""
    if lead and ": " in text:
        name, rest = text.split(": ", 1)
        who, wins, after = rest.partition(" wins")
        rest = (f'<strong class="winner">{html.escape(who)}</strong>{wins}'
                f"{html.escape(after)}" if wins else html.escape(rest))  # fmt: skip
        return f"<b>{html.escape(name)}</b>: {rest}"
    return html.escape(text)


def _html_toc(sections: list[Section], ids: list[str]) -> str:
    links = "".join(
        f'<li><a href="#{html.escape(sid)}">{html.escape(s.title)}</a></li>'
        for s, sid in zip(sections, ids, strict=True)
    )
    return (f'<nav class="toc" aria-label="contents"><b>Contents</b><ol>{links}</ol>'
            "</nav>")  # fmt: skip


def _script() -> str:
    """The page's script (page.js beside this module), read once."""
    global _SCRIPT
    if _SCRIPT is None:
        _SCRIPT = (Path(__file__).parent / "page.js").read_text(encoding="utf-8")
    return _SCRIPT


_SCRIPT: str | None = None
