"""Normal forms of IR expressions that several backends share.

`collect` turns IR terms (literals, negated literals meaning `1 - x`, integers) into coefficients
on variables plus a constant; `span` gives the range of such a sum from the variable bounds (what
MIP big-Ms and trivial-constraint checks need); `pb_leq` states a linear constraint over literals
as `sum w*lit <= k` with positive weights (what the CNF encoders take).  Nothing here imports a
solver.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from typing import TypeVar

from warpweave.ir import IntVar, Not, Sense, Term, Var

L = TypeVar("L")


def collect(terms: Iterable[Term]) -> tuple[dict[Var, int], int]:
    """`sum coef*x` as `sum c_v * v + constant` over variables (a negated `~x` is `1 - x`);
    repeated variables are merged and zero coefficients dropped."""
    coefs: dict[Var, int] = {}
    constant = 0
    for c, x in terms:
        if isinstance(x, Not):
            constant += c
            coefs[x.var] = coefs.get(x.var, 0) - c
        else:
            coefs[x] = coefs.get(x, 0) + c
    return {v: c for v, c in coefs.items() if c}, constant


def lower(v: Var) -> int:
    return v.lb if isinstance(v, IntVar) else 0


def upper(v: Var) -> int:
    return v.ub if isinstance(v, IntVar) else 1


def span(coefs: dict[Var, int], constant: int = 0) -> tuple[int, int]:
    """The least and greatest value of `sum c_v * v + constant` over the variables' domains."""
    lo = hi = constant
    for v, c in coefs.items():
        a, b = c * lower(v), c * upper(v)
        lo += min(a, b)
        hi += max(a, b)
    return lo, hi


def senses(sense: Sense) -> tuple[str, ...]:
    """An equality is stated as both inequalities by backends that need one-sided constraints."""
    return ("<=", ">=") if sense == "==" else (sense,)


def entailed(lo: int, hi: int, sense: str, rhs: int) -> bool:
    """Whether `lo <= e <= hi` makes `e sense rhs` always true."""
    return {"<=": hi <= rhs, ">=": lo >= rhs, "==": lo == hi == rhs}[sense]


def impossible(lo: int, hi: int, sense: str, rhs: int) -> bool:
    """Whether `lo <= e <= hi` makes `e sense rhs` always false."""
    return {"<=": lo > rhs, ">=": hi < rhs, "==": not lo <= rhs <= hi}[sense]


def pb_leq(wlits: Iterable[tuple[int, L]], rhs: int,
           negate: Callable[[L], L] = operator.invert) -> tuple[list[L], list[int], int]:
    """`sum w*lit <= rhs` (any signs) as `sum w'*lit' <= k` with every `w' > 0`: a negative
    weight is moved to the negated literal (`w*l = w + (-w)*~l`).  Literals are not merged.
    `negate` negates a literal: `~` for IR literals, `operator.neg` for DIMACS ones."""
    lits: list[L] = []
    weights: list[int] = []
    for w, lit in wlits:
        if w > 0:
            lits.append(lit)
            weights.append(w)
        elif w < 0:
            lits.append(negate(lit))
            weights.append(-w)
            rhs -= w
    return lits, weights, rhs


def leq_forms(terms: tuple[Term, ...], sense: Sense, rhs: int) -> list[tuple[list[Term], int]]:
    """`terms sense rhs` as one or two `sum <= rhs'` constraints (`>=` is negated)."""
    out = []
    for s in senses(sense):
        if s == "<=":
            out.append((list(terms), rhs))
        else:
            out.append(([(-c, x) for c, x in terms], -rhs))
    return out

