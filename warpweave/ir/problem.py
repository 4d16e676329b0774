"""A problem of the IR: variables, statements and an objective to minimize, stated through
methods that fold constant literals away; evaluated on an assignment (`check`), summarized, and
written to / read from a JSON file so that any solve can be replayed."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from warpweave import limits
from warpweave.errors import InputError, PathPart
from warpweave.ir.statements import (
    SENSES,
    AtMostOne,
    Clause,
    Constraint,
    ExactlyOne,
    Implies,
    Linear,
    Sense,
)
from warpweave.ir.terms import BoolVar, IntVar, Lit, LitOrConst, Not, Term, Var, term_value

FORMAT = "warpweave.ir/1"
CHECK_EVERY = 4096  # variables and constraints stated between two checks of the run's deadline

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
        self._add(v, self.vars)
        return v

    def int(self, name: str, lb: int, ub: int) -> IntVar:
        if lb > ub:
            raise ValueError(f"empty domain for {name}: [{lb}, {ub}]")
        v = IntVar(name, len(self.vars), lb, ub)
        self._add(v, self.vars)
        return v

    @property
    def bools(self) -> list[BoolVar]:
        return [v for v in self.vars if isinstance(v, BoolVar)]

    @property
    def ints(self) -> list[IntVar]:
        return [v for v in self.vars if isinstance(v, IntVar)]

    def _add(self, item: Var | Constraint, to: list | None = None) -> None:
        """Append a variable or a constraint; every CHECK_EVERY of them, the run's deadline and
        Ctrl-C (`warpweave.limits`): stating a large problem is bounded like solving it."""
        (self.constraints if to is None else to).append(item)
        if (len(self.vars) + len(self.constraints)) % CHECK_EVERY == 0:
            limits.check()

    # -- constraints
    def _false(self, what: str) -> None:
        self.unsat_reason = self.unsat_reason or what
        self._add(Clause(()))

    def add_clause(self, lits: Iterable[LitOrConst]) -> None:
        folded = _fold(lits)
        if folded is not None:
            if not folded:
                self._false("empty clause")
            else:
                self._add(Clause(folded))

    def add_linear(self, terms: Iterable[tuple[int, LitOrConst | IntVar]], sense: Sense,
                   rhs: int) -> None:
        kept, constant = _fold_terms(terms)
        c = Linear(kept, sense, rhs - constant)
        if not kept:
            if not c.holds({}):
                self._false(f"constant linear constraint 0 {sense} {rhs - constant}")
            return
        self._add(c)

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
            self._add(AtMostOne(rest))

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
            self._add(ExactlyOne(rest))

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
        self._add(Implies(lit, then))

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
            "format": FORMAT, "name": self.name,
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
        """The problem `to_dict` wrote; InputError naming the key path and value of anything
        else (a saved file may have been edited by hand)."""
        return _Reader(doc).problem

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict()))

    @classmethod
    def read(cls, path: str | Path) -> Problem:
        return cls.from_dict(json.loads(Path(path).read_text()))


class _Reader:
    """Reads a `to_dict` document back into a Problem.  Variables are referred to by 1-based
    index in declaration order, a negative index being the negation of a Boolean; whatever is
    not as `to_dict` writes it is an InputError naming its key path and value."""

    def __init__(self, doc):
        if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
            found = doc.get("format") if isinstance(doc, Mapping) else doc
            raise InputError(f"not an IR document (expected format {FORMAT!r})", ("format",),
                             found)
        self.problem = p = Problem(str(doc.get("name", "problem")))
        for i, v in enumerate(self.items(doc, "vars")):
            path = ("vars", i)
            if not isinstance(v, Mapping) or not isinstance(v.get("name"), str):
                raise InputError("expected {name, lb, ub} (a Boolean has no bounds)", path, v)
            if "lb" not in v and "ub" not in v:
                p.bool(v["name"])
                continue
            lb, ub = (self.int(v.get(k), (*path, k)) for k in ("lb", "ub"))
            if lb > ub:
                raise InputError(f"empty domain [{lb}, {ub}]", (*path, "ub"), ub)
            p.int(v["name"], lb, ub)
        for i, c in enumerate(self.items(doc, "constraints")):
            p.constraints.append(self.constraint(c, ("constraints", i)))
        objective = doc.get("objective")
        if objective is not None:
            if not isinstance(objective, Mapping):
                raise InputError("expected {terms, offset} or null", ("objective",), objective)
            p.objective = self.terms(objective.get("terms"), ("objective", "terms"))
            p.objective_offset = self.int(objective.get("offset", 0), ("objective", "offset"))
        hints = doc.get("hints", [])
        if not isinstance(hints, list):
            raise InputError("expected a list of [variable, value]", ("hints",), hints)
        for i, h in enumerate(hints):
            if not isinstance(h, list) or len(h) != 2:
                raise InputError("expected [variable, value]", ("hints", i), h)
            p.hint({self.ref(h[0], ("hints", i, 0), False): self.int(h[1], ("hints", i, 1))})

    @staticmethod
    def items(doc: Mapping, key: str) -> list:
        if not isinstance(doc.get(key), list):
            raise InputError("expected a list", (key,), doc.get(key))
        return doc[key]

    @staticmethod
    def int(x, path: tuple[PathPart, ...]) -> int:
        if not isinstance(x, int) or isinstance(x, bool):
            raise InputError("expected an integer", path, x)
        return x

    def ref(self, r, path: tuple[PathPart, ...], literal: bool) -> Lit | IntVar:
        """The variable (or negated Boolean) that reference `r` names; `literal`: it must be a
        Boolean literal."""
        n = len(self.problem.vars)
        if not 1 <= abs(self.int(r, path)) <= n:
            raise InputError(f"no such variable (the file declares {n})", path, r)
        x = self.problem.vars[abs(r) - 1]
        if isinstance(x, IntVar) and (literal or r < 0):
            raise InputError(f"{x.name} is an integer, not a Boolean literal", path, r)
        return ~x if r < 0 else x

    def lits(self, refs, path: tuple[PathPart, ...]) -> tuple[Lit, ...]:
        if not isinstance(refs, list):
            raise InputError("expected a list of literals", path, refs)
        return tuple(self.ref(r, (*path, i), True) for i, r in enumerate(refs))

    def terms(self, ts, path: tuple[PathPart, ...]) -> tuple[Term, ...]:
        if not isinstance(ts, list):
            raise InputError("expected a list of [coefficient, variable]", path, ts)
        out = []
        for i, t in enumerate(ts):
            if not isinstance(t, list) or len(t) != 2:
                raise InputError("expected [coefficient, variable]", (*path, i), t)
            out.append((self.int(t[0], (*path, i, 0)), self.ref(t[1], (*path, i, 1), False)))
        return tuple(out)

    def linear(self, d, path: tuple[PathPart, ...]) -> Linear:
        if not isinstance(d, Mapping):
            raise InputError("expected {terms, sense, rhs}", path, d)
        if d.get("sense") not in SENSES:
            raise InputError(f"expected one of {', '.join(SENSES)}", (*path, "sense"),
                             d.get("sense"))
        return Linear(self.terms(d.get("terms"), (*path, "terms")), d["sense"],
                      self.int(d.get("rhs"), (*path, "rhs")))

    def constraint(self, c, path: tuple[PathPart, ...]) -> Constraint:
        keys = sorted(c) if isinstance(c, Mapping) else None
        if keys == ["clause"]:
            return Clause(self.lits(c["clause"], (*path, "clause")))
        if keys == ["at_most_one"]:
            return AtMostOne(self.lits(c["at_most_one"], (*path, "at_most_one")))
        if keys == ["exactly_one"]:
            return ExactlyOne(self.lits(c["exactly_one"], (*path, "exactly_one")))
        if keys == ["linear"]:
            return self.linear(c["linear"], (*path, "linear"))
        if keys == ["implies", "then"]:
            return Implies(self.ref(c["implies"], (*path, "implies"), True),
                           self.linear(c["then"], (*path, "then")))
        raise InputError("expected one of {clause}, {linear}, {at_most_one}, {exactly_one}, "
                         "{implies, then}", path, c)
