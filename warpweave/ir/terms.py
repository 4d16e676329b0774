"""The IR's terms: Boolean variables and their negations (literals), bounded integer variables,
and their values under an assignment.  Variables have identity by object and names for display;
in linear terms a negated literal `~x` stands for `1 - x`."""

from __future__ import annotations

from collections.abc import Mapping


class BoolVar:
    """A Boolean variable; `~x` is its negation."""

    __slots__ = ("name", "index", "_neg")

    def __init__(self, name: str, index: int):
        self.name = name
        self.index = index
        self._neg = Not(self)

    def __invert__(self) -> Not:
        return self._neg

    @property
    def var(self) -> BoolVar:
        return self

    @property
    def positive(self) -> bool:
        return True

    def __repr__(self) -> str:
        return self.name


class Not:
    """The negation of a Boolean variable (one object per variable, so identity works)."""

    __slots__ = ("var",)

    def __init__(self, var: BoolVar):
        self.var = var

    def __invert__(self) -> BoolVar:
        return self.var

    @property
    def positive(self) -> bool:
        return False

    @property
    def name(self) -> str:
        return f"~{self.var.name}"

    def __repr__(self) -> str:
        return self.name


class IntVar:
    """An integer variable with inclusive bounds [lb, ub]."""

    __slots__ = ("name", "index", "lb", "ub")

    def __init__(self, name: str, index: int, lb: int, ub: int):
        self.name = name
        self.index = index
        self.lb = lb
        self.ub = ub

    def __repr__(self) -> str:
        return self.name


Lit = BoolVar | Not
Var = BoolVar | IntVar
LitOrConst = BoolVar | Not | bool
Term = tuple[int, BoolVar | Not | IntVar]


def lit_value(lit: Lit, values: Mapping[Var, int | bool]) -> bool:
    """The truth of a literal under an assignment of its variable."""
    v = bool(values[lit.var])
    return v if lit.positive else not v


def term_value(term: Term, values: Mapping[Var, int | bool]) -> int:
    coef, x = term
    if isinstance(x, IntVar):
        return coef * int(values[x])
    return coef * int(lit_value(x, values))
