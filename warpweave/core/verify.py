"""The verifier: DESIGN section 3 stated on a concrete schedule, one function per rule.

This module is the definition of a valid schedule.  It shares no code with anything that builds
solver constraints: it reads the model, the schedule and the straight-line programs Q_n, and
reports each violation with a witness (rule, ops, instances - iteration numbers, negative for
values entering the loop -, trip count, cycle or slot, amount against the limit).

Two semantics (`SEMANTICS`): "loop", the default and the contract, checks the limits on the loop
Q_n for every trip count n >= 1 (`loop_programs` says why finitely many n suffice); "paper-q" is
the Twill paper's letter, the limits on Q_S only and no entering values, kept so that the
difference can be shown.  The rules themselves are the constraint registry's: `verify` asks
every registered constraint (plugins included) for its `check`; the built-in constraints' checks
are the functions below.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

import attrs

from warpweave.core.model import Model
from warpweave.core.registry import CONSTRAINTS
from warpweave.core.schedule import Instance, Program, Schedule, loop_program, straight_line
from warpweave.errors import InputError

SEMANTICS = ("loop", "paper-q")


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
    trip_count: int | None = None   # the n of the program Q_n the witness lives in

    def to_dict(self) -> dict:
        d = attrs.asdict(self, filter=lambda a, v: v not in (None, ()))
        if "instances" in d:
            d["instances"] = [list(x) for x in d["instances"]]
        if "ops" in d:
            d["ops"] = list(d["ops"])
        return d

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


Rule = Callable[[Model, Schedule, str], list[Violation]]


def _inst(x: Instance) -> str:
    if x.count > 1:
        return f"{x.op}#{x.copy}..{x.copy + x.count - 1}"
    return f"{x.op}#{x.copy}"


def check_semantics(semantics: str) -> str:
    if semantics not in SEMANTICS:
        raise InputError(f"unknown semantics (known: {', '.join(SEMANTICS)})",
                         ("--semantics",), semantics)
    return semantics


def loop_programs(model: Model, s: Schedule, semantics: str = "loop") -> list[Program]:
    """The programs on which rules 4, 5 and 8 must hold: Q_1 .. Q_S with the entering values for
    the loop (S = ceil(L / I)), or Q_S alone, without them, for the paper's letter.

    Why Q_1 .. Q_S cover every trip count.  Write W_n(t) for the live weight (of one memory, or
    of one group's registers) at cycle t of Q_n, and P = max(L, I).
    (a) For n >= 2 and t >= P: W_n(t) <= W_{n-1}(t - I).  Map instance (v, i) of Q_n to
        (v, i - 1) of Q_{n-1}: issue, uses and "read after the loop" (i + delta >= n iff
        i - 1 + delta >= n - 1) all shift by one copy, so the lifetime shifts by exactly I.
        Copy 0 live at t >= P >= L outlives every distance-0 use (those issue before L), so it
        has a use at distance >= 1 or is read after the loop: its image (v, -1) enters Q_{n-1}
        and is live from 0 to beyond t - I.  An entering value (v, j) live at t >= L is read at
        some copy j + delta >= 1, so (v, j - 1) enters Q_{n-1} and is live at t - I.  The map
        is injective and keeps op, group and weight.
    (b) For n >= S and t < P a time at which some value of Q_n becomes live (t = 0, or the
        issue of a copy i < S, at most (S-1)*I + L - 1 < T_S): W_n(t) <= W_S(t).  Only copies
        i < S issue before P <= S*I, and all exist in both; a copy or entering value is read
        after the loop of Q_n only if it is read after that of Q_S (i + delta >= n >= S), and
        then it is live to T_S + 1 > t: its lifetime in Q_n up to t is contained in its lifetime
        in Q_S.  Between such times W_n only falls, so its largest value before P is at one.
    (c) W_1(L) <= W_1(L - 1): at T_1 = L only values read after the loop are live, and each
        was issued before L.
    From (a), any (n, t) with t >= P reduces to (n - 1, t - I), until t < P or n = 1 (where
    t <= T_1 = L <= P, and (c) covers t = L = P); from (b), every (n, t) with t < P is covered
    by Q_min(n, S).  So the largest live weight over every trip count is the largest over
    Q_1 .. Q_S, and these are what is checked.  tests/test_verify_independent.py checks the bound
    against many more trip counts.

    The argument takes L to cover every op (rule 3), so that reads within the iteration - done
    at the reader's issue plus its hold, at most its end - are done by L.  For a schedule that
    breaks rule 3 the same argument holds with L replaced by the latest end of an op: the
    programs then run to that many stages.
    """
    if check_semantics(semantics) == "paper-q":
        return [straight_line(model, s)]
    reach = max([s.L, *(s.start[op.name] + op.cycles for op in model.ops)])
    return [loop_program(model, s, n) for n in range(1, -(-reach // s.I) + 1)]


def check_dependence(model: Model, s: Schedule, semantics: str = "loop") -> list[Violation]:
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


def check_cross_warp_spill(model: Model, s: Schedule, semantics: str = "loop"
                           ) -> list[Violation]:
    """Rule 1's hand-off term: a data edge also waits its hand-off - `handoff` between groups,
    `handoff_local` within one."""
    out = []
    for e in model.edges:
        same = s.group[e.src] == s.group[e.dst]
        extra = e.handoff_local if same else e.handoff
        if not e.is_data or not extra:
            continue
        need = e.delay + extra
        have = s.start[e.dst] + e.distance * s.I - s.start[e.src]
        if have < need:
            where = f"on {s.group[e.dst]} too" if same else \
                f"on {s.group[e.dst]} from {s.group[e.src]}"
            out.append(Violation(
                "cross_warp_spill",
                f"{e.dst} reads {e.src} {where}: starts {have} cycles after it, needs "
                f"{e.delay} + hand-off {extra}", ops=(e.src, e.dst), amount=have, limit=need))
    return out


def check_capacity(model: Model, s: Schedule, semantics: str = "loop") -> list[Violation]:
    """Rule 2: for every unit and modular slot, the reservations fit the capacity (an op longer
    than I meets its own other copies in a slot: each of its rows counts)."""
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


def check_completion(model: Model, s: Schedule, semantics: str = "loop") -> list[Violation]:
    """Rule 3: every op completes within the length L."""
    return [Violation("completion", f"{op.name} ends at {s.start[op.name] + op.cycles} > L={s.L}",
                      ops=(op.name,), cycle=s.start[op.name] + op.cycles, limit=s.L)
            for op in model.ops if s.start[op.name] + op.cycles > s.L]


def check_liveness(model: Model, s: Schedule, semantics: str = "loop") -> list[Violation]:
    """Rule 4's premise: no data use of an instance issues before the instance itself - on the
    loop, for every data edge (its reader exists once n > distance); on Q_S, for the edges whose
    reader lies inside Q_S."""
    out = []
    for e in model.edges:
        if not e.is_data or (semantics == "paper-q" and e.distance >= s.stages):
            continue
        issue, use = s.start[e.src], s.start[e.dst] + e.distance * s.I
        if use < issue:
            out.append(Violation(
                "liveness", f"{e.dst}#{e.distance} at {use} uses {e.src}#0 issued at {issue}",
                ops=(e.src, e.dst), instances=((e.src, 0), (e.dst, e.distance)), cycle=use,
                trip_count=e.distance + 1))
    return out


def _event_times(q: Program) -> list[int]:
    """The cycles of Q at which a live set can change: within [0, T]."""
    times = {0}
    for x in q.instances:
        times.add(x.issue)
        if x.end <= q.T:
            times.add(x.end)
    return sorted(t for t in times if 0 <= t <= q.T)


def _peak_checks(rule: str, kind: str, programs: list[Program],
                 pools: Iterable[tuple[str, int]],
                 weight: Callable[[str, Instance], int]) -> list[Violation]:
    """For each pool (memory or group): the first program and cycle at which the live weight
    exceeds the limit."""
    out = []
    for pool, limit in pools:
        for q in programs:
            held = [x for x in q.instances if weight(pool, x) > 0 and x.end > x.issue]
            if sum(weight(pool, x) * x.count for x in held) <= limit:
                continue
            over = None
            for t in _event_times(q):
                live = [x for x in held if x.live_at(t)]
                amount = sum(weight(pool, x) * x.count for x in live)
                if amount > limit:
                    over = (t, live, amount)
                    break
            if over is None:
                continue
            t, live, amount = over
            out.append(Violation(
                rule, f"{kind} {pool} at cycle {t} of Q_{q.n}: {amount} > {limit} "
                f"({', '.join(_inst(x) for x in live)})",
                ops=tuple(dict.fromkeys(x.op for x in live)),
                instances=tuple((x.op, x.copy) for x in live), cycle=t, resource=pool,
                amount=amount, limit=limit, trip_count=q.n))
            break
    return out


def check_memory(model: Model, s: Schedule, semantics: str = "loop") -> list[Violation]:
    """Rule 5: live footprints fit every memory at every cycle of Q_n, for every n."""
    return _peak_checks("memory", "memory", loop_programs(model, s, semantics),
                        [(m.name, m.capacity) for m in model.machine.memories],
                        lambda mem, x: model.op(x.op).footprint_in(mem))


def check_register_limit(model: Model, s: Schedule, semantics: str = "loop") -> list[Violation]:
    """Rule 8: live registers of the values on each group fit its per-thread limit at every
    cycle of Q_n, for every n."""
    return _peak_checks("register_limit", "group", loop_programs(model, s, semantics),
                        [(g.name, g.reg_limit) for g in model.machine.warp_groups],
                        lambda g, x: model.op(x.op).regs if s.group[x.op] == g else 0)


def check_warp_uniqueness(model: Model, s: Schedule, semantics: str = "loop"
                          ) -> list[Violation]:
    """Rule 6: each op on exactly one existing group, which has at least warps(v) warps."""
    out = []
    for op in model.ops:
        g = model.machine.group(s.group[op.name])
        if g.warps < op.warps:
            out.append(Violation("warp_uniqueness",
                                 f"{op.name} needs {op.warps} warps, group {g.name} has {g.warps}",
                                 ops=(op.name,), resource=g.name, amount=g.warps, limit=op.warps))
    return out


def check_variable_latency(model: Model, s: Schedule, semantics: str = "loop"
                           ) -> list[Violation]:
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


def _overlapping_distances(s: Schedule, v: str, o: str, occupancy: int,
                           semantics: str) -> list[int]:
    """The copy distances k = i - i' at which copy i of v issues while copy i' of o occupies its
    first `occupancy` cycles: 0 <= M(v) - M(o) + k*I < occupancy (k != 0 for o = v).  On the
    loop every k is met by some trip count (n = |k| + 1); on Q_S only |k| < S."""
    d = s.start[v] - s.start[o]
    first = -(d // s.I)                          # the least k with d + k*I >= 0
    ks = range(first, first + -(-(occupancy - (d + first * s.I)) // s.I))
    return [k for k in ks if (k or v != o)
            and (semantics == "loop" or abs(k) < s.stages)]


def check_concurrency(model: Model, s: Schedule, semantics: str = "loop") -> list[Violation]:
    """Rule 9: an instance that blocks on a sync starts when no other instance of Q_n occupies
    its group, for every n (modulo I on the loop: an op that occupies its group longer than I
    meets copies of itself and others more than S - 1 iterations away)."""
    out = []
    for op in model.ops:
        incoming = model.in_edges(op.name)
        why = [e for e in incoming if e.blocking] or \
              [e for e in incoming if e.is_data and s.group[e.src] != s.group[op.name]]
        if not why:
            continue
        g = s.group[op.name]
        reason = "a blocking edge" if why[0].blocking else f"a cross-group read of {why[0].src}"
        for other in model.ops:
            if s.group[other.name] != g:
                continue
            occ = 1 if other.is_async else other.cycles
            for k in _overlapping_distances(s, op.name, other.name, occ, semantics)[:1]:
                i, j = max(k, 0), max(k, 0) - k
                at, since = s.start[op.name] + i * s.I, s.start[other.name] + j * s.I
                out.append(Violation(
                    "concurrency",
                    f"{op.name}#{i} waits on {reason} at cycle {at} of Q_{max(i, j) + 1} while "
                    f"{other.name}#{j} occupies group {g} over [{since}, {since + occ})",
                    ops=(op.name, other.name), instances=((op.name, i), (other.name, j)),
                    cycle=at, resource=g, trip_count=max(i, j) + 1))
    return out


def verify(model: Model, schedule: Schedule, rules: Iterable | None = None,
           semantics: str = "loop") -> list[Violation]:
    """All violations of `schedule` against `model` (empty when valid), rule by rule.

    `rules`: the constraints to check - names in the constraint registry or constraint objects;
    default every registered one (DESIGN rule 10: a plugin's constraint is part of validity).
    The schedule must name every op and only known groups (see `formats.check_schedule`).
    """
    check_semantics(semantics)
    out: list[Violation] = []
    for c in rule_objects(rules):
        out.extend(c.check(model, schedule, semantics=semantics))
    return out


def rule_objects(rules: Iterable | None = None) -> list:
    """Constraint objects for `rules` (names or objects; default: every registered one)."""
    names = CONSTRAINTS.names()
    out = []
    for r in (names if rules is None else rules):
        if isinstance(r, str):
            if r not in names:
                raise InputError(f"unknown rule (known: {', '.join(names)})", value=r)
            r = CONSTRAINTS.get(r)()
        out.append(r)
    return out
