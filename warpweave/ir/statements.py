"""The IR's statements: clauses, linear / pseudo-Boolean constraints, at-most-one / exactly-one
and half-reified implications, each able to say whether an assignment satisfies it."""

from __future__ import annotations

from typing import Literal as _L
from typing import get_args

import attrs

from warpweave.ir.terms import IntVar, Lit, Term, lit_value, term_value

Sense = _L["<=", ">=", "=="]
SENSES: tuple[str, ...] = get_args(Sense)

@attrs.frozen
class Clause:
    """At least one of `lits` is true."""

    lits: tuple[Lit, ...]

    def holds(self, values) -> bool:
        return any(lit_value(x, values) for x in self.lits)


@attrs.frozen
class Linear:
    """sum(coef * x) `sense` rhs; over Booleans only this is a pseudo-Boolean constraint."""

    terms: tuple[Term, ...]
    sense: Sense
    rhs: int

    def holds(self, values) -> bool:
        lhs = sum(term_value(t, values) for t in self.terms)
        return {"<=": lhs <= self.rhs, ">=": lhs >= self.rhs, "==": lhs == self.rhs}[self.sense]

    @property
    def is_pb(self) -> bool:
        return all(not isinstance(x, IntVar) for _, x in self.terms)


@attrs.frozen
class AtMostOne:
    lits: tuple[Lit, ...]

    def holds(self, values) -> bool:
        return sum(lit_value(x, values) for x in self.lits) <= 1


@attrs.frozen
class ExactlyOne:
    lits: tuple[Lit, ...]

    def holds(self, values) -> bool:
        return sum(lit_value(x, values) for x in self.lits) == 1


@attrs.frozen
class Implies:
    """Half reification: if `lit` is true then `then` holds (nothing is said otherwise)."""

    lit: Lit
    then: Linear

    def holds(self, values) -> bool:
        return not lit_value(self.lit, values) or self.then.holds(values)


Constraint = Clause | Linear | AtMostOne | ExactlyOne | Implies
