"""The paper encoding: the time-indexed formulation of the Twill paper's Figures 4-6.

Variables are the paper's: op[v, i, t] (copy i of v issues at t in Q), live[v, i, t], and
opw[v, w] (the shared `on` literals).  Structural constraints: UNIQUENESS (each copy issues once),
CONSISTENCY (copy i issues i*I after copy 0), COMPLETION through the start windows, and for each
value that some constraint asks about, INIT / LIVEPROP / DEADPROP over live[v, i, t].

Where the paper's text is open or differs from DESIGN section 3, this encoding follows DESIGN:
- INIT makes live[v, i, T] true when some data use of (v, i) lies beyond Q (i + delta >= S), for
  every copy i, not only for loop-carried edges of the last copy;
- DEADPROP-1 revives a dead value at a use only if the value was issued before that cycle, and
  DEADPROP-2 keeps it dead otherwise: a use in the cycle of the definition (or, in a schedule that
  breaks a dependence, before it) does not make the value live before it exists, as rule 4 says;
- rules are stated on copy 0 with the distance folded into the gap (op[u,0,t] => not
  op[v,0,t'] for t' < t + d - delta*I), which CONSISTENCY makes equivalent to the paper's
  per-copy form and which also covers edges whose distance reaches beyond Q;
- capacity is the paper's - per cycle t, over all copies - stated on the I cycles
  [S*I, (S+1)*I) of a Q with one more copy (S + 1 copies, 0..S): there every row of every op
  meets its copies (copy i of v holds row c at t = M(v) + c + i*I, and for M(v) + c < L <= S*I
  that i lies in [0, S]), so the sums are exactly DESIGN rule 2's modular slots, and every other
  cycle of any Q_n holds a subset of one of them.  Copy S exists for this alone;
- liveness follows `view.programs` (the semantics): for the loop, copies 0..S-1 and the values
  entering the loop (live[v, j, t] with j < 0, never defined, live from t = 0); a use whose
  reader holds the value (an edge's hold h) counts where the reader is done with it,
  op[u, j, t - h] in DEADPROP.
The statements are pairwise (quadratic in the window sizes), as in the paper.
"""

from __future__ import annotations

from collections.abc import Sequence

from warpweave.encodings.view import Lifetime, TimeIndexed, neg
from warpweave.ir import LitOrConst


class PaperEncoding(TimeIndexed):
    name = "paper"

    def build_time(self) -> None:
        p, I = self.problem, self.I  # noqa: E741
        self._op: dict[tuple[str, int], dict[int, LitOrConst]] = {}
        self._prefix: dict[tuple[str, int, int], LitOrConst] = {}
        for op in self.model.ops:
            v = op.name
            lo, hi = self.window[v]
            for i in range(self.S + 1):  # copy S: for capacity (module docstring)
                lits = {t + i * I: p.bool(f"op[{v},{i},{t + i * I}]") for t in range(lo, hi + 1)}
                p.exactly_one(lits.values())                                       # UNIQUENESS
                self._op[(v, i)] = lits
            for i in range(1, self.S + 1):
                for t, x in self._op[(v, 0)].items():
                    p.add_clause([~x, self._op[(v, i)][t + i * I]])               # CONSISTENCY

    def op(self, v: str, i: int, t: int) -> LitOrConst:
        return self._op[(v, i)].get(t, False)

    # -- view
    def issued_at(self, v: str, i: int, t: int) -> LitOrConst:
        return self.op(v, i, t)

    def issued_by(self, v: str, i: int, t: int) -> LitOrConst:
        """tau(v, i) <= t, as a prefix disjunction of op literals (defined exactly, cached)."""
        times = self._op[(v, i)]
        if not times or t < min(times):
            return False
        if t >= max(times):
            return True
        if (v, i, t) not in self._prefix:
            prev: LitOrConst = False
            for k in range(min(times), max(times)):
                prev = self._prefix.setdefault((v, i, k), self.disj([prev, times[k]]))
        return self._prefix[(v, i, t)]

    def _gap(self, u: str, v: str, gap: int, unless: Sequence[LitOrConst]) -> None:
        # DEPENDENCE: op[u, 0, t] => not op[v, 0, t'] for t' < t + gap (gap = d - delta*I).
        for t, x in self._op[(u, 0)].items():
            for t2, y in self._op[(v, 0)].items():
                if t2 < t + gap:
                    self.problem.add_clause([~x, ~y, *unless])

    def _forbid(self, v: str, o: str, lo: int, hi: int, unless: Sequence[LitOrConst]) -> None:
        # CONCURRENCY: op[v, 0, t] => not op[o, 0, t'] for lo <= t - t' < hi.
        for t, x in self._op[(v, 0)].items():
            for t2, y in self._op[(o, 0)].items():
                if lo <= t - t2 < hi:
                    self.problem.add_clause([~x, ~y, *unless])

    def limit_unit(self, rows: Sequence[tuple[str, int, int]], capacity: int) -> None:
        # CAPACITY: at every cycle t of the full window, sum over copies and rows of
        # op[v, i, t - c].
        for t in range(self.S * self.I, (self.S + 1) * self.I):
            terms = [(n, self.op(v, i, t - c)) for v, c, n in rows for i in range(self.S + 1)]
            terms = [(n, x) for n, x in terms if x is not False]
            if sum(n for n, _ in terms) > capacity:
                self.problem.add_linear(terms, "<=", capacity)

    def bind_liveness(self, x: Lifetime) -> object:
        p, T, v, i = self.problem, self.T, x.op, x.copy
        live = {t: p.bool(f"live[{v},{i},{t}]") for t in range(T + 1)}
        p.add_clause([live[T] if x.to_end else ~live[T]])                             # INIT
        for t in range(1, T + 1):
            # A value entering the loop (i < 0) is never defined in Q: it exists from t = 0.
            now, before = live[t], live[t - 1]
            defined = self.op(v, i, t) if i >= 0 else False
            earlier = self.issued_by(v, i, t - 1) if i >= 0 else True
            used = [self.op(u, j, t - h) for u, j, h in x.uses]  # done reading at t
            p.add_clause([~now, neg(defined), ~before])                           # LIVEPROP-1
            p.add_clause([~now, defined, before])                                 # LIVEPROP-2
            for use in used:
                p.add_clause([now, neg(use), neg(earlier), before])               # DEADPROP-1
            p.add_clause([now, *used, ~before])                                   # DEADPROP-2
            p.add_clause([now, earlier, ~before])                                 # (before def)
        return live

    def live_at(self, binding: object, x: Lifetime, t: int) -> LitOrConst:
        return binding[t] if 0 <= t <= self.T else False

    # -- schedules
    def start_of(self, values, v: str) -> int:
        return next(t for t, x in self._op[(v, 0)].items() if values[x])

    def pin_start(self, v: str, t: int) -> list[LitOrConst]:
        return [self.op(v, 0, t)]
