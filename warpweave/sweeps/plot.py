"""The Pareto front of a sweep: predicted throughput against the registers and the shared memory
each point's schedule holds, two panels side by side.

A point is on the front of a panel when no other point has at least its throughput with at most
its resource and is better in one of the two; the front is drawn as a step line through those
points, every other point as a grey dot, each labelled with its parameters.  SVG is written
directly; PNG goes through matplotlib (the `png` extra).  The file's suffix chooses.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape

from warpweave.charts import check_path, document, frame, save, span
from warpweave.errors import InputError
from warpweave.sweeps.run import Sweep

# (record field, axis label, divisor)
PANELS = (("regs_peak", "registers held at the loop's peak (per CTA)", 1),
          ("smem_peak", "shared memory held at the loop's peak (KiB per CTA)", 1024))


def front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the Pareto-optimal (resource, throughput) pairs: less resource and more
    throughput are better; ordered by resource."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    out, best = [], float("-inf")
    for i in order:
        if points[i][1] > best:
            out.append(i)
            best = points[i][1]
    return out


def _series(sweep: Sweep, resource: str, unit: int
            ) -> tuple[list[str], list[tuple[float, float]]]:
    """The labels and (resource, throughput) of the points with a schedule; a label names the
    machine only when the sweep has more than one."""
    rows = [r for r in sweep.rows if r.throughput and r.record.get(resource) is not None]
    machines = {r.point.machine for r in sweep.rows}
    labels = [r.label if len(machines) > 1 or not r.point.machine
              else r.label.removeprefix(f"{r.point.machine} ") for r in rows]
    return labels, [(r.record[resource] / unit, r.throughput.per_cycle) for r in rows]


def plot(sweep: Sweep, path: str | os.PathLike) -> str:
    """Write the front to `path` (.svg or .png); returns how it was made.  InputError for a
    PNG without matplotlib, or a sweep with no schedule to plot."""
    check_path(path)
    if not any(r.throughput for r in sweep.rows):
        raise InputError("no point has a schedule: nothing to plot", ("--plot",), str(path))
    return save(path, lambda: svg(sweep), lambda tmp: _png(sweep, tmp))


def _title(sweep: Sweep) -> str:
    return f"{sweep.kernel}: predicted throughput (FLOPs per cycle per SM) - Pareto front"


def svg(sweep: Sweep) -> str:
    """The two panels as an SVG document."""
    pw, ph, margin = 440, 320, 70
    width, height = 2 * (pw + margin) + 20, ph + 2 * margin + 20
    out = document(width, height, _title(sweep))
    for k, (resource, axis, unit) in enumerate(PANELS):
        labels, pts = _series(sweep, resource, unit)
        x0, y0 = margin + k * (pw + margin), margin
        out += frame(x0, y0, pw, ph, axis)
        if not pts:
            out.append(f'<text x="{x0 + 10}" y="{y0 + 20}">no figures</text>')
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        xlo, xhi = span(xs)
        ylo, yhi = span(ys)

        def at(x: float, y: float, x0=x0, y0=y0, xlo=xlo, xhi=xhi, ylo=ylo, yhi=yhi):
            return (x0 + 10 + (x - xlo) / (xhi - xlo) * (pw - 20),
                    y0 + ph - 10 - (y - ylo) / (yhi - ylo) * (ph - 20))

        for value, pos in ((xlo, "start"), (xhi, "end")):
            x, _ = at(value, ylo)
            out.append(f'<text x="{x}" y="{y0 + ph + 16}" text-anchor="{pos}" fill="#666">'
                       f'{value:g}</text>')
        for value in (ylo, yhi):
            _, y = at(xlo, value)
            out.append(f'<text x="{x0 - 6}" y="{y + 4}" text-anchor="end" fill="#666">'
                       f'{value:.0f}</text>')
        best = front(pts)
        path = " ".join(f"{'M' if j == 0 else 'L'}{at(*pts[i])[0]:.1f},{at(*pts[i])[1]:.1f}"
                        for j, i in enumerate(best))
        out.append(f'<path d="{path}" fill="none" stroke="#e15759" stroke-width="1.5"/>')
        for i, (label, p) in enumerate(zip(labels, pts, strict=True)):
            x, y = at(*p)
            on = i in best
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{5 if on else 3.5}" '
                       f'fill="{"#e15759" if on else "#999"}"><title>{escape(label)}'
                       f': {p[1]:.1f} FLOPs/cycle, {p[0]:g}</title></circle>')
            out.append(f'<text x="{x + 7:.1f}" y="{y - 5:.1f}" font-size="9" '
                       f'fill="{"#000" if on else "#888"}">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _png(sweep: Sweep, path: os.PathLike) -> None:
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, (resource, axis, unit) in zip(axes, PANELS, strict=True):
        labels, pts = _series(sweep, resource, unit)
        ax.set_xlabel(axis)
        ax.set_ylabel("FLOPs per cycle per SM")
        if not pts:
            continue
        best = front(pts)
        ax.plot([pts[i][0] for i in best], [pts[i][1] for i in best], "-o", color="#e15759",
                zorder=2)
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], color="#999", s=14, zorder=1)
        for label, (x, y) in zip(labels, pts, strict=True):
            ax.annotate(label, (x, y), fontsize=7, xytext=(4, 4), rotation=25,
                        textcoords="offset points")
    fig.suptitle(_title(sweep))
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)
