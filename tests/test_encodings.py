"""Each constraint's `encode` agrees with its `check`, in every encoding.

With the start times, groups and length of a schedule pinned, the problem holding one constraint
is satisfiable exactly when that constraint's check passes.  Schedules are random (mostly
invalid), on random models covering every feature.
"""

from __future__ import annotations

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpweave.core.constraints import BUILTIN, Memory, RegisterLimit
from warpweave.core.errors import InputError
from warpweave.core.registry import ENCODINGS
from warpweave.core.registry import backend as make_backend
from warpweave.core.schedule import Schedule

from .crosscheck_support import keep_counterexample
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


def disagrees(encoding: str, schedule: Schedule, constraints, check, interval=None):
    """For the reducer: does the encoding still disagree with `check` on a smaller model, with
    `schedule` cut down to the model's ops (False where the schedule no longer fits it)?"""
    def fails(model) -> bool:
        names = {op.name for op in model.ops}
        groups = {g.name for g in model.machine.warp_groups}
        if not {schedule.group[v] for v in names} <= groups:
            return False
        s = attrs.evolve(schedule, start={v: schedule.start[v] for v in names},
                         group={v: schedule.group[v] for v in names})
        try:
            return feasible_with(encoding, model, s, constraints, interval=interval) == \
                bool(check(model, s))
        except InputError:
            return False
    return fails


@pytest.mark.parametrize("encoding", ENCODING_NAMES)
@pytest.mark.parametrize("constraint", BUILTIN, ids=lambda c: c.name)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_encode_agrees_with_check(encoding, constraint, data):
    model = data.draw(models())
    schedule = data.draw(schedules(model, complete=constraint.name != "completion"))
    c = constraint()
    with keep_counterexample("test_encode_agrees_with_check", f"{c.name}-{encoding}", model,
                             fails=disagrees(encoding, schedule, [c], c.check),
                             schedule=schedule):
        assert feasible_with(encoding, model, schedule, [c]) == (not c.check(model, schedule))


@pytest.mark.parametrize("constraint", BUILTIN, ids=lambda c: c.name)
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
    interval = None
    if encoding == "integer/I variable":
        encoding, interval = "integer", (1, schedule.I + data.draw(st.integers(0, 3)))
    case = f"{c.name}-{encoding if interval is None else 'integer-I-variable'}"
    with keep_counterexample("test_encode_agrees_with_check_at_the_limit", case, model,
                             fails=disagrees(encoding, schedule, [c], c.check, interval),
                             schedule=schedule, interval=interval):
        assert feasible_with(encoding, model, schedule, [c], interval=interval) == \
            (not c.check(model, schedule))


@pytest.mark.parametrize("encoding", [*ENCODING_NAMES, "integer/I variable"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_all_constraints_together_accept_exactly_the_valid_schedules(encoding, data):
    from warpweave.core.verify import verify
    model = data.draw(models())
    schedule = data.draw(schedules(model))
    cons = [c() for c in BUILTIN]
    interval = None
    if encoding == "integer/I variable":
        encoding, interval = "integer", (1, schedule.I + data.draw(st.integers(0, 3)))
    case = encoding if interval is None else "integer-I-variable"
    with keep_counterexample("test_all_constraints_together", case, model, schedule=schedule,
                             fails=disagrees(encoding, schedule, cons, verify, interval),
                             interval=interval):
        assert feasible_with(encoding, model, schedule, cons, interval=interval) == \
            (not verify(model, schedule))


def test_decode_returns_what_was_pinned(fa_model):
    from warpweave.core.schedule import Schedule
    s = Schedule("fa-simplified", 2, 4, {"S": 0, "P": 2, "O": 3}, {v: "g0" for v in "SPO"})
    cons = [c() for c in BUILTIN]
    for name in ENCODING_NAMES:
        view = ENCODINGS.get(name)(fa_model, 2, 2, cons)
        result = make_backend("sat").solve(view.problem, assumptions=view.pin(s))
        assert view.decode(result.values) == s
