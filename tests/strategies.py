"""Hypothesis strategies for random models and schedules covering every feature of DESIGN section 3.

Models are small (the tests solve them many times): 2-5 ops, 1-3 units with capacity 1-3, ops
longer than I (up to twice `max_cycles`, several times the small I drawn), multi-row reservation
tables with idle rows, data and order edges with distances 0-3 (distance-0
edges only go forward, so no zero-distance cycle), blocking edges, variable-latency ops, 1-3 warp
groups with different warps and register limits, registers, memory footprints against tight
capacities, spill costs, async ops and readers that hold their value past their issue.
Everything shrinks towards the simplest model.
"""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from warpweave.core.formats import model_from_dict
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule

UNITS = ["tc", "sfu", "tma"]


@st.composite
def model_docs(draw, max_ops: int = 5, max_cycles: int = 3, features: bool = True) -> dict:
    """A model document (the file format), valid by construction."""
    n_units = draw(st.integers(1, 3))
    units = {u: draw(st.integers(1, 3)) for u in UNITS[:n_units]}
    n_groups = draw(st.integers(1, 3)) if features else 1
    groups = [{"name": f"g{k}", "warps": draw(st.sampled_from([1, 4])),
               "reg_limit": draw(st.integers(0, 12))} for k in range(n_groups)]
    vl_group = (draw(st.sampled_from([None] + [g["name"] for g in groups]))
                if features and n_groups > 1 else None)
    n_ops = draw(st.integers(2, max_ops))
    ops = []
    for k in range(n_ops):
        # Now and then an op longer than several I: it meets its own copies in a modular slot.
        cycles = draw(st.integers(1, max_cycles) | st.integers(max_cycles + 1, 2 * max_cycles))
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
            if edge["kind"] == "data" and draw(st.booleans()):  # read until the reader is done
                edge["hold"] = draw(st.integers(0, ops[b]["cycles"]))
        edges.append(edge)
    if n_ops >= 3 and draw(st.booleans()):
        # A value read twice in its own iteration, at different times: the last read, not the
        # first, ends its life (where liveness bugs hide).
        a = draw(st.integers(0, n_ops - 3))
        b = draw(st.integers(a + 1, n_ops - 2))
        edges += [{"src": f"v{a}", "dst": f"v{b}", "distance": 0},
                  {"src": f"v{a}", "dst": f"v{draw(st.integers(b + 1, n_ops - 1))}",
                   "distance": 0}]
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


# ---------------------------------------------------------------------------------------------
# Tiny models for the brute-force oracle (tests/test_crosscheck.py)

# Ops per number of warp groups: the oracle branches over groups^ops assignments.
TINY_OPS = {1: 7, 2: 5, 3: 4}
# Features on more often than not: long lifetimes under tight limits are where liveness bugs show.
OFTEN = ("loops", "regs", "memory")


@st.composite
def tiny_model_docs(draw, max_cycles: int = 3, require: tuple[str, ...] = (), min_ops: int = 2,
                    min_edges: int = 0) -> dict:
    """A model document small enough for `warpweave.core.oracle` to enumerate, covering every
    feature of DESIGN section 3.

    Each feature is behind a flag drawn first (False is the simplest), so shrinking switches whole
    features off and then simplifies what is left: ops go to 1 cycle using the first unit, edges
    to forward data edges at the default delay, amounts to 0 (omitted from the file).  Flags in
    `require` are always on.
    """
    often = st.integers(0, 3).map(bool)  # True 3 times in 4; shrinks to False
    flags = {name: name in require or draw(often if name in OFTEN else st.booleans())
             for name in ("rows", "loops", "order", "blocking", "groups", "regs", "memory",
                          "spill", "async", "warps", "long", "hold")}
    n_units = draw(st.integers(1, 4))
    units = {f"u{k}": draw(st.integers(1, 2)) for k in range(n_units)}
    if flags["long"]:  # ops longer than several I on a unit of capacity 3 (u0)
        units["u0"] = 3
    n_groups = draw(st.integers(2, 3)) if flags["groups"] else 1
    groups = [{"name": f"g{k}", "warps": draw(st.sampled_from([4, 1, 2])) if flags["warps"]
               else 4} for k in range(n_groups)]
    vl = f"g{n_groups - 1}" if n_groups > 1 and draw(st.booleans()) else None
    most_warps = max(g["warps"] for g in groups)
    n_ops = draw(st.integers(min_ops, max(min_ops, TINY_OPS[n_groups])))
    ops = [_tiny_op(draw, k, units, max_cycles, flags, vl, most_warps)
           for k in range(n_ops)]
    edges = [_tiny_edge(draw, ops, max_cycles, flags)
             for _ in range(draw(st.integers(min_edges, n_ops + 2)))]
    # Tight limits: each value fits alone, a few overlapping ones may not.
    for g in groups:
        g["reg_limit"] = max(op.get("regs", 0) for op in ops) + draw(st.integers(0, 2)) \
            if flags["regs"] else 255
    machine: dict = {"name": "tiny", "units": units, "warp_groups": groups}
    if flags["memory"]:
        most = max(op["footprint"]["smem"] for op in ops)
        machine["memories"] = {"smem": most + draw(st.integers(0, 2))}
    if vl is not None:
        machine["variable_latency_group"] = vl
    return {"name": "tiny", "machine": machine, "ops": ops, "edges": edges}


def _tiny_op(draw, k: int, units: dict[str, int], max_cycles: int, flags: dict,
             vl: str | None, most_warps: int) -> dict:
    if flags["long"] and draw(st.booleans()):  # longer than I for every I below 4
        op: dict = {"name": f"v{k}", "cycles": draw(st.integers(4, 5)), "uses": {"u0": 1}}
        return _tiny_extras(draw, op, flags, vl, most_warps)
    cycles = draw(st.integers(1, max_cycles))
    op = {"name": f"v{k}", "cycles": cycles}
    if flags["rows"] and draw(st.booleans()):
        # A reservation table: idle rows ({}), a unit held in several rows, or two instances of
        # a unit of capacity 2 in one row.
        unit = st.sampled_from(list(units))
        row = st.dictionaries(unit, st.integers(1, 2), max_size=2).map(
            lambda r: {u: min(n, units[u]) for u, n in r.items()})
        rows = draw(st.lists(st.just({}) | row, min_size=1, max_size=cycles))
        if len(rows) > 1 and draw(st.booleans()):
            # The first row's units held again in the last row (as an op holding a unit at
            # offsets 0 and 2: where feasibility stops being monotone in I).
            rows[-1] = {**rows[-1], **rows[0]}
        op["rrt"] = rows
    elif draw(st.integers(0, 3)):  # mostly one unit for every cycle; sometimes none
        op["uses"] = {draw(st.sampled_from(list(units))): 1}
    return _tiny_extras(draw, op, flags, vl, most_warps)


def _tiny_extras(draw, op: dict, flags: dict, vl: str | None, most_warps: int) -> dict:
    """Registers, footprints, spill, async, warps and variable latency, as the flags say."""
    if flags["regs"]:
        op["regs"] = draw(st.integers(1, 4))
    if flags["memory"]:
        op["footprint"] = {"smem": draw(st.integers(1, 3))}
    if flags["spill"]:
        op["spill_cost"] = draw(st.integers(0, 2))
    if flags["async"]:
        op["async"] = draw(st.booleans())
    if flags["warps"]:
        op["warps"] = draw(st.sampled_from([w for w in (0, 1, 2, 4) if w <= most_warps]))
    if vl is not None:
        op["variable_latency"] = draw(st.booleans())
    return op


HANDOFFS = st.sampled_from([None, None, (0, 1), (2, 0), (1, 1)])


def _tiny_edge(draw, ops: list[dict], max_cycles: int, flags: dict) -> dict:
    """An edge; distance-0 edges go forward in op order, so there is no zero-distance cycle."""
    n_ops = len(ops)
    a = draw(st.integers(0, n_ops - 1))
    if flags["loops"] and draw(st.booleans()):
        b, distance = draw(st.integers(0, n_ops - 1)), draw(st.integers(1, 3))
    elif a == n_ops - 1:
        b, distance = draw(st.integers(0, n_ops - 1)), 1
    else:
        b, distance = draw(st.integers(a + 1, n_ops - 1)), 0
    edge: dict = {"src": f"v{a}", "dst": f"v{b}"}
    if distance:
        edge["distance"] = distance
    if draw(st.booleans()):
        edge["delay"] = draw(st.integers(0, max_cycles + 1))
    if flags["order"] and draw(st.booleans()):
        edge["kind"] = "order"
    if flags["blocking"] and draw(st.booleans()):
        edge["blocking"] = True
    handoff = draw(HANDOFFS) if flags["spill"] else None
    if handoff is not None:
        # a hand-off of the edge's own (where the value lives), across groups and within one
        edge["handoff"], edge["handoff_local"] = handoff
    if flags["hold"] and edge.get("kind", "data") == "data" and draw(st.booleans()):
        # the reader keeps reading the value for part or all of its run (an async MMA's operand)
        edge["hold"] = draw(st.integers(1, ops[b].get("cycles", 1)))
    return edge


def tiny_models(**kw) -> st.SearchStrategy[Model]:
    return tiny_model_docs(**kw).map(model_from_dict)


# What `tiny_model_docs` must generate (the features of DESIGN section 3 that issue 5 lists), by
# the names `features` gives them.  `tests/test_crosscheck_support.py` checks that a sample of the
# strategy has every one, and the properties print how many of their models had each.
FEATURES = (
    *(f"{n} ops" for n in range(2, 8)), *(f"{n} units" for n in range(1, 5)),
    "a unit of capacity 2", "a unit of capacity 3", "an op of 4+ cycles",
    "multi-row reservation table", "a unit in several rows",
    "two of a unit in one row", "an idle row", "an op using no unit",
    "distance 1", "distance 2", "distance 3", "an explicit delay", "an order edge",
    "a blocking edge", "a variable-latency op", "2 warp groups", "3 warp groups",
    "groups differ in warps", "groups differ in reg_limit", "an op needing warps", "regs",
    "tight registers", "footprints", "tight memory", "a spill cost", "an async op",
    "an edge's hand-off", "a hand-off within a group", "a reader holding its value",
)


def features(doc: dict) -> set[str]:
    """The FEATURES a model document uses ("tight": the amounts of all ops exceed the limit, so
    not every value can be live at once)."""
    machine, ops, edges = doc["machine"], doc["ops"], doc["edges"]
    groups = machine["warp_groups"]
    out = {f"{len(ops)} ops", f"{len(machine['units'])} units"}
    if len(groups) > 1:
        out.add(f"{len(groups)} warp groups")
    flags = {
        "a unit of capacity 2": 2 in machine["units"].values(),
        "a unit of capacity 3": 3 in machine["units"].values(),
        "an op of 4+ cycles": any(op.get("cycles", 1) >= 4 for op in ops),
        "groups differ in warps": len({g.get("warps", 4) for g in groups}) > 1,
        "groups differ in reg_limit": len({g.get("reg_limit", 255) for g in groups}) > 1,
        "tight registers": sum(op.get("regs", 0) for op in ops)
        > min(g.get("reg_limit", 255) for g in groups),
        "tight memory": any(sum(dict(op.get("footprint", {})).get(m, 0) for op in ops) > cap
                            for m, cap in machine.get("memories", {}).items()),
    }
    out |= {name for name, on in flags.items() if on}
    for op in ops:
        rows = op.get("rrt")
        held = [u for row in rows or () for u in row]
        out |= {name for name, on in (
            ("multi-row reservation table", len(rows or ()) > 1),
            ("a unit in several rows", len(held) > len(set(held))),
            ("two of a unit in one row", any(n > 1 for row in rows or () for n in row.values())),
            ("an idle row", {} in (rows or ())),
            ("an op using no unit", not held and not op.get("uses")),
            ("a variable-latency op", op.get("variable_latency")),
            ("an op needing warps", op.get("warps")), ("regs", op.get("regs")),
            ("footprints", any(dict(op.get("footprint", {})).values())),
            ("a spill cost", op.get("spill_cost")), ("an async op", op.get("async"))) if on}
    for e in edges:
        out |= {name for name, on in (
            (f"distance {e.get('distance', 0)}", e.get("distance")),
            ("an explicit delay", "delay" in e), ("an order edge", e.get("kind") == "order"),
            ("a blocking edge", e.get("blocking")), ("an edge's hand-off", "handoff" in e),
            ("a hand-off within a group", e.get("handoff_local")),
            ("a reader holding its value", e.get("hold"))) if on}
    return out


# ---------------------------------------------------------------------------------------------
# Limits at the boundary of a schedule (liveness bugs change the live weight by a little)


def _with_limits(model: Model, regs: list[int], capacities: list[int]) -> Model:
    machine = model.machine
    groups = [attrs.evolve(g, reg_limit=r)
              for g, r in zip(machine.warp_groups, regs, strict=True)]
    memories = [attrs.evolve(m, capacity=c)
                for m, c in zip(machine.memories, capacities, strict=True)]
    return model.replace(machine=attrs.evolve(machine, warp_groups=tuple(groups),
                                              memories=tuple(memories)))


@st.composite
def at_the_limit(draw, model: Model, schedule: Schedule, check) -> Model:
    """`model` with each register limit and memory capacity set to the schedule's own peak, or
    one below it, as `check` (a rule's semantics: violations or none) measures it, so the rule is
    decided by the exact live set at the peak: a value kept live a cycle too short or too long
    flips the answer."""
    n_groups, n_memories = len(model.machine.warp_groups), len(model.machine.memories)
    # The loop holds at most S + distance copies of a value at once (with those entering it).
    copies = schedule.stages + 1 + max((e.distance for e in model.edges), default=0)
    high = 1 + copies * sum(op.regs + sum(op.footprint_in(m.name) for m in
                                          model.machine.memories) for op in model.ops)
    regs, capacities = [high] * n_groups, [high] * n_memories

    def least(limits: list[int], k: int) -> int:
        limits[k] = 0
        while check(_with_limits(model, regs, capacities), schedule):
            limits[k] += 1
        peak, limits[k] = limits[k], high
        return peak

    peaks = [least(regs, k) for k in range(n_groups)] + \
        [least(capacities, k) for k in range(n_memories)]
    below = [max(0, p - draw(st.integers(0, 1))) for p in peaks]
    return _with_limits(model, below[:n_groups], below[n_groups:])
