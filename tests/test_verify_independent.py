"""The verifier against an independent, cycle-by-cycle checker written from DESIGN section 3."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpweave.core.formats import model_from_dict, schedule_to_dict
from warpweave.core.verify import verify

from .independent_check import broken_rules
from .strategies import model_docs, schedules


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_verifier_and_independent_checker_agree(data):
    """On the loop the checker walks Q_n for n up to S + the largest distance + 4 (the verifier
    stops at Q_S, `verify.loop_programs`); on the paper's Q, Q_S alone."""
    doc = data.draw(model_docs())
    model = model_from_dict(doc)
    schedule = data.draw(schedules(model, complete=data.draw(st.booleans())))
    semantics = data.draw(st.sampled_from(["loop", "paper-q"]))
    ours = {v.rule for v in verify(model, schedule, semantics=semantics)}
    theirs = broken_rules(doc, schedule_to_dict(schedule), semantics)
    assert ours == theirs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_trip_count_bound_holds_far_beyond(data):
    """The bound of `verify.loop_programs` against many more trip counts: the verdict of Q_1 ..
    Q_S (S = ceil(L / I)) is the verdict of Q_1 .. Q_(S + distance + 8)."""
    doc = data.draw(model_docs(max_cycles=4))
    model = model_from_dict(doc)
    schedule = data.draw(schedules(model, max_I=3, max_stages=3))
    far = max([e.distance for e in model.edges], default=0)
    near = broken_rules(doc, schedule_to_dict(schedule), trips=schedule.stages)
    assert near == broken_rules(doc, schedule_to_dict(schedule),
                                trips=schedule.stages + far + 8)
    assert near == {v.rule for v in verify(model, schedule)}
