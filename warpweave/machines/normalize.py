"""Cost normalization (Twill paper section 5.2; DESIGN section 3): map raw cycle counts to small
integers with nearly the same ratios, so that time-indexed encodings stay small, and map schedules
found in those units back to raw cycles.

The pool C is the distinct positive raw costs of a model: op cycles, edge delays, spill costs and
the edges' hand-offs (across and within groups).
The ILP, stated in the IR (`warpweave.ir.Problem`) and solved by whatever `solve`
callable is given (a registered backend by name: `registry_solver`):

    minimize F  s.t.  -F <= C[i] C'[j] - C[j] C'[i] <= F  for all i < j,   1 <= sum C' <= U,

C' integer in [0, U].  The normalized model takes every cost through the map C -> C' (op cycles
at least 1; an edge whose delay is its source's cycles keeps that relation).  A scale
k = max ceil(C / C') over the costs with C' > 0 makes every raw cost fit in k times its
normalized one; reservation row c of a raw op becomes row c // k of the normalized op (the rows
merged by taking the larger count), so a schedule valid in normalized units, multiplied by k,
keeps every dependence, reservation, lifetime overlap and concurrency of the raw model - unless a
positive cost normalized to 0 (or an op was raised to 1 cycle).  Those costs are reported as
warnings; `denormalize` gives the raw schedule either way, and the caller verifies it again in raw
units, where such a rounding shows up as a violation instead of being hidden.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

import attrs

from warpweave import limits
from warpweave.core.bounds import bounds
from warpweave.core.model import Edge, Model, Op
from warpweave.core.registry import backend
from warpweave.core.schedule import Schedule
from warpweave.core.validate import check_model
from warpweave.errors import InputError
from warpweave.ir import IntVar, Problem, Var

Solve = Callable[[Problem], Mapping[Var, int] | None]
CANDIDATES = 64  # units `auto_unit` tries at most
# `auto` takes no unit that makes the lower bound on I (in raw cycles) more than this many
# times the raw one: ops of 1-6 cycles rounded up to 33-cycle units made it 14x on a generated
# 10,000-op model (I = 40920 cycles against a bound of 2932), while the kernels' units cost at
# most 3%.
MAX_INFLATION = 2.0


@attrs.frozen
class Normalized:
    """A model in normalized units, the cost map, the scale back to raw cycles, and warnings."""

    raw: Model
    model: Model
    mapping: Mapping[int, int]
    scale: int
    U: int
    F: int
    warnings: tuple[str, ...]
    unsafe: tuple[str, ...] = ()

    @property
    def conservative(self) -> bool:
        """True when scale x every normalized cost covers its raw cost, so every valid normalized
        schedule denormalizes to a valid raw one."""
        return not self.unsafe

    def denormalize(self, schedule: Schedule) -> Schedule:
        """The raw-cycle schedule: every start time and I multiplied by the scale; L covers both
        the scaled length and the raw ends of the ops."""
        k = self.scale
        start = {v: k * t for v, t in schedule.start.items()}
        length = max([k * schedule.L] + [start[op.name] + op.cycles for op in self.raw.ops])
        return Schedule(self.raw.name, k * schedule.I, length, start, schedule.group)

    def to_dict(self) -> dict:
        return {"U": self.U, "F": self.F, "scale": self.scale,
                "mapping": {str(c): n for c, n in sorted(self.mapping.items())},
                "warnings": list(self.warnings), "unsafe": list(self.unsafe)}


def cost_uses(model: Model) -> dict[int, list[str]]:
    """Every distinct positive raw cost and what uses it (for the pool and the warnings)."""
    uses: dict[int, list[str]] = defaultdict(list)
    for op in model.ops:
        uses[op.cycles].append(f"cycles of {op.name}")
        if op.spill_cost:
            uses[op.spill_cost].append(f"spill cost of {op.name}")
    for e in model.edges:
        if e.delay:
            uses[e.delay].append(f"delay {e.src} -> {e.dst}")
        if e.is_data and e.handoff:
            uses[e.handoff].append(f"hand-off {e.src} -> {e.dst}")
        if e.is_data and e.handoff_local:
            uses[e.handoff_local].append(f"hand-off within a group {e.src} -> {e.dst}")
        if e.hold:
            uses[e.hold].append(f"hold {e.src} -> {e.dst}")
    return dict(uses)


def normalization_problem(costs: Iterable[int], U: int) -> tuple[Problem, list[IntVar], IntVar]:
    """The ILP of section 5.2 over the distinct costs `costs`: (problem, C' variables, F)."""
    C = list(costs)
    if U < 1:
        raise InputError("the normalization bound U must be >= 1", ("U",), U)
    p = Problem("cost-normalization")
    scaled = [p.int(f"c{c}", 0, U) for c in C]
    F = p.int("F", 0, max(C, default=1) * U)
    for i in range(len(C)):
        for j in range(i + 1, len(C)):
            diff = [(C[i], scaled[j]), (-C[j], scaled[i])]
            p.add_linear(diff + [(-1, F)], "<=", 0)
            p.add_linear(diff + [(1, F)], ">=", 0)
    p.add_linear([(1, x) for x in scaled], ">=", 1)
    p.add_linear([(1, x) for x in scaled], "<=", U)
    p.minimize([(1, F)])
    return p, scaled, F


def normalize(model: Model, U: int, solve: Solve | None = None) -> Normalized:
    """Normalize `model`'s costs with bound U, solving the ILP with `solve` (default: the
    registered backend `cbc`)."""
    uses = cost_uses(model)
    costs = sorted(uses)
    problem, scaled, F = normalization_problem(costs, U)
    values = (solve or registry_solver())(problem)
    if values is None:
        raise InputError("the cost-normalization ILP has no solution", ("U",), U)
    mapping = {c: int(values[x]) for c, x in zip(costs, scaled, strict=True)}
    positive = [c for c in costs if mapping[c] > 0]
    scale = max((math.ceil(c / mapping[c]) for c in positive), default=1)
    warnings = [f"cost {c} normalizes to 0 ({'; '.join(uses[c])})"
                for c in costs if mapping[c] == 0]
    ops = [_normal_op(op, mapping, scale) for op in model.ops]
    cycles = {op.name: op.cycles for op in ops}
    edges = [_normal_edge(e, model, mapping, cycles) for e in model.edges]
    normalized = check_model(attrs.evolve(model, ops=ops, edges=edges))
    unsafe = tuple(f"{what}: {raw} raw cycles > {scale} x {norm}"
                   for what, raw, norm in _pairs(model, normalized) if raw > scale * norm)
    return Normalized(model, normalized, mapping, scale, U, int(values[F]), tuple(warnings),
                      unsafe)


def by_unit(model: Model, unit: int) -> Normalized:
    """Normalize by rounding every cost up to whole units of `unit` cycles: C' = ceil(C / unit).

    Conservative by construction (unit x C' >= C for every cost, none becomes 0), so every valid
    normalized schedule denormalizes to a valid raw one; the price is up to one unit of slack
    per cost.  Unlike the ILP, the resolution is chosen directly.
    """
    if unit < 1:
        raise InputError("the normalization unit must be >= 1 cycle", ("unit",), unit)
    mapping, normalized = _rounded(model, unit)
    F = 0
    for a in mapping:  # quadratic in the distinct costs: a deadline check per row
        limits.check()
        F = max(F, max(abs(a * mapping[b] - b * mapping[a]) for b in mapping))
    return Normalized(model, normalized, mapping, unit, sum(mapping.values()), F, ())


def _rounded(model: Model, unit: int, check: bool = True) -> tuple[dict[int, int], Model]:
    """The cost map C -> ceil(C / unit) and the model in those units (`check`: validated; a
    rounded valid model is valid - a zero cost stays zero, no count grows - so the candidates
    of `auto_unit` skip it)."""
    mapping = {c: -(-c // unit) for c in cost_uses(model)}
    ops = [_normal_op(op, mapping, unit) for op in model.ops]
    cycles = {op.name: op.cycles for op in ops}
    edges = [_normal_edge(e, model, mapping, cycles) for e in model.edges]
    rounded = attrs.evolve(model, ops=ops, edges=edges)
    return mapping, check_model(rounded) if check else rounded


def auto_unit(model: Model, lower_bound: int, resolution: int = 64) -> int:
    """The unit that `choose_unit` picks (1: no scaling)."""
    return choose_unit(model, lower_bound, resolution)[0]


def choose_unit(model: Model, lower_bound: int, resolution: int = 64,
                max_inflation: float = MAX_INFLATION) -> tuple[int, str | None]:
    """The unit that leaves about `resolution` units in the lower bound on I (1: no scaling),
    placed where rounding costs least: among the units from 3/4 of lower_bound // resolution up
    to it, the one whose rounded model has the smallest lower bound in raw cycles (unit x its
    bound), the largest on a tie.  Rounding 256-cycle GEMMs up to 40-cycle units makes them
    280 cycles and the tensor-core bound 9% worse; 32-cycle units keep them exact.  At most
    CANDIDATES units are tried, evenly spaced from the top (the kernels have up to 33); each
    checks the run's deadline.

    A unit is taken only if its rounded bound is at most `max_inflation` x `lower_bound`
    (ResMII, computed for every candidate from the ops' reservation patterns, rules most out at
    once; the others get the whole bound).  When none of those units is, the unit is the
    largest finer one that is, found by bisection (rounding grows with the unit as a rule, not
    always: the answer is checked, not always the largest), or 1; with a note saying why."""
    top = max(1, lower_bound // resolution)
    low = max(1, 3 * top // 4)
    step = -(-(top - low + 1) // CANDIDATES)
    band = list(range(top, low - 1, -step))
    limit = max_inflation * lower_bound
    res_mii = _rounded_res_mii(model)
    whole: dict[int, int] = {}

    def rounded(u: int) -> int:
        """The lower bound of the model rounded to u-cycle units, in raw cycles."""
        if u not in whole:
            limits.check()
            whole[u] = u * bounds(_rounded(model, u, check=False)[1]).lower
        return whole[u]

    fit = [u for u in band if u * res_mii(u) <= limit]
    if fit:
        best = min(fit, key=lambda u: (rounded(u), -u))
        if rounded(best) <= limit:
            return best, None
    # Every unit of the band inflates the bound too much: the largest finer unit that does not.
    fits, fails = 1, band[-1]
    while True:
        while fails - fits > 1:
            mid = (fits + fails) // 2
            if mid * res_mii(mid) <= limit:
                fits = mid
            else:
                fails = mid
        if fits == 1 or rounded(fits) <= limit:
            break
        fits, fails = 1, fits
    coarse = f"{band[-1]}-{band[0]}-cycle units" if len(band) > 1 else f"{band[0]}-cycle units"
    over = (f"would raise the lower bound on I from {lower_bound} cycles to more than "
            f"{max_inflation:g}x (ops shorter than a unit round up to a whole one)")
    if fits == 1:
        return 1, f"costs not normalized: {coarse} {over}; kept in raw cycles"
    return fits, (f"costs normalized in {fits}-cycle units, finer than the {coarse} of the "
                  f"resolution asked for, which {over}; in {fits}-cycle units the bound is "
                  f"{rounded(fits)} cycles ({rounded(fits) / max(1, lower_bound):.2f}x)")


def _rounded_res_mii(model: Model) -> Callable[[int], int]:
    """ResMII of the model rounded to u-cycle units (`_rounded`), in units, as a function of
    u: each distinct (cycles, reservations) pattern rounded once (row c of an op goes to row
    c // u, the rows merged by the larger count, as `_normal_op` does), so that trying many
    units costs little on many ops."""
    patterns: dict[tuple[int, tuple[tuple[int, str, int], ...]], int] = defaultdict(int)
    for op in model.ops:
        patterns[(op.cycles, tuple(op.usage()))] += 1
    capacity = {f.name: f.capacity for f in model.machine.units}

    def res_mii(u: int) -> int:
        used: dict[str, int] = defaultdict(int)
        for (cycles, usage), count in patterns.items():
            last = max(1, -(-cycles // u)) - 1
            rows: dict[tuple[int, str], int] = {}
            for c, unit, n in usage:
                key = (min(c // u, last), unit)
                rows[key] = max(rows.get(key, 0), n)
            for (_, unit), n in rows.items():
                used[unit] += count * n
        return max((-(-n // capacity[f]) for f, n in used.items() if n and capacity[f] > 0),
                   default=0)

    return res_mii


def _pairs(raw: Model, normalized: Model) -> Iterable[tuple[str, int, int]]:
    """Every cost of the raw model beside its normalized value."""
    for a, b in zip(raw.ops, normalized.ops, strict=True):
        yield f"cycles of {a.name}", a.cycles, b.cycles
        yield f"spill cost of {a.name}", a.spill_cost, b.spill_cost
    for a, b in zip(raw.edges, normalized.edges, strict=True):
        yield f"delay {a.src} -> {a.dst}", a.delay, b.delay
        if a.is_data:
            yield f"hand-off {a.src} -> {a.dst}", a.handoff, b.handoff
            yield f"hand-off within a group {a.src} -> {a.dst}", a.handoff_local, b.handoff_local
            yield f"hold {a.src} -> {a.dst}", a.hold, b.hold


def _normal_op(op: Op, mapping: Mapping[int, int], scale: int) -> Op:
    cycles = max(1, mapping[op.cycles])
    spill = mapping[op.spill_cost] if op.spill_cost else 0
    uniform = op.uniform_use()
    if uniform and (op.cycles - 1) // scale >= cycles - 1:  # every row the same, and all kept
        return attrs.evolve(op, cycles=cycles, rrt=[uniform] * cycles, spill_cost=spill)
    rows: list[dict[str, int]] = [{} for _ in range(cycles)]
    for c, unit, n in op.usage():
        row = rows[min(c // scale, cycles - 1)]
        row[unit] = max(row.get(unit, 0), n)
    while rows and not rows[-1]:
        rows.pop()
    return attrs.evolve(op, cycles=cycles, rrt=rows, spill_cost=spill)


def _normal_edge(e: Edge, model: Model, mapping: Mapping[int, int],
                 cycles: Mapping[str, int]) -> Edge:
    def mapped(c: int) -> int:
        return mapping[c] if c and e.is_data else 0

    delay = cycles[e.src] if e.delay == model.op(e.src).cycles else \
        (mapping[e.delay] if e.delay else 0)
    # A hold lasts at most while its reader runs, in units too.
    hold = min(mapped(e.hold), cycles[e.dst])
    return attrs.evolve(e, delay=delay, handoff=mapped(e.handoff),
                        handoff_local=mapped(e.handoff_local), hold=hold)


def registry_solver(spec: str = "cbc") -> Solve:
    """A `solve` callable backed by the backend registered as `spec` (`family[:options]`)."""
    def solve(problem: Problem) -> Mapping[Var, int] | None:
        result = backend(spec).solve(problem, time_limit=limits.remaining())
        limits.check()  # a call stopped by the run's deadline is no answer
        return result.values if result.status.has_solution else None

    return solve
