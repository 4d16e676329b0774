"""Legalization: from wanted start times and a warp-group assignment to a verified schedule.

The relaxed schedulers (GauS) end with real-valued start times that nearly satisfy the rules.
`legalize` turns them into a schedule at a fixed I in three passes, then verifies it:

1. **Topological pass.**  Ops are taken in an order compatible with the distance-0 edges,
   earliest wanted time first.  Each goes to the free cycle nearest its wanted time, no earlier
   than its placed predecessors allow (edge delay, plus a data edge's hand-off between groups or
   within one, minus distance*I) and, where it can, no later than its placed successors
   allow.  "Free" is modulo I: every unit's modular reservation table has room for the op's
   (folded) reservations, and rule 9 holds on its group - an op that waits on a synchronization
   issues in no slot another op occupies, and no op occupies a slot where such an op issues.
   Where no cycle within I of the wanted one is free, the op takes the cycle that displaces the
   fewest placed ops and those go back to the queue (as in Rau's IMS).
2. **Fixed-point modulo repair.**  Loop-carried edges can be broken by ops placed before their
   producers: every broken edge moves its consumer later to the next free cycle, which may break
   further edges, until nothing moves (a fixed point), a move budget is spent, or an op passes
   the horizon.
3. **Lifetime shortening.**  When the verifier finds a register or memory limit exceeded, ops
   move later towards their readers where that lowers the weighted lifetimes, keeping every slot
   and edge, and the schedule is verified again.

The result is verified against every constraint asked for, under the semantics asked for (the
loop by default: every trip count, values entering the loop live from its start); the passes
above reason modulo I and only propose - a schedule that fails is never returned as valid, and
`Legalized.why` says what failed.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Collection, Mapping, Sequence

import attrs

from warpweave.core.constraints import Constraint
from warpweave.core.ims import data_uses, folded_runs
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.core.verify import Violation, verify

LIFETIME_RULES = ("memory", "register_limit")


@attrs.frozen
class Legalized:
    """A verified schedule, or None with the reason and the last candidate's violations."""

    schedule: Schedule | None
    why: str | None
    moves: int
    violations: tuple[Violation, ...] = ()


def check(model: Model, schedule: Schedule, constraints: Sequence[Constraint],
          semantics: str = "loop") -> list[Violation]:
    """Every violation of `schedule` under `constraints` (plugins included), under `semantics`:
    "loop" checks the limits on the loop for every trip count, values entering the loop live
    from its start (DESIGN section 3) - the legalizer's own tables reason modulo I and never
    decide validity, this does."""
    return verify(model, schedule, constraints, semantics)


class _Tables:
    """Start times placed so far at one I, with the modular tables that say which cycles are
    free: unit usage per slot, group occupancy per slot, issue slots of waiting ops."""

    def __init__(self, model: Model, I: int, group: Mapping[str, str],  # noqa: E741
                 rules: Collection[str]):
        self.model, self.I, self.group = model, I, dict(group)
        self.cap = {u.name: u.capacity for u in model.machine.units}
        self.runs = folded_runs(model, I) if "capacity" in rules else \
            {v: [] for v in model.op_names}
        self.used = {u: [0] * I for u in self.cap}
        # unit -> slot -> {op: count}, in placement order
        self.holders: dict[str, list[dict[str, int]]] = {u: [{} for _ in range(I)]
                                                         for u in self.cap}
        self.occ = {op.name: min(I, 1 if op.is_async else op.cycles) for op in model.ops}
        self.waits = {v: False for v in model.op_names}  # rule 9 applies to it
        if "concurrency" in rules:
            for e in model.edges:
                if e.blocking or (e.is_data and e.src != e.dst
                                  and self.group[e.src] != self.group[e.dst]):
                    self.waits[e.dst] = True
        groups = set(self.group.values())
        self.held = {g: [0] * I for g in groups}     # ops occupying each slot of the group
        self.issues = {g: [0] * I for g in groups}   # waiting ops issuing in each slot
        self.start: dict[str, int] = {}

    def unfit(self) -> str | None:
        """Why no start time can ever be free for some op at this I, or None."""
        for op in self.model.ops:
            for unit, slot, _, n in self.runs[op.name]:
                if n > self.cap[unit]:
                    return (f"{op.name} needs {n} x {unit} in slot {slot} of I={self.I} "
                            f"(capacity {self.cap[unit]})")
            if self.waits[op.name] and op.cycles > self.I and not op.is_async:
                return f"{op.name} waits on a synchronization and occupies its group longer " \
                       f"than I={self.I}"
        return None

    def _slots(self, first: int, length: int):
        I = self.I  # noqa: E741
        return ((first + k) % I for k in range(min(length, I)))

    def conflicts(self, v: str, t: int) -> set[str]:
        """The placed ops that keep v from starting at t (empty: t is free for v): on each
        over-full slot of a unit, holders latest-placed first until v fits; for rule 9, the ops
        occupying v's issue slot (if v waits) and the waiting ops whose issue v would cover."""
        out: set[str] = set()
        I, g = self.I, self.group[v]  # noqa: E741
        for unit, off, length, n in self.runs[v]:
            used, cap, holders = self.used[unit], self.cap[unit], self.holders[unit]
            for s in self._slots(t + off, length):
                excess = used[s] + n - cap - sum(holders[s].get(o, 0) for o in out)
                for o in reversed(list(holders[s])):
                    if excess <= 0:
                        break
                    if o not in out:
                        out.add(o)
                        excess -= holders[s][o]
        if self.waits[v] and self.held[g][t % I]:
            out.update(o for o in self._members(g) if (t - self.start[o]) % I < self.occ[o])
        if any(self.issues[g][s] for s in self._slots(t, self.occ[v])):
            out.update(o for o in self._members(g) if self.waits[o]
                       and (self.start[o] - t) % I < self.occ[v])
        out.discard(v)
        return out

    def free(self, v: str, t: int) -> bool:
        g = self.group[v]
        for unit, off, length, n in self.runs[v]:
            used, cap = self.used[unit], self.cap[unit]
            if any(used[s] + n > cap for s in self._slots(t + off, length)):
                return False
        if self.waits[v] and self.held[g][t % self.I]:
            return False
        issues = self.issues[g]
        return not any(issues[s] for s in self._slots(t, self.occ[v]))

    def _members(self, g: str):
        return (o for o in self.start if self.group[o] == g)

    def place(self, v: str, t: int, sign: int = 1) -> None:
        """Enter v at t into the tables (sign -1: take it out)."""
        for unit, off, length, n in self.runs[v]:
            used, holders = self.used[unit], self.holders[unit]
            for s in self._slots(t + off, length):
                used[s] += sign * n
                if sign > 0:
                    holders[s][v] = holders[s].get(v, 0) + n
                else:
                    holders[s].pop(v, None)
        g = self.group[v]
        for s in self._slots(t, self.occ[v]):
            self.held[g][s] += sign
        if self.waits[v]:
            self.issues[g][t % self.I] += sign
        if sign > 0:
            self.start[v] = t
        else:
            del self.start[v]

    def remove(self, v: str) -> None:
        self.place(v, self.start[v], -1)


class _Legalizer:
    """One legalization at (I, assignment); see the module docstring."""

    def __init__(self, model: Model, I: int, group: Mapping[str, str],  # noqa: E741
                 rules: Collection[str], horizon: int, earliest_first: bool = False):
        self.model, self.I, self.horizon = model, I, horizon
        self.earliest_first = earliest_first
        self.not_before: dict[str, int] = {}  # delays asked for by the lifetime repair
        self.tables = _Tables(model, I, group, rules)
        self.order = {v: k for k, v in enumerate(model.op_names)}
        spill = "cross_warp_spill" in rules
        # Edges as gaps: M(dst) - M(src) >= gap.
        self.succ: dict[str, list[tuple[str, int]]] = {v: [] for v in model.op_names}
        self.pred: dict[str, list[tuple[str, int]]] = {v: [] for v in model.op_names}
        self.self_gap = 0
        for e in model.edges:
            gap = e.delay - e.distance * I
            if spill and e.is_data:  # the hand-off (rule 1): across groups, or within one
                gap += (e.handoff or 0) if group[e.src] != group[e.dst] else e.handoff_local
            if e.src == e.dst:
                self.self_gap = max(self.self_gap, gap)
                continue
            self.succ[e.src].append((e.dst, gap))
            self.pred[e.dst].append((e.src, gap))
        self.latest = {op.name: horizon - op.cycles for op in model.ops}
        self.moves = 0
        self.previous: dict[str, int] = {}  # op -> the cycle it was last placed at
        self.evictor: dict[str, str] = {}   # op -> the op that last evicted it

    def earliest(self, v: str) -> int:
        start = self.tables.start
        return max([self.not_before.get(v, 0),
                    *(start[u] + gap for u, gap in self.pred[v] if u in start)])

    def latest_wanted(self, v: str) -> int:
        start = self.tables.start
        return min([self.latest[v], *(start[w] - gap for w, gap in self.succ[v] if w in start)])

    def topological(self, want: Mapping[str, float]) -> list[str]:
        """Ops in an order compatible with distance-0 edges, earliest wanted time first (Kahn's
        algorithm with a priority queue; a zero-delay cycle is broken at its earliest op)."""
        indeg = {v: 0 for v in self.model.op_names}
        zero = [(e.src, e.dst) for e in self.model.edges if e.distance == 0 and e.src != e.dst]
        for _, w in zero:
            indeg[w] += 1
        children: dict[str, list[str]] = {v: [] for v in self.model.op_names}
        for u, w in zero:
            children[u].append(w)
        key = {v: (want[v], self.order[v]) for v in self.model.op_names}
        ready = [(key[v], v) for v, d in indeg.items() if d == 0]
        heapq.heapify(ready)
        out: list[str] = []
        seen: set[str] = set()
        while len(out) < len(indeg):
            if not ready:  # a zero-delay cycle: take its earliest op
                v = min((v for v in indeg if v not in seen), key=key.__getitem__)
                heapq.heappush(ready, (key[v], v))
            _, v = heapq.heappop(ready)
            if v in seen:
                continue
            seen.add(v)
            out.append(v)
            for w in children[v]:
                indeg[w] -= 1
                if indeg[w] == 0 and w not in seen:
                    heapq.heappush(ready, (key[w], w))
        return out

    def put(self, v: str, want: float) -> list[str] | None:
        """Place v at the free cycle nearest `want` within its bounds; when none is free within
        I cycles, at the cycle displacing the fewest ops, which are taken out and returned.
        None: v cannot start before the horizon."""
        lo = self.earliest(v)
        if lo > self.latest[v]:
            return None
        hi = max(lo, self.latest_wanted(v))
        target = lo if self.earliest_first else min(max(lo, round(want)), hi)
        I, tables = self.I, self.tables  # noqa: E741
        # Nearest first, preferring cycles within [lo, hi], never before lo, within I of target.
        for d in range(I):
            for t in ((target + d, target - d) if d else (target,)):
                if lo <= t <= min(hi, self.latest[v]) and tables.free(v, t):
                    return self._enter(v, t, [])
        top = min(max(target, lo) + I - 1, self.latest[v])
        for t in range(max(target, lo), top + 1):
            if tables.free(v, t):
                return self._enter(v, t, [])
        # Forced: from lo, or one past where v was last time (two ops that keep evicting each
        # other at the same cycles would never settle), sparing the op that last evicted v.
        first = self.previous[v] + 1 if lo <= self.previous.get(v, -1) < self.latest[v] else lo
        best, best_key, best_out = first, None, set()
        for t in range(first, min(first + I - 1, self.latest[v]) + 1):
            out = tables.conflicts(v, t)
            key = (self.evictor.get(v) in out, len(out))
            if best_key is None or key < best_key:
                best, best_key, best_out = t, key, out
                if key == (False, 1):
                    break
        evicted = sorted(best_out, key=self.order.__getitem__)
        for o in evicted:
            tables.remove(o)
            self.evictor[o] = v
        return self._enter(v, best, evicted)

    def _enter(self, v: str, t: int, evicted: list[str]) -> list[str]:
        self.tables.place(v, t)
        self.previous[v] = t
        self.moves += 1
        return evicted

    def run(self, want: dict[str, float], budget: int,
            deadline: float | None = None) -> str | None:
        """Passes 1 and 2; None when every op is placed and every edge holds.  `want` is
        updated: a consumer moved by pass 2 wants its new earliest cycle.  Past `deadline`
        (perf_counter seconds) it gives up."""
        if self.self_gap > 0:
            return f"a dependence of an op on itself needs I >= {self.I + self.self_gap}"
        cycle = _positive_cycle(self.succ)
        if cycle is not None:
            return f"the dependence cycle {' -> '.join(cycle + cycle[:1])} needs more than " \
                   f"I={self.I} on these groups"
        why = self.tables.unfit()
        if why:
            return why
        queue = [(0, k, v) for k, v in enumerate(self.topological(want))]
        start = self.tables.start
        pushed = len(queue)
        while queue:
            if self.moves > budget:
                return f"the move budget ({budget}) was spent before a fixed point"
            if deadline is not None and self.moves % 32 == 0 and time.perf_counter() > deadline:
                return "the time limit came before a fixed point"
            _, _, v = heapq.heappop(queue)
            if v in start:
                continue
            evicted = self.put(v, want[v])
            if evicted is None:
                return f"{v} cannot start before the horizon of {self.horizon} cycles"
            # Pass 2: placed consumers whose edge from v now breaks move later.
            for w, gap in self.succ[v]:
                if w in start and w not in evicted and start[w] - start[v] < gap:
                    self.tables.remove(w)
                    evicted.append(w)
                    want[w] = max(want[w], start[v] + gap)
            for o in evicted:  # back in the queue, before the ops still waiting
                pushed += 1
                heapq.heappush(queue, (-1, pushed, o))
        return None


def _positive_cycle(succ: Mapping[str, list[tuple[str, int]]]) -> list[str] | None:
    """A cycle of ops whose gaps sum above zero (no start times satisfy it), or None
    (Bellman-Ford on longest paths)."""
    dist = {v: 0 for v in succ}
    pred: dict[str, str] = {}
    last = None
    for _ in range(len(succ)):
        last = None
        for u, out in succ.items():
            for w, gap in out:
                if dist[u] + gap > dist[w]:
                    dist[w], pred[w], last = dist[u] + gap, u, w
        if last is None:
            return None
    node = last
    for _ in range(len(succ)):  # walk back onto the cycle
        node = pred[node]
    cycle, cur = [node], pred[node]
    while cur != node:
        cycle.append(cur)
        cur = pred[cur]
    return cycle[::-1]


def repair_groups(model: Model, I: int, group: Mapping[str, str],  # noqa: E741
                  rules: Collection[str], allowed: Mapping[str, Sequence[str]]
                  ) -> dict[str, str]:
    """The assignment with the spill-induced recurrences at I removed where the groups allow:
    while some dependence cycle needs more than I cycles only because of cross-group spills,
    the readers on it join their producers' groups."""
    group = dict(group)
    if "cross_warp_spill" not in rules:
        return group
    for _ in range(len(model.ops)):
        leg = _Legalizer(model, I, group, rules, horizon=1)
        cycle = _positive_cycle(leg.succ)
        if cycle is None:
            return group
        moved = False
        for u, w in zip(cycle, cycle[1:] + cycle[:1], strict=True):
            if group[u] != group[w] and group[u] in allowed[w] and any(
                    e.dst == w and e.is_data and (e.handoff or 0) > e.handoff_local
                    for e in model.out_edges(u)):
                group[w] = group[u]
                moved = True
                break
        if not moved:
            return group
    return group


def shorten_lifetimes(model: Model, schedule: Schedule, rules: Collection[str],
                      horizon: int) -> Schedule:
    """Pass 3: move ops later, latest first, where that lowers the weighted lifetimes of the
    values they produce and read (weights: registers against the group's limit, footprints
    against each memory's capacity), keeping every edge, slot and the length."""
    I = schedule.I  # noqa: E741
    names = model.op_names
    groups = {g.name: g for g in model.machine.warp_groups}
    weight = {}
    for op in model.ops:
        w = op.regs / max(1, groups[schedule.group[op.name]].reg_limit) \
            if "register_limit" in rules else 0.0
        if "memory" in rules:
            w += sum(op.footprint_in(m.name) / max(1, m.capacity)
                     for m in model.machine.memories)
        weight[op.name] = w
    leg = _Legalizer(model, I, schedule.group, rules, horizon)
    for v in names:
        leg.tables.place(v, schedule.start[v])
    start = leg.tables.start
    uses, inputs = data_uses(model, I)

    def cost(v: str, t: int) -> float:
        total = 0.0
        for x in (v, *inputs[v]):
            ends = [(t if u == v else start[u]) + plus for u, plus in uses[x]]
            if ends and weight[x]:
                total += weight[x] * (max(ends) - (t if x == v else start[x]))
        return total

    length = schedule.L
    for v in sorted(names, key=lambda v: (-start[v], leg.order[v])):
        if not any(weight[x] for x in (v, *inputs[v])):
            continue
        here = start[v]
        bound = min(length - model.op(v).cycles, leg.latest_wanted(v))
        if bound <= here:
            continue
        leg.tables.remove(v)
        best, best_cost = here, cost(v, here)
        for t in range(here + 1, min(bound, here + 2 * I) + 1):
            if leg.tables.free(v, t):
                c = cost(v, t)
                if c < best_cost:
                    best, best_cost = t, c
        leg.tables.place(v, best)
    return Schedule(schedule.model, I, schedule.L, dict(start), schedule.group)


def _delayed(violation: Violation, schedule: Schedule) -> tuple[str, int] | None:
    """For a register or memory limit exceeded at a cycle: the op whose live instance there
    issued last, and the start that issues that instance just after the cycle."""
    if violation.cycle is None or not violation.instances:
        return None
    issue = {x: schedule.start[x[0]] + x[1] * schedule.I for x in violation.instances}
    (op, _), at = max(issue.items(), key=lambda kv: (kv[1], kv[0]))
    if at > violation.cycle:
        return None
    return op, schedule.start[op] + violation.cycle + 1 - at


def legalize(model: Model, I: int, want: Mapping[str, float],  # noqa: E741
             group: Mapping[str, str], constraints: Sequence[Constraint], *,
             horizon: int, budget: int | None = None, repairs: int = 12,
             deadline: float | None = None, semantics: str = "loop") -> Legalized:
    """A schedule at `I` near the wanted start times on the given groups, verified against
    `constraints`; or None with why (see the module docstring).  `horizon` bounds every op's
    end; `budget` bounds the placements of one pass (default 30 per op).  While only register
    or memory limits fail, up to `repairs` times the value that went live last at the cycle of
    the first violation is wanted just after it, and the schedule is placed again.  Past
    `deadline` (perf_counter seconds) it stops with why.  `semantics`: what the verifier checks
    (`check`)."""
    rules = {c.name for c in constraints}
    want = {v: float(t) for v, t in want.items()}
    not_before: dict[str, int] = {}
    moves = 0
    violations: list[Violation] = []
    for attempt in range(repairs + 1):
        for earliest in (False, True) if attempt == 0 else (False,):
            leg = _Legalizer(model, I, group, rules, horizon, earliest)
            leg.not_before = dict(not_before)
            why = leg.run(dict(want), budget if budget is not None else 30 * len(model.ops),
                          deadline)
            moves += leg.moves
            if why is None:
                break
        else:
            return Legalized(None, why, moves, tuple(violations))
        start = leg.tables.start
        low = min(start.values())
        schedule = Schedule.tight(model, I, {v: t - low for v, t in start.items()}, group)
        violations = check(model, schedule, constraints, semantics)
        if violations and all(x.rule in LIFETIME_RULES for x in violations):
            shorter = shorten_lifetimes(model, schedule, rules, horizon)
            violations = check(model, shorter, constraints, semantics)
            schedule = shorter
        if not violations:
            return Legalized(schedule, None, moves)
        delay = _delayed(violations[0], schedule) if all(
            x.rule in LIFETIME_RULES for x in violations) else None
        if delay is None or (deadline is not None and time.perf_counter() > deadline):
            break
        op, later = delay
        want = {v: float(t + low) for v, t in schedule.start.items()}
        not_before[op] = later + low
        want[op] = float(later + low)
    return Legalized(None, f"verification failed: {violations[0]}", moves, tuple(violations))
