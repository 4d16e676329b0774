"""Large-neighbourhood search (warpweave.scale.lns, .neighbourhood): every schedule it keeps passes
the verifier, on tiny models its answer is the exact optimum, neighbourhoods are exact (the
whole model free is the exact question; a reduced neighbourhood merges back into a valid
schedule), and `solve --method lns|auto`."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from warpweave.bench.random_graphs import scale_graph
from warpweave.cli import main
from warpweave.core.constraints import constraint_set
from warpweave.core.heuristic import heuristic_schedule
from warpweave.core.verify import verify
from warpweave.scale.lns import LnsOptions, lns_schedule
from warpweave.scale.method import AUTO_EXACT_OPS, choose
from warpweave.scale.neighbourhood import binding, neighbourhood, reoptimize
from warpweave.search import MODULO_ONLY, search

from .strategies import models, tiny_models

FEW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUICK = LnsOptions(solve_limit=2.0, stall=4, isolate=False, start="heuristic")


@FEW  # few: an infeasible model takes LNS its whole time limit
@given(models(max_ops=5))
def test_every_schedule_lns_keeps_passes_the_verifier(m):
    r = lns_schedule(m, constraint_set(), options=QUICK, time_limit=4)
    if r.schedule is not None:
        assert verify(m, r.schedule) == []
        assert r.schedule.I >= r.lower_bound
    for x in r.history:  # every improvement on the way is one the verifier accepted
        assert x.I is None or x.I >= r.lower_bound


@FEW  # few: the exact search on an infeasible one takes seconds
@given(tiny_models())
def test_on_tiny_models_lns_finds_the_exact_optimum(m):
    exact = search(m, isolate=False)
    if exact.status != "optimal":  # infeasible, or the search's stage bound in the way
        return
    r = lns_schedule(m, constraint_set(), options=QUICK, time_limit=20)
    assert r.schedule is not None
    assert (r.schedule.I, r.schedule.L) == (exact.schedule.I, exact.schedule.L)
    assert r.lower_proven_optimal


@FEW  # few: the exact search on an infeasible one takes seconds
@given(tiny_models())
def test_on_tiny_models_the_neighbourhoods_alone_reach_the_exact_optimum(m):
    """As above with no time for LNS's own exact search (`lower_share=0`): the optimum is
    then reached by the neighbourhoods from the heuristic's start (the exact search, given a
    share of the time, returns it by itself on a tiny model and proved nothing about them)."""
    import attrs
    exact = search(m, isolate=False)
    if exact.status != "optimal":
        return
    r = lns_schedule(m, constraint_set(), options=attrs.evolve(QUICK, lower_share=0.0),
                     time_limit=20)
    assert r.schedule is not None
    assert (r.schedule.I, r.schedule.L) == (exact.schedule.I, exact.schedule.L)
    assert not any("exact search" in x for x in r.lower_how)
    assert not any("exact search" in x.how for x in r.history)


def test_a_fixed_seed_gives_lns_the_same_schedule(monkeypatch):
    """LNS draws random windows (`LnsOptions.seed`) and seeds each neighbourhood's solver:
    two runs with one seed, each ending on its stall criterion (not on time), re-optimize the
    same windows with the same solver seeds and give the same schedule by the same steps;
    another seed draws other windows."""
    import attrs

    from warpweave.scale import lns
    m = scale_graph(24, 2, joint=True)
    asked = []

    def recorded(model, schedule, free, *args, **kwargs):
        asked.append((frozenset(free), kwargs["stages"], kwargs["seed"]))
        return reoptimize(model, schedule, free, *args, **kwargs)

    monkeypatch.setattr(lns, "reoptimize", recorded)

    def run(seed):
        asked.clear()
        r = lns_schedule(m, constraint_set(), options=attrs.evolve(QUICK, seed=seed),
                         time_limit=120)
        assert r.schedule is not None and not r.timed_out and not r.interrupted
        return r.schedule, [(x.I, x.L, x.how) for x in r.history], list(asked)

    first = run(0)
    assert len(first[2]) >= 4  # windows of the length phase, random ones among them
    assert run(0) == first
    assert run(1)[2] != first[2]


def test_the_whole_model_free_is_the_exact_question():
    m = scale_graph(12, 2, joint=True)
    exact = search(m, isolate=False)
    assert exact.status == "optimal"
    s = exact.schedule
    found = reoptimize(m, s, set(m.op_names), binding(m, constraint_set()), stages=s.stages,
                       time_limit=30, isolate=False)
    assert found.status == "OPTIMAL" and found.schedule.L == s.L


def test_a_reduced_neighbourhood_merges_into_a_valid_schedule():
    """Modulo-only, 200 ops: the neighbourhood of 8 ops holds them, their edge neighbours and
    one background op per unit instead of every op sharing a unit."""
    m = scale_graph(200, 1)
    cons = constraint_set(only=MODULO_ONLY)
    s = heuristic_schedule(m, rules=[c.name for c in cons]).schedule
    free = set(m.op_names[50:58])
    hood = neighbourhood(m, s, free, {c.name for c in cons})
    assert len(hood.model.ops) < 60
    assert any(v.startswith("~background:") for v in hood.pinned)
    found = reoptimize(m, s, free, cons, stages=s.stages + 1, time_limit=10, isolate=False)
    assert found.schedule is not None
    assert verify(m, found.schedule, [c.name for c in cons]) == []
    assert found.schedule.I == s.I


def test_binding_leaves_out_rules_no_schedule_can_break():
    one_group = scale_graph(30, 0)
    names = [c.name for c in binding(one_group, constraint_set())]
    assert "concurrency" not in names and "register_limit" not in names
    assert "capacity" in names and "dependence" in names
    joint = scale_graph(30, 0, joint=True)
    assert {c.name for c in binding(joint, constraint_set())} == \
        {c.name for c in constraint_set()}


def test_a_hand_off_within_one_group_binds_and_lns_keeps_it():
    """Hypothesis's find: on one group a data edge's `handoff_local` still binds (rule 1), so
    LNS keeps cross_warp_spill in its neighbourhoods and its answer is the exact optimum."""
    from warpweave.core.formats import model_from_dict
    m = model_from_dict({
        "name": "local", "machine": {"name": "one", "units": {"u0": 1},
                                     "warp_groups": [{"name": "g0", "warps": 4}]},
        "ops": [{"name": "a", "cycles": 2, "uses": {"u0": 1}}, {"name": "b", "cycles": 2},
                {"name": "c", "cycles": 1, "uses": {"u0": 1}}],
        "edges": [{"src": "a", "dst": "b", "delay": 2, "handoff_local": 3},
                  {"src": "b", "dst": "c", "delay": 2}]})
    assert "cross_warp_spill" in {c.name for c in binding(m, constraint_set())}
    exact = search(m, isolate=False)
    r = lns_schedule(m, constraint_set(), options=QUICK, time_limit=10)
    assert verify(m, r.schedule) == []
    assert (r.schedule.I, r.schedule.L) == (exact.schedule.I, exact.schedule.L)
    assert r.lower_proven_optimal


def test_auto_is_exact_up_to_the_threshold_and_lns_above():
    assert choose(scale_graph(AUTO_EXACT_OPS, 0), "auto") == ("exact", None)
    method, why = choose(scale_graph(AUTO_EXACT_OPS + 1, 0), "auto")
    assert method == "lns" and str(AUTO_EXACT_OPS) in why


@pytest.mark.slow
def test_solve_method_lns_on_a_1000_op_graph(tmp_path, capsys):
    """The issue's example: a generated 1,000-op graph, a verified schedule and its gap.  LNS
    is still shortening L at 5 s: the time limit cut it, so the exit status is 3 (with its
    best schedule printed), not 0."""
    from warpweave.bench.random_graphs import scale_graph_doc
    from warpweave.core.formats import model_from_dict, schedule_from_dict
    doc = scale_graph_doc(1000, 0)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    assert main(["solve", str(path), "--method", "lns", "--time-limit", "5", "--json"]) == 3
    answer = json.loads(capsys.readouterr().out)
    assert answer["method"] == "lns" and answer["gap"] is not None and answer["gap"] <= 0.1
    assert not answer["optimal"] and any(n.startswith("time limit of") for n in answer["notes"])
    m = model_from_dict(doc)
    assert verify(m, schedule_from_dict(answer, m)) == []


def test_improvements_show_on_a_terminal_only():
    """The anytime display: a line per better schedule or bound on a terminal, nothing piped."""
    import io

    from warpweave.scale.result import improvement_printer

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert improvement_printer(io.StringIO()) is None
    screen = Terminal()
    m = scale_graph(30, 4)
    r = lns_schedule(m, constraint_set(), options=QUICK, time_limit=5,
                     listener=improvement_printer(screen))
    lines = screen.getvalue().splitlines()
    assert r.schedule is not None and len(lines) == len(r.history) >= 1
    assert f"I={r.history[0].I}" in lines[0] and f"lower bound {r.history[0].lower}" in lines[0]
    assert "gap" in lines[-1] and "(start: heuristic)" in lines[0]


def test_a_schedule_the_verifier_rejects_is_never_reported(monkeypatch):
    """The door every scalable method's answer passes (`scale.method.run_method`): a method
    that returned a wrong schedule (here: the heuristic's, squeezed to I - 1) reports none, says
    why, and `solve` exits 3 instead of 0."""
    import attrs

    import warpweave
    from warpweave.scale import method as methods

    m = scale_graph(30, 4)
    honest = methods._run

    def wrong(*args, **kwargs):
        r = honest(*args, **kwargs)
        return attrs.evolve(r, schedule=attrs.evolve(r.schedule, I=r.schedule.I - 1))

    monkeypatch.setattr(methods, "_run", wrong)
    result = warpweave.solve(m, method="heuristic", isolate=False)
    assert result.schedule is None and result.run.exit_status == 3
    assert any("the verifier rejected heuristic's schedule" in n for n in result.run.outcome.notes)


def test_exit_0_when_the_method_ended_on_its_own_3_when_the_time_limit_cut_it(monkeypatch):
    """One rule for every method (README "Exit status"): a scalable method's verified schedule
    exits 0 when the method ended on its own (here the heuristic, gap 70%), 3 when the user's
    time limit cut it before its answer was proven (LNS at 3 s, its best schedule kept)."""
    import attrs

    import warpweave
    from warpweave.scale import method as methods
    ended = warpweave.solve(scale_graph(40, 1, joint=True), method="heuristic", time_limit=60,
                            isolate=False)
    assert ended.status == "feasible" and ended.gap > 0.5 and not ended.run.scaled.timed_out
    assert ended.exit_status == 0
    cut = warpweave.solve(scale_graph(30, 4, joint=True), method="lns", time_limit=3,
                          isolate=False)
    assert cut.schedule is not None and cut.status == "feasible" and cut.run.scaled.timed_out
    assert cut.exit_status == 3  # and says why, in the user's terms (not LNS's share of it)
    assert "time limit of 3 s reached" in cut.run.outcome.notes
    # The same heuristic answer, had the time limit cut the method: 3.
    honest = methods._run
    monkeypatch.setattr(methods, "_run", lambda *a, **k: attrs.evolve(honest(*a, **k),
                                                                       timed_out=True))
    again = warpweave.solve(scale_graph(40, 1, joint=True), method="heuristic", time_limit=60,
                            isolate=False)
    assert again.schedule == ended.schedule and again.exit_status == 3


def test_lns_says_whether_the_time_limit_cut_it():
    """`timed_out` only when the time limit given ended the run: not when LNS stalled first,
    nor for its own 60 s budget (no time limit given)."""
    m = scale_graph(24, 2, joint=True)
    stalled = lns_schedule(m, constraint_set(), options=QUICK, time_limit=30)
    assert stalled.schedule is not None and not stalled.lower_proven_optimal
    assert not stalled.timed_out
    cut = lns_schedule(scale_graph(30, 4, joint=True), constraint_set(), options=QUICK,
                       time_limit=2)
    assert cut.schedule is not None and cut.timed_out and not cut.lower_proven_optimal


@pytest.mark.parametrize("method", ["lns", "gaus"])
def test_ctrl_c_returns_the_best_schedule_so_far_with_its_bounds(method):
    """Ctrl-C (a real SIGINT, sent when the first schedule is reported) stops the method; the
    answer is that schedule, verified, with its lower bound and gap."""
    import os
    import signal

    import warpweave
    if method == "gaus":
        pytest.importorskip("torch", reason="GauS needs PyTorch: pip install 'warpweave[gaus]'")
    seen = []

    def press_ctrl_c(x):
        seen.append(x)
        if len(seen) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    m = scale_graph(24, 2, joint=True)
    r = warpweave.solve(m, method=method, time_limit=120, isolate=False,
                        improvements=press_ctrl_c)
    assert "interrupted" in r.run.outcome.notes and len(seen) == 1
    assert r.run.exit_status == 3  # a Ctrl-C is a limit, as for the exact search
    assert r.schedule is not None and (r.schedule.I, r.schedule.L) == (seen[0].I, seen[0].L)
    assert verify(r.run.raw, r.schedule, semantics=r.run.semantics) == []
    assert r.gap == (r.schedule.I - r.lower_bound) / r.lower_bound and r.lower_bound >= 1


def test_gaus_without_pytorch_is_one_line_naming_the_extra(monkeypatch, capsys):
    import sys
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    assert main(["solve", "fa-simplified", "--method", "gaus"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'warpweave[gaus]'" in err[0] and "--method" in err[0]
