"""What the encodings share: groups, auxiliary literals, symmetry breaking, schedules in and out.

An encoding is built for one (I, S): lengths L in ((S-1)*I, S*I], S stages, horizon
T = (S-1)*I + S*I of Q_S.  Its constructor creates its variables and the structural constraints
it needs (uniqueness, consistency, order chains), lets each constraint state itself through the
view, and sets the objective: minimize L.  A solution decodes to a Schedule; a Schedule gives
assumptions that pin it (for tests and replay), or hints that suggest it (a warm start).

The semantics (DESIGN section 3) decides which programs the rules over Q cover.  "loop" (the
default): every trip count n, with the values entering the loop.  The limits on live values then
need only Q_1 .. Q_S, and within each only the cycles before S*I: for n >= 2 and t >= max(L, I)
the live weight of Q_n at t is at most that of Q_{n-1} at t - I, and for n >= S, at each t
before S*I where a value becomes live, at most that of Q_S at t (the argument is spelled out
in `core.verify.loop_programs`, which this module does not share code with); `programs` lists
each program's values.  Rule 9 must hold for
copies any distance apart (`overlap_distances`).  "paper-q": Q_S alone, no entering values, copies
less than S apart - the Twill paper's letter.

`View` holds what every encoding shares; `TimeIndexed` adds what the time-indexed encodings
(compact, paper) share: the length as order literals and lifetimes as literals per cycle of Q.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from warpweave import limits
from warpweave.core.bounds import start_windows
from warpweave.core.constraints import Constraint
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.ir import CHECK_EVERY, BoolVar, IntVar, LitOrConst, Problem

SEMANTICS = ("loop", "paper-q")


def neg(x: LitOrConst) -> LitOrConst:
    return (not x) if isinstance(x, bool) else ~x


@attrs.frozen(cache_hash=True)  # a key of the encodings' caches, hashed often
class Lifetime:
    """A value a limit weighs in one program: copy `copy` of op `op` (negative: a value
    entering the loop, live from t = 0), live until the last of its reads `uses` (op, copy,
    hold) is done: `hold` cycles after that copy of the reader issues (an edge's hold; 0 for
    most reads) - or, with `to_end`, read after the program: live to its end (beyond every
    cycle a limit is stated at).  `count` > 1: that many values entering the loop, all read
    after it (a distance far beyond the trip count), weighed as one."""

    op: str
    copy: int
    uses: tuple[tuple[str, int, int], ...]
    to_end: bool
    count: int = 1


class View:
    """Base of every encoding: all but how start times, lengths and lifetimes are represented."""

    name: ClassVar[str] = ""
    # True when the problem's size does not grow with cycle counts (no literal per cycle), so
    # that `--normalize auto` solves in raw cycles (with a backend that has integers natively).
    cycle_free: ClassVar[bool] = False

    def __init__(self, model: Model, I: int, S: int,  # noqa: E741
                 constraints: Sequence[Constraint], min_length: int = 1,
                 symmetry: bool = True, semantics: str = "loop"):
        if semantics not in SEMANTICS:
            raise ValueError(f"unknown semantics {semantics!r}")
        self.model = model
        self.semantics = semantics
        self.I, self.S = I, S
        self.L = S * I
        self.T = (S - 1) * I + self.L
        self.problem = Problem(f"{model.name}/I={I}/S={S}/{self.name}")
        self._aux: dict[tuple, LitOrConst] = {}
        self._implied: dict[tuple[LitOrConst, ...], LitOrConst] = {}  # implied_by, as asked
        self._on = {(op.name, g.name): self.problem.bool(f"on[{op.name},{g.name}]")
                    for op in model.ops for g in model.machine.warp_groups}
        for op in model.ops:  # A is a function: structural, not a rule one may drop
            self.problem.exactly_one([self._on[(op.name, g.name)]
                                      for g in model.machine.warp_groups])
        names = {c.name for c in constraints}
        # With rule 3 every start lies below L <= S*I for the I the solution picks (not only
        # the largest I of a range): copy distances are then bounded by S (overlap_distances).
        self.within_length = "completion" in names
        windows = start_windows(model, I, self.L, edges="dependence" in names)
        if windows is None:
            windows = {op.name: (0, -1) for op in model.ops}  # empty: no schedule at this (I, S)
            self.problem.add_clause([])
        self.window = windows
        self.min_length = max(min_length, (S - 1) * I + 1)
        if self.min_length > self.L:  # no length of S stages reaches the lower bound
            self.problem.add_clause([])
            self.min_length = self.L
        if symmetry and all(getattr(c, "group_symmetric", False) for c in constraints):
            self._break_group_symmetry()
        self.build()
        for c in constraints:
            c.encode(self)

    # -- what each encoding provides
    def build(self) -> None:
        """Create the time and length variables, the structural constraints, the objective."""
        raise NotImplementedError

    def start_of(self, values, v: str) -> int:
        raise NotImplementedError

    def length_of(self, values) -> int:
        raise NotImplementedError

    def pin_start(self, v: str, t: int) -> list[LitOrConst]:
        """Literals that hold iff M(v) = t."""
        raise NotImplementedError

    def pin_length(self, length: int) -> list[LitOrConst]:
        raise NotImplementedError

    def _gap(self, u: str, v: str, gap: int, unless: Sequence[LitOrConst]) -> None:
        """M(v) - M(u) >= gap for two different ops, unless one of `unless` is true."""
        raise NotImplementedError

    def _forbid(self, v: str, o: str, lo: int, hi: int, unless: Sequence[LitOrConst]) -> None:
        """Not lo <= M(v) - M(o) < hi for two different ops, unless one of `unless` is true."""
        raise NotImplementedError

    # -- statements shared by the encodings with a fixed I
    def require_gap(self, u: str, v: str, delay: int, distance: int = 0,
                    unless: Sequence[LitOrConst] = ()) -> None:
        gap = delay - distance * self.I
        if u != v:
            self._gap(u, v, gap, unless)
        elif gap > 0:
            self.problem.add_clause(list(unless))

    def forbid_overlap(self, v: str, o: str, k: int, occupancy: int,
                       unless: Sequence[LitOrConst] = ()) -> None:
        lo, hi = -k * self.I, -k * self.I + occupancy
        if v != o:
            self._forbid(v, o, lo, hi, unless)
        elif lo <= 0 < hi:
            self.problem.add_clause(list(unless))

    def forbid_overlaps(self, v: str, o: str, occupancy: int,
                        unless: Sequence[LitOrConst] = ()) -> None:
        # k = copy of v minus copy of o.  The distances can be many (a long L over a small I)
        # and most state nothing (windows already apart), so the loop checks the run's deadline
        # itself: the IR checks it only as statements are added.
        distances = self.overlap_distances(occupancy)
        if o == v:  # a copy of v meets only its copies less than `occupancy` cycles before it
            distances = range(max(distances.start, 1), min(
                distances.stop, -(-occupancy // self.smallest_interval())))
        for k in limits.checked(distances, CHECK_EVERY):
            if o != v or k != 0:
                self.forbid_overlap(v, o, k, occupancy, unless)

    def smallest_interval(self) -> int:
        """The least I this problem admits (I itself, unless I is a variable)."""
        return self.I

    def overlap_distances(self, occupancy: int) -> range:
        if self.semantics == "paper-q":
            return range(-(self.S - 1), self.S)
        # M(v) - M(o) lies in (-L, L); k*I, for I at least its least value, must bring it into
        # [0, occupancy).  With rule 3, L <= S*I for the I picked, so |k| <= S (+ the
        # occupancy's wraps); without it only the start windows bound M: L = S*I for the
        # largest I if I is a variable (a range of I from 3125 to 100003 made 400,000 distances).
        i_min = self.smallest_interval()
        wraps = -(-occupancy // i_min)
        if self.within_length:
            return range(-self.S, self.S + wraps)
        return range((-self.L) // i_min, -(-self.L // i_min) + wraps)

    def programs(self) -> list[tuple[Lifetime, ...]]:
        """The values of each program the limits must hold on (see the module docstring): for
        the loop, Q_1 .. Q_S with the entering values; for "paper-q", Q_S.  Ops without a data
        use are never live and are left out."""
        if not hasattr(self, "_programs"):
            loop = self.semantics == "loop"
            out = []
            for n in (range(1, self.S + 1) if loop else [self.S]):
                values = []
                for op in self.model.ops:
                    reads = [e for e in self.model.out_edges(op.name) if e.is_data]
                    if not reads:
                        continue
                    far = max(e.distance for e in reads) if loop else 0
                    after = range(max(-far, n - far), 0)  # entering, read after the loop
                    if len(after) > 0:
                        values.append(Lifetime(op.name, after[0], (), True, len(after)))
                    for i in [*range(-far, min(n - far, 0)), *range(n)]:
                        to_end = i + max(e.distance for e in reads) >= n
                        uses = () if to_end else tuple(sorted(
                            {(e.dst, i + e.distance, e.hold) for e in reads
                             if i + e.distance >= 0}))
                        values.append(Lifetime(op.name, i, uses, to_end))
                out.append(tuple(values))
            self._programs = out
        return self._programs

    def _live_weights(self, weights: Mapping[str, int], group: str | None,
                      values: Sequence[Lifetime]):
        """(weight, value, condition) for each weighted value of a program that may be on
        `group` (the condition: its op runs there)."""
        for x in values:
            w = weights.get(x.op, 0) * x.count
            cond = True if group is None else self.on(x.op, group)
            if w and cond is not False:
                yield w, x, cond

    def live_points(self, values: Sequence[Lifetime]) -> Sequence:
        """The points of a program (cycles, or events) at which its live weight is summed; every
        peak of the program lies at one of them."""
        raise NotImplementedError

    def live_when(self, x: Lifetime, point) -> LitOrConst:
        """Value x is live at `point` (one of `live_points`)."""
        raise NotImplementedError

    def limit_live(self, weights: Mapping[str, int], bound: Any,
                   group: str | None = None) -> None:
        """One sum per program and point; a sum stated already (same terms) is not repeated.

        For one group, at a point where an op issues (`issuer`): the live weight of a group
        only rises where a value on it becomes live, so the group's peaks lie at t = 0 or at
        the issue of one of its own ops.  There the sum is stated under "that op is on the
        group", over the values on the same group as that op (`same_group`, shared by every
        group) rather than over the values on this group (a literal per group)."""
        extra, rhs = self._bound_terms(bound)
        stated = set()
        for values in self.programs():
            entries = list(self._live_weights(weights, group, values))
            if not extra and sum(w for w, _, _ in entries) <= rhs:
                continue
            for point in self.live_points([x for _, x, _ in entries]):
                issuer = None if group is None else self.issuer(point)
                terms = []
                for w, x, cond in entries:
                    if issuer is not None:
                        cond = self.same_group(x.op, issuer)
                    lit = self.implied_by([self.live_when(x, point), cond])
                    if lit is not False:
                        terms.append((w, lit))
                when = True if issuer is None else self.on(issuer, group)
                # The same sum: the same terms, each as many times (two values live on the
                # same condition weigh twice).
                key = (frozenset(Counter(terms).items()), when)
                if key not in stated and (extra or sum(w for w, _ in terms) > rhs):
                    stated.add(key)
                    self.problem.add_implies(when, terms + extra, "<=", rhs)

    def issuer(self, point) -> str | None:
        """The op that issues at `point` (one of `live_points`), or None: a point that is no
        issue (a cycle, t = 0)."""
        return None

    # -- vocabulary
    def on(self, v: str, g: str) -> BoolVar:
        return self._on[(v, g)]

    def same_group(self, u: str, v: str) -> LitOrConst:
        if u == v or len(self.model.machine.warp_groups) == 1:
            return True
        key = ("same", frozenset((u, v)))
        if key not in self._aux:  # each op is on exactly one group: two clauses per group
            s = self.problem.bool(f"same[{u},{v}]")
            for g in self.model.machine.warp_groups:
                on_u, on_v = self.on(u, g.name), self.on(v, g.name)
                self.problem.add_clause([neg(on_u), neg(on_v), s])
                self.problem.add_clause([~s, neg(on_u), on_v])
            self._aux[key] = s
        return self._aux[key]

    def implied_by(self, lits: Sequence[LitOrConst]) -> LitOrConst:
        """A literal that is true when every one of `lits` is (constants folded; cached): the
        one direction of `conj` that a term of a sum bounded from above needs (the solver may
        set it true otherwise, which only makes the sum larger).  Also cached as asked (the
        literals in their order): every group's limit asks the same lists again, and the
        canonical key costs more to build than the lookup."""
        asked = tuple(lits)
        if asked in self._implied:
            return self._implied[asked]
        if any(x is False for x in lits):
            return False
        xs = tuple(dict.fromkeys(x for x in lits if x is not True))
        if len(xs) <= 1:
            return xs[0] if xs else True
        key = ("implied", frozenset(xs))
        if key not in self._aux:
            a = self.problem.bool(f"implied{len(self._aux)}")
            self.problem.add_clause([a, *(neg(x) for x in xs)])
            self._aux[key] = a
        self._implied[asked] = self._aux[key]
        return self._aux[key]

    def conj(self, lits: Sequence[LitOrConst]) -> LitOrConst:
        """A literal equal to the conjunction (constants folded; cached)."""
        if any(x is False for x in lits):
            return False
        xs = tuple(dict.fromkeys(x for x in lits if x is not True))
        if not xs:
            return True
        if len(xs) == 1:
            return xs[0]
        key = ("and", frozenset(xs))
        if key not in self._aux:
            a = self.problem.bool(f"and{len(self._aux)}")
            for x in xs:
                self.problem.add_clause([~a, x])
            self.problem.add_clause([a, *(neg(x) for x in xs)])
            self._aux[key] = a
        return self._aux[key]

    def disj(self, lits: Sequence[LitOrConst]) -> LitOrConst:
        """A literal equal to the disjunction (constants folded; cached)."""
        return neg(self.conj([neg(x) for x in lits]))

    def _break_group_symmetry(self) -> None:
        """Interchangeable groups (same warps and register limit, not the variable-latency group)
        are used in order: op v may go to the k-th group of a class only if an earlier op went to
        the (k-1)-th.  Every schedule has a relabelled twin that satisfies this."""
        classes: dict[tuple[int, int], list[str]] = {}
        vl = self.model.machine.variable_latency_group
        for g in self.model.machine.warp_groups:
            if g.name != vl:
                classes.setdefault((g.warps, g.reg_limit), []).append(g.name)
        ops = self.model.op_names
        for names in classes.values():
            for k in range(1, len(names)):
                for j, v in enumerate(ops):
                    earlier = [self.on(u, names[k - 1]) for u in ops[:j]]
                    self.problem.add_clause([~self.on(v, names[k]), *earlier])

    @staticmethod
    def _bound_terms(bound: Any) -> tuple[list, int]:
        """A bound as (terms to move to the left-hand side, constant right-hand side)."""
        return ([(-1, bound)], 0) if isinstance(bound, IntVar) else ([], bound)

    # -- schedules in and out
    def decode(self, values) -> Schedule:
        """The schedule a solution describes."""
        start = {op.name: self.start_of(values, op.name) for op in self.model.ops}
        group = {}
        for op in self.model.ops:
            chosen = [g.name for g in self.model.machine.warp_groups
                      if values[self.on(op.name, g.name)]]
            group[op.name] = chosen[0] if chosen else self.model.machine.warp_groups[0].name
        return Schedule(self.model.name, self.I, self.length_of(values), start, group)

    def hint(self, schedule: Schedule) -> None:
        """Suggest `schedule` as the solver's starting point (a warm start, never a constraint);
        nothing if this problem cannot represent it."""
        lits = self.pin(schedule)
        if False not in lits:
            self.problem.hint({x.var: x.positive for x in lits})

    def pin(self, schedule: Schedule) -> list[LitOrConst]:
        """Assumption literals that fix `schedule` (a False among them: not representable)."""
        if not self.min_length <= schedule.L <= self.L:
            return [False]
        lits: list[LitOrConst] = []
        for op in self.model.ops:
            lits += self.pin_start(op.name, schedule.start[op.name])
            for g in self.model.machine.warp_groups:
                x = self.on(op.name, g.name)
                lits.append(x if schedule.group[op.name] == g.name else ~x)
        lits += self.pin_length(schedule.L)
        return [x for x in lits if x is not True]


class TimeIndexed(View):
    """Encodings with a literal per cycle: the length as order literals (L <= l), lifetimes as
    literals live(v, i, t) for every cycle t of Q."""

    def build(self) -> None:
        self._live: dict[tuple[str, int], object] = {}
        self._short: dict[int, LitOrConst] = {}
        prev = None
        for length in range(self.min_length, self.L):
            z = self.problem.bool(f"L<={length}")
            if prev is not None:
                self.problem.add_clause([~prev, z])
            self._short[length] = prev = z
        self.build_time()
        self.problem.minimize([(1, neg(z)) for z in self._short.values()])
        self.problem.objective_offset += self.min_length

    def build_time(self) -> None:
        """Create the start-time variables and structural constraints."""
        raise NotImplementedError

    def issued_by(self, v: str, i: int, t: int) -> LitOrConst:
        raise NotImplementedError

    def bind_liveness(self, x: Lifetime) -> object:
        """Define the lifetime of value x; return what `live_at` reads."""
        raise NotImplementedError

    def live_at(self, binding: object, x: Lifetime, t: int) -> LitOrConst:
        raise NotImplementedError

    def length_at_most(self, length: int) -> LitOrConst:
        if length < self.min_length:
            return False
        return True if length >= self.L else self._short[length]

    def finish_within_length(self, v: str, cycles: int) -> None:
        for length in range(self.min_length, self.L + 1):
            self.problem.add_clause([neg(self.length_at_most(length)),
                                     self.issued_by(v, 0, length - cycles)])

    def live(self, x: Lifetime, t: int) -> LitOrConst:
        """Value x is live at cycle t (rule 4)."""
        if x not in self._live:
            self._live[x] = self.bind_liveness(x)
        return self.live_at(self._live[x], x, t)

    def times(self) -> range:
        return range(self.T + 1)

    def live_times(self) -> range:
        """The cycles at which `limit_live` states its sums: every cycle of Q_S for "paper-q";
        the cycles before S*I for the loop (module docstring)."""
        return self.times() if self.semantics == "paper-q" else range(self.L)

    def live_points(self, values: Sequence[Lifetime]) -> range:
        return self.live_times()

    def live_when(self, x: Lifetime, t: int) -> LitOrConst:
        return self.live(x, t)

    def length_of(self, values) -> int:
        return self.min_length + sum(1 for z in self._short.values() if not values[z])

    def pin_length(self, length: int) -> list[LitOrConst]:
        return [self.length_at_most(length), neg(self.length_at_most(length - 1))]
