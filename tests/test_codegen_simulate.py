"""The simulator on hand-made and random models: no deadlock or race, and 1/I with fixed
latencies; races and stalls found when a ring is made too shallow on purpose."""

from __future__ import annotations

import random
from fractions import Fraction

import attrs
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from warpweave.codegen.lower import lower
from warpweave.codegen.simulate import simulate
from warpweave.codegen.warp_ir import WaitFull, WaitGroup
from warpweave.core.formats import load_model, load_schedule

from .conftest import EXAMPLES
from .schedgen import random_case
from .test_codegen_buffers import blackwell_case, fa_long_s, hopper_case


def test_fa_simplified_reaches_one_over_i(fa_model):
    s = load_schedule(EXAMPLES / "fa-simplified.schedule.json", fa_model)
    r = simulate(fa_model, s, lower(fa_model, s), 40)
    assert r.ok and r.rate == Fraction(1, 2) and r.gap() is None
    # iteration j completes at j*I + L with the schedule's pacing
    assert list(r.finish[:4]) == [4, 6, 8, 10]


@pytest.mark.parametrize("case", [hopper_case, blackwell_case])
def test_kernel_like_models(case):
    m, s = case()
    p = lower(m, s)
    fixed = simulate(m, s, p, 48)
    assert fixed.ok and fixed.rate == Fraction(1, s.I) and not fixed.stalls and not fixed.late
    for seed in range(5):
        jit = simulate(m, s, p, 48, jitter=0.6, seed=seed)
        assert jit.ok, (jit.deadlock, jit.races)
    greedy = simulate(m, s, p, 48, pace="greedy")
    assert greedy.ok and greedy.rate >= Fraction(1, s.I)


def test_too_few_iterations_say_so_instead_of_a_rate(fa_model):
    """With fewer iterations than the warm-up and cool-down leave, no rate is measured: the
    verdicts say so in words, never print `None` as a rate."""
    s = load_schedule(EXAMPLES / "fa-simplified.schedule.json", fa_model)
    p = lower(fa_model, s)
    for pace in ("schedule", "greedy"):
        r = simulate(fa_model, s, p, 2, pace=pace)
        assert r.rate is None and "None" not in r.verdict() + r.gap()
        assert "no steady rate" in r.verdict() and "no steady rate" in r.gap()


def test_jitter_changes_timing():
    m, s = hopper_case()
    p = lower(m, s)
    a = simulate(m, s, p, 48, jitter=0.6, seed=1)
    b = simulate(m, s, p, 48, jitter=0.6, seed=2)
    assert a.finish != b.finish  # the latencies really are randomized, and seeded
    assert a.finish == simulate(m, s, p, 48, jitter=0.6, seed=1).finish


def test_broken_register_ring_is_a_race(fa_model):
    s = fa_long_s(fa_model)
    good = simulate(fa_model, s, lower(fa_model, s), 24)
    assert good.ok and good.rate == Fraction(1, 2)
    bad = simulate(fa_model, s, lower(fa_model, s, depths={"S": 1}), 24)
    kinds = {r.kind for r in bad.races}
    assert "overwrite" in kinds and "wrong-iteration" in kinds


def test_broken_channel_depth_stalls_the_producer():
    m, s = hopper_case()
    bad = simulate(m, s, lower(m, s, depths={"load": 1}), 48)
    assert not bad.races  # the barriers keep it correct ...
    assert bad.deadlock or bad.rate < Fraction(1, s.I)  # ... but it cannot keep the pace
    assert "WaitEmpty load" in (bad.gap() or "")


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9))
def test_random_models_fixed_latency(seed):
    m, s = random_case(random.Random(seed))
    p = lower(m, s)
    r = simulate(m, s, p, max(12, p.min_iterations + 8))
    assert r.ok, (r.deadlock, [str(x) for x in r.races])
    assert r.rate == Fraction(1, s.I), r.gap()
    assert r.late == 0  # the synchronization never delays an op past its planned cycle


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9), st.sampled_from([0.3, 0.9]), st.sampled_from(["schedule",
                                                                             "greedy"]))
def test_random_models_random_latency(seed, jitter, pace):
    m, s = random_case(random.Random(seed))
    p = lower(m, s)
    r = simulate(m, s, p, max(12, p.min_iterations + 8), jitter=jitter, seed=seed, pace=pace)
    assert r.ok, (r.deadlock, [str(x) for x in r.races])


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**9), st.integers(0, 2))
def test_random_models_short_loops(seed, extra):
    """The shortest loops the code allows (n = E, E+1, E+2): prologue meets epilogue."""
    m, s = random_case(random.Random(seed))
    p = lower(m, s)
    r = simulate(m, s, p, p.min_iterations + extra, jitter=0.5, seed=seed)
    assert r.ok, (r.deadlock, [str(x) for x in r.races])
    assert len(r.finish) == p.min_iterations + extra  # every iteration completed


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**9))
@example(seed=2324)  # the cyclic same-cycle case: a shallow ring breaks an order edge
def test_random_models_shallow_register_ring_is_a_race(seed):
    """A register ring sized by liveness (ceil(life / I) live copies), one slot shallower: the
    value is overwritten before its last reader and that reader reads another iteration's.  Where
    the last slot was added because a same-cycle read and refill are ordered cyclically, the
    shallow program must break an order edge instead, and the simulator flags that."""
    m, s = random_case(random.Random(seed))
    p = lower(m, s)
    rings = [v for v, b in p.plan.buffers.items()
             if b.depth > 1 and b.reason.startswith("live") and v not in p.plan.channels]
    assume(rings)
    for v in rings:
        bad = lower(m, s, depths={v: p.plan.buffers[v].depth - 1})
        r = simulate(m, s, bad, max(12, p.min_iterations + 8))
        kinds = {x.kind for x in r.races}
        if "cyclic order" in p.plan.buffers[v].reason:
            assert kinds, v
        else:
            assert {"overwrite", "wrong-iteration"} <= kinds, v


def _edit(program, group, fn):
    """The program with `fn` applied to one group's trip template."""
    gs = tuple(attrs.evolve(g, body=tuple(fn(list(g.body)))) if g.group == group else g
               for g in program.groups)
    return attrs.evolve(program, groups=gs)


def test_too_loose_wait_group_is_caught():
    m, s = hopper_case()
    p = _edit(lower(m, s), "consumer",
              lambda body: [attrs.evolve(x, n=x.n + 1) if isinstance(x, WaitGroup) else x
                            for x in body])
    r = simulate(m, s, p, 24, pace="greedy")
    assert "wait-group" in {x.kind for x in r.races}


def test_missing_get_is_caught():
    m, s = hopper_case()
    p = _edit(lower(m, s), "consumer",
              lambda body: [x for x in body if not isinstance(x, WaitFull)])
    r = simulate(m, s, p, 24, jitter=0.9, seed=3)
    assert {"not-ready", "wrong-iteration"} & {x.kind for x in r.races}


def slowest_reader_waits(p):
    """The planted defect of issue 20: every reader of an async result waits for the largest
    delay among that result's readers (a wait for the whole op, sized for its slowest reader)."""
    groups = []
    for g in p.groups:
        most = {}
        for x in g.body:
            if isinstance(x, WaitGroup):
                for op, _, d in x.waits:
                    most[op] = max(most.get(op, 0), d)
        body = tuple(attrs.evolve(x, waits=tuple((op, lag, most[op]) for op, lag, _ in x.waits))
                     if isinstance(x, WaitGroup) else x for x in g.body)
        groups.append(attrs.evolve(g, body=body))
    return attrs.evolve(p, groups=tuple(groups))


def test_each_reader_of_an_async_result_waits_for_its_own_delay():
    """Issue 20: v1 is async with readers at delay 2 (v2) and 3 (v3), I = 6.  Each reader gets
    its own wait for what its edge needs; v2 is not held until v3's delay."""
    m = load_model(EXAMPLES / "async-readers.json")
    s = load_schedule(EXAMPLES / "async-readers.schedule.json", m)
    p = lower(m, s)
    assert [x.waits for x in p.groups[0].body if isinstance(x, WaitGroup)] == [
        (("v1", 0, 2),), (("v1", 0, 3),)]
    r = simulate(m, s, p, 64)
    assert r.realizes and r.passed and r.rate == Fraction(1, 6) and r.first_late is None
    bad = simulate(m, s, slowest_reader_waits(p), 64)
    assert not bad.passed and bad.rate == Fraction(1, 7) and bad.late > 0
    assert str(bad.first_late) == ("v2#0 issued at cycle 3, planned 2: its stream waited at "
                                   "WaitGroup(0) for v1#0 until cycle 3")
    assert bad.verdict().startswith("FAILED: rate 1/7 misses 1/I = 1/6")
