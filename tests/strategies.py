"""Hypothesis strategies for random models and schedules covering every feature of DESIGN section 3.

Models are small (the tests solve them many times): 2-5 ops, 1-3 units with capacity 1-2,
multi-row reservation tables with idle rows, data and order edges with distances 0-3 (distance-0
edges only go forward, so no zero-distance cycle), blocking edges, variable-latency ops, 1-3 warp
groups with different warps and register limits, registers, memory footprints against tight
capacities, spill costs and async ops.  Everything shrinks towards the simplest model.
"""

from __future__ import annotations

from hypothesis import strategies as st

from warpweave.core.formats import model_from_dict
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule

UNITS = ["tc", "sfu", "tma"]


@st.composite
def model_docs(draw, max_ops: int = 5, max_cycles: int = 3, features: bool = True) -> dict:
    """A model document (the file format), valid by construction."""
    n_units = draw(st.integers(1, 3))
    units = {u: draw(st.integers(1, 2)) for u in UNITS[:n_units]}
    n_groups = draw(st.integers(1, 3)) if features else 1
    groups = [{"name": f"g{k}", "warps": draw(st.sampled_from([1, 4])),
               "reg_limit": draw(st.integers(0, 12))} for k in range(n_groups)]
    vl_group = (draw(st.sampled_from([None] + [g["name"] for g in groups]))
                if features and n_groups > 1 else None)
    n_ops = draw(st.integers(2, max_ops))
    ops = []
    for k in range(n_ops):
        cycles = draw(st.integers(1, max_cycles))
        op: dict = {"name": f"v{k}", "cycles": cycles}
        if draw(st.booleans()):
            op["uses"] = {draw(st.sampled_from(list(units))): 1}
        else:
            rows = draw(st.lists(st.dictionaries(st.sampled_from(list(units)), st.integers(0, 1),
                                                 max_size=1), min_size=0, max_size=cycles))
            op["rrt"] = rows
        if features:
            op["regs"] = draw(st.integers(0, 6))
            op["footprint"] = {"smem": draw(st.integers(0, 3))}
            op["spill_cost"] = draw(st.integers(0, 2))
            op["async"] = draw(st.booleans())
            op["warps"] = draw(st.sampled_from([0, 1, 4]))
            if vl_group is not None:
                op["variable_latency"] = draw(st.booleans())
        ops.append(op)
    if features:  # at least one group must host every op's warps
        groups[0]["warps"] = 4
    edges = []
    for _ in range(draw(st.integers(0, 2 * n_ops))):
        a, b = draw(st.integers(0, n_ops - 1)), draw(st.integers(0, n_ops - 1))
        distance = draw(st.integers(0, 3)) if a >= b else draw(st.integers(0, 1))
        if a >= b and distance == 0:
            distance = 1
        edge = {"src": f"v{a}", "dst": f"v{b}", "distance": distance}
        if draw(st.booleans()):
            edge["delay"] = draw(st.integers(0, max_cycles + 1))
        if features:
            edge["kind"] = draw(st.sampled_from(["data", "data", "order"]))
            edge["blocking"] = draw(st.booleans())
        edges.append(edge)
    memories = {"smem": draw(st.integers(0, 6))} if features else {}
    return {"name": "random", "machine": {"name": "rand", "units": units, "memories": memories,
                                          "warp_groups": groups,
                                          "variable_latency_group": vl_group},
            "ops": ops, "edges": edges}


def models(**kw) -> st.SearchStrategy[Model]:
    return model_docs(**kw).map(model_from_dict)


@st.composite
def schedules(draw, model: Model, max_I: int = 4, max_stages: int = 3,
              complete: bool = True) -> Schedule:
    """Any schedule of `model` (valid or not); with `complete`, L covers every op (rule 3)."""
    I = draw(st.integers(1, max_I))  # noqa: E741
    S = draw(st.integers(1, max_stages))
    top = S * I
    start = {op.name: draw(st.integers(0, max(0, top - op.cycles))) for op in model.ops}
    tight = max(start[op.name] + op.cycles for op in model.ops)
    if complete:
        L = draw(st.integers(max(tight, (S - 1) * I + 1), max(tight, top)))
    else:
        L = draw(st.integers(max(1, (S - 1) * I + 1), top))
    groups = [g.name for g in model.machine.warp_groups]
    group = {op.name: draw(st.sampled_from(groups)) for op in model.ops}
    return Schedule(model.name, I, L, start, group)
