"""The `z3` backend: z3's Python API, QF_LIA plus z3's native pseudo-Boolean constraints.

Linear constraints over literals only (pseudo-Boolean, including at-most-one / exactly-one) are
stated with `PbLe` / `PbGe` / `PbEq`, which z3 handles with its PB solver instead of arithmetic;
anything with an integer is linear arithmetic with `If(lit, c, 0)` terms.  Optimization is z3's own
optimizer (`Optimize.minimize`); feasibility uses a plain `Solver`.  Assumptions are passed to
`check`, the time limit as the solver's `timeout` parameter for each call, backed by interrupts of
the context from a timer thread; nothing is added to the solver after loading, so calls cannot
leak into each other.
"""

from __future__ import annotations

import ctypes
import weakref

from warpweave.backends.base import ASSUMPTIONS, INTEGERS, OPTIMIZE, TIME_LIMIT, UNSAT_PROOF, Status
from warpweave.backends.driver import (
    Deadline,
    LoadedSession,
    Outcome,
    SessionBackend,
    interrupt_at,
)
from warpweave.backends.normal import collect
from warpweave.backends.smt import SmtTerms, SmtTranslation
from warpweave.ir import BoolVar, IntVar, Linear, Lit

NO_LIMIT_MS = 4294967295  # z3's "no timeout" value


class Z3Terms(SmtTerms):
    """Terms through z3's C API (`Z3_mk_*`): the Python layer's operators coerce and check every
    argument, which made loading 200k clauses take ~100 s instead of a few."""

    def __init__(self, ctx):
        import z3

        self.z3 = z3
        self.ctx = ctx
        self.ref = ctx.ref()
        self.nums: dict[int, object] = {}

    def _array(self, ts):
        arr = (self.z3.Ast * len(ts))()
        for i, t in enumerate(ts):
            arr[i] = t.as_ast()
        return arr

    def _bool(self, ast): return self.z3.BoolRef(ast, self.ctx)
    def _arith(self, ast): return self.z3.ArithRef(ast, self.ctx)
    def bool_var(self, name): return self.z3.Bool(name, self.ctx)
    def int_var(self, name): return self.z3.Int(name, self.ctx)
    def true(self): return self.z3.BoolVal(True, self.ctx)
    def false(self): return self.z3.BoolVal(False, self.ctx)
    def not_(self, t): return self._bool(self.z3.Z3_mk_not(self.ref, t.as_ast()))
    def or_(self, ts): return self._bool(self.z3.Z3_mk_or(self.ref, len(ts), self._array(ts)))
    def and_(self, ts): return self._bool(self.z3.Z3_mk_and(self.ref, len(ts), self._array(ts)))

    def num(self, k):
        if k not in self.nums:
            self.nums[k] = self.z3.IntVal(k, self.ctx)
        return self.nums[k]

    def implies(self, a, b):
        return self._bool(self.z3.Z3_mk_implies(self.ref, a.as_ast(), b.as_ast()))

    def ite(self, c, a, b):
        return self._arith(self.z3.Z3_mk_ite(self.ref, c.as_ast(), a.as_ast(), b.as_ast()))

    def add(self, ts): return self._arith(self.z3.Z3_mk_add(self.ref, len(ts), self._array(ts)))

    def mul(self, k, t):
        return self._arith(self.z3.Z3_mk_mul(self.ref, 2, self._array([self.num(k), t])))

    def cmp(self, t, sense, k):
        make = {"<=": self.z3.Z3_mk_le, ">=": self.z3.Z3_mk_ge, "==": self.z3.Z3_mk_eq}[sense]
        return self._bool(make(self.ref, t.as_ast(), self.num(k).as_ast()))

    def pb(self, lits, weights, sense, k):
        """z3's native pseudo-Boolean constraint `sum w*lit sense k`."""
        make = {"<=": self.z3.Z3_mk_pble, ">=": self.z3.Z3_mk_pbge,
                "==": self.z3.Z3_mk_pbeq}[sense]
        coeffs = (ctypes.c_int * len(weights))(*weights)
        return self._bool(make(self.ref, len(lits), self._array(lits), coeffs, k))


class Z3Translation(SmtTranslation):
    """Pseudo-Boolean constraints through z3's native PB constructors."""

    def linear(self, c: Linear):
        coefs, constant = collect(c.terms)
        if not coefs or any(isinstance(v, IntVar) for v in coefs):
            return super().linear(c)
        return self.ops.pb([self.vars[v.index] for v in coefs], list(coefs.values()), c.sense,
                           c.rhs - constant)


class Z3Session(LoadedSession):
    def load(self) -> None:
        import z3

        self.ctx = z3.Context()
        self.tr = Z3Translation(self.problem, Z3Terms(self.ctx))
        optimize = self.problem.objective is not None
        self.solver = z3.Optimize(ctx=self.ctx) if optimize else z3.Solver(ctx=self.ctx)
        self.solver.set("random_seed", self.backend.seed)
        # Z3_*_assert directly: Solver.add coerces each assertion again in Python.
        if optimize:
            add, handle = z3.Z3_optimize_assert, self.solver.optimize
        else:
            add, handle = z3.Z3_solver_assert, self.solver.solver
        ref = self.ctx.ref()
        for t in self.tr.assertions:
            add(ref, handle, t.as_ast())
        if optimize:
            self.handle = self.solver.minimize(self.tr.objective)
            # After a timeout `Optimize.model()` may be a partial assignment of an unfinished
            # search, not the best solution found: each improvement is kept as it arrives.
            # z3 keeps the callback in a module-global table until the Optimize object is
            # freed, so it holds the session only weakly (else neither is ever freed).
            self.improved: dict | None = None
            session = weakref.ref(self)
            self.solver.set_on_model(lambda model: session() and session()._on_model(model))

    def _on_model(self, model) -> None:
        """z3's callback on each improving solution (the model lives only during the call).  An
        interrupt landing while the model is read cancels the read: that improvement is lost."""
        import z3

        try:
            values = self._values(model)
        except z3.Z3Exception:
            return
        if not self.problem.check(values):
            self.improved = values

    def run(self, assumptions: list[Lit], deadline: Deadline) -> Outcome:
        import z3

        limit = deadline.remaining()
        self.solver.set("timeout", NO_LIMIT_MS if limit is None else max(1, int(limit * 1000)))
        # Workaround: z3 5.4.1's `Optimize.check` can miss its own timeout and search on for
        # minutes (minimum-ones on a 300-variable random 3-SAT instance, timeout 20 ms: stuck in
        # maxcore::check_sat_hill_climb).  `Context.interrupt`, repeated from a timer thread
        # until the call returns, stops it; an interrupt that lands after the call is dropped
        # (z3 cancels only a running check).
        optimize = self.problem.objective is not None
        if optimize:
            self.improved = None  # solutions of an earlier call may break these assumptions
        with interrupt_at(deadline, self.ctx.interrupt):
            try:
                answer = self.solver.check(*[self.tr.lit(x) for x in assumptions])
            except z3.Z3Exception as exc:  # with an on-model callback a cancel raises
                if not optimize or "canceled" not in str(exc):
                    raise
                answer = z3.unknown
        how = "z3 Optimize" if optimize else "feasibility"
        if answer == z3.unsat:
            return Outcome(Status.UNSAT, how=how)
        bound = self._bound() if optimize else None
        if answer == z3.sat:
            return Outcome(Status.OPTIMAL, self._values(self.solver.model()), how=how)
        values = None
        if optimize:
            # After a timeout the optimizer's model may be its best solution so far or a partial
            # assignment of an unfinished search (seen on random 3-SAT): keep it only if it
            # satisfies every constraint, else the last improvement z3 reported.
            try:
                values = self._values(self.solver.model())
            except z3.Z3Exception:
                values = None
            if values is None or self.problem.check(values):
                values = self.improved
        return Outcome(deadline.gave_up(), values, bound,
                       how=f"{how}: {self.solver.reason_unknown()}")

    def _bound(self) -> int | None:
        low = self.solver.lower(self.handle)
        if not low.is_int():  # -oo or an epsilon expression: nothing proven yet
            return None
        return low.as_long() + self.tr.objective_constant

    def _values(self, model) -> dict:
        out = {}
        for v, t in zip(self.problem.vars, self.tr.vars, strict=True):
            val = model.eval(t, model_completion=True)
            out[v] = bool(val) if isinstance(v, BoolVar) else val.as_long()
        return out


class Z3Backend(SessionBackend):
    """z3 through the `z3-solver` package."""

    family = "z3"
    extra = "smt"
    capabilities = frozenset({OPTIMIZE, ASSUMPTIONS, INTEGERS, UNSAT_PROOF, TIME_LIMIT})
    session_class = Z3Session
    requires = ("z3",)

    def version(self) -> str:
        import z3

        return f"z3 {z3.get_version_string()}"
