"""Rau's iterative modulo scheduling (MICRO-27, 1994) at a fixed I and warp-group assignment.

Ops are taken highest `HeightR` first; each goes to the first cycle in [Estart, Estart + I) free in
the modulo reservation table (multi-row tables, unit capacities) and in its group's issue (rule 9),
where Estart follows from the scheduled predecessors with edge delay d - distance*I, plus the
producer's spill cost on a data edge between groups (rule 1).  When no cycle is free the op is
forced in (at Estart, or one past its previous time) and every op it conflicts with is evicted:
units, group occupancy, and scheduled successors whose dependence it now breaks.  A budget of
scheduling steps bounds the work.  A stage bound caps every start: M(v) + cycles(v) <= S_max*I.

The scheduler states the rules it can see locally; liveness-based limits (memory, registers) are
left to the verifier, with `sink` as the lever that shortens lifetimes.
"""

from __future__ import annotations

import heapq
import random
from collections import defaultdict
from collections.abc import Mapping

import attrs

from warpweave.core.model import Model


@attrs.frozen
class Placement:
    """The outcome of one IMS run: start times (None on failure), steps spent, why it failed."""

    start: dict[str, int] | None
    steps: int
    why: str | None = None


class ModuloScheduler:
    """IMS state for one (model, I, assignment): the reservation table, group occupancy, times.

    `capacity`, `spill` and `concurrency` say which of those rules to honour (the caller's rule
    set); dependences are always honoured.  With `jitter`, each priority is raised by a random
    amount below I: another order to try when the plain one fails.
    """

    def __init__(self, model: Model, I: int, group: Mapping[str, str], *,  # noqa: E741
                 max_stages: int, capacity: bool = True, spill: bool = True,
                 concurrency: bool = True, jitter: random.Random | None = None):
        self.model, self.I, self.group = model, I, dict(group)
        self.names = model.op_names
        self.order = {v: k for k, v in enumerate(self.names)}
        self.cap = {u.name: u.capacity for u in model.machine.units}
        self.stages = max_stages
        self.latest = {op.name: max_stages * I - op.cycles for op in model.ops}
        self.occ = {op.name: 1 if op.is_async else op.cycles for op in model.ops}
        # Reservations folded onto slots: (unit, c mod I, count), one entry per (unit, slot).
        self.usage: dict[str, list[tuple[str, int, int]]] = {}
        for op in model.ops:
            folded: dict[tuple[str, int], int] = defaultdict(int)
            if capacity:
                for c, unit, n in op.usage():
                    folded[(unit, c % I)] += n
            self.usage[op.name] = [(u, off, n) for (u, off), n in folded.items()]
        # Edges as (other end, gap): M(dst) - M(src) >= gap, self-loops left out (I >= RecMII).
        self.succ: dict[str, list[tuple[str, int]]] = {v: [] for v in self.names}
        self.pred: dict[str, list[tuple[str, int]]] = {v: [] for v in self.names}
        for e in model.edges:
            if e.src == e.dst:
                continue
            gap = e.delay - e.distance * I
            if spill and e.is_data and self.group[e.src] != self.group[e.dst]:
                gap += model.op(e.src).spill_cost
            self.succ[e.src].append((e.dst, gap))
            self.pred[e.dst].append((e.src, gap))
        self.trigger = {v: False for v in self.names}
        if concurrency:
            for e in model.edges:
                if e.blocking or (e.is_data and self.group[e.src] != self.group[e.dst]):
                    self.trigger[e.dst] = True
        self.height = self._heights()
        self.priority: dict[str, float] = dict(self.height or {})
        if jitter is not None and self.height is not None:
            for v in self.names:
                self.priority[v] += jitter.random() * I
        self.start: dict[str, int] = {}
        self.used = {u: [0] * I for u in self.cap}  # unit -> slot -> units held
        self.holders: dict[str, list[dict[str, int]]] = {  # unit -> slot -> {op: units}
            u: [{} for _ in range(I)] for u in self.cap}
        self.members: dict[str, dict[str, None]] = defaultdict(dict)  # group -> scheduled ops
        self.waiters: dict[str, dict[str, None]] = defaultdict(dict)  # ... that are triggers
        self.busy = {g: [0] * I for g in set(self.group.values())}
        self.issue = {g: [0] * I for g in set(self.group.values())}

    # -- static checks ---------------------------------------------------------------------------

    def unfit(self) -> str | None:
        """Why no start times exist at this I for any assignment, or None: an op's reservations
        collide with themselves, or it is longer than the stage bound allows."""
        for op in self.model.ops:
            for unit, slot, n in self.usage[op.name]:
                if n > self.cap[unit]:
                    return (f"{op.name} needs {n} x {unit} in slot {slot} of I={self.I} "
                            f"(capacity {self.cap[unit]})")
            if self.latest[op.name] < 0:
                return f"{op.name} ({op.cycles} cycles) does not fit {self.stages} stages"
        return None

    def _heights(self) -> dict[str, int] | None:
        """Rau's HeightR: the longest path (gaps, then the op's own cycles) to the loop end.
        None if a cycle has positive total gap (spills on a recurrence at this I)."""
        h = {op.name: op.cycles for op in self.model.ops}
        for _ in range(len(h) + 1):
            changed = False
            for v in self.names:
                for s, gap in self.succ[v]:
                    if h[s] + gap > h[v]:
                        h[v], changed = h[s] + gap, True
            if not changed:
                return h
        return None

    # -- conflicts -------------------------------------------------------------------------------

    def _resource_free(self, v: str, t: int) -> bool:
        I, used, cap = self.I, self.used, self.cap  # noqa: E741
        for unit, off, n in self.usage[v]:
            if used[unit][(t + off) % I] + n > cap[unit]:
                return False
        return True

    # Rule 9 is checked modulo I: some copy of o (issued at `to` in copy 0) occupies the group at
    # t iff (t - to) mod I < occ(o).  The verifier looks only at the copies Q holds, so this is
    # slightly stricter, never looser, and it fits in two tables per group: `busy[g][slot]` (ops
    # occupying the slot) and `issue[g][slot]` (waiting ops issuing in it).

    def _group_free(self, v: str, t: int) -> bool:
        g, I = self.group[v], self.I  # noqa: E741
        if self.trigger[v] and self.busy[g][t % I]:
            return False
        issue = self.issue[g]
        return not any(issue[(t + c) % I] for c in range(min(self.occ[v], I)))

    def _clash(self, v: str, t: int, o: str, to: int) -> bool:
        return (self.trigger[v] and (t - to) % self.I < self.occ[o]) or \
            (self.trigger[o] and (to - t) % self.I < self.occ[v])

    def _group_conflicts(self, v: str, t: int) -> list[str]:
        """Scheduled ops of v's group that rule 9 forbids next to v at t (only pairs where one
        of the two waits on a sync can clash)."""
        g = self.group[v]
        return [o for o in (self.members[g] if self.trigger[v] else self.waiters[g])
                if o != v and self._clash(v, t, o, self.start[o])]

    # -- placing and evicting --------------------------------------------------------------------

    def _place(self, v: str, t: int) -> None:
        self.start[v] = t
        for unit, off, n in self.usage[v]:
            slot = (t + off) % self.I
            self.used[unit][slot] += n
            self.holders[unit][slot][v] = n
        self._occupy(v, t, 1)

    def _remove(self, v: str) -> None:
        t = self.start.pop(v)
        for unit, off, n in self.usage[v]:
            slot = (t + off) % self.I
            self.used[unit][slot] -= n
            del self.holders[unit][slot][v]
        self._occupy(v, t, -1)

    def _occupy(self, v: str, t: int, sign: int) -> None:
        """Enter (sign 1) or leave (-1) v's group tables."""
        g, I = self.group[v], self.I  # noqa: E741
        if sign > 0:
            self.members[g][v] = None
            if self.trigger[v]:
                self.waiters[g][v] = None
        else:
            del self.members[g][v]
            self.waiters[g].pop(v, None)
        for c in range(min(self.occ[v], I)):
            self.busy[g][(t + c) % I] += sign
        if self.trigger[v]:
            self.issue[g][t % I] += sign

    def _evictions(self, v: str, t: int) -> list[str]:
        """The scheduled ops that must leave for v to start at t (lowest priority first)."""
        out: set[str] = set(self._group_conflicts(v, t))
        out.update(s for s, gap in self.succ[v] if s in self.start and self.start[s] - t < gap)
        for unit, off, n in self.usage[v]:
            slot = (t + off) % self.I
            over = self.used[unit][slot] + n - self.cap[unit]
            if over <= 0:
                continue
            held = self.holders[unit][slot]
            over -= sum(held[o] for o in out if o in held)
            for o in sorted(held, key=self._rank, reverse=True):
                if over <= 0:
                    break
                if o not in out:
                    out.add(o)
                    over -= held[o]
        return sorted(out, key=self._rank)

    def _displaced(self, v: str, t: int) -> int:
        """About how many ops v would evict at t (what `_evictions` finds, counted from the
        tables: units over capacity, group occupants, waiting ops it covers, successors)."""
        I, g, used, cap = self.I, self.group[v], self.used, self.cap  # noqa: E741
        n = 0
        for unit, off, k in self.usage[v]:
            over = used[unit][(t + off) % I] + k - cap[unit]
            if over > 0:
                n += over
        if self.trigger[v]:
            n += self.busy[g][t % I]
        issue = self.issue[g]
        for c in range(min(self.occ[v], I)):
            n += issue[(t + c) % I]
        start = self.start
        for s, gap in self.succ[v]:
            if s in start and start[s] - t < gap:
                n += 1
        return n

    def _rank(self, v: str) -> tuple[int, int]:
        """Priority order: greater height (maybe jittered) first, then model order."""
        return (-self.priority[v], self.order[v])

    def _estart(self, v: str) -> int:
        return max([0, *(self.start[u] + gap for u, gap in self.pred[v] if u in self.start)])

    def run(self, budget: int) -> Placement:
        """Schedule every op within `budget` steps; start times shifted so the earliest is 0."""
        why = self.unfit()
        if why is None and self.height is None:
            why = f"a dependence cycle through cross-group spills needs I > {self.I}"
        if why:
            return Placement(None, 0, why)
        queue = [(self._rank(v), v) for v in self.names]
        heapq.heapify(queue)
        previous: dict[str, int] = {}
        steps = 0
        while queue:
            if steps >= budget:
                left = len(self.names) - len(self.start)
                return Placement(None, steps, f"budget of {budget} scheduling steps spent "
                                 f"with {left} ops unscheduled")
            _, v = heapq.heappop(queue)
            if v in self.start:
                continue
            steps += 1
            estart = self._estart(v)
            if estart > self.latest[v]:
                return Placement(None, steps, f"{v} cannot start by cycle {self.latest[v]} "
                                 f"({self.stages} stages)")
            top = min(estart + self.I - 1, self.latest[v])
            t = next((t for t in range(estart, top + 1)
                      if self._resource_free(v, t) and self._group_free(v, t)), None)
            if t is None:  # forced: from Estart, or one past where it was last time, to the
                # cycle within I that evicts the fewest ops
                lo = previous[v] + 1 if v in previous and estart <= previous[v] < self.latest[v] \
                    else estart
                t = min(range(lo, min(lo + self.I - 1, self.latest[v]) + 1),
                        key=lambda t: (self._displaced(v, t), t))
            for o in self._evictions(v, t):  # successors it now comes too close to, and
                self._remove(o)              # when forced, whatever holds its slots
                heapq.heappush(queue, (self._rank(o), o))
            self._place(v, t)
            previous[v] = t
        low = min(self.start.values())
        return Placement({v: self.start[v] - low for v in self.names}, steps)

    # -- lifetime shortening ---------------------------------------------------------------------

    def sink(self, weight: Mapping[str, float]) -> dict[str, int]:
        """Move ops later, lowest height first, where that lowers the weighted lifetimes of the
        values they produce and read, keeping the length, the dependences and every slot free.
        `weight[v]` is the cost per cycle of v's value being live.  Call after a full `run`."""
        length = max(self.start[op.name] + op.cycles for op in self.model.ops)
        uses: dict[str, list[tuple[str, int]]] = {v: [] for v in self.names}  # value -> (use, +)
        for e in self.model.edges:
            if e.is_data:
                uses[e.src].append((e.dst, e.distance * self.I))
        readers: dict[str, list[str]] = defaultdict(list)
        for v, us in uses.items():
            for u, _ in us:
                if u != v:
                    readers[u].append(v)

        def cost(v: str, t: int) -> float:
            """The lifetime cost of v's value and its inputs' values with v at t."""
            def end(x: str) -> int:
                return max(((t if u == v else self.start[u]) + plus for u, plus in uses[x]),
                           default=None)
            total = 0.0
            for x in {v, *readers[v]}:
                e = end(x)
                if e is not None:
                    total += weight[x] * (e - (t if x == v else self.start[x]))
            return total

        for v in sorted(self.names, key=lambda v: (self.height[v], -self.order[v])):
            here = self.start[v]
            bound = min([length - self.model.op(v).cycles, self.latest[v],
                         *(self.start[s] - gap for s, gap in self.succ[v])])
            if bound <= here:
                continue
            self._remove(v)
            best, best_cost = here, cost(v, here)
            for t in range(here + 1, bound + 1):
                c = cost(v, t)
                if c < best_cost and self._resource_free(v, t) and \
                        self._group_free(v, t):
                    best, best_cost = t, c
            self._place(v, best)
        low = min(self.start.values())
        return {v: self.start[v] - low for v in self.names}
