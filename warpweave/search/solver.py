"""One backend x encoding for one model: states an (I, S) problem, solves it, verifies the answer.

This is the search's only contact with encodings and backends.  `Solver.solve` returns a schedule
only after every constraint's `check` (the verifier's meaning, sharing no code with the
encodings) accepts it; a schedule it rejects is a bug in an encoding or a backend, so the IR is
written where it can be replayed and `SearchBug` is raised: the search never reports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from warpweave.backends.isolate import solve_isolated
from warpweave.core.constraints import Constraint
from warpweave.core.model import Model
from warpweave.core.registry import ENCODINGS
from warpweave.core.registry import backend as make_backend
from warpweave.core.schedule import Schedule


class SearchBug(Exception):
    """A backend returned a schedule the verifier rejects: a bug, with the IR saved to replay it."""


def status_of(result: Any) -> str:
    """A backend result's status in the search's words: infeasible | optimal | feasible |
    timeout | unknown."""
    return {"UNSAT": "infeasible", "OPTIMAL": "optimal", "SAT": "feasible",
            "TIMEOUT": "timeout"}.get(result.status.value, "unknown")


class Solver:
    """Builds and solves one (I, S) problem of `model`; verifies what comes back.

    `how` names it in the proof (`backend spec/encoding`).  With `isolate` every call runs in a
    forked child (`warpweave.backends.isolate`: hard time limits, prompt Ctrl-C, contained
    crashes).  `bug_dir` is where a rejected schedule's IR is written (default: here)."""

    def __init__(self, model: Model, backend: str, encoding: str, seed: int,
                 bug_dir: Path | None, isolate: bool = True, semantics: str = "loop"):
        self.model = model
        self.semantics = semantics
        self.backend = make_backend(backend, seed=seed)
        self.encoding = ENCODINGS.get(encoding)
        self.how = f"{self.backend.spec}/{encoding}"
        self.bug_dir = bug_dir
        self.isolate = isolate

    def view(self, I: int, S: int, cons: Sequence[Constraint], min_length: int,  # noqa: E741
             interval: tuple[int, int] | None = None):
        """The encoding's problem: some L in [min_length, S*I] at (I, S), or, with `interval`
        (encodings with `variable_interval`), I a variable over it (then `I` is its top)."""
        if interval is None:
            return self.encoding(self.model, I, S, cons, min_length=min_length,
                                 semantics=self.semantics)
        return self.encoding(self.model, I, S, cons, min_length=min_length,
                             semantics=self.semantics, interval=interval)

    def solve(self, view, cons: Sequence[Constraint], limit: float | None):
        """(the backend's result, the decoded schedule if every constraint in `cons` accepts
        it, else None); SearchBug when a constraint rejects it."""
        if self.isolate:
            result = solve_isolated(self.backend, view.problem, limit)
        else:
            result = self.backend.solve(view.problem, time_limit=limit)
        if not result.status.has_solution:
            return result, None
        schedule = view.decode(result.values)
        violations = [v for c in cons
                      for v in c.check(self.model, schedule, semantics=self.semantics)]
        if violations:
            raise SearchBug(self._report(view, schedule, violations))
        return result, schedule

    def _report(self, view, schedule: Schedule, violations) -> str:
        where = self.bug_dir or Path(".")
        stem = f"warpweave-bug-{self.model.name}-I{view.I}-S{view.S}-{self.how.replace('/', '_')}"
        path = Path(where) / f"{stem}.ir.json".replace(":", "_")
        view.problem.write(path)
        return (f"{self.how} returned a schedule the verifier rejects at I={view.I}, S={view.S}: "
                f"{violations[0]} (and {len(violations) - 1} more); IR saved to {path}; "
                f"schedule: start={dict(schedule.start)} group={dict(schedule.group)}")
