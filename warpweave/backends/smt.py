"""What the SMT backends (z3, cvc5, yices) share: the IR stated directly in Boolean + linear
integer arithmetic (QF_LIA), once, through a few term constructors each solver provides.

Booleans are Boolean constants, integers integer constants with their bounds asserted.  A clause
is a disjunction, a linear term over a literal is `ite(lit, c, 0)`, an integer term `c*x`; an
implication is `lit => (sum sense rhs)`.  Subclasses supply the constructors (`SmtTerms`) and may
state at-most-one / exactly-one / pseudo-Boolean constraints natively (z3 does).
"""

from __future__ import annotations

from collections.abc import Sequence

from warpweave.backends.normal import collect
from warpweave.ir import (
    AtMostOne,
    BoolVar,
    Clause,
    ExactlyOne,
    Implies,
    IntVar,
    Linear,
    Lit,
    Problem,
)


class SmtTerms:
    """Term constructors of one solver; `n`-ary ones are called with at least two arguments."""

    def bool_var(self, name: str): raise NotImplementedError
    def int_var(self, name: str): raise NotImplementedError
    def num(self, k: int): raise NotImplementedError
    def true(self): raise NotImplementedError
    def false(self): raise NotImplementedError
    def not_(self, t): raise NotImplementedError
    def or_(self, ts: list): raise NotImplementedError
    def and_(self, ts: list): raise NotImplementedError
    def implies(self, a, b): raise NotImplementedError
    def ite(self, c, a, b): raise NotImplementedError
    def add(self, ts: list): raise NotImplementedError
    def mul(self, k: int, t): raise NotImplementedError
    def cmp(self, t, sense: str, k: int): raise NotImplementedError


class SmtTranslation:
    """A problem as solver terms: `vars` (one term per IR variable), `assertions`, and the
    objective as a term (`objective`, without the constant) plus `objective_constant`."""

    def __init__(self, problem: Problem, ops: SmtTerms):
        self.problem = problem
        self.ops = ops
        self.vars = [ops.bool_var(f"b{v.index}") if isinstance(v, BoolVar)
                     else ops.int_var(f"x{v.index}") for v in problem.vars]
        self.negations: dict[int, object] = {}  # one negation term per variable
        self.assertions = []
        for v in problem.ints:
            t = self.vars[v.index]
            self.assertions += [ops.cmp(t, ">=", v.lb), ops.cmp(t, "<=", v.ub)]
        self.assertions += [self.constraint(c) for c in problem.constraints]
        self.objective = None
        self.objective_constant = problem.objective_offset
        if problem.objective is not None:
            coefs, constant = collect(problem.objective)
            self.objective = self.sum(coefs)
            self.objective_constant += constant

    # -- helpers that handle 0 / 1 arguments
    def disjunction(self, ts: list):
        return self.ops.false() if not ts else ts[0] if len(ts) == 1 else self.ops.or_(ts)

    def sum(self, coefs: dict) -> object:
        ops = self.ops
        parts = []
        for v, c in coefs.items():
            t = self.vars[v.index]
            if isinstance(v, IntVar):
                parts.append(t if c == 1 else ops.mul(c, t))
            else:
                parts.append(ops.ite(t, ops.num(c), ops.num(0)))
        return ops.num(0) if not parts else parts[0] if len(parts) == 1 else ops.add(parts)

    def lit(self, x: Lit):
        t = self.vars[x.var.index]
        if x.positive:
            return t
        if x.var.index not in self.negations:
            self.negations[x.var.index] = self.ops.not_(t)
        return self.negations[x.var.index]

    # -- constraints
    def constraint(self, c):
        if isinstance(c, Clause):
            return self.disjunction([self.lit(x) for x in c.lits])
        if isinstance(c, AtMostOne):
            return self.cardinality(c.lits, "<=")
        if isinstance(c, ExactlyOne):
            return self.cardinality(c.lits, "==")
        if isinstance(c, Linear):
            return self.linear(c)
        if isinstance(c, Implies):
            return self.ops.implies(self.lit(c.lit), self.linear(c.then))
        raise TypeError(f"not an IR constraint: {c!r}")

    def cardinality(self, lits: Sequence[Lit], sense: str):
        """`sum lits sense 1`."""
        return self.linear(Linear(tuple((1, x) for x in lits), sense, 1))

    def linear(self, c: Linear):
        coefs, constant = collect(c.terms)
        if not coefs:
            return self.ops.true() if Linear((), c.sense, c.rhs - constant).holds({}) \
                else self.ops.false()
        return self.ops.cmp(self.sum(coefs), c.sense, c.rhs - constant)

    def objective_at_most(self, bound: int):
        """The term `objective <= bound` (bound includes the constant)."""
        return self.ops.cmp(self.objective, "<=", bound - self.objective_constant)

