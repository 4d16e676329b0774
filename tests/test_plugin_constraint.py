"""A constraint from a plugin is part of validity (DESIGN rule 10): registered through the
`warpweave.constraints` entry point of an installed distribution (`install_plugin` in conftest),
it is reported by `warpweave verify`, obeyed by the heuristic, known to the oracle and enforced by
every backend x encoding in `warpweave crosscheck` (`tests/test_registry.py` solves another one
on every backend x encoding)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from warpweave.core.formats import model_from_dict
from warpweave.core.heuristic import heuristic_schedule
from warpweave.core.oracle import Oracle
from warpweave.core.registry import BACKENDS, CONSTRAINTS, ENCODINGS
from warpweave.core.schedule import Schedule
from warpweave.core.verify import verify
from warpweave.crosscheck import crosscheck
from warpweave.pipeline import Options

PLUGIN = '''
"""A test plugin: the ops named x and y never share a warp group."""
from warpweave.core.constraints import Constraint
from warpweave.core.verify import Violation


class Apart(Constraint):
    name = "apart"
    group_symmetric = True

    def check(self, model, schedule, semantics="loop"):
        if not (model.has_op("x") and model.has_op("y")):
            return []
        g = schedule.group["x"]
        if g != schedule.group["y"]:
            return []
        return [Violation("apart", f"x and y share group {g}", ops=("x", "y"), resource=g)]

    def encode(self, view):
        if view.model.has_op("x") and view.model.has_op("y"):
            same = view.same_group("x", "y")
            view.problem.add_clause([~same] if same is not True else [])
'''

MODEL = {
    "name": "apart-toy",
    "machine": {"name": "toy", "units": {"tc": 1, "alu": 1},
                "warp_groups": [{"name": "g0", "warps": 4}, {"name": "g1", "warps": 4}]},
    "ops": [{"name": "x", "cycles": 2, "uses": {"tc": 1}, "spill_cost": 1},
            {"name": "y", "cycles": 1, "uses": {"alu": 1}},
            {"name": "z", "cycles": 1, "uses": {"tc": 1}}],
    # The recurrence x -> y -> z -> x takes I = 4 on one group; apart, x's hand-off to y costs
    # one more cycle: I = 5.
    "edges": [{"src": "x", "dst": "y"}, {"src": "y", "dst": "z"},
              {"src": "z", "dst": "x", "distance": 1}],
}


@pytest.fixture
def plugin(install_plugin):
    """An installed distribution `wwtest_apart` providing the `apart` constraint."""
    return install_plugin("wwtest_apart", textwrap.dedent(PLUGIN),
                          {"warpweave.constraints": {"apart": "wwtest_apart:Apart"}})


def test_registered_through_the_entry_point(plugin):
    assert "apart" in CONSTRAINTS.names() and CONSTRAINTS.get("apart").name == "apart"


def test_verify_reports_its_violation(plugin):
    model = model_from_dict(MODEL)
    together = Schedule(model.name, 4, 4, {"x": 0, "y": 2, "z": 3},
                        {"x": "g0", "y": "g0", "z": "g0"})
    assert [v.rule for v in verify(model, together)] == ["apart"]
    (plugin / "model.json").write_text(json.dumps(MODEL))
    (plugin / "s.json").write_text(json.dumps({
        "format": "warpweave.schedule/1", "model": model.name, "I": 4, "L": 4,
        "start": dict(together.start), "group": dict(together.group)}))
    out = subprocess.run([sys.executable, "-m", "warpweave", "verify",
                          str(plugin / "model.json"), str(plugin / "s.json")],
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    assert "apart: x and y share group g0" in out.stdout


def test_the_heuristic_and_the_oracle_obey_it(plugin):
    model = model_from_dict(MODEL)
    found = heuristic_schedule(model).schedule
    assert found is not None and found.group["x"] != found.group["y"]
    best = Oracle(model).optimum(3, 8)
    assert best.group["x"] != best.group["y"] and verify(model, best) == []
    assert best.I == 5
    assert Oracle(model, rules=[r for r in CONSTRAINTS.names() if r != "apart"]
                  ).optimum(3, 8).I == 4


@pytest.mark.slow
def test_every_backend_and_encoding_enforces_it(plugin, tmp_path):
    model = model_from_dict(MODEL)
    families = [f for f in BACKENDS.names() if BACKENDS.get(f).unavailable() is None]
    report = crosscheck(model, families, ENCODINGS.names(), Options(), oracle=True,
                        out=tmp_path / "cc")
    assert not report.problems, report.problems
    assert report.oracle[0] == "optimal"
    for row in report.rows:
        s = row.run.schedule
        assert row.I == report.oracle[1] and s.group["x"] != s.group["y"], row
