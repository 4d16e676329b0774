"""One point as a worker runs it: a `Task` (the model as a document, the solve options) and
`solve_point`, which returns a plain record (JSON values only).

The same function runs in a local worker process and on a cluster's worker: it needs the
installed package and nothing else - no kernel registry (the driver built the model), no results
store (the driver records what comes back).  It never raises: bad input, a solver failure or a
verification bug each become a record with status `error` and the reason.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from typing import Any

import attrs

# A record's `status`: the search's answer (optimal | feasible | infeasible | unknown) or error.
# `complete`: the search ran to its end (exit status 0 or 1), so the same configuration would
# answer the same again; otherwise it stopped at its time limit or failed.
ERROR = "error"


@attrs.frozen
class Task:
    """What a worker needs: the point's key, the model document, `api.solve`'s options, and
    whether each solver call runs in a forked child (`isolate`: in a local worker process; a
    cluster's worker runs tasks in threads, where forking is unsafe, so its solver calls run in
    process under the solvers' own time limits)."""

    key: str
    model: Mapping[str, Any]
    options: Mapping[str, Any]
    isolate: bool = True


def where() -> str:
    """host:pid of this process (which worker solved a point)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def failed(reason: str, seconds: float = 0.0, complete: bool = False) -> dict:
    """The record of a point that has no answer."""
    return {"status": ERROR, "complete": complete, "reason": reason,
            "seconds": round(seconds, 3), "solved_by": where()}


def solve_point(task: Task) -> dict:
    """Solve the task's model with its options and return the record: status, complete, I, L,
    the raw lower bound, the claim, seconds, the solve report (`Result.to_dict`: the schedule
    and its proof) and, with a schedule, the resources it holds (`throughput.resources`)."""
    from warpweave import api
    from warpweave.core.formats import model_from_dict
    from warpweave.errors import InputError
    from warpweave.search import SearchBug
    from warpweave.sweeps.store import LIMITS
    from warpweave.sweeps.throughput import resources

    started = time.perf_counter()
    try:
        model = model_from_dict(task.model)
        result = api.solve(model, isolate=task.isolate, **task.options)
    except InputError as exc:      # the same input fails the same way: no need to retry
        return failed(f"input error: {exc}", time.perf_counter() - started, complete=True)
    except SearchBug as exc:
        return failed(f"bug: {exc}", time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001 - a solver package's failure is a record, not a crash
        return failed(f"{type(exc).__name__}: {exc}", time.perf_counter() - started)
    report = result.to_dict()
    claim = result.claim
    record = {"status": result.status, "complete": result.exit_status in (0, 1),
              "I": result.I, "L": result.L, "lower_bound": report["lower_bound"],
              "I_optimal": claim["I_optimal"], "proven_in": claim["proven_in"],
              "stage_bound": claim["stage_bound"],
              "cycles_per_unit": (report.get("scale") or {}).get("cycles_per_unit"),
              "seconds": round(time.perf_counter() - started, 3), "solved_by": where(),
              "reason": None if result.exit_status in (0, 1) else
              "; ".join(report.get("notes") or []) or f"stopped: {result.status}",
              "limits": {k: task.options.get(k) for k in LIMITS}, "report": report}
    if result.schedule is not None:
        record.update(resources(result.model, result.schedule))
    return record


def ruled_out_up_to(record: Mapping[str, Any]) -> int | None:
    """The largest I (raw cycles) the proof in `record` rules out: for a point proven infeasible
    in raw cycles, the search's upper limit on I (beyond it a larger I cannot help), none of
    whose I has a schedule - not a lower bound.  None when the proof is in normalized units (it
    says nothing in cycles) or the record has none."""
    report = record.get("report") or {}
    if report.get("scale") or not report.get("proof"):
        return None
    return max((p["rules_out"]["I"][1] for p in report["proof"] if p.get("rules_out")),
               default=None)
