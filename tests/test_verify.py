"""The verifier, rule by rule: a schedule that passes and one that breaks it, with its witness."""

from __future__ import annotations

from warpweave.core.formats import model_from_dict
from warpweave.core.registry import CONSTRAINTS
from warpweave.core.schedule import Schedule, straight_line
from warpweave.core.verify import verify


def model(ops, edges=(), units=None, memories=None, groups=None, vl=None):
    return model_from_dict({
        "name": "t",
        "machine": {"units": units or {"tc": 1, "sfu": 1}, "memories": memories or {},
                    "warp_groups": groups or [{"name": "g0", "warps": 4}],
                    "variable_latency_group": vl},
        "ops": ops, "edges": list(edges)})


def sched(m, I, start, group=None, L=None):  # noqa: E741
    group = group or {v: m.machine.warp_groups[0].name for v in start}
    length = L or max(start[op.name] + op.cycles for op in m.ops)
    return Schedule(m.name, I, length, start, group)


def rules_broken(m, s):
    return [v.rule for v in verify(m, s)]


def test_figure_1_valid_and_capacity_witness(fa_model):
    good = Schedule("fa-simplified", 2, 4, {"S": 0, "P": 2, "O": 3}, {v: "g0" for v in "SPO"})
    assert verify(fa_model, good) == []
    bad = Schedule("fa-simplified", 2, 3, {"S": 0, "P": 1, "O": 2}, {v: "g0" for v in "SPO"})
    [v] = verify(fa_model, bad)
    assert (v.rule, v.resource, v.slot, v.ops, v.amount, v.limit) == \
        ("capacity", "tc", 0, ("S", "O"), 2, 1)


def test_straight_line_program_of_figure_1(fa_model):
    q = straight_line(fa_model, Schedule("fa-simplified", 2, 4, {"S": 0, "P": 2, "O": 3},
                                         {v: "g0" for v in "SPO"}))
    assert (q.S, q.T) == (2, 6)
    assert [(x.op, x.copy, x.issue, x.end) for x in q.instances] == [
        ("S", 0, 0, 2), ("S", 1, 2, 4), ("P", 0, 2, 3), ("P", 1, 4, 5),
        ("O", 0, 3, 5), ("O", 1, 5, 7)]  # O#1's use (O#2) lies beyond Q: live to T + 1


def test_dependence_with_distance():
    m = model([{"name": "A", "cycles": 3, "uses": {"tc": 1}}, {"name": "B", "uses": {"sfu": 1}}],
              [{"src": "A", "dst": "B"}, {"src": "B", "dst": "A", "distance": 2, "delay": 5}])
    assert rules_broken(m, sched(m, 4, {"A": 0, "B": 3})) == []
    [v] = verify(m, sched(m, 3, {"A": 0, "B": 3}))  # A of i+2 at 0 + 2*3, only 3 after B
    assert v.rule == "dependence" and v.ops == ("B", "A") and (v.amount, v.limit) == (3, 5)


def test_cross_warp_spill():
    groups = [{"name": "g0", "warps": 4}, {"name": "g1", "warps": 4}]
    m = model([{"name": "A", "uses": {"tc": 1}, "spill_cost": 2},
               {"name": "B", "uses": {"sfu": 1}}],
              [{"src": "A", "dst": "B"}], groups=groups)
    same = sched(m, 4, {"A": 0, "B": 1}, {"A": "g0", "B": "g0"})
    assert rules_broken(m, same) == []
    split = sched(m, 4, {"A": 0, "B": 1}, {"A": "g0", "B": "g1"})
    [v] = verify(m, split, rules=["cross_warp_spill"])
    assert (v.ops, v.amount, v.limit) == (("A", "B"), 1, 3)
    assert verify(m, sched(m, 4, {"A": 0, "B": 3}, {"A": "g0", "B": "g1"})) == []


def test_capacity_with_multi_row_reservation_table():
    # X holds tc at offsets 0 and 3: it conflicts with itself at I = 3 but not at I = 2 or 4.
    m = model([{"name": "X", "cycles": 4, "rrt": [{"tc": 1}, {}, {}, {"tc": 1}]}])
    assert rules_broken(m, sched(m, 2, {"X": 0})) == []
    assert rules_broken(m, sched(m, 4, {"X": 0})) == []
    [v] = verify(m, sched(m, 3, {"X": 0}))
    assert (v.rule, v.slot, v.amount, v.ops) == ("capacity", 0, 2, ("X",))


def test_completion():
    m = model([{"name": "A", "cycles": 3, "uses": {"tc": 1}}])
    assert rules_broken(m, sched(m, 3, {"A": 1}, L=4)) == []
    [v] = verify(m, sched(m, 3, {"A": 2}, L=4))
    assert (v.rule, v.ops, v.cycle, v.limit) == ("completion", ("A",), 5, 4)


def test_liveness_use_before_definition():
    m = model([{"name": "A", "uses": {"tc": 1}}, {"name": "B", "uses": {"sfu": 1}}],
              [{"src": "A", "dst": "B", "delay": 0}])
    assert verify(m, sched(m, 2, {"A": 1, "B": 1}), rules=["liveness"]) == []
    [v] = verify(m, sched(m, 2, {"A": 1, "B": 0}), rules=["liveness"])
    assert v.rule == "liveness" and v.instances == (("A", 0), ("B", 0)) and v.cycle == 0


def test_memory_counts_copies_live_across_iterations():
    # A's value lives from its issue to B's issue; with B one full stage later, two copies of A
    # are live at once in the steady state.
    ops = [{"name": "A", "uses": {"tc": 1}, "footprint": {"smem": 60}},
           {"name": "B", "uses": {"sfu": 1}}]
    m = model(ops, [{"src": "A", "dst": "B"}], memories={"smem": 100})
    assert verify(m, sched(m, 2, {"A": 0, "B": 1})) == []
    [v] = verify(m, sched(m, 2, {"A": 0, "B": 3}))
    assert (v.rule, v.resource, v.cycle, v.amount, v.limit) == ("memory", "smem", 2, 120, 100)
    assert v.instances == (("A", 0), ("A", 1))


def test_value_used_beyond_q_is_live_to_the_end():
    ops = [{"name": "A", "uses": {"tc": 1}, "footprint": {"smem": 60}}]
    m = model(ops, [{"src": "A", "dst": "A", "distance": 2}], memories={"smem": 100})
    s = sched(m, 1, {"A": 0}, L=2)  # S = 2: both copies' uses lie beyond Q_S
    [v] = verify(m, s, semantics="paper-q")
    assert (v.rule, v.cycle, v.amount, v.trip_count) == ("memory", 1, 120, 2)
    # One copy on the paper's Q_1; the loop holds two: in Q_1 the value entering the loop for
    # iteration 1 (A#-1) is read after the loop, so it is live to the end beside A#0.
    short = sched(m, 1, {"A": 0}, L=1)
    assert verify(m, short, semantics="paper-q") == []
    [v] = verify(m, short)
    assert (v.rule, v.cycle, v.amount, v.trip_count, v.instances) == \
        ("memory", 0, 120, 1, (("A", -1), ("A", 0)))
    assert "of Q_1" in v.message and "A#-1" in v.message


def test_values_entering_the_loop_are_live_from_the_start():
    """An accumulator's initial value (A#-1, read by iteration 0's B) is live from t = 0 until
    that read, beside C's value, read by the same B: 120 of smem from cycle 0 on the loop; the
    paper's Q has no entering values."""
    ops = [{"name": "C", "uses": {"tc": 1}, "footprint": {"smem": 60}},
           {"name": "B", "uses": {"sfu": 1}},
           {"name": "A", "uses": {"tc": 1}, "footprint": {"smem": 60}}]
    edges = [{"src": "C", "dst": "B", "delay": 1}, {"src": "A", "dst": "B", "distance": 1}]
    m = model(ops, edges, memories={"smem": 100})
    s = sched(m, 4, {"C": 0, "B": 2, "A": 3})
    assert verify(m, s, semantics="paper-q") == []
    [v] = verify(m, s)
    assert (v.rule, v.cycle, v.amount, v.trip_count) == ("memory", 0, 120, 1)
    assert set(v.instances) == {("A", -1), ("C", 0)}
    # At the peak itself (a limit set exactly at it) the loop fits.
    assert verify(model(ops, edges, memories={"smem": 120}), s) == []


def test_loop_holds_copies_beyond_the_stage_count():
    """A value read at distance 2 lives about 2*I cycles: Q_S with S = 1 holds one copy, the loop
    two; the verifier's witness names the trip count, the cycle and the instances."""
    ops = [{"name": "a", "uses": {"tc": 1}}, {"name": "b", "uses": {"sfu": 1}, "regs": 100}]
    edges = [{"src": "a", "dst": "b", "delay": 1},
             {"src": "b", "dst": "a", "delay": 10, "distance": 2}]
    m = model(ops, edges, groups=[{"name": "g0", "warps": 4, "reg_limit": 150}])
    s = sched(m, 6, {"a": 0, "b": 1})
    assert verify(m, s, semantics="paper-q") == []
    [v] = verify(m, s)
    assert (v.rule, v.resource, v.amount, v.limit) == ("register_limit", "g0", 200, 150)
    assert v.trip_count == 1 and v.instances == (("b", -1), ("b", 0))


def test_warp_uniqueness_fit():
    groups = [{"name": "big", "warps": 4}, {"name": "one", "warps": 1}]
    m = model([{"name": "A", "uses": {"tc": 1}, "warps": 4}], groups=groups)
    assert verify(m, sched(m, 1, {"A": 0}, {"A": "big"})) == []
    [v] = verify(m, sched(m, 1, {"A": 0}, {"A": "one"}))
    assert (v.rule, v.resource, v.amount, v.limit) == ("warp_uniqueness", "one", 1, 4)


def test_variable_latency_both_directions():
    groups = [{"name": "g0", "warps": 4}, {"name": "load", "warps": 1}]
    m = model([{"name": "L", "uses": {"tc": 1}, "variable_latency": True},
               {"name": "C", "uses": {"sfu": 1}}], groups=groups, vl="load")
    assert verify(m, sched(m, 1, {"L": 0, "C": 0}, {"L": "load", "C": "g0"})) == []
    broken = verify(m, sched(m, 1, {"L": 0, "C": 0}, {"L": "g0", "C": "load"}))
    assert [(v.rule, v.ops) for v in broken] == [("variable_latency", ("L",)),
                                                 ("variable_latency", ("C",))]


def test_register_limit_per_group():
    groups = [{"name": "g0", "warps": 4, "reg_limit": 100}, {"name": "g1", "warps": 4,
                                                              "reg_limit": 100}]
    ops = [{"name": "A", "uses": {"tc": 1}, "regs": 60}, {"name": "B", "uses": {"sfu": 1},
                                                          "regs": 60},
           {"name": "C", "uses": {"tc": 1}}]
    edges = [{"src": "A", "dst": "C"}, {"src": "B", "dst": "C"}]
    m = model(ops, edges, groups=groups)
    start = {"A": 0, "B": 0, "C": 1}
    assert verify(m, sched(m, 2, start, {"A": "g0", "B": "g1", "C": "g1"}),
                  rules=["register_limit"]) == []
    [v] = verify(m, sched(m, 2, start, {"A": "g0", "B": "g0", "C": "g1"}),
                 rules=["register_limit"])
    assert (v.rule, v.resource, v.cycle, v.amount, v.limit) == \
        ("register_limit", "g0", 0, 120, 100)


def test_concurrency_blocking_and_cross_group_reads():
    groups = [{"name": "g0", "warps": 4}, {"name": "g1", "warps": 4}]
    ops = [{"name": "M", "cycles": 3, "uses": {"tc": 1}}, {"name": "E", "cycles": 3,
                                                           "uses": {"sfu": 1}},
           {"name": "W", "uses": {"alu": 1}}]
    edges = [{"src": "M", "dst": "W", "blocking": True}]
    units = {"tc": 1, "sfu": 1, "alu": 1}
    m = model(ops, edges, units=units, groups=groups)
    # W blocks on M at cycle 3 while E (cycles 1..3) still occupies the same group.
    clash = sched(m, 8, {"M": 0, "E": 1, "W": 3}, {"M": "g0", "E": "g0", "W": "g0"})
    [v] = verify(m, clash)
    assert (v.rule, v.instances, v.cycle, v.resource) == \
        ("concurrency", (("W", 0), ("E", 0)), 3, "g0")
    assert verify(m, sched(m, 8, {"M": 0, "E": 1, "W": 3},
                           {"M": "g0", "E": "g1", "W": "g0"})) == []
    # An async op occupies its group's issue for one cycle only.
    m2 = model([ops[0], {**ops[1], "async": True}, ops[2]], edges, units=units, groups=groups)
    assert verify(m2, clash) == []
    # A cross-group data read also needs a free group, even without a blocking edge.
    m3 = model(ops, [{"src": "M", "dst": "W"}], units=units, groups=groups)
    [v] = verify(m3, sched(m3, 8, {"M": 0, "E": 1, "W": 3}, {"M": "g1", "E": "g0", "W": "g0"}))
    assert v.rule == "concurrency" and "cross-group read of M" in v.message


def test_every_rule_has_a_test_here():
    tested = {"dependence", "cross_warp_spill", "capacity", "completion", "liveness", "memory",
              "warp_uniqueness", "variable_latency", "register_limit", "concurrency"}
    assert set(CONSTRAINTS.names()) == tested
