"""The search's progress on a terminal: a line per answered question, and a live status line.

`Progress` is the `progress` callback of `warpweave.search.search` for the command line.  On
a terminal (its stream, stderr by default, is a TTY) it prints one line per answer and, while a
solver call runs, a status line naming the question being solved and its seconds so far, redrawn
about once a second by a daemon thread; the status line is erased when the answer's line takes its
place and when the display closes (after the search, on an error or on Ctrl-C: use it as a context
manager).  Anywhere else it writes nothing, so piped output and `--json` stay clean.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import TextIO

from warpweave.search import SOLVING, Attempt

ERASE = "\r\x1b[K"  # back to the start of the line, then erase to its end (ANSI)

# Held by every write of a display, and by each fork (the search forks a child per solver call):
# a child is never forked while the refresh thread is inside the stream, whose lock the child
# would inherit taken (and hang on its first write to stderr).
_WRITING = threading.Lock()
os.register_at_fork(before=_WRITING.acquire, after_in_parent=_WRITING.release,
                    after_in_child=_WRITING.release)


def answer_line(a: Attempt) -> str:
    """One answered question: phase, the I found (or `-`), S, the answer, L, the I range asked
    (minimize), seconds."""
    length = f" L={a.L}" if a.L is not None else ""
    within = f" (I in {a.interval[0]}..{a.interval[1]})" if a.interval else ""
    found = "-" if a.interval and a.L is None else a.I
    return (f"  {a.phase:<10} I={found:<4} S={a.S:<2} {a.status:<10}{length}{within} "
            f"({a.seconds:.2f} s)")


def question_line(a: Attempt, seconds: float) -> str:
    """The question a solver call is working on (phase, I or the I range, S, backend/encoding)
    and the whole seconds it has taken so far."""
    where = f"I in {a.interval[0]}..{a.interval[1]}" if a.interval else f"I={a.I}"
    return f"  {a.phase:<10} {where} S={a.S} solving ({a.how}) {int(seconds)} s"


class Progress:
    """The display (see the module docstring).  `every`: seconds between redraws."""

    def __init__(self, stream: TextIO | None = None, every: float = 1.0,
                 live: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        # `live` None: on a terminal (its stream is a TTY) that understands the erase sequence.
        self.live = (self.stream.isatty() and os.environ.get("TERM") != "dumb") \
            if live is None else live
        self.every = every
        self._question: Attempt | None = None  # the question being solved, while one is
        self._since = 0.0
        self._drawn = False                     # the status line is on the screen
        self._closed = threading.Event()
        self._asked = threading.Event()         # a new question: the redraws restart from it
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __call__(self, a: Attempt) -> None:
        """An announcement (status SOLVING) becomes the status line; an answer replaces it."""
        if not self.live:
            return
        with _WRITING:
            self._erase()
            if a.status == SOLVING:
                self._question, self._since = a, time.monotonic()
                self._asked.set()
                self._draw()
            else:
                self._question = None
                self.stream.write(answer_line(a) + "\n")
            self.stream.flush()
        if self._thread is None and self._question is not None:
            self._thread = threading.Thread(target=self._refresh, name="warpweave-progress",
                                            daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the redraws and erase the status line."""
        self._closed.set()
        self._asked.set()
        if self._thread is not None:
            self._thread.join()
        if self.live:
            with _WRITING:
                self._question = None
                self._erase()
                self.stream.flush()

    def _refresh(self) -> None:
        # Redraws fall on whole multiples of `every` into the question, so each shows a new count.
        while not self._closed.is_set():
            if self._asked.wait(self.every - (time.monotonic() - self._since) % self.every):
                self._asked.clear()
                continue
            with _WRITING:
                if self._question is not None and not self._closed.is_set():
                    self._erase()
                    self._draw()
                    self.stream.flush()

    def _draw(self) -> None:
        text = question_line(self._question, time.monotonic() - self._since)
        self.stream.write(text[:self._columns() - 1])  # a wrapped line could not be erased
        self._drawn = True

    def _erase(self) -> None:
        if self._drawn:
            self.stream.write(ERASE)
            self._drawn = False

    def _columns(self) -> int:
        """The terminal's width; 0 (an unsized pseudo-terminal) or no terminal: $COLUMNS or 80."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError):  # not a real terminal (a test's stand-in), or closed
            columns = 0
        return columns or shutil.get_terminal_size().columns
