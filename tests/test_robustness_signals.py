"""Ctrl-C is never lost: a SIGINT that lands inside the fork of a solver child (where CPython
would drop the KeyboardInterrupt raised in an at-fork hook) is held and raised after it, and a
KeyboardInterrupt swallowed anywhere is raised again at the run's next step.  The signal is sent
from inside the fork path itself, so the tests do not depend on timing."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading

import pytest

from warpweave import limits
from warpweave.backends.driver import Deadline, interrupt_at
from warpweave.backends.isolate import solve_isolated
from warpweave.core.constraints import constraint_set
from warpweave.core.registry import ENCODINGS, backend

# os.register_at_fork has no way back: one hook per moment of the fork, each armed per test.
ARMED: dict[str, bool] = {"before": False, "after_in_parent": False}


def _sigint_once(moment: str) -> None:
    if ARMED[moment]:
        ARMED[moment] = False
        os.kill(os.getpid(), signal.SIGINT)


os.register_at_fork(before=lambda: _sigint_once("before"),
                    after_in_parent=lambda: _sigint_once("after_in_parent"))


@pytest.fixture
def default_sigint():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)
    ARMED.update(dict.fromkeys(ARMED, False))


@pytest.fixture
def problem(fa_model):
    return ENCODINGS.get("compact")(fa_model, 2, 2, constraint_set()).problem


@pytest.mark.parametrize("moment", sorted(ARMED))
def test_a_sigint_inside_the_fork_is_raised_after_it(problem, default_sigint, moment):
    ARMED[moment] = True
    with pytest.raises(KeyboardInterrupt):
        solve_isolated(backend("sat"), problem, None)
    assert not ARMED[moment], "the hook did not run: no fork happened"
    assert multiprocessing.active_children() == []  # the child was killed and reaped


def test_the_search_stops_on_a_sigint_inside_the_fork(fa_model, default_sigint):
    from warpweave.search import search
    ARMED["after_in_parent"] = True
    out = search(fa_model, backend="sat")
    assert out.interrupted and out.notes == ("interrupted",) and out.status == "unknown"


def test_a_swallowed_interrupt_is_raised_again_at_the_next_check(default_sigint):
    with limits.latch_interrupts():
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pass  # swallowed, as an at-fork hook or a finalizer would
        with pytest.raises(KeyboardInterrupt):
            limits.check()
    limits.check()  # the latch ends with its block


def test_deferred_interrupts_hold_the_signal_to_the_end_of_the_block(default_sigint):
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with limits.deferred_interrupts():
            os.kill(os.getpid(), signal.SIGINT)
            reached.append("after the signal")
    assert reached == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_interrupt_that_raises_ends_no_thread_with_an_exception():
    """z3's interrupt raises Z3Exception('canceled') once the call it cancels has ended."""
    seen: list[BaseException] = []
    previous = threading.excepthook
    threading.excepthook = lambda args: seen.append(args.exc_value)
    calls = []

    def stop():
        calls.append(1)
        raise RuntimeError("canceled")

    try:
        with interrupt_at(Deadline(0.0), stop):
            while len(calls) < 3:
                threading.Event().wait(0.01)
    finally:
        threading.excepthook = previous
    assert seen == [] and len(calls) >= 3


def test_nested_deadlines_keep_the_sooner_end():
    with limits.within(100.0) as outer:
        with limits.within(1000.0) as inner:
            assert inner is outer
        with limits.within(0.0):
            with pytest.raises(limits.TimeUp, match="time limit of 0 s reached"):
                limits.check()
        assert limits.remaining() > 50
    assert limits.remaining() is None


def test_a_ctrl_c_while_the_command_loads_is_one_line_and_exit_3():
    """The command's first second - parsing the arguments, importing the modules it needs - is
    answered like any other moment (the benchmark's trials found tracebacks there).  The
    interrupt is raised where the parser is built, in a process of its own (the command leaves
    with os._exit)."""
    import subprocess
    import sys
    code = ("import warpweave.cli as cli\n"
            "def interrupted():\n"
            "    raise KeyboardInterrupt\n"
            "cli.build_parser = interrupted\n"
            "from warpweave.__main__ import run\n"
            "run()\n")
    done = subprocess.run([sys.executable, "-c", code, "solve", "fa3-fwd"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 3
    assert done.stderr == "warpweave: interrupted\n" and done.stdout == ""
