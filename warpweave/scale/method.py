"""`warpweave solve --method exact|lns|gaus|heuristic|auto`: which scheduler answers, and its
answer in the search's terms (an `Outcome`), so that every method is reported, verified and
mapped back to raw cycles the same way.

`auto` is the exact search for models of at most `defaults.AUTO_EXACT_OPS` ops and LNS above,
which starts from the heuristic's (or GauS's) schedule and improves it within the time limit
(60 s without one).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from warpweave.core.constraints import Constraint
from warpweave.core.model import Model
from warpweave.core.verify import verify
from warpweave.defaults import AUTO_EXACT_OPS, METHODS
from warpweave.errors import InputError
from warpweave.scale.result import Listener, ScaleResult
from warpweave.search import Outcome

GAUS_EXTRA = "the gaus method needs PyTorch: pip install 'warpweave[gaus]'"


def choose(model: Model, method: str) -> tuple[str, str | None]:
    """The method that will run, and why when `auto` chose it."""
    if method not in METHODS:
        raise InputError(f"unknown method (known: {', '.join(METHODS)})", ("--method",), method)
    if method != "auto":
        return method, None
    n = len(model.ops)
    if n <= AUTO_EXACT_OPS:
        return "exact", None
    return "lns", f"--method auto chose lns: {n} ops > {AUTO_EXACT_OPS} (exact up to " \
                  f"{AUTO_EXACT_OPS})"


def gaus_available() -> str | None:
    """Why GauS cannot run here (PyTorch missing), or None."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return GAUS_EXTRA
    return None


def run_method(model: Model, method: str, constraints: Sequence[Constraint], *,
               time_limit: float | None, seed: int = 0, max_stages: int | None = None,
               backend: str = "cpsat", encoding: str = "integer",
               solve_limit: float | None = None, listener: Listener | None = None,
               semantics: str = "loop") -> ScaleResult:
    """Run one of the scalable methods (lns, gaus, heuristic) on `model`; the schedule it
    returns is verified here once more, under `semantics` (DESIGN section 3), against every
    constraint in force: a schedule the verifier rejects is never returned (`why` says so)."""
    result = _run(model, method, constraints, time_limit=time_limit, seed=seed,
                  max_stages=max_stages, backend=backend, encoding=encoding,
                  solve_limit=solve_limit, listener=listener, semantics=semantics)
    if result.schedule is None:
        return result
    wrong = verify(model, result.schedule, constraints, semantics)
    if not wrong:
        return result
    return attrs.evolve(result, schedule=None, lower_proven_optimal=False,
                        why=f"the verifier rejected {method}'s schedule (I={result.schedule.I}, "
                            f"{len(wrong)} violation(s); first: {wrong[0]}): not returned")


def _run(model: Model, method: str, constraints: Sequence[Constraint], *,
         time_limit: float | None, seed: int, max_stages: int | None, backend: str,
         encoding: str, solve_limit: float | None, listener: Listener | None,
         semantics: str) -> ScaleResult:
    if method == "gaus":
        why = gaus_available()
        if why:
            raise InputError(why, ("--method",), method)
        from warpweave.scale.gaus import GausOptions, gaus_schedule
        return gaus_schedule(model, constraints, options=GausOptions(seed=seed),
                             time_limit=time_limit, max_stages=max_stages, listener=listener,
                             semantics=semantics)
    if method == "lns":
        from warpweave.scale.lns import LnsOptions, lns_schedule
        options = LnsOptions(backend=backend, encoding=encoding, seed=seed, semantics=semantics,
                             **({"solve_limit": solve_limit} if solve_limit else {}))
        return lns_schedule(model, constraints, options=options, time_limit=time_limit,
                            max_stages=max_stages, listener=listener)
    if method == "heuristic":
        return _heuristic(model, constraints, time_limit, seed, max_stages, listener, semantics)
    raise InputError("not a scalable method (known: lns, gaus, heuristic)", ("--method",),
                     method)


def _heuristic(model, constraints, time_limit, seed, max_stages, listener,
               semantics) -> ScaleResult:
    """The heuristic (iterative modulo scheduling with greedy warp assignment) as a method."""
    from warpweave.core.heuristic import heuristic_schedule
    from warpweave.scale.lowerbound import structural
    from warpweave.scale.result import Improvement
    h = heuristic_schedule(model, rules=[c.name for c in constraints], seed=seed,
                           time_limit=time_limit, max_stages=max_stages, semantics=semantics)
    lower = structural(h.bounds)
    history = ()
    if h.schedule is not None:
        history = (Improvement(h.seconds, h.schedule.I, h.schedule.L, h.lower_bound,
                               "heuristic"),)
        if listener:
            listener(history[0])
    return ScaleResult("heuristic", model, h.schedule, h.lower_bound, h.bounds, lower.how,
                       history, h.seconds, h.why,
                       (f"heuristic: {len(h.trials)} attempt{'s' * (len(h.trials) != 1)}, "
                        f"{h.steps} scheduling steps",), timed_out=h.stopped)


def to_outcome(result: ScaleResult, constraints: Sequence[Constraint], max_stages: int,
               backend: str, encoding: str) -> Outcome:
    """The search's `Outcome` for a scalable method's answer (no proof attempts: the lower bound
    and what it rests on are in the notes)."""
    s = result.schedule
    if result.lower_proven_optimal and s is not None:
        status = "optimal"
    else:
        status = "feasible" if s is not None else "unknown"
    how = {"lns": f"lns:{backend}", "gaus": "gaus", "heuristic": "heuristic"}[result.method]
    notes = [*result.notes, "lower bound: " + "; ".join(result.lower_how)]
    if result.why:
        notes.append(result.why)
    return Outcome(result.model, s, status, status == "optimal", result.lower_bound,
                   result.bounds, max_stages, (), how,
                   encoding if result.method == "lns" else "-",
                   tuple(c.name for c in constraints), result.seconds, result.interrupted,
                   tuple(notes))
