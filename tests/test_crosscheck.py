"""Every encoding x every backend against the brute-force oracle, the verifier and each other.

Properties (each a test; parametrized cases are backends, or metamorphic relations):
- `test_every_I_S_agrees_with_the_oracle` (one spec per backend family) and
  `test_sat_variants_agree_with_the_oracle_at_every_I_S` (every other cardinality and PB encoding
  and SAT solver): for each (I, S) from I = 1 to just past the optimum, each encoding's problem is
  feasible exactly when the oracle finds a schedule, and its minimal L is the oracle's;
- `test_search_agrees_with_the_oracle`: the search's answer (status, I, L) equals the oracle's and
  a reference run's, and every (I, S) it asked about was answered as the oracle answers it;
- `test_returned_schedules_pass_every_checker`: what the search returns is valid for the verifier,
  after a JSON round trip of model and schedule, and for `tests/independent_check.py`;
- `test_same_seed_same_schedule`: a backend with a seed answers the same way twice;
- `test_relaxing_never_raises_the_optimum` and `test_scaling_costs`: metamorphic relations (and
  `test_a_larger_distance_can_raise_the_optimum`: one that is not);
- `test_regression`: the models in `tests/regressions/` (counterexamples found so far).

The session summary prints, per property, the number of examples generated and what they were,
and how many of all the models drawn had each feature of `strategies.FEATURES`.

A failing property writes its shrunk model to `tests/regressions/failed-<property>-<case>.json`
(see `crosscheck_support.keep_counterexample`); rename it and commit it to keep it.

Models are tiny (`strategies.tiny_models`) and the stage bound is 1-3, so the oracle can decide
them; when it exceeds its budget the comparison with it is limited to what it decided, and the
summary at the end of the session counts those examples.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from warpweave.core.formats import (
    load_model,
    model_from_dict,
    model_to_dict,
    schedule_from_dict,
    schedule_to_dict,
)
from warpweave.core.model import Model, WarpGroup
from warpweave.core.oracle import Oracle, OracleBudget
from warpweave.core.verify import verify
from warpweave.search import Outcome, search

from .crosscheck_support import (
    ENCODING_NAMES,
    FAMILY_SPECS,
    REGRESSIONS,
    SAT_VARIANTS,
    SPECS,
    count,
    describe,
    drawn,
    keep_counterexample,
    oracle,
    rejecting_constraints,
    scaled,
    search_range,
    solve_at,
    tally,
)
from .independent_check import broken_rules
from .strategies import tiny_model_docs

FOUND = ("OPTIMAL", "SAT")


@st.composite
def cases(draw, **require) -> tuple[Model, int]:
    """A tiny model and a stage bound for the search (1-3); its features are counted."""
    doc = draw(tiny_model_docs(**require))
    drawn(doc)
    return model_from_dict(doc), draw(st.integers(1, 3))


@pytest.fixture(scope="session")
def bug_dir(tmp_path_factory) -> Path:
    """Where the search writes the IR of a solve whose schedule the verifier rejects."""
    return tmp_path_factory.mktemp("search-bugs")


def answer(out: Outcome) -> tuple:
    s = out.schedule
    return (out.status, s.I if s else None, s.L if s else None)


def truth(model: Model, max_stages: int) -> tuple[tuple | None, int]:
    """The oracle's answer in `answer`'s form (None if undecided) and the I below which it showed
    every I infeasible."""
    top = search_range(model)
    try:
        best = oracle(model).optimum(max_stages, top)
    except OracleBudget as exc:
        return None, exc.below
    if best is None:
        return ("infeasible", None, None), top + 1
    return ("optimal", best.I, best.L), best.I


def explain(model: Model, encoding: str, witness) -> str:
    """Why an encoding may have missed the oracle's witness: the constraints rejecting it."""
    bad = rejecting_constraints(model, encoding, witness)
    return (f"constraints whose {encoding} encoding rejects the oracle's schedule: {bad}" if bad
            else "every constraint accepts the oracle's schedule alone (symmetry breaking, "
            "windows or the length encoding lose it)")


# ---------------------------------------------------------------------------------------------


def compare_every_I_S(spec: str, model: Model, K: int, known: tuple | None, below: int) -> int:
    """Each (I, S) from I = 1 to one past the oracle's optimum (at most 5 without one), every
    encoding solved by `spec`: feasible exactly when the oracle finds a schedule, with its L.
    Returns how many (I, S) the oracle decided."""
    top = min(search_range(model), known[1] + 1 if known and known[1] else 5, max(below, 1))
    decided = 0
    for I in range(1, top + 1):  # noqa: E741
        for S in range(1, K + 1):
            try:
                want = oracle(model).at(I, S)
            except OracleBudget:
                return decided
            decided += 1
            for enc in ENCODING_NAMES:
                status, got = solve_at(model, enc, spec, I, S)
                where = (f"{spec}/{enc} at I={I}, S={S}: {status} {describe(got)}; oracle: "
                         f"{describe(want.schedule)}")
                if want.feasible:
                    assert status == "OPTIMAL", f"{where}; {explain(model, enc, want.schedule)}"
                    bad = verify(model, got)
                    assert not bad, f"{where}; the verifier rejects it: {bad[0]}"
                    assert got.L == want.L, f"{where}; {explain(model, enc, want.schedule)}"
                else:
                    assert status == "UNSAT", where
    return decided


def check_every_I_S(prop: str, spec: str, model: Model, K: int) -> None:
    count(prop, spec)
    known, below = truth(model, K)
    def fails(m: Model) -> bool:
        try:
            compare_every_I_S(spec, m, K, *truth(m, K))
        except AssertionError:
            return True
        return False

    with keep_counterexample(prop, spec, model, fails=fails, max_stages=K):
        decided = compare_every_I_S(spec, model, K, known, below)
    tally(prop, "oracle decided the optimum" if known else "oracle undecided",
          f"{decided} (I, S) pairs" if decided < 4 else ">= 4 (I, S) pairs")


@pytest.mark.parametrize("spec", FAMILY_SPECS)
@scaled(8)
@given(case=cases())
def test_every_I_S_agrees_with_the_oracle(spec, case):
    check_every_I_S("test_every_I_S_agrees_with_the_oracle", spec, *case)


@pytest.mark.parametrize("spec", SAT_VARIANTS)
@scaled(3)
@given(case=cases(require=("rows", "memory", "regs")))
def test_sat_variants_agree_with_the_oracle_at_every_I_S(spec, case):
    """The same on models with weighted reservations, memory and registers, which every
    cardinality and PB encoding of the sat backend has to state."""
    check_every_I_S("test_sat_variants_agree_with_the_oracle_at_every_I_S", spec, *case)


_REFERENCE: dict[tuple[str, int], tuple] = {}


def reference(model: Model, max_stages: int, bug_dir: Path) -> tuple:
    """The answer of one fixed backend and encoding (cached per model and stage bound)."""
    key = (json.dumps(model_to_dict(model), sort_keys=True), max_stages)
    if key not in _REFERENCE:
        _REFERENCE[key] = answer(search(model, backend="cpsat", encoding="compact",
                                        max_stages=max_stages, bug_dir=bug_dir))
    return _REFERENCE[key]


def check_attempts(model: Model, out: Outcome, where: str) -> None:
    """Every question the search asked was answered as the oracle answers it."""
    for a in out.attempts:
        try:
            if a.phase == "relaxation":
                if a.status == "infeasible":  # claims: no stage count works at this I
                    wants = [oracle(model).at(a.I, S) for S in range(1, a.S + 1)]
                    assert not any(w.feasible for w in wants), \
                        f"{where}: relaxation infeasible at I={a.I}; oracle: " \
                        f"{[describe(w.schedule) for w in wants]}"
                continue
            want = oracle(model).at(a.I, a.S)
        except OracleBudget:
            return
        assert (a.status != "infeasible") == want.feasible, \
            f"{where}: {a.status} at I={a.I}, S={a.S} ({a.how}); oracle: {describe(want.schedule)}"
        if want.feasible:
            assert a.status == "optimal" and a.L == want.L, \
                f"{where}: L={a.L} at I={a.I}, S={a.S}; oracle: {describe(want.schedule)}"


@pytest.mark.parametrize("spec", FAMILY_SPECS)
@scaled(6)
@given(case=cases())
def test_search_agrees_with_the_oracle(spec, case, bug_dir):
    model, K = case
    count("test_search_agrees_with_the_oracle", spec)
    known, below = truth(model, K)
    ref = reference(model, K, bug_dir)
    with keep_counterexample("test_search_agrees_with_the_oracle", spec, model, max_stages=K):
        for enc in ENCODING_NAMES:
            # the sweep: its questions are per (I, S), which check_attempts asks the oracle
            out = search(model, backend=spec, encoding=enc, strategy="sweep", max_stages=K,
                         bug_dir=bug_dir)
            got, where = answer(out), f"{spec}/{enc} (max_stages={K})"
            note(f"{where}: {got}")
            if known is not None:
                assert got == known, f"{where}: {got}; oracle: {known}"
            else:
                assert got[1] is None or got[1] >= below, f"{where}: {got}; oracle: none < {below}"
            assert got == ref, f"{where}: {got}; cpsat/compact: {ref}"
            check_attempts(model, out, where)
    tally("test_search_agrees_with_the_oracle",
          f"oracle: {known[0]}" if known else "oracle undecided")


@scaled(40)
@given(case=cases(), spec=st.sampled_from(SPECS), enc=st.sampled_from(ENCODING_NAMES))
def test_returned_schedules_pass_every_checker(case, spec, enc, bug_dir):
    model, K = case
    count("test_returned_schedules_pass_every_checker")
    with keep_counterexample("test_returned_schedules_pass_every_checker", "", model,
                             backend=spec, encoding=enc, max_stages=K):
        out = search(model, backend=spec, encoding=enc, max_stages=K, bug_dir=bug_dir)
        s = out.schedule
        if s is not None:
            assert verify(model, s) == []
            model_doc = json.loads(json.dumps(model_to_dict(model)))
            schedule_doc = json.loads(json.dumps(schedule_to_dict(s)))
            again = schedule_from_dict(schedule_doc, model_from_dict(model_doc))
            assert again == s
            assert verify(model_from_dict(model_doc), again) == []
            assert broken_rules(model_doc, schedule_doc) == set()
    tally("test_returned_schedules_pass_every_checker", out.status, spec.partition(":")[0])


@pytest.mark.parametrize("spec", FAMILY_SPECS)
@scaled(3)
@given(case=cases(), enc=st.sampled_from(ENCODING_NAMES), seed=st.integers(0, 3))
def test_same_seed_same_schedule(spec, case, enc, seed, bug_dir):
    model, K = case
    count("test_same_seed_same_schedule", spec)
    with keep_counterexample("test_same_seed_same_schedule", spec, model, encoding=enc,
                             max_stages=K, seed=seed):
        runs = [search(model, backend=spec, encoding=enc, max_stages=K, seed=seed,
                       bug_dir=bug_dir) for _ in range(2)]
        first, second = ([(a.phase, a.I, a.S, a.status, a.L) for a in r.attempts] for r in runs)
        assert first == second
        assert runs[0].schedule == runs[1].schedule
    tally("test_same_seed_same_schedule", runs[0].status)


# ---------------------------------------------------------------------------------------------
# Metamorphic relations
#
# Each relaxation below turns a model M into M' such that every schedule valid for M is valid for
# M' (with the same I, L, start times and groups).  Hence, within the same stage bound, the
# optimal I of M' is at most that of M, and at equal I its minimal L is at most that of M.  The
# search finds the true optimum even where M' has a smaller `Bounds.i_upper` (a smaller delay or
# one edge less shrinks it): that bound's proof says a schedule at a larger I implies one at a
# smaller I; a search that stopped too early is a failure here too.
#
# Why each keeps every valid schedule valid (rule numbers of DESIGN section 3):
# - more capacity on a unit, a higher register limit, more memory, more warps in a group: the one
#   rule that reads the number (2, 8, 5, 6) only gets a larger right-hand side;
# - an extra warp group (never the variable-latency group): no op is on it, so its live registers
#   are 0 <= reg_limit and nobody occupies it; every other rule is unchanged;
# - deleting an edge: rule 1 loses a term; a lifetime ends at the latest use, so with one use less
#   it ends no later (rule 4, and uses issue after the value by rule 4's premise): live sets shrink
#   (5, 8); the trigger of rule 9 (an incoming blocking or cross-group data edge) only weakens;
# - deleting an op with its edges: as deleting its edges, and its own instances leave every sum;
# - a smaller delay or spill cost, `order` instead of `data` (no lifetime, no spill, no
#   cross-group trigger), no `blocking`: rules 1 and 9 only weaken, lifetimes only shrink;
# - `async` (occupancy 1 <= cycles in rule 9), fewer regs or a smaller footprint, fewer warps
#   needed: each enters one rule as a smaller left-hand side.
# Not a relaxation (and false as a metamorphic relation): a larger edge distance.  Rule 1 gets
# weaker, but the value's use moves to a later copy or beyond Q, so the value lives longer (rule
# 4) and memory or registers may no longer fit: see `test_a_larger_distance_can_raise_the_optimum`.


def _pick(draw, items):
    return draw(st.sampled_from(list(items)))


def _more(draw, m: Model, kind: str, field: str, most: int) -> Model:
    """One of the machine's units / warp groups / memories with `field` 1 to `most` larger."""
    items = getattr(m.machine, kind)
    k = draw(st.integers(0, len(items) - 1))
    new = attrs.evolve(items[k], **{field: getattr(items[k], field) + draw(st.integers(1, most))})
    return m.replace(machine=attrs.evolve(m.machine, **{kind: items[:k] + (new,) + items[k + 1:]}))


def more_capacity(draw, m: Model) -> Model:
    return _more(draw, m, "units", "capacity", 2)


def higher_register_limit(draw, m: Model) -> Model:
    return _more(draw, m, "warp_groups", "reg_limit", 4)


def more_warps(draw, m: Model) -> Model:
    return _more(draw, m, "warp_groups", "warps", 3)


def more_memory(draw, m: Model) -> Model:
    return _more(draw, m, "memories", "capacity", 3)


def extra_group(draw, m: Model) -> Model:
    """A new group: a copy of an existing one (a symmetric twin) or any warps / limit."""
    like = _pick(draw, m.machine.warp_groups)
    new = WarpGroup(f"g{len(m.machine.warp_groups)}", like.warps, like.reg_limit) \
        if draw(st.booleans()) else \
        WarpGroup(f"g{len(m.machine.warp_groups)}", draw(st.sampled_from([1, 2, 4])),
                  draw(st.integers(0, 8)))
    groups = [*m.machine.warp_groups, new]
    return m.replace(machine=attrs.evolve(m.machine, warp_groups=groups))


def delete_edge(draw, m: Model) -> Model:
    k = draw(st.integers(0, len(m.edges) - 1))
    return m.replace(edges=m.edges[:k] + m.edges[k + 1:])


def delete_op(draw, m: Model) -> Model:
    v = _pick(draw, m.op_names)
    return m.replace(ops=[op for op in m.ops if op.name != v],
                     edges=[e for e in m.edges if v not in (e.src, e.dst)])


def relax_edge(draw, m: Model) -> Model:
    k = draw(st.integers(0, len(m.edges) - 1))
    e = m.edges[k]
    how = draw(st.sampled_from(["delay", "order", "unblock"]))
    if how == "delay":
        e = attrs.evolve(e, delay=draw(st.integers(0, e.delay)))
    elif how == "order":
        e = attrs.evolve(e, kind="order")
    else:
        e = attrs.evolve(e, blocking=False)
    return m.replace(edges=m.edges[:k] + (e,) + m.edges[k + 1:])


def relax_op(draw, m: Model) -> Model:
    op = _pick(draw, m.ops)
    how = draw(st.sampled_from(["async", "spill", "regs", "footprint", "warps"]))
    if how == "async":
        new = attrs.evolve(op, is_async=True)
    elif how == "footprint":
        new = attrs.evolve(op, footprint={k: draw(st.integers(0, v)) for k, v in op.footprint})
    else:
        field = {"spill": "spill_cost", "regs": "regs", "warps": "warps"}[how]
        new = attrs.evolve(op, **{field: draw(st.integers(0, getattr(op, field)))})
    return m.replace(ops=[new if x == op else x for x in m.ops])


RELAXATIONS = {f.__name__: f for f in (
    more_capacity, higher_register_limit, more_warps, more_memory, extra_group, delete_edge,
    delete_op, relax_edge, relax_op)}
# What a relation needs of the model (tiny_model_docs flags / sizes).
NEEDS = {"more_memory": {"require": ("memory",)}, "delete_edge": {"min_edges": 1},
         "relax_edge": {"min_edges": 1}, "delete_op": {"min_ops": 3}}


def optimum(out: Outcome) -> tuple[float, float]:
    """(I, L) of an answer; infinity when there is no schedule."""
    assert out.status in ("optimal", "infeasible"), out.status
    s = out.schedule
    return (s.I, s.L) if s else (float("inf"), float("inf"))


@pytest.mark.parametrize("relation", list(RELAXATIONS))
@scaled(6)
@given(data=st.data(), spec=st.sampled_from(SPECS), enc=st.sampled_from(ENCODING_NAMES))
def test_relaxing_never_raises_the_optimum(relation, data, spec, enc, bug_dir):
    model, K = data.draw(cases(**NEEDS.get(relation, {})), label="model")
    relaxed = RELAXATIONS[relation](data.draw, model)
    count("test_relaxing_never_raises_the_optimum", relation)
    with keep_counterexample("test_relaxing_never_raises_the_optimum", relation, model, relaxed,
                             backend=spec, encoding=enc, max_stages=K):
        before, after = (optimum(search(m, backend=spec, encoding=enc, max_stages=K,
                                        bug_dir=bug_dir)) for m in (model, relaxed))
        note(f"{relation}: {before} -> {after} ({spec}/{enc}, max_stages={K})")
        assert after <= before  # lexicographic: a smaller I, or the same I and L no larger
    tally("test_relaxing_never_raises_the_optimum",
          "improved" if after < before else "same")


def scale(m: Model, k: int) -> Model:
    """Every cycle count, delay and spill cost times k; each reservation row held for k cycles."""
    ops = [attrs.evolve(op, cycles=k * op.cycles, spill_cost=k * op.spill_cost,
                        rrt=[row for row in op.rrt for _ in range(k)]) for op in m.ops]
    edges = [attrs.evolve(e, delay=k * e.delay) for e in m.edges]
    return m.replace(ops=ops, edges=edges)


# Scaling by k.  If (I, L, M, A) is valid for M, then (kI, kL, kM, A) is valid for scale(M, k):
# - S = ceil(kL / kI) = ceil(L / I): the same stage count, so the stage bound is respected, and
#   T' = kT, tau' = k*tau, and lifetimes ending at a use end at k times that issue;
# - rule 1: every term of M(v) + delta*I >= M(u) + d + x is multiplied by k; rule 3 likewise;
# - rule 2: kM(v) + c' = k(M(v) + c'//k) + c'%k, so row c'//k lands in slot k*r + c'%k where
#   r = (M(v) + c'//k) mod I: slot (r, j) of the scaled table sums exactly slot r of the original;
# - rules 4, 5, 8: for t' in [0, kT], k*tau <= t' < k*end iff tau <= t'//k < end, and a value live
#   to the end of Q is live at t' iff tau <= t'//k; so the live set at t' is the one at t'//k;
# - rule 9: k*tau(o) <= k*tau(v) < k*tau(o) + occ' with occ' = k*cycles, or 1 for an async op, iff
#   tau(o) <= tau(v) < tau(o) + occ (for async: iff tau(v) = tau(o));
# - rules 6, 7 do not involve time.
# So the optimal I of the scaled model is at most k times the original's (and its minimal L at most
# kL if the I is exactly k times).  It can be smaller: a recurrence of delay 3 over distance 2 needs
# I = 2 (ceil(3/2)) but only I = 3 < 4 after scaling by 2.  `Bounds.i_upper` scales by k exactly,
# so the search's range covers kI.  No bound from below holds in general: rounding an I' of the
# scaled model up to a multiple of k need not preserve rule 2 (feasibility is not monotone in I).


@scaled(10)
@given(case=cases(max_cycles=2), k=st.integers(2, 3), spec=st.sampled_from(SPECS),
       enc=st.sampled_from(ENCODING_NAMES))
def test_scaling_costs(case, k, spec, enc, bug_dir):
    model, K = case
    count("test_scaling_costs")
    scaled_model = scale(model, k)
    with keep_counterexample("test_scaling_costs", "", model, scaled_model, k=k, backend=spec,
                             encoding=enc, max_stages=K):
        i0, l0 = optimum(search(model, backend=spec, encoding=enc, max_stages=K,
                                bug_dir=bug_dir))
        if i0 == float("inf"):  # nothing to compare (and the scaled search would be long)
            tally("test_scaling_costs", "no schedule to scale")
            return
        i1, l1 = optimum(search(scaled_model, backend=spec, encoding=enc, max_stages=K,
                                bug_dir=bug_dir))
        note(f"x{k}: I={i0}, L={l0} -> I={i1}, L={l1}")
        assert i1 <= k * i0
        if i1 == k * i0:
            assert l1 <= k * l0
    tally("test_scaling_costs", f"scaled I {'<' if i1 < k * i0 else '='} k*I")


# ---------------------------------------------------------------------------------------------
# Counterexamples found so far (tests/regressions/*.json, model files), replayed: every (I, S) and
# the search, every encoding, three backend families, stage bounds 1-3.

REGRESSION_FILES = sorted(REGRESSIONS.glob("*.json"))


@pytest.mark.parametrize("path", REGRESSION_FILES, ids=lambda p: p.stem)
def test_regression(path, bug_dir):
    model = load_model(path)
    for K in (1, 2, 3):
        known, below = truth(model, K)
        for spec in ("sat", "cpsat", "highs"):
            compare_every_I_S(spec, model, K, known, below)
            for enc in ENCODING_NAMES:
                out = search(model, backend=spec, encoding=enc, strategy="sweep", max_stages=K,
                             bug_dir=bug_dir)  # per (I, S) questions, for check_attempts
                where = f"{path.name}: {spec}/{enc} (max_stages={K})"
                assert known is not None, f"{path.name}: the oracle cannot decide it"
                assert answer(out) == known, f"{where}: {answer(out)}; oracle: {known}"
                check_attempts(model, out, where)


def test_a_larger_distance_can_raise_the_optimum():
    """Why a larger distance is not among the relaxations: A's value, used by B `distance`
    iterations later, fits the memory alone.  With distance 0 the loop holds A's value one
    copy at a time; with distance 2 the values of the last two iterations are both read after
    the loop, so every trip count holds two at its end and no I fits one slot of memory (the
    paper's Q_S, which has no copies beyond S and no entering values, loses only I = 1:
    `--semantics paper-q`)."""
    def with_distance(d: int) -> Model:
        return model_from_dict({"name": f"distance-{d}", "machine": {
            "memories": {"smem": 1}, "warp_groups": [{"name": "g"}]},
            "ops": [{"name": "A", "footprint": {"smem": 1}}, {"name": "B"}, {"name": "C"}],
            "edges": [{"src": "A", "dst": "B", "distance": d},
                      {"src": "A", "dst": "C", "kind": "order"}]})

    for d, semantics, want in ((0, "loop", (1, 2)), (2, "loop", None), (0, "paper-q", (1, 2)),
                               (2, "paper-q", (2, 2))):
        m = with_distance(d)
        out = search(m, backend="sat", max_stages=2, semantics=semantics)
        best = Oracle(m, semantics=semantics).optimum(2, search_range(m))
        if want is None:
            assert out.status == "infeasible" and best is None
        else:
            assert optimum(out) == want and (best.I, best.L) == want
