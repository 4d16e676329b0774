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
    doc = data.draw(model_docs())
    model = model_from_dict(doc)
    schedule = data.draw(schedules(model, complete=data.draw(st.booleans())))
    ours = {v.rule for v in verify(model, schedule)}
    theirs = broken_rules(doc, schedule_to_dict(schedule))
    assert ours == theirs
