"""The compact encoding: order-encoded start times, modular capacity, derived lifetimes.

Each op v has literals y[v, t] = (M(v) <= t) over its start window, chained y[t] -> y[t+1]; copy i
needs no variables of its own since tau(v, i) = M(v) + i*I.  Start literals s[v, t] = y[t] & ~y[t-1]
and slot literals m[v, k] = (M(v) mod I = k) are defined exactly from them.  A gap
M(v) - M(u) >= g is one clause per start value of u; capacity is stated on the I modular slots;
the lifetime of (v, i) at t is `issued(v, i, t) and (to_end or some use not yet done)` - a use
(u, j) with hold h is done at t when issued by t - h - (a value entering the loop is issued from
t = 0), a literal defined exactly from order literals.
Everything is linear in the window sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

from warpweave.encodings.view import Lifetime, TimeIndexed, neg
from warpweave.ir import LitOrConst


class CompactEncoding(TimeIndexed):
    name = "compact"

    def build_time(self) -> None:
        p = self.problem
        self._y: dict[str, dict[int, LitOrConst]] = {}
        self._s: dict[str, dict[int, LitOrConst]] = {}
        self._slot: dict[tuple[str, int], LitOrConst] = {}
        for op in self.model.ops:
            v = op.name
            lo, hi = self.window[v]
            y = {t: p.bool(f"M[{v}]<={t}") for t in range(lo, hi)}
            for t in range(lo, hi - 1):
                p.add_clause([~y[t], y[t + 1]])
            self._y[v] = y
            self._s[v] = {t: self.conj([self.by(v, t), neg(self.by(v, t - 1))])
                          for t in range(lo, hi + 1)}

    def by(self, v: str, t: int) -> LitOrConst:
        """M(v) <= t."""
        lo, hi = self.window[v]
        if t < lo:
            return False
        if t >= hi:
            return hi >= lo  # an empty window is never reached
        return self._y[v][t]

    def at(self, v: str, t: int) -> LitOrConst:
        """M(v) = t."""
        return self._s[v].get(t, False)

    # -- view
    def issued_by(self, v: str, i: int, t: int) -> LitOrConst:
        return self.by(v, t - i * self.I)

    def issued_at(self, v: str, i: int, t: int) -> LitOrConst:
        return self.at(v, t - i * self.I)

    def _gap(self, u: str, v: str, gap: int, unless: Sequence[LitOrConst]) -> None:
        # M(u) >= t  implies  M(v) >= t + gap, for every t u can start at.
        lo, hi = self.window[u]
        for t in range(lo, hi + 1):
            self.problem.add_clause([self.by(u, t - 1), neg(self.by(v, t + gap - 1)), *unless])

    def _forbid(self, v: str, o: str, lo: int, hi: int, unless: Sequence[LitOrConst]) -> None:
        # M(v) = t  implies  M(o) outside (t - hi, t - lo].
        for t, start in self._s[v].items():
            if start is False:
                continue
            self.problem.add_clause([neg(start), neg(self.by(o, t - lo)), self.by(o, t - hi),
                                     *unless])

    def limit_unit(self, rows: Sequence[tuple[str, int, int]], capacity: int) -> None:
        # Per op, one literal "v holds the unit in slot r" (the disjunction of its rows' slot
        # literals) when its rows fall in distinct slots with one count; else one term per row.
        per_op: dict[str, list[tuple[int, int]]] = {}
        for v, c, n in rows:
            per_op.setdefault(v, []).append((c, n))
        for slot in range(self.I):
            terms = []
            for v, held in per_op.items():
                counts = {n for _, n in held}
                if len(counts) == 1 and len({c % self.I for c, _ in held}) == len(held):
                    terms.append((counts.pop(), self.disj(
                        [self._modular(v, (slot - c) % self.I) for c, _ in held])))
                else:
                    terms += [(n, self._modular(v, (slot - c) % self.I)) for c, n in held]
            terms = [(n, x) for n, x in terms if x is not False]
            if sum(n for n, _ in terms) <= capacity:
                continue
            if capacity == 1 and all(n == 1 for n, _ in terms):
                self.problem.at_most_one([x for _, x in terms])
            else:
                self.problem.add_linear(terms, "<=", capacity)

    def live_times(self) -> range:
        """On Q_S ("paper-q"), only the cycles from the issue of the last copy on: before
        (S-1)*I the live weight at t is at most that at t + I.  (Instance (v, i) live at t
        implies (v, i+1) live at t + I: it issues I later, its uses in Q are I later or lie
        beyond Q, keeping it live to T+1 > t + I; and no instance of the last copy issues before
        (S-1)*I.  Same op, same group.)  On the loop, the view's window."""
        if self.semantics == "paper-q":
            return range((self.S - 1) * self.I, self.T + 1)
        return super().live_times()

    def _modular(self, v: str, k: int) -> LitOrConst:
        key = (v, k)
        if key not in self._slot:
            self._slot[key] = self.disj([s for t, s in self._s[v].items() if t % self.I == k])
        return self._slot[key]

    def bind_liveness(self, x: Lifetime) -> object:
        return x

    def live_at(self, binding: object, x: Lifetime, t: int) -> LitOrConst:
        issued = True if x.copy < 0 else self.issued_by(x.op, x.copy, t)
        if x.to_end:
            return issued
        return self.conj([issued,
                          self.disj([neg(self.issued_by(u, j, t - h)) for u, j, h in x.uses])])

    # -- schedules
    def start_of(self, values, v: str) -> int:
        lo, hi = self.window[v]
        return next((t for t in range(lo, hi) if values[self._y[v][t]]), hi)

    def pin_start(self, v: str, t: int) -> list[LitOrConst]:
        return [self.by(v, t), neg(self.by(v, t - 1))]
