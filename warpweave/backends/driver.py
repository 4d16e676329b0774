"""What the solver adapters share: a session that translates the problem once, deadlines, and
optimization by bound tightening for solvers without an optimizer of their own.

A concrete backend subclasses `LoadedSession` (its `load` translates, its `run` answers one call)
and `SessionBackend` (which makes `solve` a one-call session).  `run` returns an `Outcome`; the
session turns it into a `Result`, computing the objective exactly from the values (never from a
solver's floating-point objective).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

import attrs

from warpweave import limits
from warpweave.backends.base import Backend, Result, Session, Status
from warpweave.backends.normal import collect, span
from warpweave.ir import Lit, Problem, Var

Values = Mapping[Var, int | bool]


class Deadline(limits.Deadline):
    """A wall-clock limit (or none) for one solve call."""

    def gave_up(self) -> Status:
        """The status of a call that ended without an answer: TIMEOUT under a limit, else
        UNKNOWN."""
        return Status.TIMEOUT if self.limit is not None else Status.UNKNOWN


@contextlib.contextmanager
def interrupt_at(deadline: Deadline, stop: Callable[[], object]) -> Iterator[None]:
    """Call `stop` (a solver's thread-safe interrupt) from a timer thread once the deadline has
    passed, and again every 50 ms until the block ends: an interrupt that lands just before the
    solver starts its search could otherwise be lost.  Without a deadline nothing is started."""
    limit = deadline.remaining()
    if limit is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        if done.wait(limit):
            return
        while True:
            # z3's interrupt raises Z3Exception('canceled') when it reads the error code the
            # canceled call left on the context; the interrupt has landed, and an exception
            # here would only end this thread with an "unhandled exception" warning.
            with contextlib.suppress(Exception):
                stop()
            if done.wait(0.05):
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@attrs.frozen
class Outcome:
    """What a session's `run` found: the status, a full assignment if any, the proven lower
    bound of the objective if known, and how optimization was done."""

    status: Status
    values: Values | None = None
    bound: int | None = None
    how: str = ""


class LoadedSession(Session):
    """A problem translated once into a solver; `solve` may be called many times.  The
    translation time is the `build_seconds` of the first call's Result (0 afterwards), so that
    summing over a session's results counts it once."""

    def __init__(self, backend: Backend, problem: Problem):
        super().__init__(backend, problem)
        start = time.perf_counter()
        self.load()
        self.build_seconds = time.perf_counter() - start
        self._charged = False

    def load(self) -> None:
        """Translate `self.problem` into the solver."""
        raise NotImplementedError

    def run(self, assumptions: list[Lit], deadline: Deadline) -> Outcome:
        """Answer one call; must leave no constraint behind that a later call would see."""
        raise NotImplementedError

    def solve(self, assumptions: Sequence[Lit] = (), time_limit: float | None = None) -> Result:
        start = time.perf_counter()
        out = self.run(list(assumptions), Deadline(time_limit))
        seconds = time.perf_counter() - start
        build, self._charged = (0.0 if self._charged else self.build_seconds), True
        objective = None
        bound = out.bound
        status = out.status
        if out.values is not None:
            objective = self.problem.objective_value(out.values)
            if status == Status.OPTIMAL and objective is None:
                status = Status.SAT  # nothing to optimize: just a solution
            if status == Status.OPTIMAL:
                bound = objective
        return Result(status=status, backend=self.backend.spec, version=self.backend.version(),
                      values=out.values, objective=objective, bound=bound, build_seconds=build,
                      solve_seconds=seconds, how=out.how)


class SessionBackend(Backend):
    """A backend whose one-off `solve` is a session used once.  `requires` names the modules it
    imports, each optionally with `:attribute` it needs (it is unavailable when one fails to
    import or lacks the attribute: a too-old version); options are refused unless
    `takes_options`."""

    session_class: type[LoadedSession] = LoadedSession
    requires: tuple[str, ...] = ()
    takes_options = False

    def __init__(self, options: str | None = None, seed: int = 0):
        if options and not self.takes_options:
            raise ValueError(f"{self.family} takes no options, got {options!r}")
        super().__init__(options, seed)

    @classmethod
    def unavailable(cls) -> str | None:
        for need in cls.requires:
            name, _, attr = need.partition(":")
            try:
                module = importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 - ImportError, or a binding failing to load
                return f"cannot import {name} ({type(exc).__name__}: {exc}); {cls.install_hint()}"
            if attr and not hasattr(module, attr):
                version = getattr(module, "__version__", "of unknown version")
                return f"{name} {version} has no {attr} (too old); {cls.install_hint()}"
        return None

    def session(self, problem: Problem) -> LoadedSession:
        return self.session_class(self, problem)

    def solve(self, problem: Problem, *, assumptions: Sequence[Lit] = (),
              time_limit: float | None = None) -> Result:
        session = self.session(problem)
        try:
            return session.solve(assumptions, time_limit)
        finally:
            session.close()


def objective_floor(problem: Problem) -> int:
    """The least value the objective can take over the variables' domains (a trivial bound)."""
    assert problem.objective is not None
    coefs, constant = collect(problem.objective)
    return span(coefs, constant + problem.objective_offset)[0]


# One step of bound tightening: solve with `objective <= bound` (None: no bound) within the time
# left; answer a status (SAT, UNSAT or a give-up) and, when SAT, a full assignment.
Step = Callable[[int | None, Deadline], tuple[Status, Values | None]]


def bisect_objective(problem: Problem, step: Step, deadline: Deadline) -> Outcome:
    """Minimize by bound tightening: find a solution, then bisect between the best bound proven
    so far and the best objective found, each step a solve under `objective <= k`.

    Each step's bound must be retracted by the caller's `step` (assumption or push/pop) so that
    nothing constrains later calls.  On a give-up the best solution and bound so far are kept.
    """
    status, values = step(None, deadline)
    if status != Status.SAT:
        return Outcome(status)
    if problem.objective is None:
        return Outcome(Status.SAT, values, how="feasibility")
    best = problem.objective_value(values)
    lo = objective_floor(problem)
    steps = 1
    while lo < best:
        k = (lo + best - 1) // 2
        status, found = step(k, deadline)
        steps += 1
        if status == Status.SAT:
            values, best = found, problem.objective_value(found)
        elif status == Status.UNSAT:
            lo = k + 1
        else:
            return Outcome(deadline.gave_up(), values, lo,
                           how=f"bound tightening by bisection ({steps} steps, stopped)")
    return Outcome(Status.OPTIMAL, values, best,
                   how=f"bound tightening by bisection ({steps} steps)")
