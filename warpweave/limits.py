"""What bounds a run: one wall-clock deadline for all of it, and Ctrl-C.

**The deadline.**  A run (`pipeline.run_solve`, the search, a command) opens `within(seconds)`;
every long step below it - normalization, the bounds, stating a problem in the IR, each solver
call - calls `check()` between units of its work, or asks `remaining()` how long a solver call
may take.  The deadline is ambient (a context variable), not an argument threaded through every
layer: the steps that check it are many and deep (a Bellman-Ford round in `core.bounds`, a
candidate unit in `machines.normalize`), and a deadline argument forgotten on the way would be a
limit silently not held.  Nested `within` blocks keep the sooner end.  `check()` raises `TimeUp`
(a `TimeoutError`) once the deadline has passed.

**Ctrl-C.**  Python raises KeyboardInterrupt at the next bytecode of the main thread, wherever
that is, and some places swallow it: an `os.register_at_fork` hook (the search forks a child per
solver call; CPython prints "Exception ignored in ... _releaseLock" and carries on), a finalizer,
a ctypes callback.  Two defences:

- `deferred_interrupts()` holds a SIGINT that lands inside its block (the fork of a solver child)
  and delivers it to the handler that was in place once the block is over;
- `latch_interrupts()` (a run's) records every SIGINT, so that `check()` raises KeyboardInterrupt
  again at the next step when the first one was swallowed somewhere else.

Both install signal handlers, which Python allows only in the main thread; elsewhere they do
nothing and a SIGINT reaches the main thread as usual.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import TypeVar

T = TypeVar("T")


class Deadline:
    """A wall-clock limit (or none), from the moment it is made."""

    def __init__(self, seconds: float | None):
        self.limit = seconds
        self.end = None if seconds is None else time.perf_counter() + seconds

    def remaining(self) -> float | None:
        """Seconds left (never negative), or None for no limit."""
        return None if self.end is None else max(0.0, self.end - time.perf_counter())

    def expired(self) -> bool:
        return self.end is not None and time.perf_counter() >= self.end


class TimeUp(TimeoutError):
    """The run's deadline has passed; `seconds` is the limit that was given."""

    def __init__(self, seconds: float | None):
        super().__init__(f"time limit of {seconds:g} s reached" if seconds is not None
                         else "time limit reached")
        self.seconds = seconds


_deadline: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "warpweave_deadline", default=None)


@contextlib.contextmanager
def within(seconds: float | None) -> Iterator[Deadline | None]:
    """The block runs under a deadline `seconds` from now (None: no new limit), or the
    enclosing block's deadline if that ends sooner.  Yields the deadline in force."""
    outer = _deadline.get()
    inner = Deadline(seconds) if seconds is not None else None
    chosen = outer if inner is None or (outer is not None and outer.end <= inner.end) else inner
    token = _deadline.set(chosen)
    try:
        yield chosen
    finally:
        _deadline.reset(token)


@contextlib.contextmanager
def grace(seconds: float) -> Iterator[None]:
    """For work that follows a run stopped at its deadline or by Ctrl-C (the figures of its
    report): the block runs under the run's deadline or until `seconds` from now, whichever
    ends later (no deadline if there is none), and a Ctrl-C latched before the block is not
    raised again inside it (the run has answered it); a new one is."""
    outer = _deadline.get()
    inner = Deadline(seconds)
    token = _deadline.set(None if outer is None else max(outer, inner, key=lambda d: d.end))
    latched, _state.interrupted = _state.interrupted, False
    try:
        yield
    finally:
        _deadline.reset(token)
        _state.interrupted = _state.interrupted or latched


def current() -> Deadline | None:
    """The run's deadline in force (None without one)."""
    return _deadline.get()


def remaining() -> float | None:
    """Seconds left before the run's deadline (never negative), or None without one."""
    d = _deadline.get()
    return None if d is None else d.remaining()


def check() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed during the run (and its first
    KeyboardInterrupt swallowed), or TimeUp if the run's deadline has passed."""
    if _state.interrupted:
        raise KeyboardInterrupt
    d = _deadline.get()
    if d is not None and d.expired():
        raise TimeUp(d.limit)


def checked(items: Iterable[T], every: int) -> Iterator[T]:
    """`items`, with `check()` every `every` of them: for a long loop that may state nothing
    (the deadline is otherwise checked as statements are added)."""
    for n, item in enumerate(items, 1):
        if n % every == 0:
            check()
        yield item


class _State:
    """The latch: how many `latch_interrupts` blocks are open, and whether a SIGINT came."""

    depth = 0
    interrupted = False


_state = _State()


def _latch(signum: int, frame: FrameType | None) -> None:
    _state.interrupted = True
    raise KeyboardInterrupt


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def latch_interrupts() -> Iterator[None]:
    """Within the block, a SIGINT raises KeyboardInterrupt and is also remembered, so that every
    later `check()` raises it again (see the module docstring).  The outermost block starts with
    a clean latch and restores the handler it replaced."""
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _latch)
    if _state.depth == 0:
        _state.interrupted = False
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
        signal.signal(signal.SIGINT, previous)
        if _state.depth == 0:
            _state.interrupted = False


def interrupted() -> bool:
    """Whether a SIGINT has come during the open `latch_interrupts` block."""
    return _state.interrupted


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """A SIGINT that lands inside the block is held and delivered to the handler in place before
    the block (raising KeyboardInterrupt, for Python's default one) as soon as the block ends.
    For code where a KeyboardInterrupt would be swallowed: `os.fork` runs the at-fork hooks, and
    an exception raised in one of them is printed and dropped."""
    if not _in_main_thread():
        yield
        return
    held: list[FrameType | None] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:  # delivered even when the block raised: the interrupt takes precedence
            if previous is signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)
            elif callable(previous):
                previous(signal.SIGINT, held[0])


def within_time_limit(func: Callable[..., T]) -> Callable[..., T]:
    """Run `func` within the deadline its keyword argument `time_limit` gives (see `within`)."""
    @functools.wraps(func)
    def bounded(*args, **kwargs) -> T:
        with within(kwargs.get("time_limit")):
            return func(*args, **kwargs)
    return bounded
