"""The search's progress on a terminal: nothing off a terminal; on one, a status line naming the
question being solved, redrawn, replaced by its answer's line and erased at the end."""

from __future__ import annotations

import io
import itertools
import json
import re
import sys
import time
import types

import attrs
import pytest

from warpweave.cli import main
from warpweave.progress import ERASE, Progress
from warpweave.search import SOLVING, Attempt, SearchBug

from .conftest import EXAMPLES

QUESTION = Attempt(66, 2, (67, 314), SOLVING, "cpsat:workers=1/integer", phase="minimize",
                   interval=(66, 157))
ANSWER = attrs.evolve(QUESTION, I=112, status="optimal", L=168, seconds=12.5)
ASKED = "  minimize   I in 66..157 S=2 solving (cpsat:workers=1/integer) 0 s"
ANSWERED = "  minimize   I=112  S=2  optimal    L=168 (I in 66..157) (12.50 s)"
NEVER = 3600.0  # seconds between redraws: none happens during a test


class Terminal(io.StringIO):
    """A stand-in for stderr on a terminal."""

    def isatty(self) -> bool:
        return True


def screen(text: str) -> list[str]:
    """The lines a terminal shows after `text` (the last is the cursor's line): a carriage
    return goes back to the line's start, ESC[K erases from there to its end, and characters
    overwrite what is under them."""
    lines = []
    for row in text.split("\n"):
        line, at = "", 0
        for part in re.split(r"(\r|\x1b\[K)", row):
            if part == "\r":
                at = 0
            elif part == "\x1b[K":
                line = line[:at]
            else:
                line, at = line[:at] + part + line[at + len(part):], at + len(part)
        lines.append(line)
    return lines


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    """A status line is cut at the terminal's width ($COLUMNS when the stream has no size): the
    tests read whole lines, whatever terminal runs them.  The command line shows no display under
    CI or TERM=dumb: the tests run as on a developer's terminal, wherever they run."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("CI", raising=False)


def test_off_a_terminal_nothing_is_written():
    stream = io.StringIO()
    with Progress(stream) as progress:
        progress(QUESTION)
        progress(ANSWER)
    assert stream.getvalue() == "" and progress._thread is None


def test_the_question_shows_until_its_answer_takes_its_place():
    stream = Terminal()
    with Progress(stream, every=NEVER) as progress:
        progress(QUESTION)
        assert screen(stream.getvalue()) == [ASKED]
        progress(ANSWER)
        assert screen(stream.getvalue()) == [ANSWERED, ""]
        progress(QUESTION)
        assert screen(stream.getvalue()) == [ANSWERED, ASKED]
    assert screen(stream.getvalue()) == [ANSWERED, ""]  # closing erased the status line


def test_a_status_line_wider_than_the_terminal_is_cut_so_that_it_can_be_erased(monkeypatch):
    monkeypatch.setenv("COLUMNS", "30")
    stream = Terminal()
    with Progress(stream, every=NEVER) as progress:
        progress(QUESTION)
        assert screen(stream.getvalue()) == [ASKED[:29]]


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SearchBug])
def test_ctrl_c_or_an_error_erases_the_status_line_and_stops_the_redraws(stop):
    stream = Terminal()
    with pytest.raises(stop), Progress(stream, every=0.01) as progress:
        progress(QUESTION)
        raise stop
    assert screen(stream.getvalue()) == [""] and not progress._thread.is_alive()


def test_the_status_line_is_redrawn_with_the_seconds_so_far(monkeypatch):
    """A clock that advances a second each time it is read: every redraw shows a later count."""
    clock = itertools.count()
    monkeypatch.setattr("warpweave.progress.time", types.SimpleNamespace(
        monotonic=lambda: float(next(clock))))
    stream = Terminal()
    with Progress(stream, every=0.01) as progress:
        progress(QUESTION)
        for _ in range(1000):  # waits for three redraws by the thread (nothing timed is asserted)
            if stream.getvalue().count(ERASE) >= 3:
                break
            time.sleep(0.01)
    counts = [int(n) for n in re.findall(r"solving \(cpsat:workers=1/integer\) (\d+) s",
                                         stream.getvalue())]
    assert len(counts) >= 4 and counts == sorted(set(counts))
    assert screen(stream.getvalue()) == [""]


def test_solve_shows_its_questions_on_a_terminal_only(capsys, monkeypatch):
    path = str(EXAMPLES / "fa-simplified.json")
    assert main(["solve", path]) == 0
    assert capsys.readouterr().err == ""
    assert main(["solve", path, "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["I"] == 2

    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(["solve", path]) == 0
    shown = sys.stderr.getvalue()
    # The probe at the lower bound: stage count 2 was announced before its answer, with the
    # backend and encoding; stage count 1, ruled out without a solver, was not announced.
    assert shown.index("  probe      I=2 S=2 solving (cpsat:workers=1/integer) ") < \
        shown.index("  probe      I=2    S=2  optimal")
    assert "S=1 solving" not in shown
    lines = screen(shown)
    assert [line.split()[:4] for line in lines[:-1]] == [
        ["probe", "I=2", "S=1", "infeasible"], ["probe", "I=2", "S=2", "optimal"]]
    assert lines[-1] == ""  # the status line was erased
