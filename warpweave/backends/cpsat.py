"""The `cpsat` backend: OR-Tools CP-SAT with native Booleans, integers and linear constraints.

Clauses are `AddBoolOr`, at-most-one / exactly-one `AddAtMostOne` / `AddExactlyOne`, linear
constraints `Add` over a weighted sum (a negated literal is CP-SAT's `Not()`, worth `1 - x`), and
an implication is the linear constraint `OnlyEnforceIf(lit)`.  Assumptions are set per call with
`ClearAssumptions` / `AddAssumptions` on the kept model; a fresh `CpSolver` is made per call.
The problem's hints are CP-SAT solution hints.

Spec: `cpsat[:workers=N][,search=lbtree][,lp=auto|0|1|2]` (default 1 worker, CP-SAT's default
search, `lp=auto`).
`search=lbtree` has CP-SAT's lower-bound tree search minimize (`optimize_with_lb_tree_search`):
in raw cycles the default search walks the length down one cycle per solution (fa-bwd on h100:
700 solutions after the bound had already reached the optimum), the tree search closes the gap
from the bound's side.  CP-SAT is deterministic for a fixed `random_seed` with one
worker; with several workers the portfolio's threads race, so `workers=N` sets `interleave_search`,
which runs the workers' strategies in a fixed interleaved order (deterministic whatever N).  A
wall-clock time limit still makes the point where a search stops depend on machine load.

`lp` is CP-SAT's `linearization_level` (0: no linear relaxation).  `auto` (the default) is 0 for
a problem without an objective and CP-SAT's own default (1) for one with an objective: measured
on the raw-cycle minimize search (benchmarks/README.md), the LP's cuts cost more than they prune
on the infeasibility proofs (fa-bwd b200 subtiles=2, "I <= 2745 at 4 stages", deterministic
time 7.2 with the LP against 2.1 without), while minimizing I needs its bound (the same kernel's
2-stage minimize did not finish in 18 deterministic seconds without it, 1.3 with it).
"""

from __future__ import annotations

import math

from warpweave.backends.base import COMPLETE, WARM_START, Status
from warpweave.backends.driver import Deadline, LoadedSession, Outcome, SessionBackend
from warpweave.backends.normal import collect, span
from warpweave.ir import (
    AtMostOne,
    BoolVar,
    Clause,
    ExactlyOne,
    Implies,
    Linear,
    Lit,
    Problem,
)

SEARCHES = ("default", "lbtree")
LPS = ("auto", "0", "1", "2")


def parse_options(options: str | None) -> tuple[int, str, str]:
    """`workers=N,search=S,lp=P` -> (N, S, P) (default 1, "default", "auto")."""
    workers, search, lp = 1, "default", "auto"
    for part in filter(None, (options or "").split(",")):
        key, _, value = part.partition("=")
        if key == "workers" and value.isdigit() and int(value) >= 1:
            workers = int(value)
        elif key == "search" and value in SEARCHES:
            search = value
        elif key == "lp" and value in LPS:
            lp = value
        else:
            raise ValueError(f"cpsat options are workers=N (N >= 1), search="
                             f"{'|'.join(SEARCHES)} and lp={'|'.join(LPS)}, got {options!r}")
    return workers, search, lp


def build_model(problem: Problem):
    """A CP-SAT model of `problem`: `(model, vars, lit)` with one variable per IR variable and
    `lit` mapping an IR literal to a CP-SAT one.

    Constraints are written straight into the model's protocol buffer (literal `i` or `-i-1` for
    its negation, linear constraints as coefficient lists with a domain): `AddBoolOr` and friends
    check and wrap every argument in Python, which took ~20 s for 200k clauses."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    xs = [m.NewBoolVar(f"b{v.index}") if isinstance(v, BoolVar)
          else m.NewIntVar(v.lb, v.ub, f"x{v.index}") for v in problem.vars]
    index = [x.Index() for x in xs]
    proto = m.Proto().constraints

    def ref(x: Lit) -> int:
        i = index[x.var.index]
        return i if x.positive else -i - 1

    def linear(c: Linear, enforce: Lit | None) -> None:
        coefs, constant = collect(c.terms)
        lo, hi = span(coefs)
        rhs = c.rhs - constant
        bounds = {"<=": (lo, rhs), ">=": (rhs, hi), "==": (rhs, rhs)}[c.sense]
        ct = proto.add()
        if enforce is not None:
            ct.enforcement_literal.append(ref(enforce))
        if bounds[0] > bounds[1]:      # cannot hold: the empty disjunction
            ct.bool_or.SetInParent()
            return
        ct.linear.vars.extend(index[v.index] for v in coefs)
        ct.linear.coeffs.extend(coefs.values())
        ct.linear.domain.extend(bounds)

    for c in problem.constraints:
        if isinstance(c, Clause):
            ct = proto.add()
            ct.bool_or.SetInParent()
            ct.bool_or.literals.extend(ref(x) for x in c.lits)
        elif isinstance(c, AtMostOne):
            proto.add().at_most_one.literals.extend(ref(x) for x in c.lits)
        elif isinstance(c, ExactlyOne):
            proto.add().exactly_one.literals.extend(ref(x) for x in c.lits)
        elif isinstance(c, Linear):
            linear(c, None)
        elif isinstance(c, Implies):
            linear(c.then, c.lit)
        else:
            raise TypeError(f"not an IR constraint: {c!r}")
    if problem.objective is not None:
        coefs, _ = collect(problem.objective)
        m.Minimize(cp_model.LinearExpr.WeightedSum([xs[v.index] for v in coefs],
                                                   list(coefs.values())))
    for v, x in problem.hints.items():
        m.AddHint(xs[v.index], x)

    def lit(x: Lit):
        t = xs[x.var.index]
        return t if x.positive else t.Not()

    return m, xs, lit


class CpSatSession(LoadedSession):
    def load(self) -> None:
        self.model, self.xs, self.lit = build_model(self.problem)
        if self.problem.objective is not None:
            self.constant = collect(self.problem.objective)[1] + self.problem.objective_offset

    def run(self, assumptions: list[Lit], deadline: Deadline) -> Outcome:
        from ortools.sat.python import cp_model

        self.model.ClearAssumptions()
        self.model.AddAssumptions([self.lit(x) for x in assumptions])
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.random_seed = self.backend.seed
        params.num_workers = self.backend.workers
        params.interleave_search = self.backend.workers > 1
        params.optimize_with_lb_tree_search = self.backend.search == "lbtree"
        if self.backend.lp != "auto":
            params.linearization_level = int(self.backend.lp)
        elif self.problem.objective is None:
            params.linearization_level = 0
        params.log_search_progress = False
        limit = deadline.remaining()
        if limit is not None:
            params.max_time_in_seconds = limit
        status = solver.Solve(self.model)
        how = "CP-SAT" if self.problem.objective is not None else "feasibility"
        if status == cp_model.INFEASIBLE:
            return Outcome(Status.UNSAT, how=how)
        if status == cp_model.MODEL_INVALID:
            raise RuntimeError(f"CP-SAT rejected the model: {self.model.Validate()}")
        bound = None
        if self.problem.objective is not None and math.isfinite(solver.BestObjectiveBound()):
            bound = math.ceil(solver.BestObjectiveBound() - 1e-6) + self.constant
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Outcome(deadline.gave_up(), bound=bound, how=how)
        values = {v: bool(solver.Value(x)) if isinstance(v, BoolVar) else solver.Value(x)
                  for v, x in zip(self.problem.vars, self.xs, strict=True)}
        if status == cp_model.OPTIMAL:
            return Outcome(Status.OPTIMAL, values, how=how)
        return Outcome(deadline.gave_up(), values, bound, how=how)


class CpSatBackend(SessionBackend):
    """OR-Tools CP-SAT through the `ortools` package."""

    family = "cpsat"
    capabilities = COMPLETE | {WARM_START}
    session_class = CpSatSession
    requires = ("ortools.sat.python.cp_model",)
    takes_options = True

    def __init__(self, options: str | None = None, seed: int = 0):
        super().__init__(options, seed)
        self.workers, self.search, self.lp = parse_options(options)

    @classmethod
    def variants(cls) -> list[str]:
        return ["workers=1", "workers=2", "search=lbtree", "lp=0"]

    @classmethod
    def choices(cls) -> dict:
        return {"syntax": "cpsat[:workers=N][,search=default|lbtree][,lp=auto|0|1|2]",
                "defaults": ["workers=1", "search=default", "lp=auto"]}

    @property
    def spec(self) -> str:
        return f"cpsat:workers={self.workers}" + \
            (f",search={self.search}" if self.search != "default" else "") + \
            (f",lp={self.lp}" if self.lp != "auto" else "")

    def version(self) -> str:
        import ortools

        return f"ortools {ortools.__version__} (CP-SAT)"
