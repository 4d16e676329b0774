"""The optimal search: answers, proofs, limits, interruption, bugs, Algorithm 1, tie-breakers."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpweave.cli import main
from warpweave.core.constraints import Capacity, constraint_set
from warpweave.core.formats import model_from_dict, read_document
from warpweave.core.heuristic import heuristic_schedule
from warpweave.core.oracle import Oracle, OracleBudget
from warpweave.core.registry import ENCODINGS
from warpweave.core.schedule import Schedule
from warpweave.core.verify import verify
from warpweave.encodings.compact import CompactEncoding
from warpweave.errors import InputError
from warpweave.progress import Progress
from warpweave.search import SOLVING, SearchBug, search

from .conftest import EXAMPLES, LATE
from .independent_check import broken_rules
from .strategies import models, tiny_models

BACKENDS = ["cbc", "highs", "z3", "cvc5", "yices", "sat", "cpsat"]



def model(ops, edges=(), units=None, groups=None, vl=None, memories=None):
    return model_from_dict({"name": "t", "machine": {
        "units": units or {"tc": 1, "sfu": 1}, "memories": memories or {},
        "warp_groups": groups or [{"name": "g0", "warps": 4}], "variable_latency_group": vl},
        "ops": ops, "edges": list(edges)})


@pytest.mark.parametrize("encoding", ["compact", "paper", "integer"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_figure_1_is_optimal_at_2_everywhere(fa_model, backend, encoding):
    out = search(fa_model, backend=backend, encoding=encoding, strategy="sweep")
    assert out.status == "optimal" and out.optimal
    assert (out.schedule.I, out.schedule.L) == (2, 4)
    assert verify(fa_model, out.schedule) == []
    # The proof: at I = 2 one stage is too short (by the longest path), two stages work.
    assert [(a.I, a.S, a.status) for a in out.attempts if a.phase == "joint"] == \
        [(2, 1, "infeasible"), (2, 2, "optimal")]


def test_feasibility_is_not_monotone_in_i():
    # X holds the tensor core at offsets 0 and 2: it collides with itself at I = 2 only.
    m = model([{"name": "X", "cycles": 3, "rrt": [{"tc": 1}, {}, {"tc": 1}]}])
    out = search(m, backend="sat", encoding="compact")  # the sweep: a proof per I
    assert out.bounds.lower == 2 and out.schedule.I == 3 and out.optimal
    # I = 2 falls to the relaxation (capacity alone), for every stage count at once.
    [proof] = [a for a in out.attempts if a.I == 2]
    assert (proof.phase, proof.status, proof.S) == ("relaxation", "infeasible", out.max_stages)


def test_no_schedule_within_the_bounds_is_proven():
    # A value carried to the next iteration is always live; it needs 5 registers, the group has 4.
    m = model([{"name": "A", "uses": {"tc": 1}, "regs": 5}],
              [{"src": "A", "dst": "A", "distance": 1}],
              groups=[{"name": "g0", "warps": 4, "reg_limit": 4}])
    out = search(m, backend="sat", encoding="compact")  # the sweep: a proof per (I, S)
    assert out.status == "infeasible" and out.schedule is None
    assert out.lower_bound == out.bounds.i_upper + 1
    assert [(a.phase, a.status) for a in out.attempts] == [
        ("relaxation", "feasible")] + [("joint", "infeasible")] * out.max_stages


def spill_model():
    """A load on the variable-latency group feeds an MMA on another group across a 5-cycle
    spill, which the modulo schedule of Algorithm 1's phase 1 does not see."""
    return model([{"name": "A", "uses": {"tma": 1}, "variable_latency": True, "spill_cost": 5},
                  {"name": "B", "uses": {"tc": 1}}],
                 [{"src": "A", "dst": "B"}], units={"tma": 1, "tc": 1},
                 groups=[{"name": "load", "warps": 1}, {"name": "mma", "warps": 4}], vl="load")


def test_algorithm_1_can_miss_the_optimum():
    m = spill_model()
    full = search(m, backend="sat")
    paper = search(m, backend="sat", paper=True)
    assert (full.schedule.I, full.schedule.L) == (2, 7) and full.optimal
    assert paper.schedule.I == 7 and not paper.optimal
    assert any(a.phase == "modulo" for a in paper.attempts)


def test_time_limit_and_interrupt_keep_what_is_known(fa_model):
    out = search(spill_model(), backend="sat", time_limit=1e-9)
    assert out.status == "unknown" and out.schedule is None and not out.optimal

    calls = []

    def interrupt_after_first(attempt):
        if attempt.status != SOLVING:
            calls.append(attempt)
            raise KeyboardInterrupt

    out = search(fa_model, backend="sat", progress=interrupt_after_first)
    assert out.interrupted and out.status == "unknown" and len(calls) == 1
    assert out.lower_bound == 2


@pytest.mark.parametrize("stop", ["interrupt", "time limit"])
def test_a_stopped_minimize_search_keeps_the_best_schedule_so_far(stop):
    """Stage count 1 finds I=3; the search is stopped before stage count 5 (which finds I=1)."""
    late = model_from_dict(LATE)

    def after_first(attempt):
        if attempt.L is None:  # an announcement, or an answer without a schedule
            return
        if stop == "interrupt":
            raise KeyboardInterrupt
        time.sleep(0.6)  # past the overall limit: the next solve is not started

    out = search(late, backend="cpsat", encoding="integer", strategy="minimize",
                 time_limit=0.5 if stop == "time limit" else None, progress=after_first,
                 isolate=False)
    assert (out.schedule.I, out.schedule.L) == (3, 3) and verify(late, out.schedule) == []
    assert out.status == "feasible" and not out.optimal and out.lower_bound == 1
    assert search(late, backend="cpsat", encoding="integer", strategy="minimize",
                  isolate=False).schedule.I == 1
    assert out.interrupted == (stop == "interrupt")
    assert any(n.startswith("interrupted" if stop == "interrupt" else "time limit")
               for n in out.notes)


def test_an_interrupted_tie_break_keeps_the_optimum(fa_model):
    def stop_at_tie_break(attempt):
        if attempt.phase == "tie-break" and attempt.status != SOLVING:
            raise KeyboardInterrupt

    out = search(fa_model, backend="sat", tie_breakers=["groups", "register_peak"],
                 progress=stop_at_tie_break, isolate=False)
    assert out.interrupted and out.optimal and (out.schedule.I, out.schedule.L) == (2, 4)


def proof_holes(out, s_max: int) -> set[tuple[int, int]]:
    """The (I, S) a proof of `out`'s answer must show infeasible, minus those its entries do:
    every S <= s_max at each I from the lower bound up to the answer, and each S below the
    answer's stage count at its I."""
    s = out.schedule
    needed = {(I, S) for I in range(out.bounds.lower, s.I) for S in range(1, s_max + 1)}
    needed |= {(s.I, S) for S in range(1, s.stages)}
    shown = {(I, S) for (i_lo, i_hi), (s_lo, s_hi), _ in out.ruled_out()
             for I in range(i_lo, i_hi + 1) for S in range(s_lo, s_hi + 1)}
    return needed - shown


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=tiny_models(), s_max=st.integers(1, 3),
       how=st.sampled_from([("sat", "compact", "sweep"), ("cpsat", "integer", "minimize")]))
def test_the_proof_shows_each_case_below_the_answer_and_only_true_ones(m, s_max, how):
    backend, encoding, strategy = how
    out = search(m, backend=backend, encoding=encoding, strategy=strategy, max_stages=s_max,
                 isolate=False)
    if out.optimal:
        assert proof_holes(out, s_max) == set()
    oracle = Oracle(m, budget=20_000)
    for (i_lo, i_hi), (s_lo, s_hi), why in out.ruled_out():
        for I in range(i_lo, i_hi + 1):  # noqa: E741
            for S in range(s_lo, s_hi + 1):
                try:
                    answer = oracle.at(I, S)
                except OracleBudget:
                    return
                assert not answer.feasible, f"ruled out I={I} S={S} ({why}); oracle: " \
                    f"{answer.schedule}"


def test_the_readable_proof_says_what_was_shown(fa_model, capsys):
    """Figure 1 with the defaults: the probe at the lower bound shows S=1 too short for the
    longest path (3 cycles) at I=2 without a solver, and S=2 reaches it; nothing else is
    asked."""
    path = str(EXAMPLES / "fa-simplified.json")
    assert main(["solve", path]) == 0
    proof = capsys.readouterr().out.splitlines()[-1]
    assert proof == ("  proof: no I < 2 (lower bound); no schedule at I=2 S=1 "
                     "(L >= 3 (longest path) exceeds S*I)")
    assert main(["solve", path, "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)["proof"]
    assert [(a["phase"], a["S"], a["I"], a.get("rules_out")) for a in entries] == [
        ("probe", 1, 2, {"I": [2, 2], "S": [1, 1]}), ("probe", 2, 2, None)]


@pytest.mark.parametrize("late, how, phases", [
    (False, {"backend": "sat", "encoding": "compact", "tie_breakers": ["groups"]},
     {"relaxation", "joint", "tie-break"}),
    (True, {"backend": "cpsat", "encoding": "integer", "strategy": "minimize"},
     {"probe", "minimize"}),
    (False, {"backend": "sat", "encoding": "compact", "paper": True}, {"modulo", "seeded"})],
    ids=["sweep", "minimize", "algorithm-1"])
def test_each_solver_call_is_announced_before_its_answer_and_never_recorded(fa_model, late, how,
                                                                            phases):
    m = model_from_dict(LATE) if late else fa_model
    heard = []
    out = search(m, progress=heard.append, isolate=False, **how)
    answers = [a for a in heard if a.status != SOLVING]
    assert tuple(answers) == out.attempts  # announcements are not in the proof
    quiet = search(m, isolate=False, **how)
    assert [(a.phase, a.I, a.S, a.status, a.L) for a in quiet.attempts] == \
        [(a.phase, a.I, a.S, a.status, a.L) for a in out.attempts]
    solved = 0
    for before, a in zip([None, *heard], heard, strict=False):
        if a.status == SOLVING:
            continue
        if a.how.startswith("L >="):  # answered without a solver: nothing was announced
            assert before is None or before.status != SOLVING
            continue
        solved += 1
        assert before is not None and before.status == SOLVING
        assert (before.phase, before.S, before.lengths, before.how, before.interval) == \
            (a.phase, a.S, a.lengths, a.how, a.interval)
        assert before.I == a.I or a.interval is not None
    assert solved == sum(a.status == SOLVING for a in heard) > 0
    assert {a.phase for a in heard if a.status == SOLVING} == phases


def test_a_wrong_encoding_is_a_bug_report_with_replayable_ir(fa_model, tmp_path, monkeypatch,
                                                             capsys):
    class Forgetful(CompactEncoding):
        """Drops capacity: its schedules overlap S and O on the tensor core."""

        name = "forgetful"

        def limit_unit(self, rows, capacity):
            pass

    ENCODINGS.add("forgetful", Forgetful)
    with pytest.raises(SearchBug, match="capacity") as info:
        search(fa_model, backend="sat", encoding="forgetful", bug_dir=tmp_path)
    [saved] = tmp_path.glob("*.ir.json")
    assert str(saved) in str(info.value)
    assert json.loads(saved.read_text())["format"] == "warpweave.ir/1"
    # on the command line: one line naming the IR file (written where it runs), exit status 4
    saved.unlink()
    monkeypatch.chdir(tmp_path)
    assert main(["solve", str(EXAMPLES / "fa-simplified.json"), "--backend", "sat",
                 "--encoding", "forgetful"]) == 4
    err = capsys.readouterr().err
    [saved] = tmp_path.glob("*.ir.json")
    assert err.startswith("warpweave: bug: ") and err.count("\n") == 1 and saved.name in err


def test_without_a_constraint_the_answer_can_improve(fa_model):
    out = search(fa_model, backend="sat",
                 constraints=[c for c in constraint_set() if not isinstance(c, Capacity)])
    assert out.schedule.I == 1 and "capacity" not in out.constraints


@pytest.mark.parametrize("encoding", ["compact", "paper", "integer"])
def test_without_warp_uniqueness_each_op_still_has_one_group(encoding):
    """Dropping the warp-fit rule must not let an op escape its group: B reads across a blocking
    edge, so it may not issue while A of the next iteration occupies g0 (I = 4, not ResMII 3)."""
    m = model([{"name": "A", "cycles": 3, "uses": {"tc": 1}},
               {"name": "B", "cycles": 3, "uses": {"sfu": 1}}],
              [{"src": "A", "dst": "B", "delay": 3, "blocking": True}])
    for without in ((), ("warp_uniqueness",)):
        out = search(m, backend="sat", encoding=encoding, isolate=False,
                     constraints=constraint_set(without=without))
        assert out.optimal and out.schedule.I == 4


def test_tie_break_on_groups():
    groups = [{"name": "big", "warps": 4, "reg_limit": 100},
              {"name": "small", "warps": 4, "reg_limit": 50}]
    m = model([{"name": "A", "uses": {"tc": 1}}, {"name": "B", "uses": {"sfu": 1}}],
              groups=groups)
    out = search(m, backend="sat", tie_breakers=["groups"])
    assert len(set(out.schedule.group.values())) == 1
    assert out.attempts[-1].phase == "tie-break"


def test_algorithm_1_phase_2_and_the_tie_breakers_start_from_a_known_schedule(fa_model):
    """They get a warm start (hints): phase 2 from phase 1's modulo schedule, each tie-breaker
    from the best schedule so far; the other questions have none to start from."""
    from warpweave.backends.sat import SatBackend
    from warpweave.core.registry import BACKENDS

    hinted = []

    class Spy(SatBackend):
        def solve(self, problem, **kw):
            hinted.append(bool(problem.hints))
            return super().solve(problem, **kw)

    BACKENDS.add("spy", Spy)
    out = search(fa_model, backend="spy", paper=True, tie_breakers=["groups", "cross_edges"],
                 isolate=False)
    solved = [a.phase for a in out.attempts if a.how.startswith("sat:")]
    assert hinted == [phase in ("seeded", "tie-break") for phase in solved]
    assert solved.count("seeded") == 1 and solved.count("tie-break") == 2


def test_solve_json_is_accepted_by_verify_and_the_independent_checker(tmp_path, capsys):
    path = str(EXAMPLES / "fa-simplified.json")
    out = tmp_path / "s.json"
    assert main(["solve", path, "--backend", "sat", "--encoding", "compact", "--json", "--out",
                 str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["I"] == 2 and printed["optimal"] is True and printed["lower_bound"] == 2
    assert [(a["phase"], a["S"], a["status"]) for a in printed["proof"]] == [
        ("relaxation", 4, "feasible"), ("joint", 1, "infeasible"), ("joint", 2, "optimal")]
    assert main(["verify", path, str(out)]) == 0
    assert capsys.readouterr().out.startswith("valid:")
    assert broken_rules(read_document(path), printed) == set()
    # the defaults: I a variable, CP-SAT, the integer encoding
    assert main(["solve", path, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["I"], printed["L"], printed["encoding"]) == (2, 4, "integer")
    assert printed["backend"].startswith("cpsat")
    assert {a["phase"] for a in printed["proof"]} == {"probe"}  # the lower bound is reached


@pytest.mark.parametrize("name", ["hopper-gemm", "blackwell-attention"])
def test_solve_json_with_streaming_ops_is_accepted_by_both_checkers(name, tmp_path, capsys):
    """These examples have streaming loads: the schedule is for the model as given (the loads at
    their real latency, no relaxation), and both checkers accept it as it is."""
    path, out = str(EXAMPLES / f"{name}.json"), tmp_path / "s.json"
    assert main(["solve", path, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert "streaming" not in printed and printed["optimal"] is True
    assert main(["verify", path, str(out)]) == 0
    assert broken_rules(read_document(path), printed) == set()


def test_solve_exit_statuses(tmp_path, capsys):
    m = tmp_path / "m.json"
    m.write_text(json.dumps({"machine": {"units": {"tc": 1}, "warp_groups": [
        {"name": "g", "reg_limit": 1}]}, "ops": [{"name": "A", "uses": {"tc": 1}, "regs": 2}],
        "edges": [{"src": "A", "dst": "A", "distance": 1}]}))
    assert main(["solve", str(m), "--backend", "sat"]) == 1
    assert "no schedule with I <=" in capsys.readouterr().out
    assert main(["solve", str(m), "--backend", "nope"]) == 2
    assert main(["solve", str(m), "--without", "nothing"]) == 2


def test_solve_stopped_by_a_limit_or_ctrl_c_exits_3_with_what_it_knows(capsys, monkeypatch,
                                                                         tmp_path):
    path = str(tmp_path / "late.json")
    (tmp_path / "late.json").write_text(json.dumps(LATE))
    assert main(["solve", path, "--time-limit", "1e-9", "--json"]) == 3
    printed = json.loads(capsys.readouterr().out)
    assert (printed["I"], printed["optimal"], printed["lower_bound"]) == (None, False, 1)
    assert printed["notes"] == ["time limit of 1e-09 s reached"]

    class CtrlCAfterFirst(Progress):  # Ctrl-C once stage count 1 has given I=3
        def __call__(self, attempt):
            if attempt.L is not None:
                raise KeyboardInterrupt

    monkeypatch.setattr("warpweave.cli.commands.Progress", CtrlCAfterFirst)
    # without the heuristic's upper bound (it finds I=1 and the search starts there)
    monkeypatch.setattr("warpweave.pipeline.heuristic_bound", lambda *args: None)
    assert main(["solve", path, "--json"]) == 3
    printed = json.loads(capsys.readouterr().out)
    assert (printed["I"], printed["L"], printed["optimal"], printed["status"]) == \
        (3, 3, False, "feasible")
    assert printed["lower_bound"] == 1 and printed["notes"] == ["interrupted"]
    assert main(["solve", path]) == 3
    assert "I = 3 (not proven optimal: no I < 1 is feasible" in capsys.readouterr().out


def test_minimize_search_on_figure_1(fa_model):
    out = search(fa_model, backend="cpsat", encoding="integer", strategy="minimize")
    assert out.optimal and (out.schedule.I, out.schedule.L) == (2, 4)
    # the probe at the lower bound: S=1 cannot hold the longest path at I=2 (no solver asked),
    # S=2 reaches it, so one problem answers
    assert [(a.phase, a.S, a.status, a.how) for a in out.attempts] == [
        ("probe", 1, "infeasible", "L >= 3 (longest path) exceeds S*I"),
        ("probe", 2, "optimal", "cpsat:workers=1/integer")]
    with pytest.raises(InputError, match="--encoding integer"):
        search(fa_model, backend="cpsat", encoding="compact", strategy="minimize")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_minimize_agrees_with_sweep(data):
    m = data.draw(models(max_ops=4, max_cycles=2))
    sweep = search(m, backend="sat", encoding="compact", max_stages=3, isolate=False)
    mini = search(m, backend="cpsat", encoding="integer", strategy="minimize", max_stages=3,
                  isolate=False)
    assert sweep.status == mini.status
    if sweep.schedule is not None:
        assert (sweep.schedule.I, sweep.schedule.L) == (mini.schedule.I, mini.schedule.L)
        assert verify(m, mini.schedule) == []
    # started from the heuristic's schedule (the upper bound solve gives it): the same answer
    upper = heuristic_schedule(m, max_stages=3, seed=0).schedule
    if upper is not None:
        bounded = search(m, backend="cpsat", encoding="integer", strategy="minimize",
                         max_stages=3, isolate=False, upper=upper)
        assert bounded.status == sweep.status == "optimal"
        assert (bounded.schedule.I, bounded.schedule.L) == (sweep.schedule.I, sweep.schedule.L)


def test_an_upper_bound_that_breaks_a_rule_is_not_used(fa_model):
    bad = Schedule(fa_model.name, 1, 1, {op.name: 0 for op in fa_model.ops},
                   {op.name: fa_model.machine.warp_groups[0].name for op in fa_model.ops})
    out = search(fa_model, backend="cpsat", encoding="integer", strategy="minimize",
                 upper=bad, isolate=False)
    assert out.optimal and (out.schedule.I, out.schedule.L) == (2, 4)
    assert "the upper bound given was not used" in out.notes[0]


def test_an_upper_bound_beyond_the_stage_bound_bounds_i(fa_model):
    """The heuristic's schedule may have more stages than the search's bound (Meta's golden-bwd:
    I = the lower bound in 6 stages, bound 5): it still bounds I, so only L is left to find;
    and where the stage bound holds no schedule at its I, it is the answer, not a SearchBug."""
    group = {op.name: fa_model.machine.warp_groups[0].name for op in fa_model.ops}
    long = Schedule(fa_model.name, 2, 7, {"S": 0, "P": 2, "O": 3}, group)  # 4 stages
    assert long.stages == 4 and verify(fa_model, long) == []
    out = search(fa_model, backend="cpsat", encoding="integer", strategy="minimize",
                 max_stages=3, upper=long, isolate=False)
    assert out.optimal and (out.schedule.I, out.schedule.L) == (2, 4)
    assert "it bounds I only" in out.notes[0]
    # no I <= 2 question goes above I = 2
    assert all(a.interval is None or a.interval[1] <= 2 for a in out.attempts)
    short = search(fa_model, backend="cpsat", encoding="integer", strategy="minimize",
                   max_stages=1, upper=long, isolate=False)
    assert short.schedule == long and not short.optimal and short.status == "feasible"
    assert short.lower_bound == 2


def test_overlapping_ruled_out_ranges_read_as_one():
    """The probe's I = lower bound at S=1, then the minimize question over I=64..81 at S=1: one
    entry; ranges that neither meet nor overlap stay apart."""
    from warpweave.search.outcome import merge
    assert merge([((64, 64), (1, 1)), ((64, 81), (1, 1))], 0) == [((64, 81), (1, 1))]
    assert merge([((64, 70), (1, 1)), ((72, 81), (1, 1))], 0) == \
        [((64, 70), (1, 1)), ((72, 81), (1, 1))]
    assert merge([((2, 2), (1, 1)), ((2, 2), (2, 3))], 1) == [((2, 2), (1, 3))]


def test_the_integer_encoding_decodes_the_least_i_an_objective_bound_leaves():
    """An unfinished minimize question rules out the I below what the solver's bound on the
    objective leaves, as the encoding decodes it: never above the I of a schedule whose
    objective meets the bound, and that I at its own objective (conftest.LATE at S=1: I=3)."""
    from warpweave.core.registry import backend
    late = model_from_dict(LATE)
    cons = constraint_set()
    view = ENCODINGS.get("integer")(late, 5, 1, cons, interval=(1, 5))
    result = backend("cpsat").solve(view.problem)
    schedule = view.decode(result.values)
    assert schedule.I == 3
    assert view.least_interval(result.objective) == 3
    assert all(view.least_interval(b) <= 3 for b in range(result.objective + 1))
    assert view.least_interval(result.objective - schedule.L - 1) == 2
