"""The lower bound every answer's gap is measured against: max(ResMII, RecMII), raised by what the
exact search proves in the time given.

The exact search (`warpweave.search`, the minimize strategy: the probe at the lower bound, then one
problem per stage count with I a variable) runs in a forked child that is killed when its time
is up, so a model whose encoding alone takes longer than the budget still returns on time.  What
it proves holds for the stage counts it searched (S <= its stage bound); its best schedule, if it
found one, comes back too (a proven optimum ends the scalable methods at once).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Sequence

import attrs

from warpweave.core.bounds import Bounds, bounds
from warpweave.core.constraints import Constraint
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule

GRACE = 2.0  # seconds the child may overrun its time limit before it is killed


@attrs.frozen
class LowerBound:
    """A lower bound on I, what it rests on, and the exact search's best schedule (if any)."""

    value: int
    how: tuple[str, ...]
    schedule: Schedule | None = None
    optimal: bool = False          # the exact search proved `schedule` optimal
    seconds: float = 0.0


def structural(b: Bounds) -> LowerBound:
    """max(ResMII, RecMII) with the terms named."""
    terms = [f"ResMII {b.res_mii}" + (f" on {b.res_unit}" if b.res_unit else ""),
             f"RecMII {b.rec_mii}"]
    return LowerBound(b.lower, (f"max({', '.join(terms)})",))


def _child(model, constraints, options, send) -> None:
    from warpweave.search import search
    try:
        o = search(model, constraints=constraints, isolate=False, **options)
        send.send(("done", (o.lower_bound, o.schedule, o.optimal, o.max_stages, o.status)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, never raised here
        send.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        send.close()


def exact_lower_bound(model: Model, constraints: Sequence[Constraint], *, time_limit: float,
                      backend: str = "cpsat", encoding: str = "integer",
                      max_stages: int | None = None, seed: int = 0,
                      semantics: str = "loop") -> LowerBound:
    """The structural bound, raised by what the exact search proves within `time_limit`
    seconds (see the module docstring)."""
    b = bounds(model, {c.name for c in constraints})
    base = structural(b)
    if time_limit <= 0:
        return base
    started = time.perf_counter()
    options = {"backend": backend, "encoding": encoding, "strategy": "minimize",
               "max_stages": max_stages, "time_limit": time_limit, "seed": seed,
               "semantics": semantics}
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(model, list(constraints), options, send),
                        daemon=True)
    child.start()
    send.close()
    answer = None
    try:
        if receive.poll(time_limit + GRACE):
            try:
                answer = receive.recv()
            except EOFError:
                answer = None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()
    seconds = time.perf_counter() - started
    how = f"exact search ({backend}/{encoding}, {seconds:.1f} s)"
    if answer is None or answer[0] != "done":
        why = "stopped at its time limit" if answer is None else answer[1]
        return attrs.evolve(base, how=base.how + (f"{how}: {why}, nothing more proven",),
                            seconds=seconds)
    lower, schedule, optimal, s_max, status = answer[1]
    if lower > base.value:
        proven = f"{how}: no I < {lower} with at most {s_max} stages"
    else:
        proven = f"{how}: nothing above the structural bound ({status})"
    return LowerBound(max(base.value, lower), base.how + (proven,), schedule, optimal, seconds)
