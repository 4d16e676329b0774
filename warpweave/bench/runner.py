"""Running one case under one configuration in a worker process with a hard wall-clock limit.

Each (case, configuration) runs in a fresh process (STYLE lesson 10: processes, not threads; some
SAT solvers cannot be interrupted inside a call, so only killing the process stops them for
sure).  The worker builds the model, imports the solver package (so the import is not timed),
says it has started, streams each solver call it makes, and sends its record.  The search gets
the timeout as its own time limit; the parent kills the worker `grace` seconds after that and
records a `timeout`.

A record's `status`: optimal | infeasible (proven), feasible | unknown (the search's limit was
reached first; for the heuristic, LNS and GauS: a schedule or none), timeout (killed), error.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterable

import attrs

from warpweave.bench.configs import Config
from warpweave.bench.suites import Case
from warpweave.core.model import Model
from warpweave.errors import InputError
from warpweave.search import SOLVING
from warpweave.search.attempt import RELAXED_PHASES

DECIDED = ("optimal", "infeasible")


@attrs.frozen
class Settings:
    """How every case is run."""

    timeout: float = 120.0       # the search's time limit; the worker is killed `grace` later
    normalize: str = "auto"
    max_stages: int | None = None
    seed: int = 0
    startup: float = 120.0       # seconds a worker may take to start and build its model
    kill_after: float | None = None   # grace; default max(5 s, 10% of the timeout)

    @property
    def grace(self) -> float:
        return self.kill_after if self.kill_after is not None else max(5.0, 0.1 * self.timeout)


def case_fields(case: Case, config: Config) -> dict:
    """The identifying fields every record of `case` under `config` starts with."""
    return {"type": "case", "suite": case.suite, "case": case.name, "config": config.label,
            "backend": config.backend, "encoding": config.encoding, "search": config.search,
            "normalize": config.normalize, "reference": dict(case.reference)}


def run_case(case: Case, config: Config, settings: Settings,
             progress: Callable[[dict], None] | None = None, work: Callable | None = None) -> dict:
    """Run `case` under `config` in a worker process; its record, whatever happens.  `work` is
    what the process runs (default `_worker`; tests pass stand-ins that hang or crash)."""
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    # Not a daemon: the search runs each solver call in a child of the worker (daemons may have
    # none).  The worker leads its own process group, so a kill takes those children too.
    worker = ctx.Process(target=_in_own_group, args=(work or _worker, case, config, settings,
                                                     send))
    record = case_fields(case, config)
    calls: list[dict] = []
    begun = time.perf_counter()
    deadline = begun + settings.startup
    worker.start()
    send.close()
    try:
        while True:
            left = deadline - time.perf_counter()
            if left <= 0 or not receive.poll(left):
                record.update(_killed(settings, begun, calls, started="ops" in record))
                break
            try:
                kind, payload = receive.recv()
            except EOFError:  # the worker died without a word (a crash, out of memory)
                worker.join(5)
                record.update(status="error", error=f"worker died (exit code {worker.exitcode})")
                break
            if kind == "started":
                record.update(payload)
                begun = time.perf_counter()
                deadline = begun + settings.timeout + settings.grace
            elif kind == "attempt":
                calls.append(payload)
                if progress:
                    progress(payload)
            elif kind == "done":
                record.update(payload)
                worker.join(5)  # let it exit on its own
                break
            else:
                record.update(status="error", error=payload)
                break
    finally:
        _kill(worker)
        receive.close()
    return record


def _kill(worker) -> None:
    """Kill the worker's process group (the worker and its solver children), then reap it."""
    if worker.is_alive():
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # not yet its own group leader
            worker.kill()
    worker.join()


def _killed(settings: Settings, begun: float, calls: list[dict], started: bool) -> dict:
    """The record of a worker killed at the hard limit: what it had reported so far."""
    waited = time.perf_counter() - begun
    if not started:
        return {"status": "error", "error": f"the worker did not start within "
                f"{settings.startup:.0f} s (building the model)"}
    out = {"status": "timeout", "optimal": False, "wall_seconds": round(waited, 3),
           "calls": len(calls),
           "notes": [f"killed after {waited:.1f} s: the search's limit of {settings.timeout} s "
                     f"was not honoured within {settings.grace:.0f} s"]}
    if calls:
        last = calls[-1]
        out["notes"].append(f"last call answered: I={last['I']} S={last['S']} "
                            f"{last['status']} ({last['seconds']} s)")
    return out


def run_matrix(cases: Iterable[Case], configs: list[Config], settings: Settings,
               emit: Callable[[dict], None], repeat: int = 1) -> list[dict]:
    """Every case under every configuration `repeat` times, case by case and the
    configurations interleaved within each round (the ones compared on a case run close
    together in time, under the same load); `emit` sees each record as it is made."""
    records = []
    for case in cases:
        for k in range(repeat):
            for config in configs:
                record = {**run_case(case, config, settings), "repeat": k}
                emit(record)
                records.append(record)
    return records


# ---------------------------------------------------------------------------------------------
# In the worker process


def _in_own_group(work: Callable, *args) -> None:
    """Make the worker a process-group leader, then run `work`."""
    os.setpgid(0, 0)
    work(*args)


def _worker(case: Case, config: Config, settings: Settings, conn) -> None:
    """Build, warm up, run, report; every failure becomes an `error` message."""
    try:
        model = case.load()
        started = {"ops": len(model.ops), "edges": len(model.edges)}
        if config.heuristic:
            from warpweave.core import heuristic  # noqa: F401  (imported before the clock)
        elif config.method == "gaus":
            import torch  # noqa: F401  (imported before the clock)
        else:  # imports the solver package before the clock, and records which version it is
            from warpweave.core.registry import backend
            name = "cpsat" if config.method == "lns" else config.backend
            started["solver"] = f"{name} {backend(name).version()}"
        conn.send(("started", started))
        if config.heuristic:
            record = _heuristic(model, settings, case.without)
        else:
            def answered(a) -> None:  # the calls made; announcements of calls starting are not
                if a.status != SOLVING:
                    conn.send(("attempt", a.to_dict()))

            record = _solve(model, config, settings, answered, case.without)
        conn.send(("done", record))
    except InputError as exc:
        conn.send(("error", f"input error: {exc}"))
    except Exception as exc:  # a SearchBug, a backend failure: reported, never hidden
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _solve(model: Model, config: Config, settings: Settings, progress,
           case_without: tuple[str, ...] = ()) -> dict:
    """The record of `run_solve` on `model` (the case's rules left out): answer, proof status,
    the gap to the lower bound (in the units solved), and where the time went."""
    from warpweave.pipeline import Options, run_solve
    scalable = config.method != "exact"
    options = Options(backend="auto" if scalable else config.backend,
                      encoding=config.encoding or "integer",
                      search=config.search or "auto", without=case_without,
                      max_stages=settings.max_stages, time_limit=settings.timeout,
                      seed=settings.seed, normalize=config.normalize or settings.normalize,
                      method=config.method, plan=False)  # the search's time, not emit's plan
    tick = time.perf_counter()
    found: dict = {}  # when the first schedule, and each I, was found (seconds from the start)

    def watch(a) -> None:
        if a.status != SOLVING and a.L is not None and a.phase not in RELAXED_PHASES:
            found.setdefault("first", time.perf_counter() - tick)
            found.setdefault(a.I, time.perf_counter() - tick)
        progress(a)

    run = run_solve(model, options, progress=watch)
    wall = time.perf_counter() - tick
    o, attempts = run.outcome, run.outcome.attempts
    return {**_answer(run.schedule, o.schedule, run.normalized, run.raw_violations),
            "status": o.status, "optimal": o.optimal and not run.raw_violations,
            "lower_bound": o.lower_bound, "max_stages": o.max_stages,
            "wall_seconds": round(wall, 4),
            "encode_seconds": round(sum(a.encode_seconds for a in attempts), 4),
            "build_seconds": round(sum(a.build_seconds for a in attempts), 4),
            "solve_seconds": round(sum(a.solve_seconds for a in attempts), 4),
            "calls": len(attempts), "claim": run.claim(), "notes": list(o.notes),
            # the largest question asked, as stated in the IR
            "variables": max((a.variables or 0 for a in attempts), default=None),
            "constraints": max((a.constraints or 0 for a in attempts), default=None),
            "method": run.method, "gap": _gap(o.schedule, o.lower_bound),
            "raw_lower_bound": run.raw_bounds.lower if run.raw_bounds else None,
            "first_schedule_seconds": _rounded(found.get("first")),
            "best_I_seconds": _rounded(found.get(o.schedule.I) if o.schedule else None)}


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 4)


def _gap(units, lower: int) -> float | None:
    return None if units is None else round((units.I - lower) / max(1, lower), 4)


def _heuristic(raw: Model, settings: Settings, without: tuple[str, ...] = ()) -> dict:
    """The heuristic on the model the search solves (as given, the same normalization), its
    answer mapped back and verified in raw cycles."""
    from warpweave.core.bounds import bounds
    from warpweave.core.heuristic import heuristic_schedule
    from warpweave.core.registry import CONSTRAINTS
    from warpweave.pipeline import normalization
    tick = time.perf_counter()
    norm = normalization(raw, settings.normalize)
    rules = [r for r in CONSTRAINTS.names() if r not in without]
    h = heuristic_schedule(norm.model if norm else raw, max_stages=settings.max_stages,
                           seed=settings.seed, time_limit=settings.timeout, rules=rules)
    schedule = h.schedule
    violations: tuple = ()
    if schedule is not None and norm is not None:
        from warpweave.core.verify import verify
        schedule = norm.denormalize(schedule)
        violations = tuple(verify(raw, schedule, rules))
    wall = time.perf_counter() - tick
    return {**_answer(schedule, h.schedule, norm, violations),
            "status": "feasible" if h.schedule is not None else "unknown", "optimal": False,
            "lower_bound": h.lower_bound, "max_stages": h.max_stages,
            "wall_seconds": round(wall, 4), "calls": len(h.trials),
            "notes": [h.why] if h.why else [], "method": "heuristic",
            "gap": _gap(h.schedule, h.lower_bound),
            "raw_lower_bound": bounds(raw, rules).lower}


def _answer(raw, units, norm, violations) -> dict:
    """I and L in raw cycles and in the units solved (equal without normalization)."""
    return {"I": raw.I if raw else None, "L": raw.L if raw else None,
            "I_units": units.I if units else None, "L_units": units.L if units else None,
            "stages": units.stages if units else None,
            "scale": norm.scale if norm is not None else 1,
            "raw_valid": not violations,
            "raw_violations": [str(v) for v in violations[:3]]}
