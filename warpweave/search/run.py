"""A search in progress (`Run`): the ask-and-record protocol, and what is established so far.

Every solver call of a search goes through `Run.put`, in one order: check the deadline (stop
before stating a problem that will not be solved), announce the question to `progress` (an
`Attempt` with status `SOLVING`, never recorded), state it in the encoding, solve and verify it
within the time left, keep a schedule of the model's own problem as the best so far (before
anything else can be interrupted), record the answer and tell `progress`.  The strategies
(`warpweave.search.strategies`, `warpweave.search.tiebreak`) decide which questions to put and
what their answers prove; they update `lower`, `best` and `optimal` as they go, so that a time
limit or Ctrl-C that stops them still leaves the best schedule and the proven lower bound, which
`outcome` reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from warpweave import limits
from warpweave.core.bounds import Bounds
from warpweave.core.constraints import Constraint
from warpweave.core.schedule import Schedule
from warpweave.search.attempt import RELAXED_PHASES, SOLVING, Attempt
from warpweave.search.outcome import Outcome
from warpweave.search.solver import Solver, status_of


def lengths(min_length: int, S: int, lowest: int, highest: int) -> tuple[int, int]:
    """The lengths a question at S stages with I in [lowest, highest] covers: L > (S-1)*I (the
    smaller stage counts hold the shorter ones), L >= the longest path, L <= S*I.  Empty (first
    > last) when S stages of `highest` cannot hold the longest path."""
    return max(min_length, (S - 1) * lowest + 1), S * highest


@attrs.frozen
class Answer:
    """A recorded answer with what produced it: the encoding's view (to decode more from) and
    the backend's result (its objective and bound)."""

    status: str
    schedule: Schedule | None
    view: Any
    result: Any


class Run:
    """One search of `solver.model` under `cons`, bounds `bounds` and at most `max_stages`
    stages: the questions put, their answers, and what they establish.

    `lower`: no I below it is feasible (within the stage bound); `best`: the best verified
    schedule of the model's problem found; `optimal`: its L is proven minimal at its I and no
    smaller I works.  `solve_limit` caps each solver call; the run's deadline (the search's
    time limit, `warpweave.limits`) caps them all."""

    def __init__(self, solver: Solver, cons: Sequence[Constraint], bounds: Bounds,
                 max_stages: int, solve_limit: float | None = None,
                 progress: Callable[[Attempt], None] | None = None):
        self.solver = solver
        self.cons = list(cons)
        self.bounds = bounds
        self.max_stages = max_stages
        self.solve_limit = solve_limit
        self.progress = progress
        self.lower = bounds.lower
        self.best: Schedule | None = None
        self.optimal = False
        self.attempts: list[Attempt] = []
        self.notes: list[str] = []

    def record(self, answer: Attempt) -> None:
        """Keep `answer` in the proof and tell `progress`."""
        self.attempts.append(answer)
        if self.progress:
            self.progress(answer)

    def limit(self) -> float | None:
        """The seconds the next solver call may take; TimeUp when none are left (the
        search's deadline or an enclosing one), KeyboardInterrupt after a Ctrl-C that was
        swallowed on the way (`warpweave.limits`)."""
        limits.check()
        left = limits.remaining()
        if self.solve_limit is None:
            return left
        return self.solve_limit if left is None else min(self.solve_limit, left)

    def put(self, question: Attempt, cons: Sequence[Constraint],
            state: Callable[[], Any]) -> Answer:
        """Ask `question` (status SOLVING) of the solver: `state()` gives the encoding's view of
        it (its time is the answer's `encode_seconds`), whose answer is verified against `cons`.
        The recorded answer is `question` with the status, times and length found; over an I
        range, I is the one found."""
        self.limit()  # out of time: stop before stating a problem that will not be solved
        if self.progress:
            self.progress(question)
        tick = time.perf_counter()
        view = state()
        encoded = time.perf_counter() - tick
        result, schedule = self.solver.solve(view, cons, self.limit())
        status = status_of(result)
        if schedule is not None and question.phase not in RELAXED_PHASES:
            self.best = schedule  # kept before anything else can be interrupted
        found_i = schedule.I if schedule is not None and question.interval else question.I
        self.record(attrs.evolve(
            question, I=found_i, status=status, seconds=time.perf_counter() - tick,
            L=schedule.L if schedule else None, encode_seconds=encoded,
            build_seconds=result.build_seconds, solve_seconds=result.solve_seconds,
            variables=len(view.problem.vars), constraints=len(view.problem.constraints)))
        return Answer(status, schedule, view, result)

    def ask(self, I: int, S: int, cons: Sequence[Constraint], phase: str,  # noqa: E741
            min_length: int, hint: Schedule | None = None) -> tuple[str, Schedule | None]:
        """Is some L >= `min_length` feasible at (I, S) under `cons`?  (status, the verified
        schedule of least L found, or None).  `hint`: a warm start.  A relaxation's question
        has no objective: only its feasibility matters."""
        def state():
            view = self.solver.view(I, S, cons, min_length)
            if hint is not None:
                view.hint(hint)
            if phase == "relaxation":
                view.problem.objective = None
            return view

        covered = lengths(min_length, S, I, I)  # never empty: see strategies.first_stage
        answer = self.put(Attempt(I, S, covered, SOLVING, self.solver.how, phase=phase), cons,
                          state)
        return answer.status, answer.schedule

    def ask_range(self, S: int, interval: tuple[int, int], hint: Schedule | None = None,
                  feasibility: bool = False) -> tuple[str, Schedule | None, int]:
        """The least I in `interval`, then the least L, at S stages under every constraint
        (encodings with `variable_interval`), or with `feasibility` any I in it (no objective):
        (status, the verified schedule, the least I not ruled out at S).  An answer neither
        optimal nor infeasible rules out what the solver's proven objective bound does, as the
        encoding decodes it."""
        lowest, top = interval
        min_length = self.bounds.min_length

        def state():
            view = self.solver.view(top, S, self.cons, min_length, interval=interval)
            if hint is not None:
                view.hint(hint)  # nothing where it does not fit
            if feasibility:
                view.problem.objective = None
            return view

        question = Attempt(lowest, S, lengths(min_length, S, lowest, top), SOLVING,
                           self.solver.how, phase="minimize", interval=interval)
        answer = self.put(question, self.cons, state)
        bound = answer.result.bound
        floor = lowest if bound is None else answer.view.least_interval(bound)
        return answer.status, answer.schedule, floor

    def outcome(self, encoding: str, seconds: float, interrupted: bool) -> Outcome:
        """What the run found and proved: optimal when `best` is proven optimal and no I below
        it is left; infeasible when every I up to the bounds' `i_upper` was ruled out and the
        run was not interrupted; else feasible (a schedule) or unknown."""
        notes = list(self.notes)
        stopped = sum(a.status == "timeout" for a in self.attempts)
        if stopped and not any(n.startswith("time limit") for n in notes):
            notes.append(f"{stopped} solver call(s) stopped at a time limit")
        best, lower = self.best, self.lower
        if best is not None:
            lower = min(lower, best.I)
            status = "optimal" if self.optimal and lower == best.I else "feasible"
        elif lower > self.bounds.i_upper and not interrupted:
            status = "infeasible"
        else:
            status = "unknown"
        return Outcome(self.solver.model, best, status, status == "optimal", lower, self.bounds,
                       self.max_stages, tuple(self.attempts), self.solver.backend.spec,
                       encoding, tuple(c.name for c in self.cons), seconds, interrupted,
                       tuple(notes))
