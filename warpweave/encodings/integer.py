"""The integer encoding: start times and the length as integer variables; nothing per cycle.

M(v) and L are bounded integers, so gaps and completion are linear constraints (half-reified
where a group condition switches them).  Capacity uses, per unit, either one modular
non-overlap constraint per pair of ops (capacity 1, each op holding the unit over one run of
cycles: (x_v - x_u) mod I must leave room for both runs, with an integer wrap count) or, in
general, one-hot slot literals M(v) mod I = k.  Lifetimes are stated at events, not cycles: the
live weight of Q is largest at the issue of some weighted instance, so each such issue is a
checkpoint, and an instance is live there when it issued no later and some use of it issues
after.  Precedences between instances are literals reified on the start times.  Nothing grows
with the length of a cycle, so raw cycle counts need no normalization.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from warpweave.core.constraints import uses_in_q
from warpweave.encodings.ir import IntVar, LitOrConst
from warpweave.encodings.view import View, neg


class IntegerEncoding(View):
    name = "integer"

    def build(self) -> None:
        p = self.problem
        self._m: dict[str, IntVar] = {}
        for op in self.model.ops:
            lo, hi = self.window[op.name]
            self._m[op.name] = p.int(f"M[{op.name}]", lo, max(lo, hi))
        self._length = p.int("L", self.min_length, self.L)
        self._order: dict[tuple[Any, int], LitOrConst] = {}
        self._prec: dict[tuple[str, str, int], LitOrConst] = {}
        self._slots: dict[str, dict[int, LitOrConst]] = {}
        p.minimize([(1, self._length)])

    def _range(self, v: str) -> tuple[int, int]:
        x = self._m[v]
        return x.lb, x.ub

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
    def _gap(self, u: str, v: str, gap: int, unless: Sequence[LitOrConst]) -> None:
        if self._range(v)[0] - self._range(u)[1] >= gap:
            return  # the windows already guarantee it
        self.problem.add_implies(self._guard(unless), [(1, self._m[v]), (-1, self._m[u])], ">=",
                                 gap)

    def _forbid(self, v: str, o: str, lo: int, hi: int, unless: Sequence[LitOrConst]) -> None:
        (vlo, vhi), (olo, ohi) = self._range(v), self._range(o)
        dmin, dmax = vlo - ohi, vhi - olo
        if dmax < lo or dmin >= hi:
            return
        diff = [(1, self._m[v]), (-1, self._m[o])]
        p = self.problem
        below = p.bool(f"{v}-{o}<{lo}") if dmin < lo else False
        above = p.bool(f"{v}-{o}>={hi}") if dmax >= hi else False
        if below is not False:
            p.add_implies(below, diff, "<=", lo - 1)
        if above is not False:
            p.add_implies(above, diff, ">=", hi)
        p.add_clause([neg(self._guard(unless)), below, above])

    def finish_within_length(self, v: str, cycles: int) -> None:
        self.problem.add_linear([(1, self._m[v]), (-1, self._length)], "<=", -cycles)

    def limit_unit(self, rows: Sequence[tuple[str, int, int]], capacity: int) -> None:
        runs = self._single_runs(rows)
        if capacity == 1 and runs is not None:
            self._pairwise_modular(runs)
            return
        for slot in range(self.I):
            terms = [(n, self._slot(v, (slot - c) % self.I)) for v, c, n in rows]
            terms = [(n, x) for n, x in terms if x is not False]
            if sum(n for n, _ in terms) > capacity:
                self.problem.add_linear(terms, "<=", capacity)

    @staticmethod
    def _single_runs(rows: Sequence[tuple[str, int, int]]) -> dict[str, tuple[int, int]] | None:
        """op -> (first row, row count) if each op holds one unit over one run of rows."""
        held: dict[str, list[int]] = {}
        for v, c, n in rows:
            if n != 1:
                return None
            held.setdefault(v, []).append(c)
        runs = {}
        for v, cs in held.items():
            cs.sort()
            if cs != list(range(cs[0], cs[0] + len(cs))):
                return None
            runs[v] = (cs[0], len(cs))
        return runs

    def _pairwise_modular(self, runs: dict[str, tuple[int, int]]) -> None:
        """Runs [x_v, x_v + n_v) on a circle of I cycles do not overlap: for every pair,
        x_v - x_u - q*I lies in [n_u, I - n_v] for some integer q."""
        p, I = self.problem, self.I  # noqa: E741
        names = list(runs)
        for v in names:
            if runs[v][1] > I:
                p.add_clause([])
        for a, u in enumerate(names):
            for v in names[a + 1:]:
                (cu, nu), (cv, nv) = runs[u], runs[v]
                if nu + nv > I:
                    p.add_clause([])
                    continue
                (ulo, uhi), (vlo, vhi) = self._range(u), self._range(v)
                dmin, dmax = vlo + cv - uhi - cu, vhi + cv - ulo - cu
                q = p.int(f"wrap[{u},{v}]", (dmin - (I - nv)) // I, -(-(dmax - nu) // I))
                diff = [(1, self._m[v]), (-1, self._m[u]), (-I, q)]
                p.add_linear(diff, ">=", nu + cu - cv)
                p.add_linear(diff, "<=", I - nv + cu - cv)

    def _slot(self, v: str, k: int) -> LitOrConst:
        """M(v) mod I = k, one-hot over the slots v can reach (cached per op)."""
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

    def _precedes(self, a: tuple[str, int], b: tuple[str, int]) -> LitOrConst:
        """tau(a) <= tau(b): M(a) - M(b) <= (i_b - i_a) * I, reified (cached)."""
        (va, ia), (vb, ib) = a, b
        k = (ib - ia) * self.I
        if va == vb:
            return k >= 0
        key = (va, vb, k)
        if key not in self._prec:
            (alo, ahi), (blo, bhi) = self._range(va), self._range(vb)
            if ahi - blo <= k:
                self._prec[key] = True
            elif alo - bhi > k:
                self._prec[key] = False
            else:
                x = self.problem.bool(f"tau({va})<=tau({vb})+{k}")
                diff = [(1, self._m[va]), (-1, self._m[vb])]
                self.problem.add_implies(x, diff, "<=", k)
                self.problem.add_implies(~x, diff, ">=", k + 1)
                self._prec[key] = x
        return self._prec[key]

    def live_at_issue(self, x: tuple[str, int], c: tuple[str, int]) -> LitOrConst:
        """Instance x is live when instance c issues (rule 4)."""
        uses, to_end = uses_in_q(self.model, x[0], x[1], self.S)
        later = True if to_end else self.disj([neg(self._precedes(use, c)) for use in uses])
        return self.conj([self._precedes(x, c), later])

    def limit_live(self, weights: Mapping[tuple[str, int], int], bound: Any,
                   group: str | None = None) -> None:
        extra, rhs = self._bound_terms(bound)
        entries = list(self._live_weights(weights, group))
        for _, checkpoint, _ in entries:
            terms = []
            for w, x, cond in entries:
                lit = self.conj([self.live_at_issue(x, checkpoint), cond])
                if lit is not False:
                    terms.append((w, lit))
            if extra or sum(w for w, _ in terms) > rhs:
                self.problem.add_linear(terms + extra, "<=", rhs)

    # -- vocabulary for plugins
    def issued_by(self, v: str, i: int, t: int) -> LitOrConst:
        return self._at_most(self._m[v], t - i * self.I)

    # -- schedules
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
