"""The solver-neutral IR: Boolean and bounded integer variables, clauses, linear / pseudo-Boolean
constraints, at-most-one / exactly-one, half-reified implications, and a linear objective.

No solver is imported here.  Variables have identity by object and names for display.  A literal
is a `BoolVar` or its negation `~x` (a `Not`); in linear terms a negated literal `~x` stands for
`1 - x`.  Python `True` / `False` may be used as constant literals: `add_clause` and friends fold
them away, so encodings can state boundary cases without special code.

A problem can be evaluated on an assignment (`check`), summarized, and written to / read from a
JSON file so that any solve can be replayed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal as _L

import attrs

Sense = _L["<=", ">=", "=="]


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


# ---------------------------------------------------------------------------------------------
# Constraints


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


# ---------------------------------------------------------------------------------------------
# Problems


def _fold(lits: Iterable[LitOrConst]) -> tuple[Lit, ...] | None:
    """Drop False constants; None if a True constant makes the disjunction trivially true."""
    out = []
    for x in lits:
        if x is True:
            return None
        if x is not False:
            out.append(x)
    return tuple(out)


def _fold_terms(terms: Iterable[tuple[int, LitOrConst | IntVar]]) -> tuple[tuple[Term, ...], int]:
    """Move constant literals to a constant; merge nothing else (order is kept)."""
    kept, constant = [], 0
    for coef, x in terms:
        if x is True:
            constant += coef
        elif x is False or coef == 0:
            continue
        else:
            kept.append((coef, x))
    return tuple(kept), constant


class Problem:
    """Variables, constraints and an optional objective to minimize."""

    def __init__(self, name: str = "problem"):
        self.name = name
        self.vars: list[Var] = []
        self.constraints: list[Constraint] = []
        self.objective: tuple[Term, ...] | None = None
        self.objective_offset = 0
        self.unsat_reason: str | None = None  # set when a constant constraint is already false
        self.hints: dict[Var, int] = {}  # a starting point (warm start), never a constraint

    # -- variables
    def bool(self, name: str) -> BoolVar:
        v = BoolVar(name, len(self.vars))
        self.vars.append(v)
        return v

    def int(self, name: str, lb: int, ub: int) -> IntVar:
        if lb > ub:
            raise ValueError(f"empty domain for {name}: [{lb}, {ub}]")
        v = IntVar(name, len(self.vars), lb, ub)
        self.vars.append(v)
        return v

    @property
    def bools(self) -> list[BoolVar]:
        return [v for v in self.vars if isinstance(v, BoolVar)]

    @property
    def ints(self) -> list[IntVar]:
        return [v for v in self.vars if isinstance(v, IntVar)]

    # -- constraints
    def _false(self, what: str) -> None:
        self.unsat_reason = self.unsat_reason or what
        self.constraints.append(Clause(()))

    def add_clause(self, lits: Iterable[LitOrConst]) -> None:
        folded = _fold(lits)
        if folded is not None:
            if not folded:
                self._false("empty clause")
            else:
                self.constraints.append(Clause(folded))

    def add_linear(self, terms: Iterable[tuple[int, LitOrConst | IntVar]], sense: Sense,
                   rhs: int) -> None:
        kept, constant = _fold_terms(terms)
        c = Linear(kept, sense, rhs - constant)
        if not kept:
            if not c.holds({}):
                self._false(f"constant linear constraint 0 {sense} {rhs - constant}")
            return
        self.constraints.append(c)

    def at_most_one(self, lits: Iterable[LitOrConst]) -> None:
        lits = list(lits)
        trues = sum(1 for x in lits if x is True)
        rest = tuple(x for x in lits if x is not True and x is not False)
        if trues > 1:
            self._false("at-most-one with two true constants")
        elif trues == 1:
            for x in rest:
                self.add_clause([~x])
        elif len(rest) > 1:
            self.constraints.append(AtMostOne(rest))

    def exactly_one(self, lits: Iterable[LitOrConst]) -> None:
        lits = list(lits)
        trues = sum(1 for x in lits if x is True)
        rest = tuple(x for x in lits if x is not True and x is not False)
        if trues > 1 or (trues == 0 and not rest):
            self._false("exactly-one that cannot hold")
        elif trues == 1:
            for x in rest:
                self.add_clause([~x])
        elif len(rest) == 1:
            self.add_clause(rest)
        else:
            self.constraints.append(ExactlyOne(rest))

    def add_implies(self, lit: LitOrConst, terms: Iterable[tuple[int, LitOrConst | IntVar]],
                    sense: Sense, rhs: int) -> None:
        if lit is False:
            return
        if lit is True:
            self.add_linear(terms, sense, rhs)
            return
        kept, constant = _fold_terms(terms)
        then = Linear(kept, sense, rhs - constant)
        if not kept:
            if not then.holds({}):
                self.add_clause([~lit])
            return
        self.constraints.append(Implies(lit, then))

    def minimize(self, terms: Iterable[tuple[int, LitOrConst | IntVar]]) -> None:
        kept, constant = _fold_terms(terms)
        self.objective = kept
        self.objective_offset = constant

    # -- evaluation
    def check(self, values: Mapping[Var, int | bool]) -> list[Constraint]:
        """The constraints violated by `values` (which must assign every variable), and bound
        violations of integer variables as Linear constraints."""
        bad: list[Constraint] = []
        for v in self.ints:
            if not v.lb <= int(values[v]) <= v.ub:
                bad.append(Linear(((1, v),), ">=" if int(values[v]) < v.lb else "<=",
                                  v.lb if int(values[v]) < v.lb else v.ub))
        bad.extend(c for c in self.constraints if not c.holds(values))
        return bad

    def objective_value(self, values: Mapping[Var, int | bool]) -> int | None:
        if self.objective is None:
            return None
        return self.objective_offset + sum(term_value(t, values) for t in self.objective)

    def summary(self) -> dict:
        kinds = Counter(type(c).__name__ if not isinstance(c, Linear) or not c.is_pb else "PB"
                        for c in self.constraints)
        return {"name": self.name, "bools": len(self.bools), "ints": len(self.ints),
                "constraints": dict(sorted(kinds.items())),
                "objective": self.objective is not None}

    def hint(self, values: Mapping[Var, int | bool]) -> None:
        """Suggest values for some variables: a warm start that backends with the `warm_start`
        capability begin their search from (CP-SAT hints, MIP starts, SAT phases).  A hint
        never constrains: a problem has the same solutions with or without it."""
        self.hints.update({v: int(x) for v, x in values.items()})

    # -- files
    def to_dict(self) -> dict:
        def ref(x) -> int:
            return -(x.var.index + 1) if isinstance(x, Not) else x.index + 1

        def terms(ts: Sequence[Term]) -> list:
            return [[c, ref(x)] for c, x in ts]

        def linear(c: Linear) -> dict:
            return {"terms": terms(c.terms), "sense": c.sense, "rhs": c.rhs}

        out = []
        for c in self.constraints:
            if isinstance(c, Clause):
                out.append({"clause": [ref(x) for x in c.lits]})
            elif isinstance(c, Linear):
                out.append({"linear": linear(c)})
            elif isinstance(c, AtMostOne):
                out.append({"at_most_one": [ref(x) for x in c.lits]})
            elif isinstance(c, ExactlyOne):
                out.append({"exactly_one": [ref(x) for x in c.lits]})
            else:
                out.append({"implies": ref(c.lit), "then": linear(c.then)})
        return {
            "format": "warpweave.ir/1", "name": self.name,
            "vars": [{"name": v.name} if isinstance(v, BoolVar)
                     else {"name": v.name, "lb": v.lb, "ub": v.ub} for v in self.vars],
            "constraints": out,
            "objective": None if self.objective is None else
            {"terms": terms(self.objective), "offset": self.objective_offset},
            **({"hints": [[v.index + 1, x] for v, x in self.hints.items()]} if self.hints
               else {}),
        }

    @classmethod
    def from_dict(cls, doc: Mapping) -> Problem:
        p = cls(doc.get("name", "problem"))
        for v in doc["vars"]:
            if "lb" in v:
                p.int(v["name"], v["lb"], v["ub"])
            else:
                p.bool(v["name"])

        def deref(r: int):
            x = p.vars[abs(r) - 1]
            return ~x if r < 0 else x

        def terms(ts) -> list:
            return [(c, deref(r)) for c, r in ts]

        for c in doc["constraints"]:
            if "clause" in c:
                p.constraints.append(Clause(tuple(deref(r) for r in c["clause"])))
            elif "linear" in c:
                d = c["linear"]
                p.constraints.append(Linear(tuple(terms(d["terms"])), d["sense"], d["rhs"]))
            elif "at_most_one" in c:
                p.constraints.append(AtMostOne(tuple(deref(r) for r in c["at_most_one"])))
            elif "exactly_one" in c:
                p.constraints.append(ExactlyOne(tuple(deref(r) for r in c["exactly_one"])))
            else:
                d = c["then"]
                p.constraints.append(Implies(deref(c["implies"]),
                                             Linear(tuple(terms(d["terms"])), d["sense"],
                                                    d["rhs"])))
        if doc.get("objective"):
            p.objective = tuple(terms(doc["objective"]["terms"]))
            p.objective_offset = doc["objective"].get("offset", 0)
        p.hint({p.vars[r - 1]: x for r, x in doc.get("hints", [])})
        return p

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict()))

    @classmethod
    def read(cls, path: str | Path) -> Problem:
        return cls.from_dict(json.loads(Path(path).read_text()))
