"""Warp-group assignment for the heuristic scheduler: where each op may run, first guesses, and
repairs driven by the verifier's witnesses.

A cross-group data edge costs the producer's spill and makes the reader wait on a synchronization
(rule 9), so guesses keep data neighbours together; they spread values whose estimated register
pressure overflows a group, and ops whose occupancy would leave a waiting reader no free cycle.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Collection, Mapping, Sequence

from warpweave import limits
from warpweave.core.bounds import _sccs
from warpweave.core.model import Model
from warpweave.core.verify import Violation

Assignment = dict[str, str]


def allowed_groups(model: Model, rules: Collection[str]) -> dict[str, list[str]]:
    """The groups each op may run on under rules 6 (warp fit) and 7 (variable latency)."""
    m = model.machine
    vl = m.variable_latency_group if "variable_latency" in rules else None
    out = {}
    for op in model.ops:
        groups = [g.name for g in m.warp_groups
                  if ("warp_uniqueness" not in rules or g.warps >= op.warps)
                  and (vl is None or (g.name == vl) == op.variable_latency)]
        out[op.name] = groups
    return out


def register_estimate(model: Model, I: int) -> dict[str, int]:  # noqa: E741
    """Registers each value needs at least: regs(v) times the copies alive at once when every
    use comes as early as its delay allows (0 for a value nobody reads)."""
    out = {}
    for op in model.ops:
        lives = [e.delay + e.distance * I + e.hold for e in model.out_edges(op.name) if e.is_data]
        out[op.name] = op.regs * max(1, -(-max(lives) // I)) if lives else 0
    return out


class Planner:
    """Makes assignments for one I: greedy guesses, seeded random ones, and repairs."""

    def __init__(self, model: Model, allowed: Mapping[str, Sequence[str]], I: int,  # noqa: E741
                 rules: Collection[str], rng: random.Random):
        self.model, self.allowed, self.I, self.rng = model, allowed, I, rng
        self.groups = {g.name: g for g in model.machine.warp_groups}
        self.regs = register_estimate(model, I) if "register_limit" in rules else \
            {v: 0 for v in model.op_names}
        self.occ = {op.name: 1 if op.is_async else op.cycles for op in model.ops}
        self.concurrency = "concurrency" in rules
        self.blocking = {e.dst for e in model.edges if e.blocking} if self.concurrency else set()
        self.neighbours: dict[str, list[tuple[str, int]]] = {v: [] for v in model.op_names}
        self.producers: dict[str, list[str]] = {v: [] for v in model.op_names}
        for e in model.edges:
            if e.is_data and e.src != e.dst:
                w = 1 + e.handoff
                self.neighbours[e.src].append((e.dst, w))
                self.neighbours[e.dst].append((e.src, w))
                self.producers[e.dst].append(e.src)

    def _order(self) -> list[str]:
        """Ops breadth-first along data edges, so that neighbours are placed one after another."""
        seen: dict[str, None] = {}
        for root in self.model.op_names:
            if root in seen:
                continue
            todo = deque([root])
            seen[root] = None
            while todo:
                v = todo.popleft()
                for n, _ in self.neighbours[v]:
                    if n not in seen:
                        seen[n] = None
                        todo.append(n)
        return list(seen)

    def _clusters(self) -> list[list[str]]:
        """Ops grouped by dependence cycle (a spill inside a recurrence lengthens it), in
        breadth-first order.  A cycle that no single group may run whole loses the ops with the
        fewest allowed groups (the loads pinned to the variable-latency group, say), and what
        remains is split into its own cycles again."""
        order = self._order()
        rank = {v: k for k, v in enumerate(order)}
        out = []
        todo = [sorted(order, key=rank.get)]
        while todo:
            ops = todo.pop(0)
            within = set(ops)
            inner = [e for e in self.model.edges if e.src in within and e.dst in within]
            for comp in sorted((sorted(c, key=rank.get) for c in _sccs(ops, inner)),
                               key=lambda c: rank[c[0]]):
                if len(comp) == 1 or self._common(comp):
                    out.append(comp)
                    continue
                fewest = min(len(self.allowed[v]) for v in comp)
                out.extend([v] for v in comp if len(self.allowed[v]) == fewest)
                rest = [v for v in comp if len(self.allowed[v]) > fewest]
                if rest:
                    todo.append(rest)
        return sorted(out, key=lambda c: rank[c[0]])

    def _common(self, members: Sequence[str]) -> list[str]:
        """The groups every op of `members` may run on, in machine order."""
        return [g for g in self.allowed[members[0]]
                if all(g in self.allowed[v] for v in members)]

    def _greedy(self, clusters: Sequence[Sequence[str]], spread: bool) -> Assignment:
        """Each cluster to its best group: most affinity to placed neighbours unless `spread`, in
        which case least relative register load.  Overflowing the estimated registers comes first
        to avoid, then filling more than I cycles with occupancy on a group where some op waits
        on a sync."""
        group: Assignment = {}
        regs = dict.fromkeys(self.groups, 0)
        occ = dict.fromkeys(self.groups, 0)
        hosts_waiter = dict.fromkeys(self.groups, False)
        for members in limits.checked(clusters, 256):  # seconds on 10,000 ops
            need = sum(self.regs[v] for v in members)
            busy_for = sum(self.occ[v] for v in members)

            def waits(g: str, members: Sequence[str] = members) -> bool:
                """Some member would wait on a sync on g: blocking, or a producer elsewhere."""
                return any(v in self.blocking or (self.concurrency and any(
                    group.get(p, g) != g for p in self.producers[v])) for v in members)

            def key(g: str, members: Sequence[str] = members, need: int = need,
                    busy_for: int = busy_for) -> tuple:
                limit = self.groups[g].reg_limit
                overflow = max(0, regs[g] + need - limit)
                busy = hosts_waiter[g] or waits(g)
                crowded = max(0, occ[g] + busy_for - self.I) if busy else 0
                affinity = sum(w for v in members for n, w in self.neighbours[v]
                               if group.get(n) == g)
                load = max((regs[g] + need) / max(1, limit), (occ[g] + busy_for) / self.I)
                return (overflow, crowded, load, -affinity) if spread else \
                    (overflow, crowded, -affinity, regs[g] == 0 and occ[g] == 0, load)
            g = min(self._common(members), key=key)
            for v in members:
                group[v] = g
            regs[g] += need
            occ[g] += busy_for
            hosts_waiter[g] |= waits(g)
        return group

    def guesses(self) -> list[tuple[str, Assignment]]:
        """The first assignments to try: neighbours together, then load spread out."""
        clusters = self._clusters()
        by_regs = sorted(clusters, key=lambda c: -sum(self.regs[v] for v in c))
        return [("together", self._greedy(clusters, spread=False)),
                ("spread", self._greedy(by_regs, spread=True))]

    def random(self) -> tuple[str, Assignment]:
        """An assignment drawn from the seeded generator, biased towards placed neighbours."""
        group: Assignment = {}
        for members in self._clusters():
            common = self._common(members)
            near = [group[n] for v in members for n, _ in self.neighbours[v]
                    if n in group and group[n] in common]
            g = self.rng.choice(near) if near and self.rng.random() < 0.6 else \
                self.rng.choice(common)
            for v in members:
                group[v] = g
        return "random", group

    def repairs(self, group: Assignment, violations: Sequence[Violation]) -> list[
            tuple[str, Assignment]]:
        """Assignments that move one op away from a violation's witness (registers, group
        concurrency, or any other rule - a plugin's - whose witness names a group), most
        promising first."""
        out = []
        for v in violations:
            if v.rule == "register_limit":
                movable = sorted((o for o in v.ops if len(self.allowed[o]) > 1
                                  and self.model.op(o).regs), key=lambda o: -self.regs[o])
                for o in movable[:2]:
                    out.append((f"move {o} off {v.resource}", self._move(group, o, v.resource)))
            elif v.rule == "concurrency":
                waiter, other = v.ops[0], v.ops[-1]
                for o in (other, waiter):
                    if len(self.allowed[o]) > 1:
                        out.append((f"move {o} off {v.resource}", self._move(group, o, v.resource)))
            elif v.resource in self.groups:
                for o in v.ops:
                    if group.get(o) == v.resource and len(self.allowed[o]) > 1:
                        out.append((f"move {o} off {v.resource}", self._move(group, o, v.resource)))
        return out

    def unstick(self, group: Assignment, troubled: Sequence[str]) -> list[
            tuple[str, Assignment]]:
        """Assignments that move one op the scheduler could not settle to another group."""
        return [(f"move {o} off {group[o]}", self._move(group, o, group[o]))
                for o in troubled if len(self.allowed[o]) > 1]

    def _move(self, group: Assignment, v: str, away: str) -> Assignment:
        """`group` with v on another allowed group: the one its neighbours use most, else the
        one with the least estimated register load."""
        load = dict.fromkeys(self.groups, 0)
        for o, g in group.items():
            load[g] += self.regs[o]

        def key(g: str) -> tuple:
            affinity = sum(w for n, w in self.neighbours[v] if group[n] == g)
            return (-affinity, load[g] / max(1, self.groups[g].reg_limit))
        target = min((g for g in self.allowed[v] if g != away), key=key)
        return {**group, v: target}
