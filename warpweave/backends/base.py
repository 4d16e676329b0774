"""What every backend is: a name, a declared set of capabilities, and `solve` returning a Result.

A backend translates an IR `Problem` into one solver's terms and reads the answer back.  It never
sees the model; it imports its solver package lazily so that a missing package removes only that
backend.  Solutions are returned in a `Result`, never stored on variables.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

import attrs

from warpweave.ir import Lit, Problem, Var

# Capability names that tests and the search read (STYLE lesson 4).
OPTIMIZE = "optimize"          # minimizes the objective and proves optimality
ASSUMPTIONS = "assumptions"    # Session.solve(assumptions=...) without rebuilding
INTEGERS = "integers"          # integer variables natively (else an order encoding)
UNSAT_PROOF = "unsat_proof"    # UNSAT answers are proofs of infeasibility (complete solver)
TIME_LIMIT = "time_limit"      # honours a time limit and returns TIMEOUT with what it knows
WARM_START = "warm_start"      # begins its search from Problem.hints
# What a complete optimizer with integers, assumptions and time limits declares.
COMPLETE = frozenset({OPTIMIZE, ASSUMPTIONS, INTEGERS, UNSAT_PROOF, TIME_LIMIT})


class Status(enum.Enum):
    SAT = "SAT"            # a solution (objective, if any, not proven optimal)
    UNSAT = "UNSAT"        # proven infeasible
    OPTIMAL = "OPTIMAL"    # a solution with a proven-optimal objective
    UNKNOWN = "UNKNOWN"    # the solver gave up without an answer
    TIMEOUT = "TIMEOUT"    # the time limit was reached (values hold the best solution, if any)

    @property
    def has_solution(self) -> bool:
        return self in (Status.SAT, Status.OPTIMAL)


@attrs.frozen
class Result:
    """The answer of one solve."""

    status: Status
    backend: str
    version: str
    values: Mapping[Var, int | bool] | None = None
    objective: int | None = None
    bound: int | None = None            # proven lower bound on the objective (minimization)
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    how: str = ""                       # e.g. "native optimizer", "bound tightening (5 steps)"

    def value(self, x: Var | Lit) -> int | bool:
        """The value of a variable, or the truth of a literal."""
        assert self.values is not None, "no solution"
        if x.__class__.__name__ == "Not":
            return not bool(self.values[x.var])
        return self.values[x]


class Session:
    """A problem loaded into one solver, solvable repeatedly under different assumptions.

    The default re-solves from scratch with the assumptions as unit clauses; backends with the
    `assumptions` capability override it to keep the solver's state between calls.
    """

    def __init__(self, backend: Backend, problem: Problem):
        self.backend = backend
        self.problem = problem

    def solve(self, assumptions: Sequence[Lit] = (), time_limit: float | None = None) -> Result:
        return self.backend.solve(self.problem, assumptions=assumptions, time_limit=time_limit)

    def close(self) -> None:
        """Release solver resources."""


class Backend:
    """Base class.  Subclasses set `family`, `capabilities`, and implement `solve` and `version`.

    `spec` is the full parameterised name (`sat:cadical195/totalizer`); `options` its part after
    the colon.
    """

    family: str = ""
    capabilities: frozenset[str] = frozenset()
    # The pip extra that installs this backend's solver package (`pip install 'warpweave[mip]'`);
    # empty for a backend the base install brings.
    extra: str = ""

    @classmethod
    def install_hint(cls) -> str:
        """What to run to get this backend: the extra that brings its solver package."""
        return f"pip install 'warpweave[{cls.extra}]'" if cls.extra else \
            "reinstall warpweave (its base install brings this backend)"

    def __init__(self, options: str | None = None, seed: int = 0):
        self.options = options
        self.seed = seed

    @property
    def spec(self) -> str:
        return f"{self.family}:{self.options}" if self.options else self.family

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this backend cannot run here (a missing package, ...), or None if it can."""
        return None

    @classmethod
    def variants(cls) -> list[str]:
        """Option strings of the concrete variants worth testing and listing (empty: just the
        family with no options)."""
        return []

    def version(self) -> str:
        raise NotImplementedError

    def solve(self, problem: Problem, *, assumptions: Sequence[Lit] = (),
              time_limit: float | None = None) -> Result:
        raise NotImplementedError

    def session(self, problem: Problem) -> Session:
        return Session(self, problem)
