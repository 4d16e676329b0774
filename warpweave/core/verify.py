"""The verifier: DESIGN section 3 stated on a concrete schedule, one function per rule.

This module is the definition of a valid schedule.  It shares no code with anything that builds
solver constraints: it reads the model, the schedule and the straight-line program Q, and reports
each violation with a witness (rule, ops and copies, cycle or slot, amount against the limit).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

import attrs

from warpweave.core.model import Model
from warpweave.core.schedule import Instance, Program, Schedule, straight_line


@attrs.frozen
class Violation:
    """One broken rule with its witness."""

    rule: str
    message: str
    ops: tuple[str, ...] = ()
    instances: tuple[tuple[str, int], ...] = ()
    cycle: int | None = None
    slot: int | None = None
    resource: str | None = None
    amount: int | None = None
    limit: int | None = None

    def to_dict(self) -> dict:
        d = attrs.asdict(self, filter=lambda a, v: v not in (None, ()))
        if "instances" in d:
            d["instances"] = [list(x) for x in d["instances"]]
        if "ops" in d:
            d["ops"] = list(d["ops"])
        return d

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


Rule = Callable[[Model, Schedule, Program], list[Violation]]


def _inst(x: Instance) -> str:
    return f"{x.op}#{x.copy}"


def check_dependence(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 1 without spill: M(v) + delta*I >= M(u) + d for every edge."""
    out = []
    for e in model.edges:
        have = s.start[e.dst] + e.distance * s.I - s.start[e.src]
        if have < e.delay:
            out.append(Violation(
                "dependence",
                f"{e.dst} starts {have} cycles after {e.src} (distance {e.distance}), "
                f"needs {e.delay}",
                ops=(e.src, e.dst), amount=have, limit=e.delay))
    return out


def check_cross_warp_spill(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 1's spill term: a data edge between groups also waits spill_cost(src)."""
    out = []
    for e in model.edges:
        spill = model.op(e.src).spill_cost
        if not e.is_data or not spill or s.group[e.src] == s.group[e.dst]:
            continue
        need = e.delay + spill
        have = s.start[e.dst] + e.distance * s.I - s.start[e.src]
        if have < need:
            out.append(Violation(
                "cross_warp_spill",
                f"{e.dst} on {s.group[e.dst]} reads {e.src} from {s.group[e.src]}: "
                f"starts {have} cycles after it, needs {e.delay} + spill "
                f"{model.op(e.src).spill_cost}",
                ops=(e.src, e.dst), amount=have, limit=need))
    return out


def check_capacity(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 2: for every unit and modular slot, the reservations fit the capacity."""
    table: dict[tuple[str, int], list[tuple[str, int, int]]] = defaultdict(list)
    for op in model.ops:
        for c, unit, count in op.usage():
            table[(unit, (s.start[op.name] + c) % s.I)].append((op.name, c, count))
    out = []
    for unit in model.machine.units:
        for r in sorted(r for u, r in table if u == unit.name):  # the slots used: not O(I)
            users = table[(unit.name, r)]
            used = sum(n for _, _, n in users)
            if used > unit.capacity:
                who = ", ".join(f"{v}+{c}" if c else v for v, c, _ in users)
                out.append(Violation(
                    "capacity", f"unit {unit.name} slot {r}: {used} > capacity {unit.capacity} "
                    f"({who})", ops=tuple(dict.fromkeys(v for v, _, _ in users)),
                    slot=r, resource=unit.name, amount=used, limit=unit.capacity))
    return out


def check_completion(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 3: every op completes within the length L."""
    return [Violation("completion", f"{op.name} ends at {s.start[op.name] + op.cycles} > L={s.L}",
                      ops=(op.name,), cycle=s.start[op.name] + op.cycles, limit=s.L)
            for op in model.ops if s.start[op.name] + op.cycles > s.L]


def check_liveness(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 4's premise: no data use of an instance issues before the instance itself."""
    out = []
    for e in model.edges:
        if not e.is_data:
            continue
        for i in range(q.S - e.distance):
            x, use = q.instance(e.src, i), q.instance(e.dst, i + e.distance)
            if use.issue < x.issue:
                out.append(Violation(
                    "liveness", f"{_inst(use)} at {use.issue} uses {_inst(x)} issued at {x.issue}",
                    ops=(e.src, e.dst), instances=((x.op, x.copy), (use.op, use.copy)),
                    cycle=use.issue))
    return out


def _event_times(q: Program) -> list[int]:
    """The cycles of Q at which a live set can change: within [0, T]."""
    times = {0}
    for x in q.instances:
        times.add(x.issue)
        if x.end <= q.T:
            times.add(x.end)
    return sorted(t for t in times if 0 <= t <= q.T)


def _peak_checks(rule: str, kind: str, q: Program, pools: Iterable[tuple[str, int]],
                 weight: Callable[[str, Instance], int]) -> list[Violation]:
    """For each pool (memory or group): the first cycle where live weight exceeds the limit."""
    out = []
    times = _event_times(q)
    for pool, limit in pools:
        held = [x for x in q.instances if weight(pool, x) > 0 and x.end > x.issue]
        for t in times:
            live = [x for x in held if x.live_at(t)]
            amount = sum(weight(pool, x) for x in live)
            if amount > limit:
                out.append(Violation(
                    rule, f"{kind} {pool} at cycle {t}: {amount} > {limit} "
                    f"({', '.join(_inst(x) for x in live)})",
                    ops=tuple(dict.fromkeys(x.op for x in live)),
                    instances=tuple((x.op, x.copy) for x in live), cycle=t, resource=pool,
                    amount=amount, limit=limit))
                break
    return out


def check_memory(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 5: live footprints fit every memory at every cycle of Q."""
    return _peak_checks("memory", "memory", q,
                        [(m.name, m.capacity) for m in model.machine.memories],
                        lambda mem, x: model.op(x.op).footprint_in(mem))


def check_register_limit(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 8: live registers of the ops on each group fit its per-thread limit."""
    return _peak_checks("register_limit", "group", q,
                        [(g.name, g.reg_limit) for g in model.machine.warp_groups],
                        lambda g, x: model.op(x.op).regs if s.group[x.op] == g else 0)


def check_warp_uniqueness(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 6: each op on exactly one existing group, which has at least warps(v) warps."""
    out = []
    for op in model.ops:
        g = model.machine.group(s.group[op.name])
        if g.warps < op.warps:
            out.append(Violation("warp_uniqueness",
                                 f"{op.name} needs {op.warps} warps, group {g.name} has {g.warps}",
                                 ops=(op.name,), resource=g.name, amount=g.warps, limit=op.warps))
    return out


def check_variable_latency(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 7: exactly the variable-latency ops run on the variable-latency group."""
    vl = model.machine.variable_latency_group
    if vl is None:
        return []
    out = []
    for op in model.ops:
        on_vl = s.group[op.name] == vl
        if op.variable_latency and not on_vl:
            out.append(Violation("variable_latency",
                                 f"{op.name} has variable latency but runs on {s.group[op.name]}, "
                                 f"not {vl}", ops=(op.name,), resource=s.group[op.name]))
        elif on_vl and not op.variable_latency:
            out.append(Violation("variable_latency",
                                 f"{op.name} has fixed latency but runs on the variable-latency "
                                 f"group {vl}", ops=(op.name,), resource=vl))
    return out


def check_concurrency(model: Model, s: Schedule, q: Program) -> list[Violation]:
    """Rule 9: an instance that blocks on a sync starts when no other one occupies its group."""
    out = []
    by_group: dict[str, list[Instance]] = defaultdict(list)
    for x in q.instances:
        by_group[s.group[x.op]].append(x)
    for op in model.ops:
        incoming = model.in_edges(op.name)
        why = [e for e in incoming if e.blocking] or \
              [e for e in incoming if e.is_data and s.group[e.src] != s.group[op.name]]
        if not why:
            continue
        g = s.group[op.name]
        reason = "a blocking edge" if why[0].blocking else f"a cross-group read of {why[0].src}"
        for i in range(q.S):
            me = q.instance(op.name, i)
            for o in by_group[g]:
                if (o.op, o.copy) == (me.op, me.copy):
                    continue
                occ = 1 if model.op(o.op).is_async else model.op(o.op).cycles
                if o.issue <= me.issue < o.issue + occ:
                    out.append(Violation(
                        "concurrency",
                        f"{_inst(me)} waits on {reason} at cycle {me.issue} while {_inst(o)} "
                        f"occupies group {g} over [{o.issue}, {o.issue + occ})",
                        ops=(op.name, o.op), instances=((me.op, me.copy), (o.op, o.copy)),
                        cycle=me.issue, resource=g))
    return out


RULES: dict[str, Rule] = {
    "dependence": check_dependence,
    "cross_warp_spill": check_cross_warp_spill,
    "capacity": check_capacity,
    "completion": check_completion,
    "liveness": check_liveness,
    "memory": check_memory,
    "warp_uniqueness": check_warp_uniqueness,
    "variable_latency": check_variable_latency,
    "register_limit": check_register_limit,
    "concurrency": check_concurrency,
}


def verify(model: Model, schedule: Schedule, rules: Iterable[str] | None = None) -> list[Violation]:
    """All violations of `schedule` against `model` (empty when valid), rule by rule.

    The schedule must name every op and only known groups (see `formats.check_schedule`).
    """
    q = straight_line(model, schedule)
    out: list[Violation] = []
    for name in (rules if rules is not None else RULES):
        out.extend(RULES[name](model, schedule, q))
    return out
