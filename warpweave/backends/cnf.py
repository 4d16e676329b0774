"""The IR as CNF: what the `sat` backend solves and what the `cnf` / `wcnf` exports write.

- Booleans get the DIMACS variables 1..n in IR order (so a DIMACS model reads back directly).
- An integer `x` in `[lb, ub]` is order-encoded: literals `[x >= k]` for `k = lb+1 .. ub` with the
  chain `[x >= k+1] -> [x >= k]`, so `x = lb + sum_k [x >= k]`; a linear term `c*x` becomes the
  constant `c*lb` plus `c` on each order literal.
- A linear constraint over one or two integers and nothing else (bounds, differences such as
  `t_v - t_u >= d`) is stated on the order literals directly (`CnfTranslation.order_leq`).
- Every other linear constraint then is pseudo-Boolean, normalized to `sum w*lit <= k` with `w > 0`
  (`>=` negated, `==` as both).  Trivial ones are decided here; equal weights go to `pysat.card`
  with the chosen cardinality encoding, others to `pysat.pb` with the chosen PB encoding.  Nothing
  here writes CNF by hand for what those encoders do; the only clauses written directly are the IR's
  own clauses, the order chains and order comparisons, and unit clauses where the normalization
  already decides a literal (a weight above the bound, a bound of 0).
- `pairwise`, `bitwise` and `ladder` exist only for bound 1 (at-most-one); a cardinality with a
  larger bound then uses `totalizer`.
- An implication `g -> PB` adds `~g` to every clause of the PB's encoding.  This is exact for
  every encoder, monotone or not, because the encoding's auxiliary variables are fresh (one
  `IDPool` for the whole problem, passed as `vpool=` to every encoder) and used by nothing else:
  `exists aux. (~g or E(x, aux))` is `~g or exists aux. E(x, aux)`, i.e. `~g or PB(x)`.  The
  bound constraints of optimization use the same guard with a fresh selector literal.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Mapping

from warpweave.backends.normal import collect, leq_forms, pb_leq
from warpweave.ir import (
    AtMostOne,
    Clause,
    ExactlyOne,
    Implies,
    IntVar,
    Linear,
    Lit,
    Problem,
    Term,
    Var,
)

CARD_ENCODINGS = ("seqcounter", "totalizer", "sortnetwrk", "cardnetwrk", "kmtotalizer",
                  "mtotalizer", "pairwise", "bitwise", "ladder")
AMO_ONLY = frozenset({"pairwise", "bitwise", "ladder"})  # pysat.card supports only bound 1
CARD_FALLBACK = "totalizer"
PB_ENCODINGS = ("best", "bdd", "seqcounter", "sortnetwrk", "adder", "binmerge", "watchdog",
                "totalizer", "mixedradix")
DEFAULT_CARD = "totalizer"
DEFAULT_PB = "best"

WLits = list[tuple[int, int]]  # weighted DIMACS literals


class CnfTranslation:
    """One problem translated to clauses over one `IDPool`; read `clauses`, decode models with
    `values`, and add guarded bounds on the objective with `objective_at_most`."""

    def __init__(self, problem: Problem, card: str = DEFAULT_CARD, pb: str = DEFAULT_PB):
        from pysat.formula import IDPool

        if card not in CARD_ENCODINGS:
            raise ValueError(f"unknown cardinality encoding {card!r} "
                             f"(known: {', '.join(CARD_ENCODINGS)})")
        if pb not in PB_ENCODINGS:
            raise ValueError(f"unknown PB encoding {pb!r} (known: {', '.join(PB_ENCODINGS)})")
        self.problem = problem
        self.card = card
        self.pb = pb
        self.pool = IDPool()
        self.clauses: list[list[int]] = []
        self.bool_id = {v: self.pool.id(("b", v.index)) for v in problem.bools}
        self.order: dict[IntVar, list[int]] = {}
        for x in problem.ints:
            ids = [self.pool.id(("o", x.index, k)) for k in range(x.lb + 1, x.ub + 1)]
            self.order[x] = ids
            self.clauses.extend([[-hi, lo] for lo, hi in itertools.pairwise(ids)])
        for c in problem.constraints:
            self.clauses.extend(self.encode(c))
        self.objective: tuple[WLits, int] | None = None
        if problem.objective is not None:
            wlits, constant = self.expand(problem.objective)
            lits, weights, k = pb_leq(wlits, 0, operator.neg)
            # objective = constant + offset - k + sum(weights * lits), every weight positive
            self.objective = (list(zip(weights, lits, strict=True)),
                              constant + problem.objective_offset - k)

    # -- literals and terms
    def lit(self, x: Lit) -> int:
        i = self.bool_id[x.var]
        return i if x.positive else -i

    def expand(self, terms: Iterable[Term]) -> tuple[WLits, int]:
        """Terms as weighted DIMACS literals plus a constant (integers via their order
        literals)."""
        coefs, constant = collect(terms)
        out: WLits = []
        for v, c in coefs.items():
            if isinstance(v, IntVar):
                constant += c * v.lb
                out.extend((c, o) for o in self.order[v])
            else:
                out.append((c, self.bool_id[v]))
        return out, constant

    # -- constraints
    def encode(self, c) -> list[list[int]]:
        if isinstance(c, Clause):
            return [[self.lit(x) for x in c.lits]]
        if isinstance(c, AtMostOne):
            return self.at_most([self.lit(x) for x in c.lits], 1)
        if isinstance(c, ExactlyOne):
            lits = [self.lit(x) for x in c.lits]
            return [lits, *self.at_most(lits, 1)]
        if isinstance(c, Linear):
            return self.linear(c, None)
        if isinstance(c, Implies):
            return self.linear(c.then, self.lit(c.lit))
        raise TypeError(f"not an IR constraint: {c!r}")

    def linear(self, c: Linear, guard: int | None) -> list[list[int]]:
        """`c`, or `guard -> c` when a guard literal is given."""
        out = []
        for terms, rhs in leq_forms(c.terms, c.sense, c.rhs):
            coefs, constant = collect(terms)
            if 0 < len(coefs) <= 2 and all(isinstance(v, IntVar) for v in coefs):
                out.extend(self.order_leq(coefs, rhs - constant))
            else:
                wlits, constant = self.expand(terms)
                out.extend(self.pb_at_most(wlits, rhs - constant))
        return out if guard is None else [[-guard, *cl] for cl in out]

    def le_lit(self, x: IntVar, a: int, t: int) -> int | bool:
        """The order literal for `a*x <= t` (a != 0), or a constant when the domain decides."""
        if a > 0:                       # x <= floor(t / a)
            m = t // a
            return True if m >= x.ub else False if m < x.lb else -self.order[x][m - x.lb]
        m = -(t // -a)                  # a < 0: x >= ceil(t / a)
        return True if m <= x.lb else False if m > x.ub else self.order[x][m - x.lb - 1]

    def order_leq(self, coefs: dict, rhs: int) -> list[list[int]]:
        """`a*x <= rhs` or `a*x + b*y <= rhs` over order-encoded integers, stated on the order
        literals directly (Tamura et al.'s order encoding of linear comparisons: for each value
        s of a*x, `a*x <= s-1 or b*y <= rhs-s`), O(domain) clauses instead of a cardinality
        network over all order literals."""
        (x, a), *rest = coefs.items()
        if not rest:
            options = [[self.le_lit(x, a, rhs)]]
        else:
            ((y, b),) = rest
            values = sorted({a * v for v in range(x.lb, x.ub + 1)})
            options = [[self.le_lit(x, a, s - 1), self.le_lit(y, b, rhs - s)] for s in values]
        out = []
        for lits in options:
            if True not in lits:
                out.append([lit for lit in lits if lit is not False])
        return out

    def pb_at_most(self, wlits: WLits, bound: int) -> list[list[int]]:
        """`sum w*lit <= bound` for any signs of the weights, through pysat.card / pysat.pb."""
        lits, weights, k = pb_leq(wlits, bound, operator.neg)
        if k < 0:
            return [[]]
        # a literal whose weight alone exceeds the bound must be false
        units = [[-x] for x, w in zip(lits, weights, strict=True) if w > k]
        kept = [(w, x) for x, w in zip(lits, weights, strict=True) if w <= k]
        if sum(w for w, _ in kept) <= k:
            return units
        if len({w for w, _ in kept}) == 1:
            w = kept[0][0]
            return units + self.at_most([x for _, x in kept], k // w)
        from pysat.pb import EncType, PBEnc

        enc = PBEnc.atmost(lits=[x for _, x in kept], weights=[w for w, _ in kept], bound=k,
                           vpool=self.pool, encoding=getattr(EncType, self.pb))
        return units + enc.clauses

    def at_most(self, lits: list[int], k: int) -> list[list[int]]:
        """A cardinality constraint through pysat.card with the chosen encoding."""
        from pysat.card import CardEnc, EncType

        if k >= len(lits):
            return []
        if k == 0:
            return [[-x] for x in lits]
        name = self.card if k == 1 or self.card not in AMO_ONLY else CARD_FALLBACK
        return CardEnc.atmost(lits=lits, bound=k, vpool=self.pool,
                              encoding=getattr(EncType, name)).clauses

    def objective_at_most(self, bound: int, selector: int) -> list[list[int]]:
        """Clauses for `selector -> objective <= bound`."""
        assert self.objective is not None
        wlits, constant = self.objective
        return [[-selector, *cl] for cl in self.pb_at_most(wlits, bound - constant)]

    def new_var(self) -> int:
        return self.pool.id(("selector", self.pool.top + 1))

    # -- models
    def values(self, model: Iterable[int]) -> dict[Var, int | bool]:
        """A full IR assignment from a solver model (variables it did not mention are false)."""
        true = {x for x in model if x > 0}
        out: dict[Var, int | bool] = {v: i in true for v, i in self.bool_id.items()}
        for x, ids in self.order.items():
            out[x] = x.lb + sum(1 for i in ids if i in true)
        return {v: out[v] for v in self.problem.vars}

    def model_of(self, values: Mapping[Var, int | bool]) -> list[int]:
        """The DIMACS literals of the problem variables that `values` assigns (all of them:
        a model, in tests; some: hints as phases)."""
        out = [i if values[v] else -i for v, i in self.bool_id.items() if v in values]
        for x, ids in self.order.items():
            if x in values:
                out.extend(i if values[x] >= x.lb + 1 + j else -i for j, i in enumerate(ids))
        return out

    @property
    def nv(self) -> int:
        return self.pool.top

