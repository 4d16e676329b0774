"""Test scaffolding: random tiny models that come with a valid schedule, small hand-made Hopper- and
Blackwell-like models, and a brute-force search for their best schedule.

The random generator builds the schedule first (I, start times, groups) and then only adds
reservations and edges that the schedule satisfies; the verifier has the last word (a draw it
rejects is redrawn), so every pair it returns is valid by DESIGN section 3.
"""

from __future__ import annotations

import itertools
import random

from warpweave.core.model import Edge, Machine, Memory, Model, Op, Unit, WarpGroup
from warpweave.core.schedule import Schedule
from warpweave.core.validate import check_model
from warpweave.core.verify import verify

UNITS = ("tc", "sfu", "tma")


def _machine(rng: random.Random, groups: int, vl: bool) -> Machine:
    gs = [WarpGroup(f"g{i}", 4, 255) for i in range(groups)]
    return Machine("random", [Unit(u, 1) for u in UNITS], [Memory("smem", 1 << 20)], gs,
                   gs[-1].name if vl else None)


def random_case(rng: random.Random, max_ops: int = 5) -> tuple[Model, Schedule]:
    """A random model with 2..max_ops ops and a valid schedule for it."""
    for _ in range(1000):
        got = _draw(rng, max_ops)
        if got is not None:
            return got
    raise RuntimeError("no valid random case in 1000 draws")


def _draw(rng: random.Random, max_ops: int) -> tuple[Model, Schedule] | None:
    I = rng.randint(1, 4)  # noqa: E741
    n = rng.randint(2, max_ops)
    groups = rng.randint(1, 3)
    vl = groups > 1 and rng.random() < 0.5
    machine = _machine(rng, groups, vl)
    names = [f"v{i}" for i in range(n)]
    start = {v: rng.randint(0, 3 * I) for v in names}
    group = {v: f"g{rng.randrange(groups)}" for v in names}
    taken: set[tuple[str, int]] = set()
    ops = []
    for v in names:
        cycles = rng.randint(1, 3)
        unit = rng.choice(UNITS)
        is_vl = vl and group[v] == machine.variable_latency_group
        whole = rng.random() < 0.5
        rows = range(cycles) if whole else range(1)
        slots = {(unit, (start[v] + c) % I) for c in rows}
        if len(slots) == len(rows) and not slots & taken:
            taken |= slots
            rrt = [{unit: 1} if c in rows else {} for c in range(cycles)]
        else:
            rrt = []
        ops.append(Op(v, cycles, rrt=rrt, variable_latency=is_vl,
                      regs=rng.choice((0, 8, 32)), spill_cost=rng.choice((0, 0, 1)),
                      is_async=bool(rrt) and unit != "sfu" and rng.random() < 0.6))
    by = {op.name: op for op in ops}
    edges = []
    for _ in range(rng.randint(1, 2 * n)):
        u, v = rng.choice(names), rng.choice(names)
        dist = rng.choice((0, 0, 1, 1, 2))
        if dist == 0 and (start[u], names.index(u)) >= (start[v], names.index(v)):
            continue
        kind = "data" if rng.random() < 0.8 else "order"
        spill = by[u].spill_cost if kind == "data" and group[u] != group[v] else 0
        room = start[v] + dist * I - start[u] - spill
        if room < 0:
            continue
        if by[u].is_async and by[u].cycles > room:
            continue  # an async op's result is there when it completes, not before
        if by[u].is_async and kind == "data":  # readers at different delays (issue 20)
            delay = rng.choice((by[u].cycles, room, rng.randint(by[u].cycles, room)))
        elif by[u].is_async:
            # An order edge longer than an async copy: its channel publishes once, at the most
            # eager reader's delay, so only the schedule's timing keeps it (docs/codegen.md).
            delay = by[u].cycles
        else:
            delay = by[u].cycles if by[u].cycles <= room else rng.randint(0, room)
        edges.append(Edge(u, v, delay, dist, kind, rng.random() < 0.2))
    for u in names:  # an async MMA read in its group at tight, different delays (issue 20)
        if by[u].is_async and any("tc" in row for row in by[u].rrt):
            readers = [v for v in names if group[v] == group[u]
                       and start[v] - start[u] >= by[u].cycles]
            for v in rng.sample(readers, min(len(readers), rng.randint(0, 3))):
                edges.append(Edge(u, v, start[v] - start[u]))
    model = Model("random", machine, ops, edges)
    try:
        check_model(model)
    except Exception:
        return None
    sched = Schedule.tight(model, I, start, group)
    if verify(model, sched):
        return None
    return model, sched


# ---------------------------------------------------------------------------------------------
# Hand-made kernel-like models (the kernel library lands on another branch).


def hopper_gemm() -> Model:
    """A Hopper-like GEMM main loop: a producer warp group issues TMA loads (variable latency)
    into a 2-deep shared-memory ring; a consumer warp group runs the async MMA chain, rescales
    the accumulator on the ALU, and the MMA's read of the tile is protected by an
    anti-dependence."""
    machine = Machine("hopper-toy", [Unit("tma", 1), Unit("tc", 1), Unit("alu", 1)],
                      [Memory("smem", 232448)],
                      [WarpGroup("producer", 4, 40), WarpGroup("consumer", 4, 232)], "producer")
    ops = [Op.using("load", 2, {"tma": 1}, variable_latency=True, is_async=True,
                    footprint={"smem": 32768}),
           Op.using("mma", 2, {"tc": 1}, is_async=True, regs=64),
           Op.using("scale", 1, {"alu": 1}, regs=64)]
    edges = [Edge("load", "mma", 2, blocking=True), Edge("mma", "scale", 2, blocking=True),
             Edge("scale", "mma", 1, 1), Edge("mma", "load", 2, 2, "order")]
    return check_model(Model("hopper-gemm", machine, ops, edges))


def blackwell_attention() -> Model:
    """A Blackwell-like attention loop: a load warp (TMA, variable latency), an MMA warp issuing
    QK and PV (async tcgen05), and a softmax warp group; S goes MMA -> softmax through a channel,
    P comes back through a register hand-off, K/V slots are released by anti-dependences."""
    machine = Machine("blackwell-toy", [Unit("tma", 1), Unit("tc", 1), Unit("sfu", 1)],
                      [Memory("smem", 232448), Memory("tmem", 512)],
                      [WarpGroup("load", 1, 48), WarpGroup("mma", 1, 48),
                       WarpGroup("softmax", 4, 192)], "load", arch="sm_100a")
    ops = [Op.using("loadk", 1, {"tma": 1}, variable_latency=True, is_async=True,
                    footprint={"smem": 32768}),
           Op.using("loadv", 1, {"tma": 1}, variable_latency=True, is_async=True,
                    footprint={"smem": 32768}),
           Op.using("qk", 1, {"tc": 1}, is_async=True, footprint={"tmem": 128}),
           Op.using("softmax", 2, {"sfu": 1}, regs=96, spill_cost=1),
           Op.using("pv", 1, {"tc": 1}, is_async=True, footprint={"tmem": 128})]
    edges = [Edge("loadk", "qk", 1, blocking=True), Edge("qk", "softmax", 1, blocking=True),
             Edge("softmax", "pv", 2), Edge("loadv", "pv", 1, blocking=True),
             Edge("pv", "pv", 1, 1), Edge("qk", "loadk", 1, 2, "order"),
             Edge("pv", "loadv", 1, 2, "order")]
    return check_model(Model("blackwell-attention", machine, ops, edges))


def best_schedule(model: Model, group: dict[str, str], max_i: int = 8,
                  max_start: int = 12) -> Schedule:
    """The smallest-I valid schedule with the given groups, by brute force over start times."""
    names = model.op_names
    for I in range(1, max_i + 1):  # noqa: E741
        best = None
        for starts in itertools.product(range(max_start), repeat=len(names)):
            start = dict(zip(names, starts, strict=True))
            s = Schedule.tight(model, I, start, group)
            if best is not None and s.L >= best.L:
                continue
            if not verify(model, s):
                best = s
        if best is not None:
            return best
    raise RuntimeError(f"no schedule with I <= {max_i}")
