"""The entry points: `search` (the optimal schedule of a model, with its proof) and `decide` (one
initiation interval only), and `check_limits` (the options that limit a search).

`search` checks its options, computes the bounds, opens a `Run` and hands it to the strategy
asked for (`warpweave.search.strategies`), then to the tie-breakers; a time limit or Ctrl-C at
any point still returns the best schedule found with its proven lower bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from warpweave import defaults, limits
from warpweave.core.bounds import bounds
from warpweave.core.constraints import Constraint, constraint_set
from warpweave.core.model import Model
from warpweave.core.registry import ENCODINGS
from warpweave.core.schedule import Schedule
from warpweave.core.verify import check_semantics
from warpweave.errors import InputError
from warpweave.search.attempt import Attempt
from warpweave.search.outcome import Outcome
from warpweave.search.run import Run
from warpweave.search.solver import Solver, status_of
from warpweave.search.strategies import algorithm_1, minimize, sweep
from warpweave.search.tiebreak import TIE_BREAKERS, tie_break


def check_limits(time_limit: float | None, solve_limit: float | None,
                 max_stages: int | None) -> None:
    """The limits of a search, as the options that give them say: seconds > 0, stages >= 1
    (None: no limit, or the default).  A zero is an error, not "no limit"."""
    for option, seconds in (("--time-limit", time_limit), ("--solve-limit", solve_limit)):
        if seconds is not None and not seconds > 0:  # NaN too
            raise InputError("must be > 0", (option,), seconds)
    if max_stages is not None and max_stages < 1:
        raise InputError("must be >= 1", ("--max-stages",), max_stages)


def choose(backend: str, encoding: str, strategy: str, paper: bool = False) -> tuple[str, str]:
    """(backend, strategy) with `auto` resolved as `warpweave solve` resolves it: the minimize
    search when the encoding takes I as a variable (not for Algorithm 1, which sweeps I), else
    the sweep; the backend `defaults.MINIMIZE_BACKEND` for the minimize search,
    `defaults.SWEEP_BACKEND` for the sweep.  InputError naming an unknown encoding."""
    if strategy == "auto":
        takes = getattr(ENCODINGS.get(encoding), "variable_interval", False)
        strategy = "minimize" if takes and not paper else "sweep"
    if backend == "auto":
        backend = defaults.MINIMIZE_BACKEND if strategy == "minimize" else defaults.SWEEP_BACKEND
    return backend, strategy


@limits.within_time_limit  # the whole search, its bounds and encodings included
def search(model: Model, *, backend: str = defaults.BACKEND, encoding: str = defaults.ENCODING,
           constraints: Sequence[Constraint] | None = None, max_stages: int | None = None,
           time_limit: float | None = None, solve_limit: float | None = None,
           paper: bool = False, tie_breakers: Sequence[str] = (), seed: int = defaults.SEED,
           progress: Callable[[Attempt], None] | None = None,
           bug_dir: Path | None = None, strategy: str = defaults.SEARCH,
           isolate: bool = True, semantics: str = defaults.SEMANTICS,
           upper: Schedule | None = None, proven: int = 0) -> Outcome:
    """Find an optimal schedule of `model` (see `warpweave.search`), with `warpweave solve`'s
    defaults (`warpweave.defaults`; `auto` resolved by `choose`).  `strategy` is `sweep` (one
    problem per I and stage count), `minimize` (I a variable: one problem per stage count; needs
    an encoding that takes I as a variable) or `auto`.  With `isolate` every solver call runs
    in a child process (hard time limits, prompt Ctrl-C, contained crashes; ~20-40 ms each).
    `semantics`: "loop" (DESIGN section 3: every trip count) or "paper-q" (the paper's Q_S).
    `upper`: a schedule of `model` found otherwise (the heuristic's): if every constraint
    accepts it, the minimize search asks only for I up to its I, starting from it (a warm start,
    where it has at most the stage bound's stages), and returns it if it finds no schedule
    within the stage bound (not proven optimal in L then) or is stopped before it finds one.
    `proven`: no I below it is feasible, shown elsewhere (a relaxation's search, with the same
    stage bound); the search starts there."""
    check_semantics(semantics)
    if strategy not in ("auto", "sweep", "minimize"):
        raise InputError("must be auto, sweep or minimize", ("--search",), strategy)
    backend, strategy = choose(backend, encoding, strategy, paper)
    if strategy == "minimize" and paper:
        raise InputError("Algorithm 1 sweeps I: it cannot be combined with --search minimize",
                         ("--search",), strategy)
    check_limits(time_limit, solve_limit, max_stages)
    started = time.perf_counter()
    cons = list(constraints) if constraints is not None else constraint_set()
    for t in tie_breakers:
        if t not in TIE_BREAKERS:
            raise InputError(f"unknown tie-breaker (known: {', '.join(TIE_BREAKERS)})", value=t)
    solver = Solver(model, backend, encoding, seed, bug_dir, isolate, semantics)
    if strategy == "minimize" and not getattr(solver.encoding, "variable_interval", False):
        raise InputError("this encoding needs a fixed I; the minimize search takes I as a "
                         "variable: use --encoding integer", ("--encoding",), encoding)
    try:
        b = bounds(model, {c.name for c in cons})
    except (limits.TimeUp, KeyboardInterrupt) as stop:
        return Outcome.stopped(model, bounds(model, {c.name for c in cons} - {"dependence"}),
                               max_stages, solver.backend.spec, encoding, cons,
                               time.perf_counter() - started, stop,
                               "computing the bounds (the lower bound is without RecMII)")
    s_max = b.default_max_stages() if max_stages is None else max_stages
    run = Run(solver, cons, attrs.evolve(b, proven=proven), s_max, solve_limit, progress)
    interrupted = False
    try:
        if paper:
            algorithm_1(run)
        elif strategy == "minimize":
            if upper is not None and any(c.check(model, upper, semantics=semantics)
                                         for c in cons):
                run.notes.append("the upper bound given was not used: it breaks a constraint")
                upper = None
            elif upper is not None and upper.stages > s_max:
                run.notes.append(f"the upper bound given (I={upper.I}) has {upper.stages} "
                                 f"stages, more than the stage bound {s_max}: it bounds I only")
            minimize(run, upper)
        else:
            sweep(run)
        if run.best is not None and tie_breakers:
            tie_break(run, tie_breakers)
    except limits.TimeUp as stop:
        run.notes.append(str(stop))
    except KeyboardInterrupt:
        interrupted = True
        run.notes.append("interrupted")
    if run.best is None and upper is not None and strategy == "minimize" and not paper:
        run.best = upper  # stopped before finding one: the schedule given, not proven
    return run.outcome(encoding, time.perf_counter() - started, interrupted)


def decide(model: Model, I: int, *, backend: str = "cpsat",  # noqa: E741
           encoding: str = "compact", constraints: Sequence[Constraint] | None = None,
           max_stages: int | None = None, solve_limit: float | None = None,
           seed: int = 0, isolate: bool = True, semantics: str = "loop"
           ) -> tuple[str, Schedule | None]:
    """One initiation interval only: ("feasible", the shortest schedule of the first feasible
    stage count), ("infeasible", None) when every S <= max_stages was shown infeasible, else
    ("unknown", None).  For questions about a known optimum (is it still reachable with a shape
    imposed?) without searching every I below it again; nothing is recorded."""
    cons = list(constraints) if constraints is not None else constraint_set()
    b = bounds(model, {c.name for c in cons})
    solver = Solver(model, backend, encoding, seed, None, isolate, check_semantics(semantics))
    proven = True
    for S in range(max(1, -(-b.min_length // I)), (max_stages or b.default_max_stages()) + 1):
        result, schedule = solver.solve(solver.view(I, S, cons, b.min_length), cons, solve_limit)
        if schedule is not None:
            return "feasible", schedule
        proven = proven and status_of(result) == "infeasible"
    return ("infeasible" if proven else "unknown"), None
