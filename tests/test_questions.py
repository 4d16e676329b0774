"""Shapes and questions: each shape's encoding states exactly what its `holds` measures (checked
against every schedule of small models), and `warpweave.reproduce` answers forced / allowed /
excluded and explains an exclusion by deletion."""

from __future__ import annotations

import itertools

import pytest

from warpweave.core.constraints import constraint_set
from warpweave.core.formats import model_from_dict
from warpweave.core.schedule import Schedule
from warpweave.core.verify import verify
from warpweave.kernels import build
from warpweave.kernels.questions import TOPICS, Case, Question, Topic
from warpweave.kernels.roles import (
    All,
    Alone,
    Any,
    Apart,
    IssuedBeforeEnd,
    Not,
    OnWarps,
    Require,
    Sequential,
    Together,
    WindowsOverlap,
)
from warpweave.reproduce import ALLOWED, EXCLUDED, FORCED, Asker, Settings, ask
from warpweave.search import decide

# Figure 1's loop on two groups, with a spill that makes a cross-group S -> P cost a cycle.
TWO_GROUPS = model_from_dict({
    "name": "fig1-two-groups",
    "machine": {"units": {"tc": 1, "sfu": 1},
                "warp_groups": [{"name": "g0", "warps": 4}, {"name": "g1"}]},
    "ops": [{"name": "S", "uses": {"tc": 1}, "spill_cost": 1},
            {"name": "P", "cycles": 2, "uses": {"sfu": 1}},
            {"name": "O", "uses": {"tc": 1}}],
    "edges": [{"src": "S", "dst": "P"}, {"src": "P", "dst": "O"},
              {"src": "O", "dst": "O", "distance": 1}]})

SHAPES = [
    Together("S", "P"), Apart("S", "O"), Alone("S"), Alone("S", "O"), Sequential(["S", "P", "O"]),
    IssuedBeforeEnd("S", "P"), WindowsOverlap("P", "sfu", "S", "tc"),
    All(Together("S", "O"), Apart("S", "P")), Any(Apart("S", "P"), Sequential(["S", "O"])),
    Not(Together("S", "P", "O")), OnWarps("S", 1), All(Alone("P"), OnWarps("P", 4)),
]


def _valid(model, I, stages):  # noqa: E741
    """Every valid schedule at I with at most `stages` stages (start times in [0, stages*I))."""
    names = model.op_names
    groups = [g.name for g in model.machine.warp_groups]
    out = []
    for starts in itertools.product(range(stages * I), repeat=len(names)):
        if min(starts) != 0:
            continue           # every schedule has a shifted twin starting at 0
        for gs in itertools.product(groups, repeat=len(names)):
            s = Schedule.tight(model, I, dict(zip(names, starts, strict=True)),
                              dict(zip(names, gs, strict=True)))
            if s.stages <= stages and not verify(model, s):
                out.append(s)
    return out


@pytest.mark.parametrize("I", [3, 4])
def test_every_shape_is_encoded_as_it_is_measured(I):  # noqa: E741
    valid = _valid(TWO_GROUPS, I, 2)
    assert valid
    for shape in SHAPES:
        for positive in (True, False):
            expect = any(shape.holds(TWO_GROUPS, s) == positive for s in valid)
            status, s = decide(TWO_GROUPS, I, constraints=[*constraint_set(),
                                                           Require(shape, positive)],
                               max_stages=2, isolate=False)
            assert status == ("feasible" if expect else "infeasible"), (str(shape), positive)
            if s is not None:
                assert shape.holds(TWO_GROUPS, s) == positive


def test_every_question_states_a_shape_on_its_models():
    for topic in TOPICS:
        for case in topic.cases:
            kernel, machine, params = case.target()
            model = build(kernel, machine, **dict(p.split("=", 1) for p in params))
            for q in topic.questions:
                text = q.to_dict(model)["shape"]
                assert text and q.claim and q.source, (topic.key, q.key)


def _asker():
    from warpweave.pipeline import Options, run_solve
    run = run_solve(TWO_GROUPS, Options(isolate=False))
    return Asker(run, Settings(isolate=False, reach=True, explain_forced=True))


def _schedules(model, I, stages):  # noqa: E741
    """Every schedule at I with at most `stages` stages and the rules it breaks."""
    names = model.op_names
    groups = [g.name for g in model.machine.warp_groups]
    for starts in itertools.product(range(stages * I), repeat=len(names)):
        if min(starts) == 0:
            for gs in itertools.product(groups, repeat=len(names)):
                s = Schedule.tight(model, I, dict(zip(names, starts, strict=True)),
                                   dict(zip(names, gs, strict=True)))
                if s.stages <= stages:
                    yield s, {v.rule for v in verify(model, s)}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_reproduce_answers_as_every_schedule_says(shape):
    """The verdict and the deletion test agree with the brute-force truth: forced when every
    valid schedule at the optimal I has the shape, excluded when none has, and each constraint
    named in `removals` is one whose removal lets a schedule with the shape through."""
    asker = _asker()
    everything = list(_schedules(TWO_GROUPS, asker.I, asker.run.outcome.max_stages))
    has = [shape.holds(TWO_GROUPS, s) for s, _ in everything]
    valid = [h for h, (_, broken) in zip(has, everything, strict=True) if not broken]
    a = ask(asker, Question("q", "claim", "source", lambda m: shape), TWO_GROUPS)
    truth = EXCLUDED if not any(valid) else FORCED if all(valid) else ALLOWED
    assert a.verdict == truth
    if truth == EXCLUDED:
        freed = {r for h, (_, broken) in zip(has, everything, strict=True)
                 if h and len(broken) == 1 for r in broken}
        assert set(a.removals) == freed
        assert a.removals or a.core
def test_case_targets_carry_the_inventory():
    topic = Topic("t", "t", (Case("c", "gemm", "b200", ("k_steps=2",), "neutral"),), ())
    assert topic.cases[0].target() == ("gemm", "b200", ("k_steps=2", "inventory=neutral"))
