"""The counterexample reducer keeps exactly what a failure needs."""

from __future__ import annotations

from warpweave.core.formats import model_from_dict, model_to_dict
from warpweave.reduce import reduce_model

DOC = {
    "name": "m",
    "machine": {"name": "toy", "units": {"tc": 1}, "memories": {"smem": 8},
                "warp_groups": [{"name": "g0", "warps": 4}, {"name": "g1", "warps": 1}]},
    "ops": [
        {"name": "v0", "cycles": 2, "uses": {"tc": 1}, "async": True},
        {"name": "v1", "cycles": 1, "regs": 2, "footprint": {"smem": 3}, "spill_cost": 1},
        {"name": "v2", "cycles": 1},
        {"name": "v3", "cycles": 3, "warps": 1},
        {"name": "v4", "cycles": 1, "uses": {"tc": 1}},
    ],
    "edges": [
        {"src": "v1", "dst": "v2", "delay": 0, "blocking": True},
        {"src": "v1", "dst": "v3"},
        {"src": "v1", "dst": "v3"},
        {"src": "v0", "dst": "v0", "distance": 1},
    ],
}


def read_twice_with_registers(m) -> bool:
    """The failure: some value with registers is read by two different ops."""
    return any(op.regs and len({e.dst for e in m.out_edges(op.name) if e.is_data}) >= 2
               for op in m.ops)


def test_reduces_to_what_the_failure_needs():
    m = reduce_model(model_from_dict(DOC), read_twice_with_registers).model
    doc = model_to_dict(m)
    assert [op["name"] for op in doc["ops"]] == ["v1", "v2", "v3"]
    assert doc["ops"] == [{"name": "v1", "cycles": 1, "regs": 2},
                          {"name": "v2", "cycles": 1}, {"name": "v3", "cycles": 1}]
    assert doc["edges"] == [{"src": "v1", "dst": "v2"}, {"src": "v1", "dst": "v3"}]
    assert len(doc["machine"]["warp_groups"]) == 1
    assert read_twice_with_registers(m)


def test_a_model_that_cannot_shrink_is_kept():
    m = model_from_dict(DOC)
    assert model_to_dict(reduce_model(m, lambda _: False).model) == model_to_dict(m)


def test_budget_bounds_the_calls():
    calls = []
    r = reduce_model(model_from_dict(DOC), lambda m: calls.append(m) is None, budget=5)
    assert len(calls) == r.calls == 5 and not r.interrupted


def test_ctrl_c_keeps_the_smallest_model_so_far():
    """The first two steps succeed (two edges dropped), then the user presses Ctrl-C."""
    answers = iter([True, True])

    def fails(m) -> bool:
        try:
            return next(answers)
        except StopIteration:
            raise KeyboardInterrupt from None

    r = reduce_model(model_from_dict(DOC), fails)
    assert r.interrupted and r.calls == 3
    assert len(r.model.edges) == len(DOC["edges"]) - 2 and len(r.model.ops) == len(DOC["ops"])
