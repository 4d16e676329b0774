"""Every limit bounds the whole run, and no magnitude costs a loop: the run's deadline stops
the bounds and normalization too (a Run with what is known, exit 3), stage counts the longest
path rules out are one answer however many, and normalization tries a bounded number of units."""

from __future__ import annotations

import pytest

from warpweave import limits
from warpweave.core.formats import model_from_dict
from warpweave.machines import normalize
from warpweave.pipeline import Options, run_solve
from warpweave.search import search

TOY = {"units": {"tc": 1, "sfu": 1}, "warp_groups": [{"name": "g0", "warps": 4}]}


def long_path(delay: int) -> dict:
    """A latency `delay` on the way from A to B: at I = 1 it needs delay + 1 stages."""
    return {"name": "long", "machine": TOY,
            "ops": [{"name": "A", "uses": {"tc": 1}}, {"name": "B", "uses": {"sfu": 1}}],
            "edges": [{"src": "A", "dst": "B", "delay": delay},
                      {"src": "B", "dst": "B", "distance": 1}]}


def test_stage_counts_too_short_for_the_longest_path_are_one_answer():
    """A delay of 10^6 over a lower bound of 1: the sweep may not walk I = 1, 2, ... nor
    S = 1, 2, ...: each run of cases the longest path rules out is one recorded answer, and
    together the answers still cover every case below the optimum."""
    m = model_from_dict(long_path(10**6))
    out = search(m, backend="cpsat", encoding="integer", strategy="sweep", max_stages=4,
                 isolate=False)
    assert out.optimal and out.schedule.stages <= 4 and len(out.attempts) <= 8
    short = [a for a in out.attempts if "longest path" in a.how]
    assert short[0].rules_out() == ((1, out.schedule.I - 1), (1, 4))
    covered = {(i, s) for a in out.attempts if (r := a.rules_out())
               for i in range(r[0][0], min(r[0][1], out.schedule.I - 1) + 1)
               for s in range(r[1][0], r[1][1] + 1)}
    assert covered == {(i, s) for i in range(1, out.schedule.I) for s in range(1, 5)}


def test_the_default_stage_bound_is_capped():
    from warpweave.core.bounds import DEFAULT_STAGES_CAP, bounds
    b = bounds(model_from_dict(long_path(10**6)))
    assert b.lower == 1 and b.min_length > 10**6
    assert b.default_max_stages() == DEFAULT_STAGES_CAP


def test_a_deadline_during_the_bounds_gives_a_run_with_what_is_known(fa_model):
    run = run_solve(fa_model, Options(time_limit=1e-9, isolate=False))
    o = run.outcome
    assert run.schedule is None and o.status == "unknown" and o.attempts == ()
    assert run.exit_status == 3 and not o.interrupted
    assert o.notes == ("time limit of 1e-09 s reached while computing the bounds (the lower "
                       "bound is without RecMII), before any solver call",)
    assert o.lower_bound == 2  # ResMII: the tensor core, without the dependence cycle


def test_ctrl_c_during_normalization_gives_a_run_with_the_bounds(fa_model, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("warpweave.pipeline.normalized_as", interrupted)
    run = run_solve(fa_model, Options(isolate=False))
    assert run.outcome.interrupted and run.exit_status == 3 and run.schedule is None
    assert run.outcome.notes == ("interrupted while normalizing costs, before any solver call",)
    assert run.outcome.bounds.rec_mii == 1  # computed before: kept


def test_auto_normalization_tries_a_bounded_number_of_units(monkeypatch):
    """A lower bound of 10^8 cycles would make 3/4..1 of 10^8/64 about 390,000 candidates."""
    m = model_from_dict({"name": "big", "machine": TOY, "ops": [
        {"name": "A", "cycles": 1000, "uses": {"tc": 1}}],
        "edges": [{"src": "A", "dst": "A", "delay": 10**8, "distance": 1}]})
    tried = []
    rounded = normalize._rounded
    monkeypatch.setattr(normalize, "_rounded", lambda model, u, check: tried.append(u) or
                        rounded(model, u, check))
    unit = normalize.auto_unit(m, 10**8)
    assert len(tried) <= normalize.CANDIDATES and 10**8 // 64 in tried
    assert 3 * (10**8 // 64) // 4 <= unit <= 10**8 // 64


def test_stating_a_large_problem_checks_the_deadline():
    """The IR checks the run's deadline every CHECK_EVERY variables and constraints, so an
    encoding of a thousand ops stops with the time limit instead of minutes later."""
    from warpweave import limits
    from warpweave.core.constraints import constraint_set
    from warpweave.core.registry import ENCODINGS
    ops = [{"name": f"v{k}", "uses": {"tc": 1}} for k in range(1000)]
    m = model_from_dict({"name": "wide", "machine": TOY, "ops": ops,
                         "edges": [{"src": "v0", "dst": "v0", "distance": 1}]})
    with limits.within(0.0), pytest.raises(limits.TimeUp):
        ENCODINGS.get("integer")(m, 1000, 2, constraint_set())


def test_a_long_loop_that_states_nothing_checks_the_deadline():
    """The encodings' loops over copy distances can be long and state nothing (windows already
    apart): `limits.checked` stops them at the run's deadline (the fuzzer found a solve that
    passed its time limit there)."""
    with pytest.raises(limits.TimeUp), limits.within(0.05):
        for _ in limits.checked(range(10**12), 4096):
            pass


def test_grace_outlasts_a_passed_deadline_and_a_ctrl_c_already_answered():
    """`limits.grace` (for a report's figures after a run stopped): the run's deadline or the
    grace, whichever ends later; a Ctrl-C latched before the block is not raised in it, a new
    one is, and the latch is back afterwards."""
    with limits.within(0.0), limits.latch_interrupts():
        with pytest.raises(limits.TimeUp):
            limits.check()
        limits._state.interrupted = True  # a Ctrl-C the run has answered
        with limits.grace(5.0):
            limits.check()
            assert 4.0 < limits.remaining() <= 5.0
        with limits.grace(0.0), pytest.raises(limits.TimeUp):
            limits.check()
        assert limits.interrupted()
        with pytest.raises(KeyboardInterrupt):
            limits.check()
    with limits.within(60.0), limits.grace(0.0):
        assert limits.remaining() > 59.0  # the run's deadline, when it ends later
    with limits.grace(0.0):
        assert limits.remaining() is None  # no deadline: none made


def test_the_reports_buffer_depths_run_within_the_deadline_or_a_grace(fa_model, monkeypatch):
    """`solve` plans the report's ring depths after the search: a run that ended at its time
    limit still gets them within REPORT_GRACE, and when they take longer they are left out
    with a note instead of running on (they took 5 s on 10,000 ops, past --time-limit)."""
    import time

    from warpweave import api
    real = api.run_solve

    def at_the_limit(*args, **kwargs):  # the search used all its time
        run = real(*args, **kwargs)
        time.sleep(limits.remaining() + 0.05)
        return run

    monkeypatch.setattr(api, "run_solve", at_the_limit)
    r = api.solve(fa_model, time_limit=0.5, isolate=False)
    assert r.schedule is not None and r.buffers is not None
    assert not any("buffer depths" in n for n in r.run.outcome.notes)

    def slow_depths(model, schedule):  # depths that would take minutes
        while True:
            limits.check()
            time.sleep(0.01)

    monkeypatch.setattr(api, "ring_depths", slow_depths)
    started = time.perf_counter()
    r = api.solve(fa_model, time_limit=0.5, isolate=False)
    assert time.perf_counter() - started < 0.5 + api.REPORT_GRACE + 1.0
    assert r.schedule is not None and r.buffers is None and "buffers" not in r.to_dict()
    assert r.run.outcome.notes[-1] == "buffer depths not computed (the time limit and 1 s more)"


GRACE = 4.0  # seconds past --time-limit: the interpreter's start, the raw check, the report


def test_a_large_model_ends_within_its_time_limit_with_exit_3(tmp_path):
    """Issue 19: `--time-limit` bounds the whole run on a model of thousands of ops (the
    heuristic's scheduling steps, the report's ring depths, normalization all check it).  A
    generated 5,000-op model with --time-limit 5 ran 12 s and exited 0 before; now it ends
    within the limit and GRACE, exit 3 (cut, not proven) with its best verified schedule."""
    import json
    import subprocess
    import sys
    import time

    from warpweave.bench.random_graphs import scale_graph_doc
    from warpweave.core.formats import schedule_from_dict
    from warpweave.core.verify import verify
    doc = scale_graph_doc(5000, 0)
    path = tmp_path / "g5000.json"
    path.write_text(json.dumps(doc))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "warpweave", "solve", str(path),
                           "--time-limit", "5", "--json"], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    assert seconds < 5 + GRACE, seconds
    assert done.returncode in (2, 3) and "Traceback" not in done.stderr, done.stderr
    answer = json.loads(done.stdout)
    assert not answer["optimal"]
    if answer["I"] is not None:  # the best schedule so far, verified
        m = model_from_dict(doc)
        assert verify(m, schedule_from_dict(answer, m)) == []
