"""Plots of a benchmark run (`warpweave bench --plot`): wall time per case per configuration,
and wall time against the graph's size, two panels one above the other.

Both panels put wall seconds on a log axis: (a) the cases along x, by suite, size and name;
(b) the size in ops along x, on a log axis when the sizes span a factor of 10 or more.  Each
configuration is one series, one colour and marker, in the run's order.  Of several repeats,
the run the report shows (the median wall time, `summary.collapse`).  A run that decided
nothing - the search's limit came first, the worker was killed, or the heuristic found no
schedule (`summary.comparable`) - is drawn hollow at the run's timeout, a dashed line, as the
report counts it; errors have no time and are not drawn.  SVG is written directly, PNG through
matplotlib (`charts.save`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from html import escape

import attrs

from warpweave.bench.summary import collapse, comparable
from warpweave.charts import check_path, document, frame, save
from warpweave.errors import InputError

FLOOR = 1e-3  # seconds: a faster run is drawn at 1 ms (a log axis has no zero)
COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
MARKERS = ("circle", "square", "triangle", "diamond", "down")  # matplotlib: o s ^ D v
MPL_MARKERS = dict(zip(MARKERS, "os^Dv", strict=True))
WIDE = 10  # sizes spanning this factor or more get a log x axis
PANEL_H, LEFT, TOP = 300, 70, 50


@attrs.frozen
class Point:
    """One configuration's time on one case."""

    case: str           # suite/case
    ops: int | None
    config: str
    seconds: float      # wall seconds; at the limit: the run's timeout
    limit: bool         # decided nothing: drawn hollow


def points(header: dict, records: Sequence[dict]) -> list[Point]:
    """The points to draw: one per case and configuration (the median of its repeats)."""
    timeout = header.get("timeout")
    out = []
    for r in collapse(records):
        if r.get("status") == "error" or "wall_seconds" not in r:
            continue
        limit = not comparable(r)
        seconds = timeout if limit and timeout else r["wall_seconds"]
        out.append(Point(f"{r['suite']}/{r['case']}", r.get("ops"), r["config"],
                         max(seconds, FLOOR), limit))
    return out


def series(header: dict, pts: Sequence[Point]) -> list[str]:
    """The configurations drawn: the run's in its order, then any other the records name."""
    return list(dict.fromkeys([*header.get("configs", []), *(p.config for p in pts)]))


def case_order(pts: Sequence[Point]) -> list[str]:
    """The cases along panel (a): by suite, then size (ops), then name - so random-5 comes
    before random-10."""
    size = {p.case: p.ops or 0 for p in pts}
    return sorted(size, key=lambda c: (c.split("/", 1)[0], size[c], c))


def plot(header: dict, records: Sequence[dict], path: str | os.PathLike) -> str:
    """Write the two panels to `path` (.svg or .png); returns how they were made.  InputError
    for a PNG without matplotlib, or records with no time to draw."""
    check_path(path)
    pts = points(header, records)
    if not pts:
        raise InputError("no record has a time (every one is an error): nothing to plot",
                         ("--plot",), str(path))
    title = _title(header, max(r.get("repeat", 0) + 1 for r in records))
    return save(path, lambda: svg(header, pts, title), lambda tmp: _png(header, pts, title, tmp))


def _title(header: dict, repeats: int) -> str:
    median = f" (the median of {repeats} repeats)" if repeats > 1 else ""
    return f"warpweave bench: {', '.join(header.get('targets', []))} - wall seconds{median}"


@attrs.frozen
class Scale:
    """Values `first`..`last` onto pixels `start`..`end` (for y, start is the bottom), linear
    or log, padded so no point sits on the frame."""

    first: float
    last: float
    start: float
    end: float
    log: bool = False

    def _v(self, value: float) -> float:
        return math.log10(value) if self.log else value

    def __call__(self, value: float) -> float:
        lo, hi = self._v(self.first), self._v(self.last)
        pad = (hi - lo) * 0.06 or 0.5
        return self.start + (self._v(value) - lo + pad) / (hi - lo + 2 * pad) * \
            (self.end - self.start)

    def ticks(self) -> list[float]:
        """The powers of ten within the values on a log scale; else (or with none) the least
        and the greatest value."""
        if self.log:
            lo, hi = math.ceil(self._v(self.first)), math.floor(self._v(self.last))
            if lo <= hi:
                return [10.0 ** k for k in range(lo, hi + 1)]
        return sorted({self.first, self.last})


def _sizes_are_wide(pts: Sequence[Point]) -> bool:
    sizes = [p.ops for p in pts if p.ops]
    return bool(sizes) and max(sizes) >= WIDE * min(sizes)


def _marker(shape: str, x: float, y: float, colour: str, hollow: bool, tip: str) -> str:
    """One point as an SVG shape, hollow (class `limit`) or filled (class `done`), its
    tooltip `tip`."""
    r = 4.5
    if shape == "circle":
        tag, where = "circle", f'cx="{x:.1f}" cy="{y:.1f}" r="{r}"'
    elif shape == "square":
        tag, where = "rect", f'x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}"'
    else:
        corners = {"triangle": ((0, -r - 1), (r, r), (-r, r)),
                   "down": ((0, r + 1), (r, -r), (-r, -r)),
                   "diamond": ((0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0))}[shape]
        tag = "polygon"
        where = 'points="' + " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in corners) + '"'
    return (f'<{tag} {where} class="{"limit" if hollow else "done"}" '
            f'fill="{"white" if hollow else colour}" stroke="{colour}" stroke-width="1.5">'
            f"<title>{escape(tip)}</title></{tag}>")


def _style(k: int) -> tuple[str, str]:
    return COLOURS[k % len(COLOURS)], MARKERS[k % len(MARKERS)]


def svg(header: dict, pts: Sequence[Point], title: str) -> str:
    """The two panels and the legend as an SVG document.  Each configuration is a group
    (`class="series"`, `data-panel` case or size, `data-config` its label) of markers, `class`
    done or limit (hollow); the timeout a dashed line (`class="timeout"`)."""
    labels = series(header, pts)
    cases = case_order(pts)
    sized = [p for p in pts if p.ops]
    timeout = header.get("timeout")
    times = [p.seconds for p in pts] + ([timeout] if timeout else [])
    band = min(200, 4.2 * max(len(c) for c in cases)) + 24  # the case names under panel (a)
    wa, wb = max(440, 14 * len(cases)), 520
    ya, yb = TOP, TOP + PANEL_H + band + 30
    legend_x = LEFT + max(wa, wb) + 30
    out = document(legend_x + 300, yb + PANEL_H + 60, title)

    def panel(y0: float, width: float, axis: str, below: float, kind: str,
              at: list[tuple[Point, float]]) -> None:
        """A frame, the time axis, the timeout line and every configuration's markers."""
        out.extend(frame(LEFT, y0, width, PANEL_H, axis, below))
        ys = Scale(min(times), max(times), y0 + PANEL_H, y0, log=True)
        for t in ys.ticks():
            out.append(f'<line x1="{LEFT}" x2="{LEFT + width}" y1="{ys(t):.1f}" '
                       f'y2="{ys(t):.1f}" stroke="#eee"/>')
            out.append(f'<text x="{LEFT - 6}" y="{ys(t) + 4:.1f}" text-anchor="end" '
                       f'fill="#666">{t:g}</text>')
        mid = y0 + PANEL_H / 2
        out.append(f'<text x="18" y="{mid}" text-anchor="middle" '
                   f'transform="rotate(-90 18 {mid})">wall seconds (log scale)</text>')
        if timeout:
            out.append(f'<line class="timeout" x1="{LEFT}" x2="{LEFT + width}" '
                       f'y1="{ys(timeout):.1f}" y2="{ys(timeout):.1f}" stroke="#555" '
                       'stroke-dasharray="6 4"/>')
        for k, label in enumerate(labels):
            colour, shape = _style(k)
            out.append(f'<g class="series" data-panel="{kind}" data-config="{escape(label)}">')
            out.extend(_marker(shape, x, ys(p.seconds), colour, p.limit, _tip(p))
                       for p, x in at if p.config == label)
            out.append("</g>")

    # (a) time per case
    step = wa / len(cases)
    xa = {c: LEFT + (i + 0.5) * step for i, c in enumerate(cases)}
    for c, x in xa.items():
        out.append(f'<text x="{x:.1f}" y="{ya + PANEL_H + 12}" text-anchor="end" '
                   f'font-size="8" transform="rotate(-60 {x:.1f} {ya + PANEL_H + 12})">'
                   f'{escape(c)}</text>')
    panel(ya, wa, "(a) case", band + 10, "case", [(p, xa[p.case]) for p in pts])

    # (b) time against size
    log = _sizes_are_wide(sized)
    xs = Scale(min(p.ops for p in sized), max(p.ops for p in sized), LEFT, LEFT + wb, log) \
        if sized else None
    for t in xs.ticks() if xs else ():
        out.append(f'<text x="{xs(t):.1f}" y="{yb + PANEL_H + 16}" text-anchor="middle" '
                   f'fill="#666">{t:g}</text>')
    panel(yb, wb, f"(b) graph size (ops{', log scale' * log})", 40, "size",
          [(p, xs(p.ops)) for p in sized] if xs else [])

    # the legend
    y = TOP + 10
    for k, label in enumerate(labels):
        colour, shape = _style(k)
        out.append(_marker(shape, legend_x, y, colour, False, label))
        out.append(f'<text x="{legend_x + 12}" y="{y + 4}">{escape(label)}</text>')
        y += 18
    out.append(_marker("circle", legend_x, y + 6, "#555", True, "decided nothing"))
    out.append(f'<text x="{legend_x + 12}" y="{y + 10}">hollow: decided nothing, drawn at '
               'the timeout</text>')
    if timeout:
        out.append(f'<line x1="{legend_x - 6}" x2="{legend_x + 6}" y1="{y + 24}" '
                   f'y2="{y + 24}" stroke="#555" stroke-dasharray="6 4"/>')
        out.append(f'<text x="{legend_x + 12}" y="{y + 28}">timeout {timeout:g} s</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _tip(p: Point) -> str:
    at = " (decided nothing: drawn at the timeout)" if p.limit else ""
    return f"{p.case}, {p.ops} ops, {p.config}: {p.seconds:.3g} s{at}"


def _png(header: dict, pts: Sequence[Point], title: str, path: os.PathLike) -> None:
    """The same panels drawn by matplotlib."""
    import matplotlib.pyplot as plt
    cases = case_order(pts)
    timeout = header.get("timeout")
    log = _sizes_are_wide([p for p in pts if p.ops])
    fig, (a, b) = plt.subplots(2, 1, figsize=(max(8.0, 3 + 0.2 * len(cases)), 9))
    for k, label in enumerate(series(header, pts)):
        colour, shape = _style(k)
        a.scatter([], [], marker=MPL_MARKERS[shape], color=colour, label=label)  # the legend's
        for ax, x in ((a, lambda p: cases.index(p.case)), (b, lambda p: p.ops)):
            for limit in (False, True):
                mine = [p for p in pts if (p.config, p.limit) == (label, limit)
                        and x(p) is not None]
                ax.scatter([x(p) for p in mine], [p.seconds for p in mine],
                           marker=MPL_MARKERS[shape], edgecolors=colour,
                           facecolors="white" if limit else colour)
    a.set_xticks(range(len(cases)), cases, rotation=60, ha="right", fontsize=7)
    a.set_xlabel("(a) case")
    b.set_xlabel(f"(b) graph size (ops{', log scale' * log})")
    if log:  # sizes as plain numbers; the minor ticks unlabelled (they overlapped)
        from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter
        b.set_xscale("log")
        b.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        b.xaxis.set_major_formatter(ScalarFormatter())
        b.xaxis.set_minor_formatter(NullFormatter())
    for ax in (a, b):
        ax.set_yscale("log")
        ax.set_ylabel("wall seconds (log scale)")
        if timeout:
            ax.axhline(timeout, color="#555", linestyle="--", linewidth=1,
                       label=f"timeout {timeout:g} s (hollow: decided nothing)")
    a.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)
