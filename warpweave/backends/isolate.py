"""Each solver call in a child process (STYLE lesson 10: processes, not threads).

A child gives three things an in-process call cannot: a hard time limit for solvers that cannot
be interrupted inside a call (CaDiCaL, Kissat, Lingeling through PySAT); a Ctrl-C that stops the
run at once, whatever native code is running (CP-SAT, for one, swallows SIGINT and returns
early, and PySAT's CaDiCaL turns it into its own exception); and a solver that crashes costs one
answer, not the run.  The child is forked, so the problem and the backend need no pickling; only
the answer comes back, as plain values by variable index.  Where fork is missing the call runs in
process.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import traceback
from typing import Any

import attrs

from warpweave import limits
from warpweave.backends.base import Backend, Result, Status
from warpweave.ir import Problem

GRACE = 2.0  # seconds a child gets beyond its time limit before it is killed


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def solve_isolated(backend: Backend, problem: Problem, time_limit: float | None) -> Result:
    """`backend.solve(problem, time_limit=...)` in a forked child; a Result either way.

    A child that outlives its limit by GRACE is killed (status TIMEOUT); one that dies or raises
    gives status UNKNOWN with the reason in `how`.  KeyboardInterrupt kills the child and is
    raised again for the caller.
    """
    if not _can_fork():
        return backend.solve(problem, time_limit=time_limit)
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(backend, problem, time_limit, send), daemon=True)
    try:
        # A SIGINT inside the fork would raise in an at-fork hook, where CPython prints and
        # drops it: it is held until the fork is over, then raised here (the child is killed).
        with limits.deferred_interrupts():
            child.start()
        send.close()
        wait = None if time_limit is None else time_limit + GRACE
        if not receive.poll(wait):
            return _gave_up(backend, Status.TIMEOUT, f"killed {GRACE:g} s past the time limit")
        try:
            kind, payload = receive.recv()
        except EOFError:
            child.join()
            return _gave_up(backend, Status.UNKNOWN,
                            f"solver crashed (exit code {child.exitcode})")
    finally:
        send.close()
        if child.pid is not None:
            if child.is_alive():
                child.kill()
            child.join()
        receive.close()
    if kind == "error":
        return _gave_up(backend, Status.UNKNOWN, f"solver raised {payload}")
    result, values = payload
    if values is not None:
        values = dict(zip(problem.vars, values, strict=True))
    return attrs.evolve(result, values=values)


def _child(backend: Backend, problem: Problem, time_limit: float | None, send: Any) -> None:
    # Ctrl-C is the parent's to handle: it kills this process.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        result = backend.solve(problem, time_limit=time_limit)
        values = None if result.values is None else [result.values[v] for v in problem.vars]
        send.send(("result", (attrs.evolve(result, values=None), values)))
    except BaseException:  # noqa: BLE001 - reported to the parent as the answer
        send.send(("error", traceback.format_exc(limit=3).strip().splitlines()[-1]))
    finally:
        send.close()
        os._exit(0)


def _gave_up(backend: Backend, status: Status, how: str) -> Result:
    return Result(status=status, backend=backend.spec, version=backend.version(), how=how)
