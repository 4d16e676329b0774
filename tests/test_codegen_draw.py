"""Pictures: the Q timeline and the dependence graph."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from warpweave.codegen.draw import (
    draw_all,
    graph_dot,
    graph_svg,
    group_colors,
    timeline_png,
    timeline_rows,
    timeline_svg,
)
from warpweave.core.formats import load_schedule

from .conftest import EXAMPLES
from .test_codegen_buffers import blackwell_case

SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def test_timeline_svg_rows_and_boxes():
    m, s = blackwell_case()
    svg = timeline_svg(m, s)
    texts = _texts(svg)
    for row in ("tma", "tc", "sfu", "@load", "@mma", "@softmax", "steady", "prologue"):
        assert row in texts
    rows, boxes = timeline_rows(m, s)
    # every instance of Q appears once in its group's row
    assert sum(1 for b in boxes if b[0] == "@mma") == 2 * 4
    # a 2-cycle op is one box on its unit, not two
    assert [b[2] - b[1] for b in boxes if b[0] == "sfu" and b[3] == "softmax"] == [2] * 4
    colors = group_colors(m)
    assert svg.count(f'fill="{colors["softmax"]}"') >= 8


def test_graph_dot_and_builtin_svg(fa_model):
    s = load_schedule(EXAMPLES / "fa-simplified.schedule.json", fa_model)
    dot = graph_dot(fa_model, s)
    assert '"O" -> "O" [label="1/1"' in dot and "fillcolor" in dot
    svg, how = graph_svg(fa_model, s, use_dot=False)
    assert how == "builtin"
    assert {"S", "P", "O", "1/1"} <= set(_texts(svg))


def test_cross_group_edges_are_red():
    m, s = blackwell_case()
    dot = graph_dot(m, s)
    assert '"qk" -> "softmax" [label="1/0", penwidth=2, color=red]' in dot


def test_png(tmp_path):
    pytest.importorskip("matplotlib")
    m, s = blackwell_case()
    assert timeline_png(m, s, tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_draw_all(tmp_path, fa_model):
    s = load_schedule(EXAMPLES / "fa-simplified.schedule.json", fa_model)
    made = draw_all(fa_model, s, tmp_path)
    assert set(made) == {"timeline.svg", "timeline.png", "graph.dot", "graph.svg"}
    ET.parse(tmp_path / "graph.svg")
    ET.parse(tmp_path / "timeline.svg")


def test_graph_svg_through_graphviz_when_present():
    import shutil
    m, s = blackwell_case()
    svg, how = graph_svg(m, s)
    assert how == ("graphviz" if shutil.which("dot") else "builtin")
    assert "softmax" in "".join(_texts(svg))



def test_timeline_of_raw_cycles_stays_readable():
    """A model in raw cycles (T in the thousands) is drawn about 1600 px wide with round axis
    labels, not one 18-px column and one label per cycle."""
    from warpweave.core.model import Machine, Model, Op, Unit, WarpGroup
    from warpweave.core.schedule import Schedule
    m = Model("long", Machine("m", [Unit("tc", 1)], [], [WarpGroup("g", 4, 255)]),
              [Op.using("gemm", 3000, {"tc": 1}), Op.using("exp", 2500)], [])
    s = Schedule.tight(m, 3000, {"gemm": 0, "exp": 100}, {"gemm": "g", "exp": "g"})
    svg = timeline_svg(m, s)
    assert 1000 < float(ET.fromstring(svg).get("width")) < 2000
    ticks = [int(t) for t in _texts(svg) if t.isdigit()]
    assert ticks and len(ticks) <= 21 and all(t % 100 == 0 for t in ticks)
