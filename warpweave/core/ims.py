"""Rau's iterative modulo scheduling (MICRO-27, 1994) at a fixed I and warp-group assignment.

Ops are taken highest `HeightR` first; each goes to the first cycle in [Estart, Estart + I) free in
the modulo reservation table (multi-row tables, unit capacities) and in its group's issue (rule 9),
where Estart follows from the scheduled predecessors with edge delay d - distance*I, plus the
producer's spill cost on a data edge between groups (rule 1).  When no cycle is free the op is
forced in - from Estart, or one past its previous time, at the cycle within I that displaces the
fewest ops - and every op it conflicts with is evicted: unit holders, group occupants, and
scheduled successors whose dependence it now breaks.  A budget of scheduling steps bounds the
work.  A stage bound caps every start: M(v) + cycles(v) <= S_max*I.

Costs may be raw cycles (I in the thousands, ops holding a unit for hundreds of cycles), so an
op's reservations are kept as runs of slots, and each step computes, for every slot at once, how
much placing the op there would collide (difference arrays over the placed runs), instead of
testing one candidate cycle at a time.  The placed ops are also indexed by the modulo slot where
each of their reservation runs starts and where they issue, so that finding what a placement
collides with looks at the slots near it, not at every placed op (a step over all of them made
a run on 10,000 ops quadratic: 50 million pair tests).  Every step checks the run's deadline
(`warpweave.limits`): a time limit or Ctrl-C stops a run on a large model between two steps.

The scheduler states the rules it can see locally; liveness-based limits (memory, registers) are
left to the verifier, with `sink` as the lever that shortens lifetimes.
"""

from __future__ import annotations

import heapq
import random
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterator, Mapping
from itertools import accumulate

import attrs

from warpweave import limits
from warpweave.core.bounds import _topological
from warpweave.core.model import Model

Run = tuple[str, int, int, int]  # (unit, first slot offset, length, count), within [0, I)


@attrs.frozen
class Placement:
    """The outcome of one IMS run: start times (None on failure), steps spent, why it failed,
    and on failure the ops in trouble (the one that could not be placed, the most evicted)."""

    start: dict[str, int] | None
    steps: int
    why: str | None = None
    troubled: tuple[str, ...] = ()


def folded_runs(model: Model, I: int) -> dict[str, list[Run]]:  # noqa: E741
    """Each op's reservations folded modulo I, as runs of consecutive slot offsets holding the
    same count of a unit (an op longer than I lands on some slots more than once).  The work
    is in the op's reserved cycles, not in I (tables of thousands of slots, ops of a few)."""
    out = {}
    for op in model.ops:
        per_unit: dict[str, dict[int, int]] = {}
        for c, unit, n in op.usage():
            counts = per_unit.setdefault(unit, {})
            counts[c % I] = counts.get(c % I, 0) + n
        runs: list[Run] = []
        for unit, counts in per_unit.items():
            first = len(runs)
            for s in sorted(counts):
                n = counts[s]
                if not n:
                    continue
                if len(runs) > first and runs[-1][1] + runs[-1][2] == s and runs[-1][3] == n:
                    runs[-1] = (unit, runs[-1][1], runs[-1][2] + 1, n)
                else:
                    runs.append((unit, s, 1, n))
        out[op.name] = runs
    return out


def data_uses(model: Model, I: int  # noqa: E741
              ) -> tuple[dict[str, list[tuple[str, int]]], dict[str, list[str]]]:
    """Each value's data uses as (reader, distance*I + hold: when, after the reader's copy 0
    issues, it is done reading), and each op's inputs (the other values it reads): what a
    value's lifetime in cycles is made of."""
    uses: dict[str, list[tuple[str, int]]] = {v: [] for v in model.op_names}
    for e in model.edges:
        if e.is_data:
            uses[e.src].append((e.dst, e.distance * I + e.hold))
    inputs: dict[str, list[str]] = {v: [] for v in model.op_names}
    for x, us in uses.items():
        for u, _ in us:
            if u != x and x not in inputs[u]:
                inputs[u].append(x)
    return uses, inputs


def _add_cyclic(diff: list[int], first: int, length: int, amount: int) -> None:
    """Add `amount` over `length` slots from `first`, modulo len(diff) - 1, in a difference
    array (prefix sums give the per-slot totals)."""
    I = len(diff) - 1  # noqa: E741
    if length >= I:
        diff[0] += amount
        diff[I] -= amount
        return
    first %= I
    end = first + length
    diff[first] += amount
    if end <= I:
        diff[end] -= amount
    else:
        diff[I] -= amount
        diff[0] += amount
        diff[end - I] -= amount


def _unindex(index: dict[int, dict[str, None]], slot: int, v: str) -> None:
    """Take v out of a slot index, dropping the slot when it empties."""
    ops = index.get(slot)
    if ops is not None:
        ops.pop(v, None)
        if not ops:
            del index[slot]


class ModuloScheduler:
    """IMS state for one (model, I, assignment): the reservation table, group occupancy, times.

    `runs` are the reservations folded at this I (`folded_runs`; None: units are not checked);
    `spill` and `concurrency` say whether to honour those rules; dependences always are.  With
    `jitter`, each priority is raised by a random amount below I: another order to try when the
    plain one fails.
    """

    def __init__(self, model: Model, I: int, group: Mapping[str, str], *,  # noqa: E741
                 max_stages: int, runs: Mapping[str, list[Run]] | None = None,
                 spill: bool = True, concurrency: bool = True,
                 jitter: random.Random | None = None):
        self.model, self.I, self.group = model, I, dict(group)
        self.names = model.op_names
        self.order = {v: k for k, v in enumerate(self.names)}
        self.cap = {u.name: u.capacity for u in model.machine.units}
        self.stages = max_stages
        self.latest = {op.name: max_stages * I - op.cycles for op in model.ops}
        self.occ = {op.name: min(I, 1 if op.is_async else op.cycles) for op in model.ops}
        self.runs = runs if runs is not None else {v: [] for v in self.names}
        # Edges as (other end, gap): M(dst) - M(src) >= gap, self-loops left out (I >= RecMII).
        self.succ: dict[str, list[tuple[str, int]]] = {v: [] for v in self.names}
        self.pred: dict[str, list[tuple[str, int]]] = {v: [] for v in self.names}
        for e in model.edges:
            if e.src == e.dst:
                continue
            gap = e.delay - e.distance * I
            if spill and e.is_data:
                same = self.group[e.src] == self.group[e.dst]
                gap += e.handoff_local if same else e.handoff
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
        self.used = {u: [0] * I for u, c in self.cap.items() if c > 1}  # slot -> units held
        self.spans: dict[str, dict[str, list[tuple[int, int, int]]]] = {  # unit -> op -> slots
            u: {} for u in self.cap}
        self.members: dict[str, dict[str, None]] = defaultdict(dict)  # group -> scheduled ops
        # Indexes of the placed ops by modulo slot: per unit, where each of their runs starts;
        # per group, where they issue.  With the longest run (per unit) and occupancy (per
        # group), they give the few slots where an op colliding with a placement can be.
        self.run_at: dict[str, dict[int, dict[str, None]]] = {u: {} for u in self.cap}
        self.longest = dict.fromkeys(self.cap, 0)
        for runs_of in self.runs.values():
            for unit, _, length, _ in runs_of:
                self.longest[unit] = max(self.longest[unit], length)
        self.issued_at: dict[str, dict[int, dict[str, None]]] = defaultdict(dict)
        self.longest_occ: dict[str, int] = defaultdict(int)
        for v, g in self.group.items():
            self.longest_occ[g] = max(self.longest_occ[g], self.occ[v])
        # Rule 9 is checked modulo I: a copy of o (issued at `to` in copy 0) occupies the group at
        # t iff (t - to) mod I < occ(o).  The verifier looks only at the copies Q holds, so this
        # is slightly stricter, never looser.  Per group: the slots where waiting ops issue.
        self.issue: dict[str, dict[int, int]] = {g: {} for g in set(self.group.values())}

    # -- static checks ---------------------------------------------------------------------------

    def unfit(self) -> str | None:
        """Why no start times exist at this I for any assignment, or None: an op's reservations
        collide with themselves, or it is longer than the stage bound allows."""
        for op in self.model.ops:
            for unit, slot, _, n in self.runs[op.name]:
                if n > self.cap[unit]:
                    return (f"{op.name} needs {n} x {unit} in slot {slot} of I={self.I} "
                            f"(capacity {self.cap[unit]})")
            if self.latest[op.name] < 0:
                return f"{op.name} ({op.cycles} cycles) does not fit {self.stages} stages"
        return None

    def _heights(self) -> dict[str, int] | None:
        """Rau's HeightR: the longest path (gaps, then the op's own cycles) to the loop end.
        None if a cycle has positive total gap (spills on a recurrence at this I).  Ops are
        relaxed successors first (the distance-0 edges' order reversed), so that an acyclic
        graph settles in one round, not in one per op (a 10,000-op chain in model order took
        10,000 rounds, 65 s); the fixed point, and so the heights, do not depend on the order."""
        h = {op.name: op.cycles for op in self.model.ops}
        order = _topological(self.model)[::-1]
        for _ in range(len(h) + 1):
            limits.check()
            changed = False
            for v in order:
                for s, gap in self.succ[v]:
                    if h[s] + gap > h[v]:
                        h[v], changed = h[s] + gap, True
            if not changed:
                return h
        return None

    # -- conflicts -------------------------------------------------------------------------------

    def _collisions(self, v: str) -> list[int]:
        """For each slot r, how much starting v at a cycle = r (mod I) collides: ops holding a
        unit of capacity 1 that v needs, units of more capacity over it, ops occupying the group
        when v waits, waiting ops whose issue v would cover.  0 means free."""
        I = self.I  # noqa: E741
        diff = [0] * (I + 1)
        for unit, off, length, n in self.runs[v]:
            if self.cap[unit] == 1:  # any overlap is one op too many
                for spans in self.spans[unit].values():
                    for a, la, _ in spans:  # starts t with [t + off, +length) meeting [a, +la)
                        _add_cyclic(diff, a - off - length + 1, la + length - 1, 1)
                continue
            limit, used, s = self.cap[unit] - n, self.used[unit], 0
            while s < I:  # runs of slots over the limit by the same amount
                x = used[s] - limit
                e = s + 1
                while e < I and used[e] - limit == x:
                    e += 1
                if x > 0:
                    _add_cyclic(diff, s - off - length + 1, e - s + length - 1, x)
                s = e
        g, occ = self.group[v], self.occ[v]
        for s, k in self.issue[g].items():
            if k:  # starts t with s in [t, t + occ(v))
                _add_cyclic(diff, s - occ + 1, occ, k)
        if self.trigger[v]:
            for o in self.members[g]:
                _add_cyclic(diff, self.start[o], self.occ[o], 1)
        return list(accumulate(diff[:-1]))

    def _against(self, v: str, o: str) -> tuple[list[int], int]:
        """Where v would get in the scheduled o's way: per slot (nonzero: a shared unit over
        capacity, or rule 9 on their group), and the latest start before v comes too close to o
        as its successor (pairwise: third ops are ignored)."""
        I, to = self.I, self.start[o]  # noqa: E741
        diff = [0] * (I + 1)
        if self.group[v] == self.group[o]:
            if self.trigger[v]:
                _add_cyclic(diff, to, self.occ[o], 1)
            if self.trigger[o]:
                _add_cyclic(diff, to - self.occ[v] + 1, self.occ[v], 1)
        for unit, off, length, n in self.runs[v]:
            for unit2, off2, length2, n2 in self.runs[o]:
                if unit == unit2 and n + n2 > self.cap[unit]:
                    _add_cyclic(diff, to + off2 - off - length + 1, length2 + length - 1, 1)
        last = min([to - gap for s, gap in self.succ[v] if s == o], default=None)
        return list(accumulate(diff[:-1])), last if last is not None else 10 ** 18

    def _clash(self, v: str, t: int, o: str, to: int) -> bool:
        """Rule 9 between v at t and o at `to` on one group, modulo I."""
        return (self.trigger[v] and (t - to) % self.I < self.occ[o]) or \
            (self.trigger[o] and (to - t) % self.I < self.occ[v])

    def _late_successors(self, v: str, t: int) -> list[str]:
        return [s for s, gap in self.succ[v] if s in self.start and self.start[s] - t < gap]

    # -- placing and evicting --------------------------------------------------------------------

    def _place(self, v: str, t: int, sign: int = 1) -> None:
        """Enter v at t into the tables (sign -1: take it out)."""
        I = self.I  # noqa: E741
        for unit, off, length, n in self.runs[v]:
            a = (t + off) % I
            if sign > 0:
                self.spans[unit].setdefault(v, []).append((a, length, n))
                self.run_at[unit].setdefault(a, {})[v] = None
            else:
                for b, _, _ in self.spans[unit].pop(v, ()):
                    _unindex(self.run_at[unit], b, v)
            if self.cap[unit] > 1:
                used, d = self.used[unit], sign * n
                for lo, hi in ((a, min(a + length, I)), (0, a + length - I)):
                    if hi > lo:
                        used[lo:hi] = [x + d for x in used[lo:hi]]
        g = self.group[v]
        if sign > 0:
            self.start[v] = t
            self.members[g][v] = None
            self.issued_at[g].setdefault(t % I, {})[v] = None
        else:
            del self.start[v]
            del self.members[g][v]
            _unindex(self.issued_at[g], t % I, v)
        if self.trigger[v]:
            self.issue[g][t % I] = self.issue[g].get(t % I, 0) + sign

    def _remove(self, v: str) -> None:
        self._place(v, self.start[v], -1)

    def _near(self, index: Mapping[int, Mapping[str, None]], first: int, count: int
              ) -> Iterator[str]:
        """The ops `index` holds at slots first .. first + count - 1 (mod I); all it holds when
        that window has as many slots as the index (the caller tests each op exactly)."""
        if count >= min(self.I, len(index)):
            for ops in index.values():
                yield from ops
            return
        for k in range(first, first + count):
            yield from index.get(k % self.I, ())

    def _evictions(self, v: str, t: int) -> list[str]:
        """The scheduled ops that must leave for v to start at t (lowest priority first)."""
        I, g = self.I, self.group[v]  # noqa: E741
        # Rule 9: an op issuing within occ(v) from t, or (v waiting) one occupying the group at
        # t, which issued at most its occupancy before.
        occ, before = self.occ[v], self.longest_occ[g] - 1 if self.trigger[v] else 0
        out = {o: None for o in self._near(self.issued_at[g], t - before, before + occ)
               if self._clash(v, t, o, self.start[o])}
        out.update(dict.fromkeys(self._late_successors(v, t)))
        for unit, off, length, n in self.runs[v]:
            a = (t + off) % I
            held = self.spans[unit]
            # The holders of a run that may meet [a, a + length): those starting at most the
            # longest run before a.
            near = dict.fromkeys(self._near(self.run_at[unit], a - self.longest[unit] + 1,
                                            self.longest[unit] + length - 1))
            if self.cap[unit] == 1:
                out.update((o, None) for o in near if o != v and any(
                    (b - a) % I < length or (a - b) % I < lb for b, lb, _ in held[o]))
                continue
            excess = {}
            for j in range(length):
                s = (a + j) % I
                if self.used[unit][s] + n > self.cap[unit]:
                    excess[s] = self.used[unit][s] + n - self.cap[unit]
            if not excess:
                continue
            # Holders already leaving free their slots first, then the lowest priority go.
            lowest_first = sorted(near, key=self._rank, reverse=True)
            for o in sorted(lowest_first, key=lambda o: o not in out):
                if not any(x > 0 for x in excess.values()):
                    break
                hits = [(s, m) for b, lb, m in held[o] for s in excess
                        if excess[s] > 0 and (s - b) % I < lb]
                if hits:
                    out[o] = None
                    for s, m in hits:
                        excess[s] -= m
        return sorted(out, key=self._rank)

    def _forced(self, v: str, collide: list[int], lo: int, evictor: str | None) -> int:
        """Where v goes when no cycle is free: in [lo, lo + I), the cycle that displaces the
        fewest ops, sparing the op that last evicted v where it can (two ops evicting each other
        one cycle further each time keep their offset and never settle)."""
        I = self.I  # noqa: E741
        thresholds = sorted(self.start[s] - gap for s, gap in self.succ[v] if s in self.start)
        mask, last = self._against(v, evictor) if evictor is not None else ([0] * I, 10 ** 18)
        best, best_key = lo, None
        for t in range(lo, min(lo + I - 1, self.latest[v]) + 1):
            key = (bool(mask[t % I]) or t > last, collide[t % I] + bisect_left(thresholds, t))
            if best_key is None or key < best_key:
                best, best_key = t, key
        return best

    def _rank(self, v: str) -> tuple[float, int]:
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
        I = self.I  # noqa: E741
        queue = [(self._rank(v), v) for v in self.names]
        heapq.heapify(queue)
        previous: dict[str, int] = {}
        evictor: dict[str, str] = {}  # op -> the op that last evicted it
        evicted: dict[str, int] = defaultdict(int)  # op -> times evicted

        def trouble(*first: str) -> tuple[str, ...]:
            most = sorted(evicted, key=lambda o: (-evicted[o], self.order[o]))[:3]
            return tuple(dict.fromkeys([*first, *most]))

        steps = 0
        while queue:
            if steps >= budget:
                left = len(self.names) - len(self.start)
                return Placement(None, steps, f"budget of {budget} scheduling steps spent "
                                 f"with {left} ops unscheduled", trouble())
            _, v = heapq.heappop(queue)
            if v in self.start:
                continue
            limits.check()
            steps += 1
            estart = self._estart(v)
            if estart > self.latest[v]:
                return Placement(None, steps, f"{v} cannot start by cycle {self.latest[v]} "
                                 f"({self.stages} stages)", trouble(v))
            collide = self._collisions(v)
            top = min(estart + I - 1, self.latest[v])
            t = next((t for t in range(estart, top + 1) if not collide[t % I]), None)
            if t is None:  # forced: from Estart, or one past where it was last time
                lo = previous[v] + 1 if v in previous and estart <= previous[v] < self.latest[v] \
                    else estart
                e = evictor.get(v)
                t = self._forced(v, collide, lo, e if e in self.start else None)
            for o in self._evictions(v, t):  # successors it now comes too close to, and
                self._remove(o)              # when forced, whatever holds its slots
                evictor[o] = v
                evicted[o] += 1
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
        I = self.I  # noqa: E741
        length = max(self.start[op.name] + op.cycles for op in self.model.ops)
        uses, inputs = data_uses(self.model, I)

        def cost(v: str, t: int) -> float:
            """The weighted lifetimes of v's value and of the values v reads, with v at t."""
            total = 0.0
            for x in [v, *inputs[v]]:
                ends = [(t if u == v else self.start[u]) + plus for u, plus in uses[x]]
                if ends:
                    total += weight[x] * (max(ends) - (t if x == v else self.start[x]))
            return total

        for v in sorted(self.names, key=lambda v: (self.height[v], -self.order[v])):
            limits.check()
            here = self.start[v]
            bound = min([length - self.model.op(v).cycles, self.latest[v],
                         *(self.start[s] - gap for s, gap in self.succ[v])])
            if bound <= here or not any(weight[x] for x in [v, *inputs[v]]):
                continue
            self._remove(v)
            collide = self._collisions(v)
            # The cost is piecewise linear in t, with a kink where v becomes the last use of an
            # input: try the free cycles next to each kink and to the ends of the range.
            marks = {here, bound}
            for x in inputs[v]:
                others = [self.start[u] + plus for u, plus in uses[x] if u != v]
                if others:
                    marks.update(max(others) - plus for u, plus in uses[x] if u == v)
            tries = set()
            for p in (m for m in marks if here <= m <= bound):
                up = next((t for t in range(p, bound + 1) if not collide[t % I]), None)
                down = next((t for t in range(p, here - 1, -1) if not collide[t % I]), None)
                tries.update(t for t in (up, down) if t is not None)
            best = min(sorted(tries), key=lambda t: (cost(v, t), t))
            if cost(v, best) >= cost(v, here):
                best = here
            self._place(v, best)
        low = min(self.start.values())
        return {v: self.start[v] - low for v in self.names}
