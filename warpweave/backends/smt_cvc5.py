"""The `cvc5` backend: cvc5's base Python API in QF_LIA.

cvc5 has no optimizer here, so minimization is bound tightening (bisection): each bound is asserted
inside `push` / `pop`, the assumptions go to `checkSatAssuming`, and the time limit is the
per-check resource option `tlimit-per` (milliseconds), set before each check.
"""

from __future__ import annotations

from warpweave.backends.base import ASSUMPTIONS, INTEGERS, OPTIMIZE, TIME_LIMIT, UNSAT_PROOF, Status
from warpweave.backends.driver import (
    Deadline,
    LoadedSession,
    Outcome,
    SessionBackend,
    bisect_objective,
)
from warpweave.backends.smt import SmtTerms, SmtTranslation
from warpweave.ir import BoolVar, Lit


class Cvc5Terms(SmtTerms):
    def __init__(self, tm):
        from cvc5 import Kind

        self.tm = tm
        self.K = Kind
        self.B = tm.getBooleanSort()
        self.I = tm.getIntegerSort()

    def bool_var(self, name): return self.tm.mkConst(self.B, name)
    def int_var(self, name): return self.tm.mkConst(self.I, name)
    def num(self, k): return self.tm.mkInteger(k)
    def true(self): return self.tm.mkTrue()
    def false(self): return self.tm.mkFalse()
    def not_(self, t): return self.tm.mkTerm(self.K.NOT, t)
    def or_(self, ts): return self.tm.mkTerm(self.K.OR, *ts)
    def and_(self, ts): return self.tm.mkTerm(self.K.AND, *ts)
    def implies(self, a, b): return self.tm.mkTerm(self.K.IMPLIES, a, b)
    def ite(self, c, a, b): return self.tm.mkTerm(self.K.ITE, c, a, b)
    def add(self, ts): return self.tm.mkTerm(self.K.ADD, *ts)
    def mul(self, k, t): return self.tm.mkTerm(self.K.MULT, self.num(k), t)

    def cmp(self, t, sense, k):
        kind = {"<=": self.K.LEQ, ">=": self.K.GEQ, "==": self.K.EQUAL}[sense]
        return self.tm.mkTerm(kind, t, self.num(k))


class Cvc5Session(LoadedSession):
    def load(self) -> None:
        import cvc5

        self.tm = cvc5.TermManager()
        self.solver = cvc5.Solver(self.tm)
        for key, value in (("produce-models", "true"), ("incremental", "true"),
                           ("seed", str(self.backend.seed))):
            self.solver.setOption(key, value)
        self.solver.setLogic("QF_LIA")
        self.tr = SmtTranslation(self.problem, Cvc5Terms(self.tm))
        for t in self.tr.assertions:
            self.solver.assertFormula(t)

    def run(self, assumptions: list[Lit], deadline: Deadline) -> Outcome:
        assume = [self.tr.lit(x) for x in assumptions]

        def step(bound: int | None, deadline: Deadline):
            limit = deadline.remaining()
            if limit is not None and limit <= 0:
                return deadline.gave_up(), None
            ms = 0 if limit is None else max(1, int(limit * 1000))  # 0: no limit
            self.solver.setOption("tlimit-per", str(ms))
            if bound is not None:
                self.solver.push()
                self.solver.assertFormula(self.tr.objective_at_most(bound))
            try:
                answer = self.solver.checkSatAssuming(*assume) if assume else self.solver.checkSat()
                if answer.isSat():
                    return Status.SAT, self._values()
                if answer.isUnsat():
                    return Status.UNSAT, None
                return deadline.gave_up(), None
            finally:
                if bound is not None:
                    self.solver.pop()

        return bisect_objective(self.problem, step, deadline)

    def _values(self) -> dict:
        out = {}
        for v, t in zip(self.problem.vars, self.tr.vars, strict=True):
            val = self.solver.getValue(t)
            out[v] = val.getBooleanValue() if isinstance(v, BoolVar) else val.getIntegerValue()
        return out


class Cvc5Backend(SessionBackend):
    """cvc5 through the `cvc5` package."""

    family = "cvc5"
    extra = "smt"
    capabilities = frozenset({OPTIMIZE, ASSUMPTIONS, INTEGERS, UNSAT_PROOF, TIME_LIMIT})
    session_class = Cvc5Session
    requires = ("cvc5:TermManager",)  # cvc5 >= 1.2

    def version(self) -> str:
        import cvc5

        return f"cvc5 {cvc5.__version__}"
