"""The heuristic scheduler: verified answers, I never below the lower bound, multi-row tables,
warp assignment, determinism, speed and the `heuristic` command."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpweave.bench.random_graphs import random_graph, scale_graph, scale_graph_doc
from warpweave.cli import main
from warpweave.core.bounds import bounds
from warpweave.core.formats import model_from_dict, read_document
from warpweave.core.heuristic import heuristic_schedule
from warpweave.core.registry import CONSTRAINTS
from warpweave.core.schedule import Schedule
from warpweave.core.verify import verify
from warpweave.errors import InputError

from .conftest import EXAMPLES, ROOT
from .independent_check import broken_rules
from .strategies import models

RANDOM = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def model(ops, edges=(), units=None, groups=None, vl=None, memories=None):
    return model_from_dict({"name": "t", "machine": {
        "units": units or {"tc": 1, "sfu": 1}, "memories": memories or {},
        "warp_groups": groups or [{"name": "g0", "warps": 4}], "variable_latency_group": vl},
        "ops": ops, "edges": list(edges)})


def no_schedule_at(m, I, max_stages):  # noqa: E741
    """Brute force over every start time and group: nothing at this I passes the verifier."""
    names, groups = m.op_names, [g.name for g in m.machine.warp_groups]
    for starts in itertools.product(*(range(max_stages * I - m.op(v).cycles + 1)
                                      for v in names)):
        for gs in itertools.product(groups, repeat=len(names)):
            s = Schedule.tight(m, I, dict(zip(names, starts, strict=True)),
                               dict(zip(names, gs, strict=True)))
            if s.stages <= max_stages and not verify(m, s):
                return False
    return True


def test_figure_1_gets_i_2(fa_model):
    r = heuristic_schedule(fa_model)
    assert r.schedule is not None and r.why is None
    assert (r.schedule.I, r.schedule.L) == (2, 4)
    assert r.tried == [2] and r.lower_bound == 2
    assert verify(fa_model, r.schedule) == []


@RANDOM
@given(models(), st.sets(st.sampled_from(CONSTRAINTS.names())), st.integers(1, 3))
def test_every_answer_is_verified_and_never_below_the_lower_bound(m, without, max_stages):
    rules = [r for r in CONSTRAINTS.names() if r not in without]
    r = heuristic_schedule(m, rules=rules, max_stages=max_stages)
    b = bounds(m)
    if "capacity" in rules and "dependence" in rules:
        assert r.lower_bound == b.lower
    assert r.tried == sorted(r.tried) and all(i >= r.lower_bound for i in r.tried)
    if r.schedule is None:
        assert r.why
        return
    s = r.schedule
    assert verify(m, s, rules) == []
    assert s.I >= r.lower_bound and s.stages <= max_stages
    assert s.L == max(s.start[op.name] + op.cycles for op in m.ops)  # the tight length
    assert s.I == r.tried[-1] and r.trials[-1].why is None


@RANDOM
@given(models(features=False))
def test_without_warp_features_a_schedule_is_always_found(m):
    # One group and no liveness limits: only dependences, units and the stage bound remain, and
    # I = i_upper always admits a one-stage list schedule, so the heuristic must not fail.
    r = heuristic_schedule(m)
    assert r.schedule is not None, r.why
    assert verify(m, r.schedule) == []


@settings(max_examples=60, deadline=None)
@given(models(), st.integers(0, 3))
def test_deterministic_for_a_seed(m, seed):
    a, b = heuristic_schedule(m, seed=seed), heuristic_schedule(m, seed=seed)
    assert a.schedule == b.schedule and a.trials == b.trials and a.steps == b.steps


def test_deterministic_whatever_the_hash_seed():
    # Sets of names iterate in an order that depends on PYTHONHASHSEED: nothing may hang on it.
    code = ("from warpweave.bench.random_graphs import random_graph;"
            "from warpweave.core.heuristic import heuristic_schedule;"
            "r = heuristic_schedule(random_graph(40, 5));"
            "print(r.schedule, [t.why for t in r.trials])")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")}
    assert len(outs) == 1 and "Schedule(" in outs.pop()


def test_multi_row_tables_lower_bound_infeasible_next_feasible():
    # A holds tc for 2 cycles, B at offsets 0 and 2: ResMII = 4, but at I = 4 B leaves two
    # slots 2 apart, where A's two consecutive cycles cannot go.  I = 5 works.
    m = model([{"name": "A", "cycles": 2, "rrt": [{"tc": 1}, {"tc": 1}]},
               {"name": "B", "cycles": 3, "rrt": [{"tc": 1}, {}, {"tc": 1}]}])
    r = heuristic_schedule(m)
    assert r.lower_bound == 4 and no_schedule_at(m, 4, r.max_stages)
    assert r.schedule.I == 5 and r.tried == [4, 5] and verify(m, r.schedule) == []


def test_an_op_colliding_with_itself_skips_that_i():
    # DESIGN's example: offsets 0 and 3 fit I = 2 and 4, not 3; with Y, ResMII = 3.
    m = model([{"name": "X", "cycles": 4, "rrt": [{"tc": 1}, {}, {}, {"tc": 1}]},
               {"name": "Y", "uses": {"tc": 1}}])
    r = heuristic_schedule(m)
    assert r.lower_bound == 3 and r.schedule.I == 4
    assert r.trials[0].I == 3 and "X needs 2 x tc in slot 0 of I=3" in r.trials[0].why


def test_cross_group_spill_and_variable_latency():
    # The load must run on the variable-latency group and the MMA elsewhere: the 5-cycle spill
    # makes L = 7, and three stages allow I = 3 at the least (four would allow I = 2).
    m = model([{"name": "A", "uses": {"tma": 1}, "variable_latency": True, "spill_cost": 5},
               {"name": "B", "uses": {"tc": 1}}],
              [{"src": "A", "dst": "B"}], units={"tma": 1, "tc": 1},
              groups=[{"name": "load", "warps": 1}, {"name": "mma", "warps": 4}], vl="load")
    r = heuristic_schedule(m, max_stages=3)
    s = r.schedule
    assert (s.I, s.L) == (3, 7) and s.group == {"A": "load", "B": "mma"}
    assert verify(m, s) == []


def test_registers_spread_values_over_groups():
    # Two values carried to the next iteration are always live: 6 + 6 registers do not fit one
    # group of 8, so they must go to different groups.
    groups = [{"name": "a", "warps": 4, "reg_limit": 8}, {"name": "b", "warps": 4, "reg_limit": 8}]
    m = model([{"name": "X", "uses": {"tc": 1}, "regs": 6},
               {"name": "Y", "uses": {"sfu": 1}, "regs": 6}],
              [{"src": "X", "dst": "X", "distance": 1}, {"src": "Y", "dst": "Y", "distance": 1}],
              groups=groups)
    r = heuristic_schedule(m)
    assert r.schedule.group["X"] != r.schedule.group["Y"]
    assert verify(m, r.schedule) == []


def test_a_waiting_op_gets_a_cycle_of_its_own():
    # W waits on a blocking edge; L, a 3-cycle op on the same (only) group, sets ResMII = 3.  At
    # I = 3 copies of L occupy the group at every cycle, so W needs I = 4.
    m = model([{"name": "P", "uses": {"alu": 1}}, {"name": "W", "uses": {"tc": 1}},
               {"name": "L", "cycles": 3, "uses": {"sfu": 1}}],
              [{"src": "P", "dst": "W", "blocking": True}], units={"tc": 1, "sfu": 1, "alu": 1})
    r = heuristic_schedule(m, max_stages=3)
    assert r.lower_bound == 3 and no_schedule_at(m, 3, 3)
    assert r.schedule.I == 4 and verify(m, r.schedule) == []


def test_an_op_the_scheduler_cannot_settle_moves_to_another_group():
    # On g0 (the only group with 4 warps) W1 and W2 wait on blocking edges; with P there too, I = 2
    # leaves W1 or W2 no free issue cycle.  Moving P, which the scheduler keeps evicting, to the
    # small group g1 gives I = 2 (no schedule has I = 1).
    m = model([{"name": "P", "rrt": [], "async": True, "regs": 3},
               {"name": "W1", "cycles": 2, "uses": {"tc": 1}, "async": True, "warps": 4},
               {"name": "W2", "cycles": 2, "rrt": [], "async": True, "warps": 4}],
              [{"src": "W1", "dst": "P", "distance": 2, "delay": 1},
               {"src": "P", "dst": "W2", "distance": 1, "delay": 2, "kind": "order",
                "blocking": True},
               {"src": "W2", "dst": "W1", "distance": 3, "delay": 2, "kind": "order",
                "blocking": True}],
              units={"tc": 2}, groups=[{"name": "g0", "warps": 4}, {"name": "g1", "warps": 1}])
    r = heuristic_schedule(m, max_stages=3)
    assert r.lower_bound == 1 and no_schedule_at(m, 1, 3)
    assert r.schedule.I == 2 and r.schedule.group == {"P": "g1", "W1": "g0", "W2": "g0"}
    assert any(t.assignment == "move P off g0" for t in r.trials)


def test_no_schedule_is_reported_with_a_reason():
    m = model([{"name": "A", "uses": {"tc": 1}, "regs": 5}],
              [{"src": "A", "dst": "A", "distance": 1}],
              groups=[{"name": "g0", "warps": 4, "reg_limit": 4}])
    r = heuristic_schedule(m)
    assert r.schedule is None and r.tried == list(range(1, r.bounds.i_upper + 1))
    assert "register_limit" in r.why


def test_leaving_capacity_out_allows_a_smaller_i(fa_model):
    r = heuristic_schedule(fa_model, rules=[r for r in CONSTRAINTS.names() if r != "capacity"])
    assert r.schedule.I == 1 and verify(fa_model, r.schedule) != []
    with pytest.raises(InputError, match="unknown rule"):
        heuristic_schedule(fa_model, rules=["nothing"])


@pytest.mark.parametrize("seed", range(3))
def test_fifty_ops_well_under_a_second(seed):
    m = random_graph(50, seed)
    r = heuristic_schedule(m)
    assert r.schedule is not None and verify(m, r.schedule) == []
    assert r.seconds < 3.0  # about 0.1-0.8 s measured; generous for slow machines


def _evictions_by_scan(ims, v, t):
    """What `ModuloScheduler._evictions` must return, found by testing every placed op (the
    scheduler's slot indexes must not miss one or add one)."""
    I, g = ims.I, ims.group[v]  # noqa: E741
    out = {o: None for o in ims.members[g] if ims._clash(v, t, o, ims.start[o])}
    out.update(dict.fromkeys(ims._late_successors(v, t)))
    for unit, off, length, n in ims.runs[v]:
        a, held = (t + off) % I, ims.spans[unit]
        if ims.cap[unit] == 1:
            out.update((o, None) for o, spans in held.items() if o != v and any(
                (b - a) % I < length or (a - b) % I < lb for b, lb, _ in spans))
            continue
        excess = {s: ims.used[unit][s] + n - ims.cap[unit] for s in
                  ((a + j) % I for j in range(length)) if ims.used[unit][s] + n > ims.cap[unit]}
        for o in sorted(sorted(held, key=ims._rank, reverse=True), key=lambda o: o not in out):
            hits = [(s, m) for b, lb, m in held[o] for s in excess
                    if excess[s] > 0 and (s - b) % I < lb]
            if hits and any(x > 0 for x in excess.values()):
                out[o] = None
                for s, m in hits:
                    excess[s] -= m
    return sorted(out, key=ims._rank)


@pytest.mark.parametrize("m", [random_graph(40, 1), random_graph(60, 2),
                               scale_graph(150, 0, joint=True)],
                         ids=["random40", "random60", "scale150-joint"])
def test_the_slot_indexes_find_exactly_the_ops_to_evict(m, monkeypatch):
    """Every eviction the scheduler makes (forced placements, units of capacity 1 and more,
    rule 9 on groups, multi-row tables) is the one a scan of every placed op gives."""
    from warpweave.core.ims import ModuloScheduler
    indexed, calls = ModuloScheduler._evictions, []

    def checked(self, v, t):
        got = indexed(self, v, t)
        assert got == _evictions_by_scan(self, v, t), (v, t)
        calls.append(bool(got))
        return got

    monkeypatch.setattr(ModuloScheduler, "_evictions", checked)
    r = heuristic_schedule(m)
    assert r.schedule is not None and len(calls) >= len(m.ops) and any(calls)


class DeadlineAfter:
    """Stands for `warpweave.limits` in IMS: the run's deadline (of `seconds`) passes after
    `steps` scheduling steps; `steps` counts the checks made."""

    def __init__(self, after: int, seconds: float):
        self.after, self.seconds, self.steps = after, seconds, 0

    def check(self):
        from warpweave import limits
        self.steps += 1
        if self.steps > self.after:
            raise limits.TimeUp(self.seconds)


def test_the_runs_deadline_stops_one_ims_pass(monkeypatch):
    """The run's deadline (`warpweave.limits`) is checked at every scheduling step: past it,
    the heuristic answers at once with no schedule and says why, even within one I."""
    from warpweave.core import ims
    m = scale_graph(300, 1)
    whole = heuristic_schedule(m)
    assert whole.schedule is not None and whole.steps >= 300 and not whole.stopped
    monkeypatch.setattr(ims, "limits", DeadlineAfter(100, 1.0))
    r = heuristic_schedule(m)
    assert r.schedule is None and r.stopped and r.steps == 0
    assert r.why == f"time limit of 1 s reached while trying I={whole.schedule.I}"
    assert ims.limits.steps == 101


def test_the_heuristic_command_exits_3_when_the_time_limit_stops_it(tmp_path, monkeypatch,
                                                                    capsys):
    """Stopped by the run's deadline before it found a schedule: a limit (3), not "none
    found" (1), and the reason printed."""
    from warpweave.core import ims
    path = tmp_path / "m.json"
    path.write_text(json.dumps(scale_graph_doc(300, 1)))
    assert main(["heuristic", str(path), "-q"]) == 0
    monkeypatch.setattr(ims, "limits", DeadlineAfter(20, 5.0))
    assert main(["heuristic", str(path), "--time-limit", "5"]) == 3
    out = capsys.readouterr().out
    assert "time limit of 5 s reached while trying I=" in out and "no schedule found" in out


def test_heights_settle_in_two_rounds_on_a_chain_in_model_order(monkeypatch):
    """Rau's HeightR by relaxation, successors first: a chain of 2,000 ops given in model
    order settles in one round (and one to see nothing change), not one round per op (a
    10,000-op chain took 65 s); the deadline is checked every round."""
    from warpweave.core import ims
    n = 2000
    m = model_from_dict({"name": "chain", "machine": {"units": {"tc": 1},
                                                      "warp_groups": [{"name": "g0"}]},
                         "ops": [{"name": f"op{i}", "cycles": 1 + i % 3} for i in range(n)],
                         "edges": [{"src": f"op{i}", "dst": f"op{i + 1}"}
                                   for i in range(n - 1)]})

    class Rounds:
        count = 0

        def check(self):
            self.count += 1

    monkeypatch.setattr(ims, "limits", Rounds())
    s = ims.ModuloScheduler(m, 1, {v: "g0" for v in m.op_names}, max_stages=n * 3)
    assert ims.limits.count == 2
    tail = 0
    for i in reversed(range(n)):  # the longest path to the loop's end, by hand
        tail += 1 + i % 3
        assert s.height[f"op{i}"] == tail


def test_heuristic_command(tmp_path, capsys):
    path = str(EXAMPLES / "fa-simplified.json")
    out = tmp_path / "h.json"
    assert main(["heuristic", path, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["I"] == 2 and printed["optimal"] is False and printed["lower_bound"] == 2
    assert printed["heuristic"]["tried"] == [2]
    assert main(["verify", path, str(out)]) == 0
    assert broken_rules(read_document(path), printed) == set()
    capsys.readouterr()
    assert main(["heuristic", path]) == 0
    text = capsys.readouterr().out
    assert "heuristic" in text and "no optimality claim" in text
    assert "lower bound 2 = max(ResMII 2 on tc, RecMII 1)" in text


def test_heuristic_command_exit_statuses(tmp_path, capsys):
    m = tmp_path / "m.json"
    m.write_text(json.dumps({"machine": {"units": {"tc": 1}, "warp_groups": [
        {"name": "g", "reg_limit": 1}]}, "ops": [{"name": "A", "uses": {"tc": 1}, "regs": 2}],
        "edges": [{"src": "A", "dst": "A", "distance": 1}]}))
    assert main(["heuristic", str(m)]) == 1
    assert "a heuristic failure proves nothing" in capsys.readouterr().out
    assert main(["heuristic", str(m), "--without", "register_limit", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["constraints"].count("register_limit") == 0
    assert main(["heuristic", str(m), "--without", "nothing"]) == 2
    assert "unknown rule" in capsys.readouterr().err
