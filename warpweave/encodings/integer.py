"""The integer encoding: start times, the length (and, if asked, I) as integer variables;
nothing per cycle.

M(v) and L are bounded integers, so gaps and completion are linear constraints (half-reified
where a group condition switches them).  Lifetimes are stated at events, not cycles: the live
weight of a program is largest at t = 0 or at the issue of some weighted instance, so each such
issue is a checkpoint (and t = 0, where values enter the loop), and a value is live there when
it issued no later (a value entering the loop: always) and some use of it is done after (its
issue plus the edge's hold).
Precedences between instances are literals reified on the start times.  Nothing grows with the
length of a cycle, so raw cycle counts need no normalization.

With `interval=(lo, hi)` the initiation interval itself is a variable in that range and the
objective is lexicographic (I, then L): one problem per stage count decides the optimal I,
instead of one problem per I.  Every statement stays linear because I only ever meets constant
copy distances (M(v) + delta*I, M(a) + i*I); the modular wrap of a reservation is a case split
over the few wrap counts a Q of S copies allows.

Capacity: for a unit of capacity 1 that ops hold one at a time over runs of cycles (an op
may hold it over several runs), one constraint per pair of runs (their distance mod I leaves room
for both, with an integer wrap count; with I variable the wrap count is split into cases) -
nothing per cycle, so raw cycle counts cost no more than units.  Otherwise, with I fixed,
one-hot slot literals M(v) mod I = k; with I variable, at the start of each run, the runs that
cover it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from warpweave import limits
from warpweave.core.constraints import Constraint
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.encodings.view import Lifetime, View, neg
from warpweave.ir import CHECK_EVERY, IntVar, LitOrConst

Terms = list[tuple[int, Any]]


class IntegerEncoding(View):
    name = "integer"
    variable_interval = True  # accepts interval=(lo, hi): I as a variable
    cycle_free = True  # nothing per cycle: raw cycle counts cost no more than units

    def __init__(self, model: Model, I: int, S: int,  # noqa: E741
                 constraints: Sequence[Constraint], min_length: int = 1, symmetry: bool = True,
                 semantics: str = "loop", interval: tuple[int, int] | None = None):
        # With a variable I, the views' fixed-I parts (start windows, L = S*I, T) use its
        # largest value: the loosest windows, valid for every I in the range.
        self.interval = interval
        self.requested_min_length = min_length
        super().__init__(model, interval[1] if interval else I, S, constraints, min_length,
                         symmetry, semantics)

    def smallest_interval(self) -> int:
        return self.interval[0] if self.interval else self.I

    def build(self) -> None:
        p = self.problem
        self.i_var: IntVar | None = None
        if self.interval:
            self.i_var = p.int("I", *self.interval)
            self.min_length = max(self.requested_min_length,
                                  (self.S - 1) * self.interval[0] + 1)
        self._m: dict[str, IntVar] = {}
        for op in self.model.ops:
            lo, hi = self.window[op.name]
            self._m[op.name] = p.int(f"M[{op.name}]", lo, max(lo, hi))
        self._length = p.int("L", min(self.min_length, self.L), self.L)
        self._order: dict[tuple[Any, int], LitOrConst] = {}
        self._prec: dict[tuple[str, str, int, int], LitOrConst] = {}
        self._slots: dict[str, dict[int, LitOrConst]] = {}
        # live_at_issue per (value, point): every group's register limit asks the same ones
        self._live: dict[tuple[Lifetime, tuple[str, int] | None], LitOrConst] = {}
        if self.i_var is None:
            p.minimize([(1, self._length)])
            return
        # L in ((S-1)*I, S*I]; minimize I first, then L.
        p.add_linear([(1, self._length), (-self.S, self.i_var)], "<=", 0)
        p.add_linear([(1, self._length), (-(self.S - 1), self.i_var)], ">=", 1)
        p.minimize(self.objective_terms())

    def objective_terms(self) -> Terms:
        """The objective: L, or I * weight + L with I variable (weight > any L)."""
        if self.i_var is None:
            return [(1, self._length)]
        return [(self.L + 1, self.i_var), (1, self._length)]

    def least_interval(self, bound: int) -> int:
        """The least I a solver's proven lower `bound` on the objective leaves possible (the
        objective is I * (L_max + 1) + L with L <= L_max, so I = objective // (L_max + 1))."""
        return (bound - self.problem.objective_offset) // (self.L + 1)

    def _range(self, v: str) -> tuple[int, int]:
        x = self._m[v]
        return x.lb, x.ub

    def _times_i(self, k: int) -> tuple[Terms, int]:
        """k*I as (terms, constant): a term on the variable I, or a constant for a fixed I."""
        if self.i_var is None or k == 0:
            return [], k * self.I
        return [(k, self.i_var)], 0

    def _diff(self, v: str, o: str, k: int) -> tuple[Terms, int]:
        """M(v) - M(o) + k*I as (terms, constant)."""
        terms, const = self._times_i(k)
        return [(1, self._m[v]), (-1, self._m[o]), *terms], const

    def _at_most(self, x: IntVar, t: int) -> LitOrConst:
        """x <= t, reified (cached)."""
        if t < x.lb:
            return False
        if t >= x.ub:
            return True
        key = (x, t)
        if key not in self._order:
            b = self.problem.bool(f"{x.name}<={t}")
            self.problem.add_implies(b, [(1, x)], "<=", t)
            self.problem.add_implies(~b, [(1, x)], ">=", t + 1)
            self._order[key] = b
        return self._order[key]

    def _guard(self, unless: Sequence[LitOrConst]) -> LitOrConst:
        """The literal under which a statement with these exceptions must hold."""
        return self.conj([neg(x) for x in unless])

    # -- statements
    def require_gap(self, u: str, v: str, delay: int, distance: int = 0,
                    unless: Sequence[LitOrConst] = ()) -> None:
        if self.i_var is None:
            return super().require_gap(u, v, delay, distance, unless)
        terms, const = self._diff(v, u, distance) if u != v else self._times_i(distance)
        if terms:
            self.problem.add_implies(self._guard(unless), terms, ">=", delay - const)
        elif const < delay:
            self.problem.add_clause(list(unless))

    def _gap(self, u: str, v: str, gap: int, unless: Sequence[LitOrConst]) -> None:
        if self._range(v)[0] - self._range(u)[1] >= gap:
            return  # the windows already guarantee it
        self.problem.add_implies(self._guard(unless), [(1, self._m[v]), (-1, self._m[u])], ">=",
                                 gap)

    def forbid_overlap(self, v: str, o: str, k: int, occupancy: int,
                       unless: Sequence[LitOrConst] = ()) -> None:
        if self.i_var is None:
            return super().forbid_overlap(v, o, k, occupancy, unless)
        if v == o:  # an earlier copy of v itself: k*I < occupancy is forbidden
            if k >= 1:
                self.problem.add_implies(self._guard(unless), [(k, self.i_var)], ">=", occupancy)
            return
        self._outside(*self._diff(v, o, k), 0, occupancy, unless)

    def forbid_overlaps(self, v: str, o: str, occupancy: int,
                        unless: Sequence[LitOrConst] = ()) -> None:
        """With I fixed, for the loop (every copy distance): M(v) - M(o) mod I lies outside
        [0, occupancy), stated with one integer wrap count q, M(v) - M(o) - q*I in
        [occupancy, I - 1], instead of a case split per distance."""
        if self.i_var is not None or self.semantics != "loop" or v == o:
            return super().forbid_overlaps(v, o, occupancy, unless)
        I = self.I  # noqa: E741
        (vlo, vhi), (olo, ohi) = self._range(v), self._range(o)
        dmin, dmax = vlo - ohi, vhi - olo
        if not any(dmin < -k * I + occupancy and -k * I <= dmax
                   for k in limits.checked(self.overlap_distances(occupancy), CHECK_EVERY)):
            return  # the windows already keep every copy apart
        guard = self._guard(unless)
        lo, hi = -((I - 1 - dmin) // I), (dmax - occupancy) // I
        if occupancy >= I or lo > hi:  # every difference the windows allow overlaps a copy
            self.problem.add_clause([neg(guard)])
            return
        q = self.problem.int(f"apart[{v},{o}]", lo, hi)
        diff = [(1, self._m[v]), (-1, self._m[o]), (-I, q)]
        self.problem.add_implies(guard, diff, ">=", occupancy)
        self.problem.add_implies(guard, diff, "<=", I - 1)

    def _forbid(self, v: str, o: str, lo: int, hi: int, unless: Sequence[LitOrConst]) -> None:
        (vlo, vhi), (olo, ohi) = self._range(v), self._range(o)
        if vhi - olo < lo or vlo - ohi >= hi:
            return  # the windows already keep them apart
        self._outside([(1, self._m[v]), (-1, self._m[o])], 0, lo, hi, unless)

    def _outside(self, terms: Terms, const: int, lo: int, hi: int,
                 unless: Sequence[LitOrConst]) -> None:
        """terms + const < lo or >= hi, unless one of `unless` is true."""
        p = self.problem
        below, above = p.bool(f"below{len(p.vars)}"), p.bool(f"above{len(p.vars)}")
        p.add_implies(below, terms, "<=", lo - 1 - const)
        p.add_implies(above, terms, ">=", hi - const)
        p.add_clause([neg(self._guard(unless)), below, above])

    def finish_within_length(self, v: str, cycles: int) -> None:
        self.problem.add_linear([(1, self._m[v]), (-1, self._length)], "<=", -cycles)

    def limit_unit(self, rows: Sequence[tuple[str, int, int]], capacity: int) -> None:
        runs = self._unit_runs(rows)
        if capacity == 1 and runs is not None:
            self._pairwise_modular(runs)
        elif self.i_var is not None:
            self._covering(rows, capacity)
        else:
            for slot in range(self.I):
                terms = [(n, self._slot(v, (slot - c) % self.I)) for v, c, n in rows]
                terms = [(n, x) for n, x in terms if x is not False]
                if sum(n for n, _ in terms) > capacity:
                    self.problem.add_linear(terms, "<=", capacity)

    @staticmethod
    def _runs(rows: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int, int]]:
        """Maximal runs (op, first row, length, count) of consecutive rows with one count."""
        out: list[tuple[str, int, int, int]] = []
        for v, c, n in sorted(rows):
            if out and out[-1][0] == v and out[-1][1] + out[-1][2] == c and out[-1][3] == n:
                out[-1] = (v, out[-1][1], out[-1][2] + 1, n)
            else:
                out.append((v, c, 1, n))
        return out

    @classmethod
    def _unit_runs(cls, rows: Sequence[tuple[str, int, int]]
                   ) -> list[tuple[str, int, int]] | None:
        """The runs (op, first row, length) if each holds one unit (an op may hold it over
        several runs), else None."""
        runs = cls._runs(rows)
        if any(n != 1 for *_, n in runs):
            return None
        return [(v, c, length) for v, c, length, _ in runs]

    def _wraps(self) -> range:
        """The wrap counts q that separate two reservations of Q (|x_v - x_u| < S*I)."""
        return range(-self.S - 1, self.S + 2)

    def _pairwise_modular(self, runs: Sequence[tuple[str, int, int]]) -> None:
        """Runs [x_v + c_v, x_v + c_v + n_v) on a circle of I cycles do not overlap: for every
        pair, (x_v + c_v) - (x_u + c_u) - q*I lies in [n_u, I - n_v] for some integer q.  Two
        runs of one op are a constant distance apart: with I fixed that is decided here.  Each
        run is at most I long, so disjoint runs cover every slot at most once."""
        p = self.problem
        for _, _, n in runs:
            self._at_least_i(n)
        for a, (u, cu, nu) in enumerate(runs):
            for v, cv, nv in runs[a + 1:]:
                self._at_least_i(nu + nv)
                base = [(1, self._m[v]), (-1, self._m[u])] if u != v else []
                if self.i_var is None and nu + nv > self.I:
                    continue  # already infeasible
                if self.i_var is None:
                    I = self.I  # noqa: E741
                    if not base:
                        if (cv - cu - nu) % I > I - nu - nv:
                            p.add_clause([])
                        continue
                    (ulo, uhi), (vlo, vhi) = self._range(u), self._range(v)
                    dmin, dmax = vlo + cv - uhi - cu, vhi + cv - ulo - cu
                    q = p.int(f"wrap[{u},{v}]", (dmin - (I - nv)) // I, -(-(dmax - nu) // I))
                    p.add_linear([*base, (-I, q)], ">=", nu + cu - cv)
                    p.add_linear([*base, (-I, q)], "<=", I - nv + cu - cv)
                    continue
                cases = []
                for q in self._wraps():
                    b = p.bool(f"wrap[{u},{v}]={q}")
                    p.add_implies(b, [*base, (-q, self.i_var)], ">=", nu + cu - cv)
                    p.add_implies(b, [*base, (-q - 1, self.i_var)], "<=", cu - cv - nv)
                    cases.append(b)
                p.exactly_one(cases)

    def _at_least_i(self, cycles: int) -> None:
        """I >= cycles (a reservation longer than I collides with itself)."""
        if self.i_var is not None:
            self.problem.add_linear([(1, self.i_var)], ">=", cycles)
        elif cycles > self.I:
            self.problem.add_clause([])

    def _covering(self, rows: Sequence[tuple[str, int, int]], capacity: int) -> None:
        """With I variable: at the start of every run, the runs covering that point (modulo I,
        other copies of its own op included) hold at most `capacity`.  A run longer than I
        covers a point once per wrap: each wrap that can cover it counts on its own."""
        p = self.problem
        runs = self._runs(rows)
        for r, (vr, cr, nr, kr) in enumerate(runs):
            terms: Terms = [(kr, True)]
            for q in range(1, self.S + 2):  # its own run, q copies away
                if nr - 1 >= q * self.interval[0]:
                    b = p.bool(f"self{len(p.vars)}")
                    p.add_implies(~b, [(q, self.i_var)], ">=", nr)
                    terms.append((kr, b))
            for j, (vj, cj, nj, kj) in enumerate(runs):
                if j == r:
                    continue
                base = [(1, self._m[vr]), (-1, self._m[vj])]
                # Run j covers the point at wrap q: x_r - x_j - q*I in [0, n_j).  At most one
                # wrap can while n_j <= I; a longer run needs a literal per wrap.
                once = self._covers_once(nj)
                cover = p.bool(f"cover{len(p.vars)}") if once else None
                for q in self._wraps():
                    lit = cover if once else p.bool(f"cover{len(p.vars)}")
                    self._outside([*base, (-q, self.i_var)], cr - cj, 0, nj, [lit])
                    if not once:
                        terms.append((kj, lit))
                if once:
                    terms.append((kj, cover))
            p.add_linear(terms, "<=", capacity)

    def _covers_once(self, length: int) -> bool:
        """A run of `length` cycles covers a point of the circle at most once, for every I in
        the range."""
        return length <= self.interval[0]

    def _slot(self, v: str, k: int) -> LitOrConst:
        """M(v) mod I = k, one-hot over the slots v can reach (cached per op; I fixed)."""
        if v not in self._slots:
            p, I = self.problem, self.I  # noqa: E741
            lo, hi = self._range(v)
            reach = sorted({t % I for t in range(lo, min(hi, lo + I - 1) + 1)})
            lits = {k2: p.bool(f"slot[{v}]={k2}") for k2 in reach}
            p.exactly_one(lits.values())
            stage = p.int(f"stage[{v}]", lo // I, hi // I)
            p.add_linear([(1, self._m[v]), (-I, stage), *((-k2, x) for k2, x in lits.items())],
                         "==", 0)
            self._slots[v] = lits
        return self._slots[v].get(k, False)

    def _precedes(self, a: tuple[str, int], b: tuple[str, int] | None, after: int = 0
                  ) -> LitOrConst:
        """tau(a) + after <= tau(b): M(a) - M(b) + (i_a - i_b)*I + after <= 0, reified (cached);
        with b None, tau(a) + after <= 0 (the checkpoint t = 0)."""
        (va, ia) = a
        if b is None:  # copies >= 1 issue at I >= 1 or later
            return self._at_most(self._m[va], -after) if ia == 0 else False
        (vb, ib) = b
        if va == vb and (after == 0 or ib <= ia or self.i_var is None):
            return (ib - ia) * self.I >= after if ib > ia else after <= 0 and ib == ia
        key = (va, vb, ia - ib, after)
        if key not in self._prec:
            terms, const = self._diff(va, vb, ia - ib)
            const += after
            (alo, ahi), (blo, bhi) = self._range(va), self._range(vb)
            if self.i_var is None and ahi - blo + const <= 0:
                self._prec[key] = True
            elif self.i_var is None and alo - bhi + const > 0:
                self._prec[key] = False
            else:
                x = self.problem.bool(f"tau({va},{ia})+{after}<=tau({vb},{ib})")
                self.problem.add_implies(x, terms, "<=", -const)
                self.problem.add_implies(~x, terms, ">=", 1 - const)
                self._prec[key] = x
        return self._prec[key]

    def live_at_issue(self, x: Lifetime, c: tuple[str, int] | None) -> LitOrConst:
        """Value x is live when instance c issues (at t = 0 if c is None) (rule 4): issued no
        later, and some use not done by then (issued, plus its hold, after).  Cached: the
        literals are cached below it too, so this only saves building them again."""
        key = (x, c)
        if key not in self._live:
            issued = True if x.copy < 0 else self._precedes((x.op, x.copy), c)
            self._live[key] = issued if x.to_end else self.conj(
                [issued, self.disj([neg(self._precedes((u, j), c, h)) for u, j, h in x.uses])])
        return self._live[key]

    def live_points(self, values: Sequence[Lifetime]) -> list[tuple[str, int] | None]:
        """The issue of each copy (checkpoints) and t = 0 if values enter the loop."""
        points: list[tuple[str, int] | None] = [(x.op, x.copy) for x in values if x.copy >= 0]
        return points + ([None] if any(x.copy < 0 for x in values) else [])

    def live_when(self, x: Lifetime, point: tuple[str, int] | None) -> LitOrConst:
        return self.live_at_issue(x, point)

    def issuer(self, point: tuple[str, int] | None) -> str | None:
        return None if point is None else point[0]

    # -- vocabulary for plugins (I fixed)
    def issued_by(self, v: str, i: int, t: int) -> LitOrConst:
        return self._at_most(self._m[v], t - i * self.I)

    # -- schedules
    def decode(self, values) -> Schedule:
        schedule = super().decode(values)
        if self.i_var is None:
            return schedule
        return Schedule(schedule.model, int(values[self.i_var]), schedule.L, schedule.start,
                        schedule.group)

    def start_of(self, values, v: str) -> int:
        return int(values[self._m[v]])

    def length_of(self, values) -> int:
        return int(values[self._length])

    def pin_start(self, v: str, t: int) -> list[LitOrConst]:
        x = self._m[v]
        return [self._at_most(x, t), neg(self._at_most(x, t - 1))]

    def pin_length(self, length: int) -> list[LitOrConst]:
        x = self._length
        return [self._at_most(x, length), neg(self._at_most(x, length - 1))]

    def hint(self, schedule: Schedule) -> None:
        """The start times, L (and I) as integer hints, without the order literals `pin`
        would create for them."""
        values: dict = {self._m[v]: t for v, t in schedule.start.items()}
        values[self._length] = schedule.L
        if self.i_var is not None:
            values[self.i_var] = schedule.I
        elif schedule.I != self.I:
            return
        if any(not x.lb <= t <= x.ub for x, t in values.items()):
            return
        values.update({self.on(op.name, g.name): schedule.group[op.name] == g.name
                       for op in self.model.ops for g in self.model.machine.warp_groups})
        self.problem.hint(values)

    def pin(self, schedule: Schedule) -> list[LitOrConst]:
        lits = super().pin(schedule)
        if self.i_var is not None:
            lits += [self._at_most(self.i_var, schedule.I),
                     neg(self._at_most(self.i_var, schedule.I - 1))]
        return [x for x in lits if x is not True]
