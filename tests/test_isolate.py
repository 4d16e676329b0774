"""Solver calls in child processes: a hard time limit for a solver that ignores its own, a
crash contained to one answer, and Ctrl-C that stops the search at once with what it knows."""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
import time

import pytest

from warpweave.backends.base import Backend, Status
from warpweave.backends.isolate import solve_isolated
from warpweave.core.constraints import constraint_set
from warpweave.core.formats import model_from_dict
from warpweave.core.registry import BACKENDS, ENCODINGS
from warpweave.search import search

from .conftest import LATE


class Sleepy(Backend):
    """Ignores its time limit, like CaDiCaL inside one PySAT call."""

    family = "sleepy"

    def version(self) -> str:
        return "0"

    def solve(self, problem, *, assumptions=(), time_limit=None):
        time.sleep(60)


class Crashy(Sleepy):
    family = "crashy"

    def solve(self, problem, *, assumptions=(), time_limit=None):
        faulthandler.disable()  # pytest's crash report would only be noise here
        os.kill(os.getpid(), signal.SIGSEGV)


class Raising(Sleepy):
    family = "raising"

    def solve(self, problem, *, assumptions=(), time_limit=None):
        raise RuntimeError("boom")


@pytest.fixture
def problem(fa_model):
    return ENCODINGS.get("compact")(fa_model, 2, 2, constraint_set()).problem


def test_a_solver_that_ignores_its_limit_is_killed(problem):
    tick = time.perf_counter()
    result = solve_isolated(Sleepy(), problem, 0.2)
    assert result.status == Status.TIMEOUT and "killed" in result.how
    assert time.perf_counter() - tick < 10


def test_a_crash_or_an_exception_costs_one_answer(problem):
    crashed = solve_isolated(Crashy(), problem, None)
    assert crashed.status == Status.UNKNOWN and "exit code -11" in crashed.how
    raised = solve_isolated(Raising(), problem, None)
    assert raised.status == Status.UNKNOWN and "RuntimeError: boom" in raised.how


def test_answers_come_back_whole(problem):
    from warpweave.core.registry import backend
    direct, isolated = backend("sat").solve(problem), solve_isolated(backend("sat"), problem, None)
    assert isolated.status == direct.status and isolated.objective == direct.objective
    assert set(isolated.values) == set(problem.vars) and problem.check(isolated.values) == []


@pytest.fixture
def sleepy():
    """`sleepy` registered for one test (conftest removes it afterwards)."""
    BACKENDS.add("sleepy", Sleepy)
    return "sleepy"


def test_search_with_a_hung_solver_reports_what_it_knows(fa_model, sleepy):
    out = search(fa_model, backend=sleepy, encoding="compact", time_limit=0.5)  # the sweep
    assert out.status == "unknown" and out.schedule is None and not out.optimal
    assert out.attempts[0].status == "timeout"


def test_ctrl_c_stops_the_search_at_once(fa_model, sleepy):
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        tick = time.perf_counter()
        out = search(fa_model, backend=sleepy)
        assert time.perf_counter() - tick < 10
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert out.interrupted and out.status == "unknown" and "interrupted" in out.notes


class HangsAfterOneStage(Backend):
    """CP-SAT, but a stage count 2 problem hangs (a long proof, as on a real kernel)."""

    family = "hangs-after-one-stage"
    capabilities = frozenset({"optimize"})

    def version(self) -> str:
        return "0"

    def solve(self, problem, *, assumptions=(), time_limit=None):
        if "/S=2/" in problem.name:
            time.sleep(60)
        from warpweave.core.registry import backend
        return backend("cpsat").solve(problem, assumptions=assumptions, time_limit=time_limit)


def test_ctrl_c_returns_the_best_schedule_found_before_it():
    """A real SIGINT while stage count 2 is being solved: the minimize search returns stage
    count 1's schedule (I=3) with the lower bound 1, not optimal (conftest.LATE: the probe at
    I=1 fails, S=1 gives I=3, the optimum I=1 needs S=5)."""
    BACKENDS.add("hangs-after-one-stage", HangsAfterOneStage)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        tick = time.perf_counter()
        out = search(model_from_dict(LATE), backend="hangs-after-one-stage",
                     encoding="integer", strategy="minimize")
        assert time.perf_counter() - tick < 20
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert out.interrupted and out.status == "feasible" and not out.optimal
    assert (out.schedule.I, out.schedule.L, out.lower_bound) == (3, 3, 1)
