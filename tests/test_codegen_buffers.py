"""Ring depths and channels derived from schedules."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from warpweave.codegen.buffers import plan
from warpweave.codegen.lower import lower
from warpweave.core.schedule import Schedule, straight_line
from warpweave.core.verify import verify

from .schedgen import blackwell_attention, hopper_gemm, random_case

HOPPER_GROUPS = {"load": "producer", "mma": "consumer", "scale": "consumer"}
BLACKWELL_GROUPS = {"loadk": "load", "loadv": "load", "qk": "mma", "pv": "mma",
                    "softmax": "softmax"}


def hopper_case():
    m = hopper_gemm()
    s = Schedule.tight(m, 3, {"load": 0, "mma": 2, "scale": 4}, HOPPER_GROUPS)
    assert verify(m, s) == []
    return m, s


def blackwell_case():
    m = blackwell_attention()
    s = Schedule.tight(m, 2, {"loadk": 0, "loadv": 3, "qk": 1, "softmax": 2, "pv": 6},
                       BLACKWELL_GROUPS)
    assert verify(m, s) == []
    return m, s


def fa_long_s(fa_model):
    """fa-simplified with P one cycle later: S lives 3 cycles at I=2, so it needs two slots."""
    s = Schedule.tight(fa_model, 2, {"S": 0, "P": 3, "O": 5}, {v: "g0" for v in "SPO"})
    assert verify(fa_model, s) == []
    return s


def test_depth_is_live_copies(fa_model):
    p = plan(fa_model, fa_long_s(fa_model))
    assert p.buffers["S"].depth == 2
    assert p.buffers["P"].depth == 1
    assert p.buffers["O"].depth == 1  # an accumulator updated in place


def test_anti_dependence_sets_ring_depth():
    m, s = hopper_case()
    p = plan(m, s)
    assert p.buffers["load"].depth == 2  # the order edge mma -> load has distance 2
    ch = p.channels["load"]
    assert ch.consumers == ("consumer",) and ch.lowering == "mbarrier"
    assert [r.anti for r in ch.readers] == [True]


def test_channels_for_every_cross_group_value():
    m, s = blackwell_case()
    p = plan(m, s)
    assert set(p.channels) == {"loadk", "loadv", "qk", "softmax"}
    assert p.channels["qk"].consumers == ("softmax",)
    assert p.channels["softmax"].consumers == ("mma",)


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 10**9))
def test_depth_covers_live_copies_in_q(seed):
    """No ring is shallower than the number of copies of its value live at once in Q's steady
    state (there Q's liveness is the loop's; at Q's end rule 4 keeps values used beyond Q live
    to T+1, which the loop never does)."""
    m, s = random_case(random.Random(seed))
    p = lower(m, s).plan
    q = straight_line(m, s)
    steady = range((q.S - 1) * q.I, q.S * q.I)
    for v, b in p.buffers.items():
        copies = [x for x in q.instances if x.op == v and x.end > x.issue]
        peak = max((sum(1 for x in copies if x.live_at(t)) for t in steady), default=0)
        assert b.depth >= peak, (v, b, peak)
