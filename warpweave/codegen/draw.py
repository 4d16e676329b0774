"""Pictures of a schedule: the timeline of Q (SVG written directly; PNG through matplotlib when it
is installed, the optional extra `warpweave[png]`) and the dependence graph coloured by warp group
(DOT; SVG through graphviz `dot` when it is on PATH, otherwise a layered drawing of our own)."""

from __future__ import annotations

import shutil
import subprocess
from html import escape
from pathlib import Path

from warpweave.core.model import Model
from warpweave.core.schedule import Schedule, straight_line
from warpweave.outputs import output_dir, replacing, write_into

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948",
           "#ff9da7", "#9c755f", "#bab0ac")


def group_colors(model: Model) -> dict[str, str]:
    return {g.name: PALETTE[i % len(PALETTE)] for i, g in enumerate(model.machine.warp_groups)}


def timeline_rows(model: Model, s: Schedule) -> tuple[list[str], list[tuple[str, int, int, str,
                                                                             int]]]:
    """Rows (units, then groups) and boxes (row, start, end, label, copy) of Q's timeline.
    A unit of capacity c has c lanes; a box takes the first free lane."""
    q = straight_line(model, s)
    rows, boxes = [], []
    for u in model.machine.units:
        lanes = [f"{u.name}" if u.capacity == 1 else f"{u.name}.{i}" for i in range(u.capacity)]
        rows += lanes
        busy: dict[tuple[str, int], int] = {}
        for x in sorted(q.instances, key=lambda x: (x.issue, x.op)):
            for c, unit, count in model.op(x.op).usage():
                if unit != u.name:
                    continue
                t = x.issue + c
                for _ in range(count):
                    lane = next((ln for ln in lanes if busy.get((ln, t), 0) == 0), lanes[0])
                    busy[(lane, t)] = 1
                    boxes.append((lane, t, t + 1, x.op, x.copy))
    merged: list[tuple[str, int, int, str, int]] = []
    for box in sorted(boxes, key=lambda b: (b[0], b[3], b[4], b[1])):
        last = merged[-1] if merged else None
        if last and last[0] == box[0] and last[3:] == box[3:] and last[2] == box[1]:
            merged[-1] = (last[0], last[1], box[2], last[3], last[4])
        else:
            merged.append(box)
    boxes = merged
    for g in model.machine.warp_groups:
        if g.name not in s.group.values():
            continue
        lanes: list[int] = []  # per lane: the cycle it is free from; concurrent ops stack
        mine = sorted((x for x in q.instances if s.group[x.op] == g.name),
                      key=lambda x: (x.issue, x.op))
        for x in mine:
            op = model.op(x.op)
            end = x.issue + (1 if op.is_async else op.cycles)
            lane = next((i for i, free in enumerate(lanes) if free <= x.issue), len(lanes))
            if lane == len(lanes):
                lanes.append(0)
                rows.append(f"@{g.name}" if lane == 0 else f"@{g.name}.{lane}")
            lanes[lane] = end
            boxes.append((f"@{g.name}" if lane == 0 else f"@{g.name}.{lane}", x.issue, end,
                          x.op, x.copy))
    return rows, boxes


def tick_step(T: int) -> int:
    """A round cycle step (1, 2, 5, 10, 20, 50, ...) giving at most 20 axis labels."""
    step, k = 1, 0
    while T // step > 20:
        step, k = step * (5 if k % 3 == 1 else 2) // (2 if k % 3 == 1 else 1), k + 1
    return step


def timeline_svg(model: Model, s: Schedule) -> str:
    """Q as an SVG: one row per unit lane and per warp group; boxes `op<copy>` coloured by the
    op's group; prologue / steady state / epilogue shaded and stage boundaries dashed."""
    q = straight_line(model, s)
    rows, boxes = timeline_rows(model, s)
    colors = group_colors(model)
    # pixels per cycle: roomy for toy models, about 1600 px in all for kernels of raw cycles
    cw = max(18, min(40, 900 // max(1, q.T))) if 18 * q.T <= 1600 else 1600 / q.T
    rh, left, top = 26, 90, 40
    width, height = left + cw * q.T + 20, top + rh * len(rows) + 50
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="16" font-size="13">{escape(model.name)}: I={s.I}, L={s.L}, '
           f'{q.S} stages, T={q.T}</text>']
    lo, hi = (q.S - 1) * q.I, q.S * q.I
    for a, b, fill, name in ((0, lo, "#f4f4f4", "prologue"), (lo, hi, "#e8f1fb", "steady"),
                             (hi, q.T, "#f4f4f4", "epilogue")):
        if b > a:
            out.append(f'<rect x="{left + a * cw}" y="{top - 12}" width="{(b - a) * cw}" '
                       f'height="{rh * len(rows) + 12}" fill="{fill}"/>')
            out.append(f'<text x="{left + a * cw + 2}" y="{top - 2}" fill="#666">{name}</text>')
    for t in range(0, q.T + 1, s.I):
        x = left + t * cw
        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{top + rh * len(rows)}" '
                   'stroke="#999" stroke-dasharray="3,3"/>')
    for i, r in enumerate(rows):
        y = top + i * rh
        out.append(f'<text x="4" y="{y + rh / 2 + 4}">{escape(r)}</text>')
        out.append(f'<line x1="{left}" y1="{y + rh}" x2="{left + cw * q.T}" y2="{y + rh}" '
                   'stroke="#ddd"/>')
    index = {r: i for i, r in enumerate(rows)}
    for row, a, b, op, copy in boxes:
        x, y = left + a * cw, top + index[row] * rh + 3
        out.append(f'<rect x="{x + 1}" y="{y}" width="{(b - a) * cw - 2}" height="{rh - 6}" '
                   f'rx="3" fill="{colors[s.group[op]]}" opacity="{1.0 - 0.25 * (copy % 2)}">'
                   f'<title>{escape(op)} copy {copy}, group {escape(s.group[op])}</title></rect>')
        if (b - a) * cw >= 7 * (len(op) + 2):  # a label only where it fits
            out.append(f'<text x="{x + 4}" y="{y + rh / 2 + 1}" fill="white">{escape(op)}{copy}'
                       '</text>')
    for t in range(0, q.T + 1, tick_step(q.T)):
        out.append(f'<text x="{left + t * cw - 3}" y="{top + rh * len(rows) + 14}" '
                   f'fill="#666" font-size="9">{t}</text>')
    y = top + rh * len(rows) + 34
    x = left
    for g, c in colors.items():
        if g in s.group.values():
            out.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{c}"/>')
            out.append(f'<text x="{x + 16}" y="{y}">{escape(g)}</text>')
            x += 20 + 8 * len(g) + 20
    out.append("</svg>")
    return "\n".join(out) + "\n"


def timeline_png(model: Model, s: Schedule, path: str | Path) -> bool:
    """Draw the timeline with matplotlib into `path`; False when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    q = straight_line(model, s)
    rows, boxes = timeline_rows(model, s)
    colors = group_colors(model)
    inches = min(24.0, max(6.0, 0.35 * q.T + 2))
    fig, ax = plt.subplots(figsize=(inches, 0.45 * len(rows) + 1.2))
    index = {r: len(rows) - 1 - i for i, r in enumerate(rows)}
    lo, hi = (q.S - 1) * q.I, q.S * q.I
    ax.axvspan(lo, hi, color="#e8f1fb", zorder=0)
    for t in range(0, q.T + 1, s.I):
        ax.axvline(t, color="#999", linestyle=":", linewidth=0.8, zorder=1)
    for row, a, b, op, copy in boxes:
        ax.barh(index[row], b - a, left=a, height=0.7, color=colors[s.group[op]],
                alpha=1.0 - 0.25 * (copy % 2), edgecolor="white", zorder=2)
        if (b - a) / q.T * (inches - 2) * 120 >= 6 * (len(op) + 2):  # a label where it fits
            ax.text(a + 0.1, index[row], f"{op}{copy}", va="center", color="white",
                    fontsize=8, zorder=3)
    ax.set_yticks(list(index.values()), list(index.keys()))
    ax.set_xlim(0, q.T)
    ax.set_xlabel("cycle")
    ax.set_title(f"{model.name}: I={s.I}, L={s.L}, {q.S} stages (steady state shaded)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def dot_id(name: str) -> str:
    """`name` as a quoted DOT string: `\\` and `"` escaped (names come from input files), a
    line break written as DOT's `\\n`."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def graph_dot(model: Model, s: Schedule | None = None) -> str:
    """The dependence graph in DOT: nodes filled by group, edges labelled `delay/distance`;
    order edges dashed, blocking edges bold, cross-group data edges red."""
    colors = group_colors(model)
    out = [f"digraph {dot_id(model.name)} {{", "  rankdir=TB;",
           '  node [shape=box, style="rounded,filled", fontname="sans-serif", fontcolor=white];',
           '  edge [fontname="sans-serif", fontsize=10];']
    for op in model.ops:
        g = s.group[op.name] if s else None
        fill = colors.get(g, "#777777") if g else "#777777"
        extra = f"\n@{g}" + (f" M={s.start[op.name]}" if s else "") if g else ""
        out.append(f'  {dot_id(op.name)} [label={dot_id(op.name + extra)}, fillcolor="{fill}"];')
    for e in model.edges:
        attrs = [f'label="{e.delay}/{e.distance}"']
        if not e.is_data:
            attrs.append("style=dashed")
        if e.blocking:
            attrs.append("penwidth=2")
        if s and e.is_data and s.group[e.src] != s.group[e.dst]:
            attrs.append("color=red")
        if e.distance:
            attrs.append("constraint=false")
        out.append(f'  {dot_id(e.src)} -> {dot_id(e.dst)} [{", ".join(attrs)}];')
    out.append("}")
    return "\n".join(out) + "\n"


def graph_svg(model: Model, s: Schedule | None = None, use_dot: bool = True) -> tuple[str, str]:
    """(svg, how): through graphviz `dot` when present (how = "graphviz"), else our own layered
    drawing (how = "builtin")."""
    dot = shutil.which("dot") if use_dot else None
    if dot:
        run = subprocess.run([dot, "-Tsvg"], input=graph_dot(model, s), capture_output=True,
                             text=True, timeout=60)
        if run.returncode == 0:
            return run.stdout, "graphviz"
    return _layered_svg(model, s), "builtin"


def _layers(model: Model) -> dict[str, int]:
    """Longest-path layers over distance-0 edges (loop-carried edges do not rank)."""
    layer = {v: 0 for v in model.op_names}
    for _ in range(len(layer)):
        changed = False
        for e in model.edges:
            if e.distance == 0 and e.src != e.dst and layer[e.dst] < layer[e.src] + 1:
                layer[e.dst] = layer[e.src] + 1
                changed = True
        if not changed:
            break
    return layer


def _layered_svg(model: Model, s: Schedule | None) -> str:
    colors = group_colors(model)
    layer = _layers(model)
    rows: dict[int, list[str]] = {}
    for v in model.op_names:
        rows.setdefault(layer[v], []).append(v)
    bw, bh, gx, gy = 110, 40, 40, 70
    width = max(len(r) for r in rows.values()) * (bw + gx) + gx + 80
    height = len(rows) * (bh + gy) + gy
    pos = {}
    for y, names in rows.items():
        x0 = (width - len(names) * (bw + gx) + gx) / 2
        for i, v in enumerate(names):
            pos[v] = (x0 + i * (bw + gx), gy / 2 + y * (bh + gy))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" '
           'markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
           '<path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>']
    for e in model.edges:
        (x1, y1), (x2, y2) = pos[e.src], pos[e.dst]
        color = "red" if s and e.is_data and s.group[e.src] != s.group[e.dst] else "#333"
        dash = ' stroke-dasharray="5,4"' if not e.is_data else ""
        wid = 2.5 if e.blocking else 1.2
        if e.src == e.dst:
            cx, cy = x1 + bw, y1 + bh / 2
            path = f"M {cx} {cy - 8} C {cx + 40} {cy - 30}, {cx + 40} {cy + 30}, {cx} {cy + 8}"
            lx, ly = cx + 34, cy
        elif y2 > y1:
            path = f"M {x1 + bw / 2} {y1 + bh} L {x2 + bw / 2} {y2}"
            lx, ly = (x1 + x2 + bw) / 2 + 4, (y1 + bh + y2) / 2
        else:  # a loop-carried edge going up: bend to the side
            sx, ex = x1 + bw, x2 + bw
            bend = max(sx, ex) + 50
            path = f"M {sx} {y1 + bh / 2} C {bend} {y1}, {bend} {y2 + bh}, {ex} {y2 + bh / 2}"
            lx, ly = bend - 10, (y1 + y2 + bh) / 2
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="{wid}"{dash} '
                   'marker-end="url(#arrow)"/>')
        out.append(f'<text x="{lx}" y="{ly}" fill="{color}">{e.delay}/{e.distance}</text>')
    for v, (x, y) in pos.items():
        g = s.group[v] if s else None
        fill = colors.get(g, "#777") if g else "#777"
        out.append(f'<rect x="{x}" y="{y}" width="{bw}" height="{bh}" rx="8" fill="{fill}"/>')
        out.append(f'<text x="{x + bw / 2}" y="{y + 16}" fill="white" text-anchor="middle">'
                   f'{escape(v)}</text>')
        if g:
            out.append(f'<text x="{x + bw / 2}" y="{y + 31}" fill="white" text-anchor="middle" '
                       f'font-size="10">@{escape(g)} M={s.start[v]}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def draw_all(model: Model, s: Schedule, out_dir: str | Path) -> dict[str, str]:
    """Write timeline.svg (+ .png if matplotlib), graph.dot and graph.svg into `out_dir` (made
    if missing), each whole or not at all (`warpweave.outputs`); return what was made."""
    d = output_dir(out_dir)
    made = {}
    write_into(d, "timeline.svg", timeline_svg(model, s))
    made["timeline.svg"] = "written"
    with replacing(d / "timeline.png") as png:
        drawn = timeline_png(model, s, png)
    made["timeline.png"] = "matplotlib" if drawn else \
        "skipped: matplotlib not installed (pip install 'warpweave[png]')"
    write_into(d, "graph.dot", graph_dot(model, s))
    made["graph.dot"] = "written"
    svg, how = graph_svg(model, s)
    write_into(d, "graph.svg", svg)
    made["graph.svg"] = how
    return made
