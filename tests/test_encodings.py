"""Each constraint's `encode` agrees with its `check`, in every encoding.

With the start times, groups and length of a schedule pinned, the problem holding one constraint
is satisfiable exactly when that constraint's check passes.  Schedules are random (mostly
invalid), on random models covering every feature.
"""

from __future__ import annotations

import attrs
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from warpweave.core.constraints import Capacity, Memory, RegisterLimit
from warpweave.core.formats import load_model
from warpweave.core.registry import ENCODINGS
from warpweave.core.registry import backend as make_backend
from warpweave.core.schedule import Schedule
from warpweave.encodings.integer import IntegerEncoding
from warpweave.errors import InputError

from .conftest import ROOT
from .crosscheck_support import REGISTERED, keep_counterexample
from .strategies import at_the_limit, models, schedules

ENCODING_NAMES = ["compact", "paper", "integer"]


def feasible_with(encoding: str, model, schedule, constraints, backend="sat",
                  interval: tuple[int, int] | None = None) -> bool:
    """With `interval`, the encoding takes I as a variable in that range (pinned too)."""
    extra = {"interval": interval} if interval else {}
    view = ENCODINGS.get(encoding)(model, schedule.I, schedule.stages, constraints,
                                   symmetry=False, **extra)
    pins = view.pin(schedule)
    if False in pins:
        return False
    result = make_backend(backend).solve(view.problem, assumptions=pins)
    return result.status.has_solution


def assert_agrees(prop: str, case: str, encoding: str, model, schedule: Schedule,
                  constraints, check, data) -> None:
    """With `schedule` pinned, the encoding is feasible iff `check` (a rule's semantics) finds
    nothing; "integer/I variable" is the integer encoding with I a variable over a drawn range.
    On failure the model is saved (`keep_counterexample`), reduced to what still disagrees with
    `schedule` cut down to its ops."""
    interval = None
    if encoding == "integer/I variable":
        interval = (1, schedule.I + data.draw(st.integers(0, 3)))
    solved = "integer" if interval else encoding

    def fails(smaller) -> bool:
        names = {op.name for op in smaller.ops}
        groups = {g.name for g in smaller.machine.warp_groups}
        if not {schedule.group[v] for v in names} <= groups:
            return False
        s = attrs.evolve(schedule, start={v: schedule.start[v] for v in names},
                         group={v: schedule.group[v] for v in names})
        try:
            return feasible_with(solved, smaller, s, constraints, interval=interval) == \
                bool(check(smaller, s))
        except InputError:
            return False

    label = encoding.replace("/I variable", "-I-variable")
    with keep_counterexample(prop, f"{case}-{label}" if case else label, model, fails=fails,
                             schedule=schedule, interval=interval):
        assert feasible_with(solved, model, schedule, constraints, interval=interval) == \
            (not check(model, schedule))


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
@pytest.mark.parametrize("constraint", REGISTERED, ids=lambda c: c.name)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_encode_agrees_with_check(encoding, constraint, data):
    model = data.draw(models())
    schedule = data.draw(schedules(model, complete=constraint.name != "completion"))
    c = constraint()
    assert_agrees("test_encode_agrees_with_check", c.name, encoding, model, schedule, [c],
                  c.check, data)


@pytest.mark.parametrize("constraint", REGISTERED, ids=lambda c: c.name)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_encode_agrees_with_check_with_i_as_a_variable(constraint, data):
    """The integer encoding with I a variable (the minimize search) states each rule its own
    way (wrap counts, covering runs); pinned at an I inside its range it agrees with `check`."""
    model = data.draw(models())
    schedule = data.draw(schedules(model, complete=constraint.name != "completion"))
    lo = data.draw(st.integers(1, schedule.I))
    hi = data.draw(st.integers(schedule.I, schedule.I + 3))
    c = constraint()
    assert feasible_with("integer", model, schedule, [c], backend="cpsat", interval=(lo, hi)) \
        == (not c.check(model, schedule))


@pytest.mark.parametrize("encoding", [*ENCODING_NAMES, "integer/I variable"])
@pytest.mark.parametrize("constraint", [RegisterLimit, Memory], ids=lambda c: c.name)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_encode_agrees_with_check_at_the_limit(encoding, constraint, data):
    """Register limits and memory capacities at the schedule's own peak or one below: the answer
    turns on the exact live set at the peak, where a lifetime one cycle off shows."""
    c = constraint()
    model = data.draw(models())
    schedule = data.draw(schedules(model))
    model = data.draw(at_the_limit(model, schedule, c.check))
    assert_agrees("test_encode_agrees_with_check_at_the_limit", c.name, encoding, model,
                  schedule, [c], c.check, data)


@pytest.mark.parametrize("encoding", [*ENCODING_NAMES, "integer/I variable"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_all_constraints_together_accept_exactly_the_valid_schedules(encoding, data):
    from warpweave.core.verify import verify
    model = data.draw(models())
    schedule = data.draw(schedules(model))
    assert_agrees("test_all_constraints_together", "", encoding, model, schedule,
                  [c() for c in REGISTERED], verify, data)


def test_decode_returns_what_was_pinned(fa_model):
    s = Schedule("fa-simplified", 2, 4, {"S": 0, "P": 2, "O": 3}, {v: "g0" for v in "SPO"})
    cons = [c() for c in REGISTERED]
    for name in ENCODING_NAMES:
        view = ENCODINGS.get(name)(fa_model, 2, 2, cons)
        result = make_backend("sat").solve(view.problem, assumptions=view.pin(s))
        assert view.decode(result.values) == s


class WrapsOnce(IntegerEncoding):
    """Issue 13's bug, planted: with I a variable, another op's run covering a point counts once
    however many times it wraps around the I slots (two 5-cycle ops on a unit of capacity 3 fit
    I = 4)."""

    def _covers_once(self, length: int) -> bool:
        return True


def test_the_strategies_find_the_planted_wrap_bug():
    """The encode-vs-check property, on the strategies' models (ops longer than several I, units
    of capacity 3), tells the planted encoding from the rule."""
    ENCODINGS.add("wraps-once", WrapsOnce)

    @st.composite
    def cases(draw):
        model = draw(models())
        schedule = draw(schedules(model))
        return model, schedule, draw(st.integers(1, schedule.I))

    def disagrees(case) -> bool:
        model, schedule, lo = case
        return feasible_with("wraps-once", model, schedule, [Capacity()], backend="cpsat",
                             interval=(lo, schedule.I)) == bool(Capacity().check(model, schedule))

    model, schedule, _ = find(cases(), disagrees, settings=settings(
        max_examples=3000, deadline=None, database=None, phases=[Phase.generate],
        suppress_health_check=[HealthCheck.too_slow]))
    assert max(op.cycles for op in model.ops) > schedule.I
    assert not feasible_with("integer", model, schedule, [Capacity()], backend="cpsat",
                             interval=(1, schedule.I))


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
def test_a_sum_with_equal_terms_is_not_taken_for_a_smaller_one(encoding):
    """Found by the at-the-limit property: in Q_4 at cycle 3, v2#-1 and v2#0 are live on the
    same literal (v2 on g0) and weigh twice; a sum of the same literals once each, stated at
    another point, must not stand in for it (the registers peak at 6 > 5)."""
    model = load_model(ROOT / "tests" / "regressions" / "equal-terms-weigh-twice.json")
    s = Schedule(model.name, 1, 4, {"v0": 0, "v2": 0}, {"v0": "g0", "v2": "g0"})
    assert RegisterLimit().check(model, s)
    assert not feasible_with(encoding, model, s, [RegisterLimit()])
