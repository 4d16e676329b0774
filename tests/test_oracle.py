"""The brute-force oracle: known answers, and its pruned enumeration against a plain one."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from warpweave.core.formats import model_from_dict
from warpweave.core.oracle import Oracle, OracleBudget
from warpweave.core.schedule import Schedule
from warpweave.core.verify import verify

from .crosscheck_support import scaled
from .strategies import tiny_model_docs


def test_figure_1(fa_model):
    o = Oracle(fa_model)
    best = o.optimum(max_stages=2, i_max=5)
    assert (best.I, best.L) == (2, 4) and verify(fa_model, best) == []
    assert not o.at(1, 2).feasible and not o.at(2, 1).feasible
    assert o.at(2, 2).L == 4


def test_feasibility_is_not_monotone_in_i():
    # X holds the unit at offsets 0 and 2 of its 3 cycles: both land in one slot at I = 2 only.
    m = model_from_dict({"machine": {"units": {"u": 1}, "warp_groups": [{"name": "g"}]},
                         "ops": [{"name": "X", "cycles": 3, "rrt": [{"u": 1}, {}, {"u": 1}]}]})
    o = Oracle(m)
    assert [any(o.at(I, S).feasible for S in (1, 2)) for I in (1, 2, 3, 4)] == \
        [False, False, True, True]


def test_budget():
    m = model_from_dict({"machine": {"units": {"u": 1}, "warp_groups": [{"name": "g"}]},
                         "ops": [{"name": f"v{k}", "uses": {"u": 1}} for k in range(4)]})
    with pytest.raises(OracleBudget) as info:
        Oracle(m, budget=30).optimum(max_stages=2, i_max=4)
    assert info.value.below >= 1
    assert Oracle(m).optimum(max_stages=2, i_max=4).I == 4  # ResMII: four ops on one unit


def plain(model, I: int, L: int) -> bool:  # noqa: E741
    """Whether any schedule at (I, L) is valid: every start time in [0, L) and every group."""
    names, groups = model.op_names, [g.name for g in model.machine.warp_groups]
    for starts in itertools.product(range(L), repeat=len(names)):
        for chosen in itertools.product(groups, repeat=len(names)):
            s = Schedule(model.name, I, L, dict(zip(names, starts, strict=True)),
                         dict(zip(names, chosen, strict=True)))
            if not verify(model, s):
                return True
    return False


@scaled(60)
@given(doc=tiny_model_docs(max_cycles=2), I=st.integers(1, 3), L=st.integers(1, 5))
def test_pruning_loses_nothing(doc, I, L):  # noqa: E741
    """The oracle's answer at (I, L) is the plain enumeration's (every start in [0, L), every
    group, no pruning), on models small enough for the plain one."""
    doc["ops"] = doc["ops"][:3]
    names = {op["name"] for op in doc["ops"]}
    doc["edges"] = [e for e in doc["edges"] if e["src"] in names and e["dst"] in names]
    for g in doc["machine"]["warp_groups"][2:]:
        doc["machine"]["warp_groups"].remove(g)
    if doc["machine"].get("variable_latency_group") not in (None, "g0", "g1"):
        del doc["machine"]["variable_latency_group"]
        for op in doc["ops"]:
            op.pop("variable_latency", None)
    most = max(g["warps"] for g in doc["machine"]["warp_groups"])
    for op in doc["ops"]:
        op["warps"] = min(op.get("warps", 0), most)
    model = model_from_dict(doc)
    found = Oracle(model).valid_at(I, L)
    assert (found is not None) == plain(model, I, L)
    if found is not None:
        assert verify(model, found) == [] and (found.I, found.L) == (I, L)
