"""Bounds on the initiation interval: ResMII, RecMII (exact maximum cycle ratio), search limits.

RecMII is the maximum over dependence cycles of total delay over total distance.  It is found
exactly, per strongly connected component, by cycle-ratio iteration: a positive-cycle test
(Bellman-Ford that stops at the first cycle of its predecessor graph) at the best ratio so far
finds a cycle of larger ratio, until none is left.  A cycle with distance 0 and positive delay
admits no schedule at any `I`; it is reported as an input error that names the cycle.  Everything
here is linear in the graph per Bellman-Ford round, and every round checks the run's deadline.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from fractions import Fraction

import attrs

from warpweave import limits
from warpweave.core.model import Edge, Model
from warpweave.errors import InputError

DEFAULT_STAGES_CAP = 32  # the kernels and the Meta graphs need 4-5


@attrs.frozen
class CycleRatio:
    """The critical dependence cycle: its edges, total delay and total distance."""

    edges: tuple[Edge, ...]
    delay: int
    distance: int

    @property
    def ratio(self) -> Fraction:
        return Fraction(self.delay, self.distance)

    def describe(self) -> str:
        names = [e.src for e in self.edges] + [self.edges[0].src]
        return " -> ".join(names)


@attrs.frozen
class Bounds:
    """Lower bounds on `I` and the limits the search works within."""

    res_mii: int
    res_unit: str | None
    rec_mii: int
    critical: CycleRatio | None
    min_length: int
    i_upper: int
    # A lower bound proven by another search (the streaming relaxation's: a model with fewer
    # constraints has no schedule below it, so neither has this one); 0 when there is none.
    proven: int = 0

    @property
    def lower(self) -> int:
        return max(1, self.res_mii, self.rec_mii, self.proven)

    def default_max_stages(self) -> int:
        """A stage bound: two stages beyond what the longest path needs at the lowest I.  (One
        is too few in practice: with it, fa3-fwd on h100 at 16 cycles per unit gets I = 68
        units, where four stages reach I = 64.)  At most DEFAULT_STAGES_CAP: every problem holds
        a copy of the loop body per stage, and a latency thousands of times the lower bound on I
        would otherwise ask for that many (the search then states the bound it used)."""
        return min(DEFAULT_STAGES_CAP, max(1, -(-self.min_length // self.lower)) + 2)


def res_mii(model: Model) -> tuple[int, str | None]:
    """max over units of ceil(total reservations / capacity), and the unit attaining it."""
    best, where = 0, None
    for unit in model.machine.units:
        used = sum(op.total_use(unit.name) for op in model.ops)
        if used and unit.capacity > 0:
            need = -(-used // unit.capacity)
            if need > best:
                best, where = need, unit.name
    return best, where


def _sccs(nodes: list[str], edges: list[Edge]) -> list[set[str]]:
    """Strongly connected components (iterative Tarjan)."""
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for e in edges:
        succ[e.src].append(e.dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    comps: list[set[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(succ[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.add(n)
                    if n == node:
                        break
                comps.append(comp)
    return comps


def _positive_cycle(nodes: set[str], edges: list[Edge], p: int, q: int) -> list[Edge] | None:
    """A cycle with sum(q*delay - p*distance) > 0, or None (Bellman-Ford, longest paths).

    After each round the predecessor graph is searched for a cycle: one there is a positive
    cycle (the standard lemma), so a positive cycle is found a round or two after its last edge
    is relaxed instead of after |nodes| rounds; without one the rounds stop when nothing
    changes.  Each round checks the run's deadline (`warpweave.limits`)."""
    dist = dict.fromkeys(nodes, 0)
    pred: dict[str, Edge] = {}
    weighted = [(e, e.src, e.dst, q * e.delay - p * e.distance) for e in edges]
    for _ in range(len(nodes)):
        limits.check()
        changed = False
        for e, u, v, w in weighted:
            if dist[u] + w > dist[v]:
                dist[v] = dist[u] + w
                pred[v] = e
                changed = True
        if not changed:
            return None
        if (cycle := _predecessor_cycle(pred)) is not None:
            return cycle
    return _predecessor_cycle(pred)  # still changing after |nodes| rounds: there is one


def _predecessor_cycle(pred: dict[str, Edge]) -> list[Edge] | None:
    """A cycle of the predecessor graph (each node has at most one predecessor edge), in edge
    order, or None; O(nodes)."""
    walked: dict[str, str] = {}  # node -> the start of the walk that reached it
    for start in pred:
        node = start
        while node in pred and node not in walked:
            walked[node] = start
            node = pred[node].src
        if walked.get(node) != start:
            continue  # reached a root, or a walk already searched
        cycle, cur = [], node
        while True:
            e = pred[cur]
            cycle.append(e)
            cur = e.src
            if cur == node:
                break
        cycle.reverse()
        return cycle
    return None


def _from_first_op(order: dict[str, int], cycle: list[Edge]) -> list[Edge]:
    """The cycle rotated to start at its op that comes first in the model (`order`: each op's
    place), for a stable report."""
    first = min(range(len(cycle)), key=lambda k: order[cycle[k].src])
    return cycle[first:] + cycle[:first]


def _components(nodes: list[str], edges: list[Edge]) -> list[tuple[set[str], list[Edge]]]:
    """Each strongly connected component with an edge inside it, and those edges: O(N + E)."""
    comps = _sccs(nodes, edges)
    where = {n: k for k, comp in enumerate(comps) for n in comp}
    inner: list[list[Edge]] = [[] for _ in comps]
    for e in edges:
        if where[e.src] == where[e.dst]:
            inner[where[e.src]].append(e)
    return [(comps[k], inner[k]) for k in range(len(comps)) if inner[k]]


def check_zero_distance_cycles(model: Model) -> None:
    """Raise an InputError naming a cycle of distance-0 edges with positive total delay."""
    zero = [e for e in model.edges if e.distance == 0]
    order = {name: k for k, name in enumerate(model.op_names)}
    for comp, inner in _components(model.op_names, zero):
        if cycle := _positive_cycle(comp, inner, 0, 1):
            cycle = _from_first_op(order, cycle)
            path = " -> ".join([e.src for e in cycle] + [cycle[0].src])
            delay = sum(e.delay for e in cycle)
            raise InputError(
                f"dependence cycle with distance 0 and delay {delay} admits no schedule: {path}",
                ("edges",))


def critical_cycle(model: Model) -> CycleRatio | None:
    """The dependence cycle of maximum delay/distance (None when the graph has no cycle).

    Per strongly connected component, cycle-ratio iteration: find a cycle of ratio above the
    best so far (a positive cycle of weights delay - ratio * distance), take its ratio, repeat
    until none is left.  Each step is exact (fractions), the ratio strictly grows, and the last
    cycle found is critical; in practice a few steps, where bisection to the precision that
    separates the ratios takes one Bellman-Ford run per bit."""
    check_zero_distance_cycles(model)  # every cycle with positive delay has positive distance
    order = {name: k for k, name in enumerate(model.op_names)}
    best: CycleRatio | None = None
    for comp, inner in _components(model.op_names, list(model.edges)):
        ratio, cycle = Fraction(0), None
        while found := _positive_cycle(comp, inner, ratio.numerator, ratio.denominator):
            cycle = found
            ratio = Fraction(sum(e.delay for e in found), sum(e.distance for e in found))
        if cycle is None:
            continue  # every cycle here has delay 0
        cycle = _from_first_op(order, cycle)
        found = CycleRatio(tuple(cycle), sum(e.delay for e in cycle),
                           sum(e.distance for e in cycle))
        if best is None or found.ratio > best.ratio:
            best = found
    return best


def min_length(model: Model) -> int:
    """Longest path over distance-0 edges, ending with the last op's cycles: a lower bound on L."""
    order = _topological(model)
    finish: dict[str, int] = {}
    start = {n: 0 for n in model.op_names}
    for name in order:
        for e in model.out_edges(name):
            if e.distance == 0 and e.dst != name:
                start[e.dst] = max(start[e.dst], start[name] + e.delay)
        finish[name] = start[name] + model.op(name).cycles
    return max(finish.values(), default=0)


def _topological(model: Model) -> list[str]:
    """Ops in an order compatible with distance-0 edges (zero-delay cycles broken arbitrarily)."""
    indeg = {n: 0 for n in model.op_names}
    zero = [e for e in model.edges if e.distance == 0 and e.src != e.dst]
    for e in zero:
        indeg[e.dst] += 1
    ready = [n for n in model.op_names if indeg[n] == 0]
    order: list[str] = []
    seen: set[str] = set()
    unseen = iter(model.op_names)  # where to look for an op to break a cycle with
    while len(order) < len(indeg):
        if not ready:  # a zero-delay cycle: take any remaining op
            ready = [next(n for n in unseen if n not in seen)]
        n = ready.pop()
        if n in seen:
            continue
        seen.add(n)
        order.append(n)
        for e in model.out_edges(n):
            if e.distance == 0 and e.src != e.dst and e.dst not in seen:
                indeg[e.dst] -= 1
                if indeg[e.dst] <= 0:
                    ready.append(e.dst)
    return order


def i_upper(model: Model) -> int:
    """An `I` beyond which larger `I` cannot help: feasible at I > this implies feasible at I - 1.

    Give each op the extent `ext(v) = max(1, cycles(v), max over out-edges of delay (+ the
    larger hand-off for data edges))` and let `E = sum ext(v)`.  At any `I > E` some modular slot
    `r` lies in no op's extent.  Deleting time `r` from every block of `I` cycles maps a valid
    schedule at `I` to one at `I - 1` with the same number of stages: every event keeps its
    order, no op interval or
    dependence window contains a deleted cycle, so capacity slots, lifetimes, occupancy and every
    `M(v) + delta*I - M(u) >= d + x` are preserved.  Hence if no `I <= E` is feasible, none is.
    """
    total = 0
    for op in model.ops:
        reach = [e.delay + (max(e.handoff, e.handoff_local) if e.is_data else 0)
                 for e in model.out_edges(op.name)]
        total += max([1, op.cycles, *reach])
    return total


def bounds(model: Model, rules: Collection[str] | None = None) -> Bounds:
    """All the bounds of a model; raises InputError for a zero-distance positive cycle.

    With `rules` (the names of the constraints in force), a bound is only claimed where the
    constraint it rests on is among them: ResMII needs capacity, RecMII and the longest path need
    dependence, a length bound needs completion.
    """
    def on(name: str) -> bool:
        return rules is None or name in rules

    rmii, unit = res_mii(model) if on("capacity") else (0, None)
    crit = critical_cycle(model) if on("dependence") else None
    rec = math.ceil(crit.ratio) if crit else 0
    if not on("completion"):
        length = 1
    elif on("dependence"):
        length = min_length(model)
    else:
        length = max(op.cycles for op in model.ops)
    return Bounds(res_mii=rmii, res_unit=unit, rec_mii=rec, critical=crit,
                  min_length=length, i_upper=max(i_upper(model), 1))


def start_windows(model: Model, I: int, L: int,  # noqa: E741
                  edges: bool = True) -> dict[str, tuple[int, int]] | None:
    """The range [lo, hi] each start time M(v) can take at (I, L), or None if some range is empty.

    Completion alone gives [0, L - cycles(v)].  With `edges`, every edge's dependence
    M(v) - M(u) >= d - delta*I narrows the ranges (longest paths forward and backward); a positive
    cycle at this I (I < RecMII) leaves no range.  Spill costs are not used: they depend on groups.
    """
    lo = {op.name: 0 for op in model.ops}
    hi = {op.name: L - op.cycles for op in model.ops}
    # Edges in the order of the distance-0 graph: each round pushes `lo` forward along them and
    # `hi` backward against them, so an acyclic graph settles in one round, not one per op.
    place = {name: k for k, name in enumerate(_topological(model))}
    weighted = sorted(((place[e.src], e.src, e.dst, e.delay - e.distance * I)
                       for e in model.edges), key=lambda x: x[0]) if edges else []
    for _ in range(len(lo) + 1):
        limits.check()
        changed = False
        for _, u, v, w in weighted:
            if lo[u] + w > lo[v]:
                lo[v], changed = lo[u] + w, True
        for _, u, v, w in reversed(weighted):
            if hi[v] - w < hi[u]:
                hi[u], changed = hi[v] - w, True
        if not changed:
            break
        if any(lo[v] > hi[v] for v in lo):
            return None
    else:
        return None
    if any(lo[v] > hi[v] for v in lo):
        return None
    return {v: (lo[v], hi[v]) for v in lo}
