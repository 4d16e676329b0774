"""MIP backends through python-mip: `cbc` (COIN-OR CBC) and `highs` (HiGHS, via highspy).

Booleans are binaries and integers are integer columns with their bounds.  A clause is
`sum lits >= 1`, at-most-one / exactly-one are sums `<= 1` / `== 1` (a negated literal is `1 - x`
throughout).  An implication `lit -> e <= r` is linearized with the tightest big-M the variable
bounds allow: `e - r <= M*(1 - lit)` with `M = max(e) - r` (and `e - r >= -M'*(1 - lit)`,
`M' = r - min(e)`, for `>=`; both for `==`); it is dropped when already entailed.  A constant
false constraint becomes a row over a column fixed to 0.  Assumptions fix binaries' bounds for one
call and are restored afterwards.  Values are read with `round()` and checked to be integral within
`TOLERANCE`, and checked against the model: an answer that breaks a row is no answer (CBC's
preprocessing has returned one; the session then solves without it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

from warpweave.backends.base import COMPLETE, WARM_START, Status
from warpweave.backends.driver import Deadline, LoadedSession, Outcome, SessionBackend
from warpweave.backends.normal import collect, impossible, senses, span
from warpweave.ir import (
    AtMostOne,
    BoolVar,
    Clause,
    ExactlyOne,
    Implies,
    Linear,
    Lit,
    Problem,
    Term,
)

TOLERANCE = 1e-5  # a value further than this from an integer is a solver failure, not rounded


def _sense_row(sense: str) -> str:
    return {"<=": "<", ">=": ">", "==": "="}[sense]


def big_m_rows(c: Implies) -> list[tuple[list[Term], str, int]]:
    """`lit -> terms sense rhs` as plain rows with the tightest big-M for each side; a side that
    always holds gives no row."""
    lit, then = c.lit, c.then
    lo, hi = span(*collect(then.terms))
    rows = []
    for s in senses(then.sense):
        if s == "<=" and hi > then.rhs:       # e - r <= M*(1 - lit), M = max(e) - r
            m = hi - then.rhs
            rows.append(([*then.terms, (m, lit)], "<=", then.rhs + m))
        elif s == ">=" and lo < then.rhs:     # e - r >= -M*(1 - lit), M = r - min(e)
            m = then.rhs - lo
            rows.append(([*then.terms, (-m, lit)], ">=", then.rhs - m))
    return rows


def rows_of(c) -> Iterable[tuple[list[Term], str, int]]:
    """One IR constraint as linear rows `(terms, sense, rhs)` over literals and integers."""
    if isinstance(c, Clause):
        yield [(1, x) for x in c.lits], ">=", 1
    elif isinstance(c, AtMostOne):
        yield [(1, x) for x in c.lits], "<=", 1
    elif isinstance(c, ExactlyOne):
        yield [(1, x) for x in c.lits], "==", 1
    elif isinstance(c, Linear):
        yield list(c.terms), c.sense, c.rhs
    elif isinstance(c, Implies):
        yield from big_m_rows(c)
    else:
        raise TypeError(f"not an IR constraint: {c!r}")


def build_model(problem: Problem, solver_name: str, seed: int = 0):
    """A python-mip model of `problem`; returns `(model, columns)` with one column per IR variable
    in order.  Used by the backends and by the LP/MPS exports."""
    import mip

    m = mip.Model(name=problem.name, sense=mip.MINIMIZE, solver_name=solver_name)
    m.verbose = 0
    m.seed = seed
    m.threads = 1
    # python-mip's default stop is a 1e-4 *relative* gap, which calls an objective of 10^5 optimal
    # up to 10 units away.  Objectives here are integral: a gap below 1 proves optimality.
    m.max_mip_gap = 0.0
    m.max_mip_gap_abs = 0.5
    cols = [m.add_var(name=f"x{v.index}", var_type=mip.BINARY) if isinstance(v, BoolVar)
            else m.add_var(name=f"x{v.index}", lb=v.lb, ub=v.ub, var_type=mip.INTEGER)
            for v in problem.vars]
    false_col = None
    used: set = set()
    for c in problem.constraints:
        for terms, sense, rhs in rows_of(c):
            coefs, constant = collect(terms)
            if not coefs:
                if not impossible(constant, constant, sense, rhs):
                    continue
                if false_col is None:  # a row no assignment satisfies: 1*f >= 1 with f in [0, 0]
                    false_col = m.add_var(name="false", lb=0, ub=0, var_type=mip.INTEGER)
                m.add_constr(mip.LinExpr([false_col], [1], -1, ">"))
                continue
            used.update(coefs)
            m.add_constr(mip.LinExpr([cols[v.index] for v in coefs], list(coefs.values()),
                                     constant - rhs, _sense_row(sense)))
    unused = [cols[v.index] for v in problem.vars if v not in used]
    if unused or m.num_rows == 0:
        # CBC answers nothing for a model without rows, and the 2.10 binary's LP reader
        # (CoinLpIO) fails with "Hash table: too many names" when several columns appear only
        # in the Bounds section: one row over those columns that always holds avoids both.
        unused = unused or [m.add_var(name="zero", lb=0, ub=0, var_type=mip.INTEGER)]
        m.add_constr(mip.LinExpr(unused, [1] * len(unused), -sum(c.lb for c in unused), ">"))
    if problem.objective is not None:
        coefs, _ = collect(problem.objective)
        m.objective = mip.minimize(mip.LinExpr([cols[v.index] for v in coefs],
                                               list(coefs.values())))
    return m, cols


class MipSession(LoadedSession):
    def load(self) -> None:
        self.model, self.cols = build_model(self.problem, self.backend.solver_name,
                                            self.backend.seed)
        if self.problem.hints:  # a (partial) MIP start, which the solver completes or drops
            self.model.start = [(self.cols[v.index], float(x))
                                for v, x in self.problem.hints.items()]
        if self.problem.objective is not None:
            self.constant = collect(self.problem.objective)[1] + self.problem.objective_offset

    def run(self, assumptions: list[Lit], deadline: Deadline) -> Outcome:
        import mip

        fixed = {}
        for lit in assumptions:
            want = 1 if lit.positive else 0
            if fixed.get(lit.var, want) != want:
                return Outcome(Status.UNSAT, how="contradictory assumptions")
            fixed[lit.var] = want
        saved = [(self.cols[v.index], self.cols[v.index].lb, self.cols[v.index].ub)
                 for v in fixed]
        try:
            for v, want in fixed.items():
                col = self.cols[v.index]
                col.lb = col.ub = want
            limit = deadline.remaining()
            status = self.model.optimize(max_seconds=mip.INF if limit is None else limit)
        finally:
            for col, lb, ub in saved:
                col.lb, col.ub = lb, ub
        how = f"{self.backend.family} branch and cut"
        S = mip.OptimizationStatus
        if status in (S.INFEASIBLE, S.INT_INFEASIBLE):
            return Outcome(Status.UNSAT, how=how)
        bound = self._bound()
        if status == S.NO_SOLUTION_FOUND:
            return Outcome(deadline.gave_up(), bound=bound, how=how)
        if status not in (S.OPTIMAL, S.FEASIBLE):
            return Outcome(Status.UNKNOWN, how=f"{how}: solver status {status.name}")
        values = {}
        for v, col in zip(self.problem.vars, self.cols, strict=True):
            x = col.x
            if x is None or abs(x - round(x)) > TOLERANCE:
                return Outcome(Status.UNKNOWN, how=f"{how}: value {x} of {v.name} not integral")
            values[v] = bool(round(x)) if isinstance(v, BoolVar) else round(x)
        broken = self.problem.check(values)
        if broken and self.backend.solver_name == "CBC" and self.model.preprocess != 0:
            # CBC's preprocessing can return a point that breaks a row of the model (seen on an
            # integer encoding with half-reified gaps): solve again without it.
            self.model.preprocess = 0
            return self.run(assumptions, deadline)
        if broken:
            return Outcome(Status.UNKNOWN, how=f"{how}: its answer breaks {broken[0]}")
        if status == S.OPTIMAL:
            return Outcome(Status.OPTIMAL, values, how=how)
        return Outcome(deadline.gave_up(), values, bound, how=how)

    def _bound(self) -> int | None:
        if self.problem.objective is None:
            return None
        b = self.model.objective_bound
        if b is None or not math.isfinite(b):
            return None
        return math.ceil(b - TOLERANCE) + self.constant


class MipBackend(SessionBackend):
    """Shared by CBC and HiGHS; `solver_name` is python-mip's name for the solver."""

    solver_name = ""
    capabilities = COMPLETE | {WARM_START}
    session_class = MipSession

    def version(self) -> str:
        return mip_version(self.solver_name)


@functools.cache
def mip_version(solver_name: str) -> str:
    import mip

    if solver_name == "HiGHS":
        import highspy

        return f"python-mip {mip.__version__} (HiGHS {highspy.Highs().version()})"
    return f"python-mip {mip.__version__} ({solver_name})"


class CbcBackend(MipBackend):
    """COIN-OR CBC through python-mip (which bundles it)."""

    family = "cbc"
    extra = "mip"
    solver_name = "CBC"
    requires = ("mip",)


class HighsBackend(MipBackend):
    """HiGHS through python-mip; needs the `highspy` package."""

    family = "highs"
    extra = "mip"
    solver_name = "HiGHS"
    requires = ("mip", "highspy")
