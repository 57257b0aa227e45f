"""One look per config across a report's plots (:func:`style_map`), the highlight
view of plots of many lines (:func:`highlighted`: the verdict's best in colour,
the rest grey) and the legend that goes with it (:func:`legend`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import matplotlib

from harness.analysis.verdict import family

LINESTYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p")
HATCHES = ("", "//", "\\\\", "xx", "..", "oo", "++", "--", "**", "OO")


@dataclass(frozen=True, slots=True)
class Style:
    color: tuple[float, float, float, float]
    linestyle: str
    marker: str
    hatch: str


def style_map(labels: Sequence[str]) -> dict[str, Style]:
    """Stable styles from the sorted labels: one colour per family (the solver
    without ``_jit``: tab20's dark shade for the compiled solver, its light shade
    for the pure-Python twin), one marker, line style and hatch per heuristic, so
    ``astar_dict[manhattan]`` and ``astar_dict[misplaced]`` read as one family and
    a figure still reads printed in grey. Past ten families, markers shift so no
    two configs share both colour and marker."""
    labels = sorted(set(labels))
    families = sorted({family(label) for label in labels})
    heuristics = sorted({label.partition("[")[2].rstrip("]") for label in labels})
    cmap = matplotlib.colormaps["tab20"]
    styles = {}
    for label in labels:
        solver, _, heuristic = label.partition("[")
        f_i = families.index(family(label))
        h_i = heuristics.index(heuristic.rstrip("]"))
        cycle = f_i // 10  # > 0 only past ten families
        shade = 0 if solver.endswith("_jit") else 1
        styles[label] = Style(
            color=cmap((2 * f_i + shade) % 20),
            linestyle=LINESTYLES[h_i % len(LINESTYLES)],
            marker=MARKERS[(h_i + cycle * len(heuristics)) % len(MARKERS)],
            hatch=HATCHES[h_i % len(HATCHES)],
        )
    return styles


#: The colour of the configs a highlight view leaves in the background.
MUTED = (0.72, 0.72, 0.72, 0.55)


def highlighted(styles: dict[str, Style], top: Sequence[str]) -> dict[str, Style]:
    """``styles`` for a plot of many lines: the configs of ``top`` (the verdict's
    best, in order) each in a colour of its own (tab10 by place), the others grey
    and without markers, for :func:`_legend` to fold into one entry. Without
    ``top``, or with few configs, ``styles`` as they are."""
    if not top or len(styles) <= HIGHLIGHT_FROM:
        return styles
    cmap = matplotlib.colormaps["tab10"]
    place = {c: i for i, c in enumerate(c for c in top if c in styles)}
    return {
        c: replace(s, color=cmap(place[c] % 10)) if c in place
        else replace(s, color=MUTED, marker="")
        for c, s in styles.items()
    }  # fmt: skip


#: Plots of more configs than this grey all but the top ones (:func:`highlighted`).
HIGHLIGHT_FROM = 10
HIGHLIGHT_CAPTION = (
    " In colour: the verdict's best optimal searches of the main block, the best "
    "bounded search and the lookup (the podium's order); in grey: the other configs."
)


def legend(fig, ax, top: Sequence[str] = ()) -> None:
    """The legend outside the axes, on the right. Lines in the :data:`MUTED` grey
    fold into one entry ("N other configs"); the ``top`` configs come first, in
    their order."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    muted = [h for h in handles if _color_of(h) == MUTED]
    shown = [(h, lb) for h, lb in zip(handles, labels, strict=True) if h not in muted]
    order = {c: i for i, c in enumerate(top)}
    shown.sort(key=lambda hl: order.get(hl[1], len(order)))
    if muted:
        shown.append((muted[0], f"{len(muted)} other configs"))
    fig.legend(
        [h for h, _ in shown],
        [lb for _, lb in shown],
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        fontsize=9,
        frameon=False,
        title="config, best first" if top and muted else "config",
    )


def _color_of(handle) -> tuple | None:
    try:
        return tuple(matplotlib.colors.to_rgba(handle.get_color()))
    except (AttributeError, ValueError):
        return None
