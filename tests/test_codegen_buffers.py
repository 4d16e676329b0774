"""Ring depths and channels derived from schedules."""

from __future__ import annotations

import itertools
import random

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from warpweave.codegen.buffers import _overlap, _packed, _slots, plan, steady_peaks
from warpweave.codegen.lower import lower
from warpweave.core.model import Edge, Machine, Memory, Model, Op, Unit, WarpGroup
from warpweave.core.schedule import Schedule, straight_line
from warpweave.core.validate import check_model
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
    # the slot is busy until mma (issued 2 cycles after the load) is done, 2 cycles later: 4
    # cycles at I = 3, so 2 slots - the ring the order edge mma -> load declares (distance 2)
    assert p.buffers["load"].depth == 2
    ch = p.channels["load"]
    assert ch.consumers == ("consumer",) and ch.lowering == "mbarrier"
    assert [r.anti for r in ch.readers] == [True]
    # declared deeper (distance 4), the schedule still refills after 2: 2 slots, across groups
    deep = m.replace(edges=[attrs.evolve(e, distance=4) if not e.is_data else e
                            for e in m.edges])
    assert verify(deep, s) == [] and plan(deep, s).buffers["load"].depth == 2
    # in one group only the order edge keeps the refill after the read: the declared ring
    one = Schedule.tight(deep, 3, {"load": 0, "mma": 2, "scale": 4},
                         dict.fromkeys(HOPPER_GROUPS, "consumer"))
    alone = check_model(deep.replace(machine=attrs.evolve(deep.machine,
                                                          variable_latency_group=None),
                                     ops=[attrs.evolve(op, variable_latency=False)
                                          for op in deep.ops]))
    assert verify(alone, one) == [] and plan(alone, one).buffers["load"].depth == 4


def memory_case(edges: list[Edge], start: dict[str, int], capacity: int, I: int = 10,
                footprint: dict[str, int] | None = None) -> tuple[Model, Schedule]:
    """Ops on one group and no unit; `footprint` (in smem) for the values that have one."""
    names = sorted(start)
    m = check_model(Model("mem", Machine("toy", [], [Memory("smem", capacity)],
                                         [WarpGroup("g", 4, 255)], None),
                          [Op(v, 1, footprint={"smem": (footprint or {}).get(v, 0)})
                           for v in names], edges))
    s = Schedule(m.name, I, max(start.values()) + 1, start, dict.fromkeys(names, "g"))
    assert verify(m, s) == [], verify(m, s)
    return m, s


def test_memory_layout_shares_places_over_time():
    """Values never busy together share a place.  A triangle of pairwise-overlapping lifetimes
    (at no cycle are all three live: rule 5 counts 4 units) needs 5 with one place per ring
    slot, and 4 with a layout that repeats every two iterations, each value in one place in
    even iterations and another in odd ones (examples/static-layout.json is the same loop)."""
    edges = [Edge("x", "rx", 4), Edge("y", "ry", 4), Edge("z", "rz", 6)]
    fp = {"x": 2, "y": 2, "z": 1}
    m, s = memory_case(edges, {"x": 0, "rx": 4, "y": 3, "ry": 7, "z": 6, "rz": 12}, 4,
                       footprint=fp)
    (use,) = plan(m, s).memory
    assert (use.peak, use.allocated, use.exceeds) == (4, 4, False)
    assert {p.every for p in use.places} == {2}
    assert str(use) == "memory smem: plan allocates 4 <= 4 (loop peak 4)"
    # z dies before x and y meet again: one place for z and y, and 4 units in all
    m, s = memory_case(edges[:2] + [Edge("z", "rz", 2)],
                       {"x": 0, "rx": 4, "y": 3, "ry": 7, "z": 7, "rz": 9}, 4, footprint=fp)
    (use,) = plan(m, s).memory
    assert (use.peak, use.allocated, use.exceeds) == (4, 4, False)
    assert {(p.value, p.offset) for p in use.places} == {("x", 0), ("y", 2), ("z", 0)}


def test_memory_layout_in_place_chains_and_accumulators():
    """An accumulator read by its own next instance keeps one place; a value its last reader
    overwrites in place (P over S) shares that reader's place."""
    edges = [Edge("s", "p", 1), Edge("p", "o", 1), Edge("o", "o", 1, 1)]
    m, s = memory_case(edges, {"s": 0, "p": 3, "o": 6}, 2, I=10,
                       footprint={"s": 1, "p": 1, "o": 1})
    (use,) = plan(m, s).memory
    assert {p.value for p in use.places} == {"s+p", "o"} and use.allocated == 2
    # p is not o's in-place predecessor: o would need p's place while o of the last iteration
    # still lives; s+p is one chain busy 0..6, and o is always busy
    assert use.peak == 2


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


def overlap_case(limit: int):
    """C (stage 0, live at slot 0) and the accumulator B (stage 1, distance 1, always live) with
    10 registers and 10 bytes each: Q never holds both (C's copies die before B's first issue
    and no third copy exists), the loop does at every slot 0."""
    machine = Machine("toy", [Unit("a", 1), Unit("b", 1)], [Memory("smem", limit)],
                      [WarpGroup("g", 4, limit)])
    ops = [Op.using("C", 1, {"a": 1}, regs=10, footprint={"smem": 10}),
           Op.using("D", 1, {"a": 1}), Op.using("B", 1, {"b": 1}, regs=10,
                                                footprint={"smem": 10})]
    m = check_model(Model("overlap", machine, ops, [Edge("C", "D", 1), Edge("B", "B", 1, 1)]))
    s = Schedule.tight(m, 2, {"C": 0, "D": 1, "B": 3}, {v: "g" for v in "CDB"})
    # The paper's Q_S peaks at 10 in both pools; the loop (the verifier's default) does not fit.
    assert verify(m, s, semantics="paper-q") == []
    assert {v.rule for v in verify(m, s)} == ({"register_limit", "memory"} if limit < 20 else set())
    return m, s


def test_steady_state_can_exceed_a_limit_the_paper_q_accepts():
    m, s = overlap_case(15)
    regs, smem = plan(m, s).steady
    assert (regs.kind, regs.pool, regs.peak, regs.slot) == ("registers", "g", 20, 0)
    assert regs.exceeds and regs.copies == (("C", 1), ("B", 1))
    assert smem.exceeds and str(smem) == "memory smem 20 > 15 at slot 0 (C x1, B x1)"


def test_steady_state_within_limits():
    m, s = overlap_case(20)
    assert [(p.peak, p.exceeds) for p in steady_peaks(m, s)] == [(20, False), (20, False)]


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**9))
def test_steady_peaks_are_a_long_q_in_its_middle(seed):
    """The loop's peaks equal those of Q stretched by more stages than any value lives, read
    in its last stage: there every earlier iteration a live copy can come from exists."""
    m, s = random_case(random.Random(seed))
    extra = 2 + max((e.distance for e in m.edges), default=0) + s.L // s.I
    q = straight_line(m, attrs.evolve(s, L=s.L + extra * s.I))
    window = range((q.S - 1) * q.I, q.S * q.I)
    for p in steady_peaks(m, s):
        weights = {op.name: op.footprint_in(p.pool) if p.kind == "memory"
                   else op.regs * (s.group[op.name] == p.pool) for op in m.ops}
        assert p.peak == max(sum(weights[x.op] for x in q.live_at(t)) for t in window), p


def test_the_exact_layout_packs_within_capacity_or_says_none():
    """The triangle above with one place per value: no layout fits 4 units (each two values are
    busy together, 2 + 2 + 1), the exact packing finds one at 5 with no two busy places
    overlapping; repeating every two iterations, one at 4."""
    triangle = [("x", 2, 0, 4, 1), ("y", 2, 3, 4, 1), ("z", 1, 6, 6, 1)]
    assert _packed(_slots(triangle, 10, None), 4, 10) is None
    for unroll, capacity in ((None, 5), (1, 5), (2, 4)):
        slots = _slots(triangle, 10, unroll)
        places = _packed(slots, capacity, 10)
        assert places is not None and max(p.offset + p.size for p in places) <= capacity
        for (a, pa), (b, pb) in itertools.combinations(zip(slots, places, strict=True), 2):
            if _overlap(a[3], a[4], a[5], b[3], b[4], b[5]):
                assert pa.offset + pa.size <= pb.offset or pb.offset + pb.size <= pa.offset
