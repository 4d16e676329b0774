"""Golden tests: the published warp roles and pipeline shapes, asked as questions (issue 15).

Each test takes one statement of a publication - quoted, with its source, in
`warpweave.kernels.questions` and cited in the test's docstring - and asks it of a library kernel
at the kernel's optimal I under the loop-exact contract (DESIGN section 3), as `warpweave
reproduce` does: the shape imposed, and forbidden (`warpweave.reproduce.ask`).  The verdict is a
property of the model, not of the solver's pick among optima: **forced** (every optimal schedule
has it), **allowed** (some have it, some not) or **excluded** (none has it).  Where the model's
verdict differs from the publication, the test asserts what the model says and
docs/reproduction.md says why.  The decisions are at the optimal I in the solver's units, within
the search's stage bound.
"""

from __future__ import annotations

import functools
import itertools

import pytest

from warpweave.core.bounds import bounds
from warpweave.core.schedule import Schedule, straight_line
from warpweave.core.verify import verify
from warpweave.kernels.questions import TOPICS, Question
from warpweave.pipeline import Options, load_target, run_solve
from warpweave.reproduce import ALLOWED, EXCLUDED, FORCED, Answer, Asker, Settings, ask

from .conftest import ROOT

MODELS = ROOT / "benchmarks" / "models"


@functools.cache
def asker(kernel: str, machine: str | None = None, *params: str) -> Asker:
    """The default pipeline's optimum of the kernel, checked (proven optimal, valid in raw
    cycles), ready for questions at its I."""
    run = run_solve(load_target(kernel, machine, params), Options(isolate=False))
    assert run.exit_status == 0, (run.outcome.status, run.raw_violations)
    assert verify(run.raw, run.schedule) == []
    return Asker(run, Settings(isolate=False, reach=False))


def question(topic: str, key: str) -> Question:
    return next(q for t in TOPICS if t.key == topic for q in t.questions if q.key == key)


def answer(topic: str, key: str, kernel: str, machine: str | None, *params: str,
           explain: bool = False) -> Answer:
    a = asker(kernel, machine, *params)
    if explain:
        a = Asker(a.run, Settings(isolate=False, reach=False, explain_forced=True))
    return ask(a, question(topic, key), a.run.raw)


# ---------------------------------------------------------------------------------------------
# fa-simplified: Twill paper section 3.1, Figure 1


def test_fa_simplified_rediscovers_figure_1():
    """I = 2, L = 4 (Figure 1d), and the QK GEMM of iteration i+1 issues while the exponential
    of iteration i is in flight, before its PV GEMM (Figure 1e/1h: FA3's pipeline)."""
    run = asker("fa-simplified").run
    s = run.schedule
    assert (s.I, s.L) == (2, 4)
    q = straight_line(run.raw, s)
    p0, s1, o0 = q.instance("P", 0), q.instance("S", 1), q.instance("O", 0)
    assert p0.issue <= s1.issue < o0.issue


def test_fa_simplified_every_schedule_at_i_2_hoists_the_next_qk():
    """Not the solver's choice: every valid schedule at I = 2 (L <= 4, one group) issues S of
    the next iteration before O of this one; without the hoist only I = 3 is possible
    (Figure 1g)."""
    model = load_target("fa-simplified")
    groups = dict.fromkeys("SPO", "g0")
    valid = [Schedule(model.name, 2, 4, dict(zip("SPO", t, strict=True)), groups)
             for t in itertools.product(range(4), repeat=3)]
    valid = [s for s in valid if not verify(model, s)]
    assert valid
    assert all(s.start["S"] + s.I < s.start["O"] for s in valid)
