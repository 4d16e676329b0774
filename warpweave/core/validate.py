"""Which models are well formed: names, references, ranges and sizes.  The first problem is
raised as an InputError whose path names the offending key (`ops[3].rrt[0].tcc`).

Sizes: a cost (an op's cycles, a delay, a spill cost) is at most MAX_COST cycles, an edge's
distance at most MAX_DISTANCE iterations, and the reservation tables, which hold a row per
cycle of an op, at most MAX_ROWS rows in all.  Beyond
them a model is not a loop body in cycles (a unit mistake, or a latency in nanoseconds times a
million), and the tool could not decide it in memory or in a solver's 64-bit integers anyway.
"""

from __future__ import annotations

from collections.abc import Iterable

from warpweave.core.bounds import check_zero_distance_cycles
from warpweave.core.model import Model
from warpweave.core.registry import hardware
from warpweave.errors import InputError

MAX_COST = 10**9       # cycles, delays and spill costs (a second of a GPU's clock)
MAX_ROWS = 2**20       # reservation-table rows, over all ops
# iterations an edge reaches ahead: beyond it a count of the values in flight no longer fits a
# machine integer (the verifier and the encodings count the values entering the loop)
MAX_DISTANCE = 10**18
COARSER = "give the costs in coarser units"


def _unique(names: Iterable[str], where: tuple) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not name:
            raise InputError("a name must be a non-empty string", where + (i, "name"), name)
        if name in seen:
            raise InputError(f"duplicate name {name!r}", where + (i, "name"), name)
        seen.add(name)


def _at_least(value: int, low: int, path: tuple) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("must be an integer", path, value)
    if value < low:
        raise InputError(f"must be >= {low}", path, value)


def check_cost(value: int, path: tuple) -> None:
    """A cost in cycles within MAX_COST (its lower end is checked where it is read)."""
    if value > MAX_COST:
        raise InputError(f"must be <= {MAX_COST} cycles; {COARSER}", path, value)


def check_rows(rows: int, path: tuple, value: int) -> None:
    """`rows` reservation rows so far within MAX_ROWS (`path` = `value`: where they come from)."""
    if rows > MAX_ROWS:
        raise InputError(f"reservation tables hold a row per cycle, at most {MAX_ROWS} in all; "
                         f"{COARSER}", path, value)


def check_machine(model: Model) -> None:
    m = model.machine
    _unique([u.name for u in m.units], ("machine", "units"))
    _unique([x.name for x in m.memories], ("machine", "memories"))
    _unique([g.name for g in m.warp_groups], ("machine", "warp_groups"))
    for u in m.units:
        _at_least(u.capacity, 0, ("machine", "units", u.name))
    for x in m.memories:
        _at_least(x.capacity, 0, ("machine", "memories", x.name))
    for i, g in enumerate(m.warp_groups):
        _at_least(g.warps, 1, ("machine", "warp_groups", i, "warps"))
        _at_least(g.reg_limit, 0, ("machine", "warp_groups", i, "reg_limit"))
    if not m.warp_groups:
        raise InputError("the machine needs at least one warp group", ("machine", "warp_groups"),
                         [])
    check_register_rule(model)
    vl = m.variable_latency_group
    if vl is not None and vl not in {g.name for g in m.warp_groups}:
        raise InputError("unknown warp group", ("machine", "variable_latency_group"), vl)


def check_register_rule(model: Model) -> None:
    """A machine with hardware facts (a registered machine of its name or arch) gives each group
    a limit its register rule allows: the rule kernels and importers follow and codegen sets
    (`setmaxnreg` on NVIDIA), so that a schedule is never proven with a limit the code cannot
    have.  A machine of its own (no registered name or arch) has no rule; codegen checks what it
    can set there."""
    spec = hardware(model.machine)
    if spec is None:
        return
    for i, g in enumerate(model.machine.warp_groups):
        spec.registers.check_limit(g.reg_limit, ("machine", "warp_groups", i, "reg_limit"),
                                   f"group {g.name} (the register rule of {spec.name}, arch "
                                   f"{spec.arch})")


def check_ops(model: Model) -> None:
    m = model.machine
    capacity = {u.name: u.capacity for u in m.units}
    memories = {x.name for x in m.memories}
    _unique(model.op_names, ("ops",))
    ids: set = set()
    for i, op in enumerate(model.ops):
        if op.source_id is not None:
            if op.source_id in ids:
                raise InputError("duplicate id", ("ops", i, "id"), op.source_id)
            ids.add(op.source_id)
    rows = 0
    for i, op in enumerate(model.ops):
        _at_least(op.cycles, 1, ("ops", i, "cycles"))
        check_cost(op.cycles, ("ops", i, "cycles"))
        for key in ("regs", "spill_cost", "warps"):
            _at_least(getattr(op, key), 0, ("ops", i, key))
        check_cost(op.spill_cost, ("ops", i, "spill_cost"))
        if len(op.rrt) > op.cycles:
            raise InputError(f"{len(op.rrt)} reservation rows for an op of {op.cycles} cycles",
                             ("ops", i, "rrt"), len(op.rrt))
        rows += len(op.rrt)
        check_rows(rows, ("ops", i, "cycles"), op.cycles)
        # An op's rows are mostly one row repeated (the `uses` shorthand): each distinct row is
        # checked once, and its first cycle named if it is wrong.
        first: dict = {}
        for c, row in enumerate(op.rrt):
            first.setdefault(row, c)
        for row, c in first.items():
            for unit, count in row:
                path = ("ops", i, "rrt", c, unit)
                if unit not in capacity:
                    raise InputError(f"unknown unit (units: {', '.join(capacity) or 'none'})",
                                     path, unit)
                _at_least(count, 0, path)
                if count > capacity[unit]:
                    raise InputError(f"uses {count} of unit {unit!r} at once, which has "
                                     f"capacity {capacity[unit]}", path, count)
        for mem, amount in op.footprint:
            path = ("ops", i, "footprint", mem)
            if mem not in memories:
                raise InputError(f"unknown memory (memories: {', '.join(memories) or 'none'})",
                                 path, mem)
            _at_least(amount, 0, path)
        if op.warps and op.warps > max(g.warps for g in m.warp_groups):
            raise InputError("no warp group has that many warps", ("ops", i, "warps"), op.warps)
        if op.variable_latency and m.variable_latency_group is None:
            raise InputError("a variable-latency op needs machine.variable_latency_group",
                             ("ops", i, "variable_latency"), True)


def check_edges(model: Model) -> None:
    for i, e in enumerate(model.edges):
        for key in ("src", "dst"):
            name = getattr(e, key)
            if not model.has_op(name):
                raise InputError("edge to a missing op", ("edges", i, key), name)
        _at_least(e.delay, 0, ("edges", i, "delay"))
        check_cost(e.delay, ("edges", i, "delay"))
        _at_least(e.distance, 0, ("edges", i, "distance"))
        if e.distance > MAX_DISTANCE:
            raise InputError(f"must be <= {MAX_DISTANCE} iterations", ("edges", i, "distance"),
                             e.distance)
        if e.kind not in ("data", "order"):
            raise InputError('kind must be "data" or "order"', ("edges", i, "kind"), e.kind)
        _at_least(e.hold, 0, ("edges", i, "hold"))
        if e.hold and not e.is_data:
            raise InputError("only a data edge's reader holds a value", ("edges", i, "hold"),
                             e.hold)
        if e.hold > model.op(e.dst).cycles:
            raise InputError(f"a reader holds a value at most while it runs "
                             f"({e.dst}: {model.op(e.dst).cycles} cycles)", ("edges", i, "hold"),
                             e.hold)
    check_zero_distance_cycles(model)


def check_model(model: Model) -> Model:
    """Raise InputError at the first malformed part of `model`; return it unchanged otherwise."""
    if not model.ops:
        raise InputError("a model needs at least one op", ("ops",), [])
    check_machine(model)
    check_ops(model)
    check_edges(model)
    return model
