"""A neighbourhood of a schedule re-optimized with the exact encoding: some ops free, the others
pinned where they are.

The problem is the exact model of DESIGN section 3 restricted to what the free ops can meet, with
every op that stays in it pinned (start time and group, as unit clauses through the encoding's
`pin_start` and `on` literals):

- Under the rules that relate ops only pairwise or per slot (dependence, cross-warp spill,
  capacity, completion, warp fit, variable latency, liveness's premise), the sub-model holds the
  free ops, the pinned ops they share an edge with, and the pinned ops that share a unit with
  them.  When many pinned ops share a unit, their reservations folded modulo I become one pinned
  op holding exactly those slots (a "background" op), so the problem does not grow with the
  model.
- Under any rule that looks at Q's lifetimes or at a whole group (memory, registers, rule 9) or
  that a plugin adds, the sub-model is the whole model with every other op pinned.

So every schedule of the neighbourhood, merged back, satisfies every rule; the caller verifies
it anyway.  `reoptimize` states the neighbourhood at (I, S), pins, warm-starts the solver from
the current schedule, and returns the merged schedule (or why not).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence

import attrs

from warpweave.backends.isolate import solve_isolated
from warpweave.core.constraints import Constraint
from warpweave.core.ims import folded_runs
from warpweave.core.model import Model, Op
from warpweave.core.registry import ENCODINGS
from warpweave.core.registry import backend as make_backend
from warpweave.core.schedule import Schedule

LOCAL_RULES = frozenset({"dependence", "cross_warp_spill", "capacity", "completion",
                         "warp_uniqueness", "variable_latency", "liveness"})
BACKGROUND_AFTER = 24  # pinned ops sharing a unit with free ones beyond which they are merged


@attrs.frozen
class Neighbourhood:
    """The sub-model, which of its ops are free, and where the others are pinned."""

    model: Model
    free: frozenset[str]
    pinned: Mapping[str, tuple[int, str]]   # op -> (start, group), background ops included


@attrs.frozen
class Reoptimized:
    """The outcome of one neighbourhood solve: the merged schedule (not yet verified against
    the whole model) or None, the solver's status, and the seconds it took."""

    schedule: Schedule | None
    status: str
    seconds: float
    ops: int            # ops in the sub-model


def binding(model: Model, constraints: Sequence[Constraint]) -> list[Constraint]:
    """The constraints that some schedule of `model` could violate: built-in rules that cannot
    bind on this model are left out (their encodings can be large - rule 9 on one group is
    most of the model - while every schedule satisfies them).  Plugins are always kept."""
    ops, m = model.ops, model.machine
    one_group = len(m.warp_groups) == 1
    idle = {
        "memory": not any(op.footprint for op in ops),
        "register_limit": not any(op.regs for op in ops),
        "concurrency": one_group and not any(e.blocking for e in model.edges),
        "cross_warp_spill": not any(e.is_data and (e.handoff_local or (e.handoff and not one_group))
                                    for e in model.edges),
        "variable_latency": m.variable_latency_group is None,
        "warp_uniqueness": all(g.warps >= op.warps for g in m.warp_groups for op in ops),
    }
    return [c for c in constraints if not idle.get(c.name, False)]


def neighbourhood(model: Model, schedule: Schedule, free: Collection[str],
                  rules: Collection[str]) -> Neighbourhood:
    """The sub-model of `free` around `schedule` (see the module docstring)."""
    free = frozenset(free)
    where = {v: (schedule.start[v], schedule.group[v]) for v in model.op_names}
    if not set(rules) <= LOCAL_RULES or len(free) == len(model.ops):
        pinned = {v: where[v] for v in model.op_names if v not in free}
        return Neighbourhood(model, free, pinned)
    keep = set(free)
    for v in free:
        keep.update(e.dst for e in model.out_edges(v))
        keep.update(e.src for e in model.in_edges(v))
    ops = [model.op(v) for v in model.op_names if v in keep]
    pinned = {v: where[v] for v in keep if v not in free}
    if "capacity" in rules:
        free_units = {u for v in free for _, u, _ in model.op(v).usage()}
        sharers = {u: [op for op in model.ops if op.name not in keep
                       and any(x == u for _, x, _ in op.usage())] for u in free_units}
        merged = {u: group for u, group in sharers.items() if len(group) > BACKGROUND_AFTER}
        for u, group in sharers.items():
            if u not in merged:
                ops += group
                pinned.update((op.name, where[op.name]) for op in group)
        for u, group in merged.items():
            op = _background(model, schedule.I, u, group, schedule.start)
            if op is not None:
                g = model.machine.warp_groups[0].name
                ops.append(attrs.evolve(op, variable_latency=(
                    g == model.machine.variable_latency_group)))
                pinned[op.name] = (0, g)
    names = {op.name for op in ops}
    edges = [e for e in model.edges if e.src in names and e.dst in names]
    sub = Model(f"{model.name}/neighbourhood", model.machine, ops, edges)
    return Neighbourhood(sub, free, pinned)


def _background(model: Model, I: int, unit: str, group: Sequence[Op],  # noqa: E741
                start: Mapping[str, int]) -> Op | None:
    """One op, pinned at 0 and I cycles long, holding in each slot what `group` holds of
    `unit` there (their reservations folded modulo I)."""
    runs = folded_runs(model.replace(ops=tuple(group), edges=()), I)
    used = [0] * I
    for op in group:
        for u, off, length, count in runs[op.name]:
            if u == unit:
                for k in range(length):
                    used[(start[op.name] + off + k) % I] += count
    if not any(used):
        return None
    name = f"~background:{unit}"
    while model.has_op(name):
        name += "'"
    return Op(name, I, rrt=[{unit: n} if n else {} for n in used])


class _Values(Mapping):
    """A solution's values, with the constants True and False standing for themselves (the
    pinned ops' group literals are constants)."""

    def __init__(self, values: Mapping):
        self.values = values

    def __getitem__(self, key):
        return key if isinstance(key, bool) else self.values[key]

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def pinned_encoding(cls: type, start: Mapping[str, int], group: Mapping[str, str],
                    dependence: bool = True) -> type:
    """The encoding `cls` with the ops of `start` fixed: their start windows narrowed to the one
    cycle before the time variables are made (View.__init__ computes `window`, then calls
    `build`), the free ops' windows narrowed by the edges from and to them, and their group
    literals the constants True/False - so that whatever relates pinned ops only folds to a
    constant instead of being stated."""

    class Pinned(cls):
        def build(self) -> None:
            window = self.window
            for v, t in start.items():
                lo, hi = window[v]
                window[v] = (t, t) if lo <= t <= hi else (t, t - 1)  # outside: empty
            edges = [(e.src, e.dst, e.delay - e.distance * self.I) for e in self.model.edges
                     if e.src != e.dst] if dependence else []
            for _ in range(len(window)):  # longest paths over the narrowed windows
                changed = False
                for u, w, gap in edges:
                    (ulo, uhi), (wlo, whi) = window[u], window[w]
                    if ulo + gap > wlo and w not in start:
                        window[w], changed = (ulo + gap, whi), True
                    if whi - gap < uhi and u not in start:
                        window[u], changed = (window[u][0], whi - gap), True
                if not changed:
                    break
            if any(lo > hi for lo, hi in window.values()):
                self.problem.add_clause([])
            super().build()

        def on(self, v: str, g: str):
            if v in group:
                return group[v] == g
            return super().on(v, g)

        def decode(self, values):
            return super().decode(_Values(values))

    return Pinned


def reoptimize(model: Model, schedule: Schedule, free: Collection[str],
               constraints: Sequence[Constraint], *, stages: int, backend: str = "cpsat",
               encoding: str = "integer", time_limit: float | None = None, seed: int = 0,
               isolate: bool = True, semantics: str = "loop") -> Reoptimized:
    """Re-optimize the `free` ops of `schedule` (at its I) with the others pinned, shortest
    length first, within `stages` stages, the encoding stated under `semantics`; the merged
    schedule (unverified) or None."""
    tick = time.perf_counter()
    rules = {c.name for c in constraints}
    hood = neighbourhood(model, schedule, free, rules)
    sub, I = hood.model, schedule.I  # noqa: E741
    start = {v: hood.pinned[v][0] if v in hood.pinned else schedule.start[v]
             for v in sub.op_names}
    group = {v: hood.pinned[v][1] if v in hood.pinned else schedule.group[v]
             for v in sub.op_names}
    pinned_end = max((start[v] + sub.op(v).cycles for v in hood.pinned), default=1)
    encoding_cls = pinned_encoding(ENCODINGS.get(encoding),
                                   {v: t for v, (t, _) in hood.pinned.items()},
                                   {v: g for v, (_, g) in hood.pinned.items()},
                                   dependence="dependence" in rules)
    view = encoding_cls(sub, I, stages, constraints, min_length=pinned_end, symmetry=False,
                        semantics=semantics)
    p = view.problem
    hints = {}  # the free ops where they are now: a warm start
    for v in hood.free:
        lits = view.pin_start(v, start[v]) + [view.on(v, g.name) if g.name == group[v] else
                                              ~view.on(v, g.name)
                                              for g in sub.machine.warp_groups]
        if False in lits:
            hints = None
            break
        hints.update((x.var, x.positive) for x in lits if x is not True)
    if hints:
        p.hint(hints)
    solver = make_backend(backend, seed=seed)
    result = solve_isolated(solver, p, time_limit) if isolate else \
        solver.solve(p, time_limit=time_limit)
    status = result.status.value
    if not result.status.has_solution:
        return Reoptimized(None, status, time.perf_counter() - tick, len(sub.ops))
    found = view.decode(result.values)
    merged_start = {v: found.start[v] if v in hood.free else schedule.start[v]
                    for v in model.op_names}
    merged_group = {v: found.group[v] if v in hood.free else schedule.group[v]
                    for v in model.op_names}
    low = min(merged_start.values())
    merged = Schedule.tight(model, I, {v: t - low for v, t in merged_start.items()},
                            merged_group)
    return Reoptimized(merged, status, time.perf_counter() - tick, len(sub.ops))
