"""Golden tests: the published warp roles and pipeline shapes, asked as questions (issue 15).

Each test takes one statement of a publication - quoted, with its source, in
`warpweave.kernels.questions` and cited in the test's docstring - and asks it of a library kernel
at the kernel's optimal I under the loop-exact contract (DESIGN section 3), as `warpweave
reproduce` does: the shape imposed, and forbidden (`warpweave.reproduce.ask`).  The verdict is a
property of the model, not of the solver's pick among optima: **forced** (every optimal schedule
has it), **allowed** (some have it, some not) or **excluded** (none has it).  Where the model's
verdict differs from the publication, the test asserts what the model says and
docs/reproduction.md says why.  The decisions are at the optimal I in the solver's units, within
the search's stage bound.  Where it is cheap a case is asked on the neutral inventory too
(`inventory=neutral`: equal groups shaped like no published launch), so that a role allowed or
forced there is not one built into the launch.
"""

from __future__ import annotations

import functools
import itertools

import pytest

from warpweave.core.bounds import bounds
from warpweave.core.schedule import Schedule, straight_line
from warpweave.core.verify import verify
from warpweave.kernels.questions import TOPICS, Question
from warpweave.kernels.roles import Require
from warpweave.pipeline import Options, load_target, run_solve
from warpweave.reproduce import ALLOWED, FORCED, Answer, Asker, Settings, ask

from .conftest import ROOT

MODELS = ROOT / "benchmarks" / "models"


@functools.cache
def asker(kernel: str, machine: str | None = None, *params: str) -> Asker:
    """The kernel's optimum in units (`--normalize units`, as `warpweave reproduce` asks:
    decisions in raw cycles take minutes each), checked (proven optimal there, valid in raw
    cycles), ready for questions at its I."""
    run = run_solve(load_target(kernel, machine, params),
                    Options(isolate=False, normalize="units", plan=False))
    assert run.exit_status == 0, (run.outcome.status, run.raw_violations)
    assert verify(run.raw, run.schedule) == []
    return Asker(run, Settings(isolate=False, reach=False))


def question(topic: str, key: str) -> Question:
    return next(q for t in TOPICS if t.key == topic for q in t.questions if q.key == key)


def answer(topic: str, key: str, kernel: str, machine: str | None, *params: str) -> Answer:
    """The question's verdict at the kernel's optimal I, as `warpweave reproduce` gives it (an
    excluded shape's deletion test included)."""
    a = asker(kernel, machine, *params)
    return ask(a, question(topic, key), a.run.raw)


def feasible_without(constraint: str, topic: str, key: str, kernel: str, machine: str | None,
                     *params: str, holds: bool = True) -> bool:
    """Is the question's shape (its negation with `holds=False`) feasible at the optimal I once
    `constraint` is dropped?  One decision of the deletion test, the one a docstring names."""
    a = asker(kernel, machine, *params)
    shape = question(topic, key).shape(a.run.raw)
    return a.decide([Require(shape, holds)], without=[constraint])[0] == "feasible"


# ---------------------------------------------------------------------------------------------
# fa-simplified: Twill paper section 3.1, Figure 1


def test_fa_simplified_rediscovers_figure_1():
    """I = 2, L = 4 (Figure 1d), and the QK GEMM of iteration i+1 issues while the exponential
    of iteration i is in flight, before its PV GEMM (Figure 1e/1h: FA3's pipeline)."""
    run = asker("fa-simplified").run
    s = run.schedule
    assert (s.I, s.L) == (2, 4)
    q = straight_line(run.raw, s)
    p0, s1, o0 = q.instance("P", 0), q.instance("S", 1), q.instance("O", 0)
    assert p0.issue <= s1.issue < o0.issue


def test_fa_simplified_every_schedule_at_i_2_hoists_the_next_qk():
    """Not the solver's choice: every valid schedule at I = 2 (L <= 4, one group) issues S of
    the next iteration before O of this one; without the hoist only I = 3 is possible
    (Figure 1g)."""
    model = load_target("fa-simplified")
    groups = dict.fromkeys("SPO", "g0")
    valid = [Schedule(model.name, 2, 4, dict(zip("SPO", t, strict=True)), groups)
             for t in itertools.product(range(4), repeat=3)]
    valid = [s for s in valid if not verify(model, s)]
    assert valid
    assert all(s.start["S"] + s.I < s.start["O"] for s in valid)


# ---------------------------------------------------------------------------------------------
# fa3-fwd on h100: FA3 (Shah et al. 2024) sections 3.1-3.2; Twill paper 6.2.1; Modular part 1

FA3_2 = ("fa3-fwd", "h100", "subtiles=2")


def test_fa3_saturates_the_tensor_core_and_the_producer_warp_is_the_variable_latency_rule():
    """Two Q tiles (FA3's two consumer warpgroups): I = ResMII, the tensor core busy every cycle.
    "A dedicated producer warp group runs the TMA loads" (Modular, Level 1): forced - by the
    variable-latency rule (Twill's VARIABLE LATENCY constraint, DESIGN rule 7), not by a cost."""
    run = asker(*FA3_2).run
    assert run.outcome.schedule.I == run.outcome.lower_bound == bounds(run.model).res_mii
    assert answer("fa3-fwd", "producer warp", *FA3_2).verdict == FORCED
    assert feasible_without("variable_latency", "fa3-fwd", "producer warp", *FA3_2, holds=False)


def test_fa3_ping_pong_is_forced_given_fa3s_roles_and_allowed_without_them():
    """"Twill's functional unit capacity constraints recover the ping-pong scheduling strategy
    described in FA3" (Twill 6.2.1): with FA3's roles (tile t on consumer t) every optimum
    ping-pongs; without them the capacity constraints leave it open - some optima keep each
    tile's exponential away from the other tile's GEMMs.  (Forced given the roles implies the
    roles are among the optima; `warpweave reproduce` shows they are not forced.)"""
    assert answer("fa3-fwd", "ping-pong, given the consumer roles", *FA3_2).verdict == FORCED
    assert answer("fa3-fwd", "ping-pong", *FA3_2).verdict == ALLOWED


def test_fa3_intra_warpgroup_pipeline_in_both_tiles_and_in_one_is_allowed():
    """FA3's software pipeline in each consumer (QK(j+1) issued before softmax(j) ends; FA3
    3.2) and Twill's variant, the pipeline in one warp group only (Twill 6.2.1): both are among
    the optima, neither is forced."""
    assert answer("fa3-fwd", "intra-warpgroup overlap in both tiles", *FA3_2).verdict == ALLOWED
    assert answer("fa3-fwd", "intra-warpgroup overlap in one tile only", *FA3_2).verdict == \
        ALLOWED


def test_fa3_two_consumer_warpgroups_are_among_the_optima():
    """FA3 3.1: two consumer warpgroups, each computing the attention of its own Q tile.  At the
    tensor-core bound (FA3's inventory) FA3's roles are allowed: some optima have them, others
    assign the ops otherwise."""
    assert answer("fa3-fwd", "two consumer warpgroups", *FA3_2).verdict == ALLOWED


FA3_2_NEUTRAL = (*FA3_2, "inventory=neutral")


def test_fa3_on_the_neutral_inventory_the_producer_is_forced_and_two_consumers_allowed():
    """The same questions on the neutral inventory (three 4-warp groups at 160 registers, four
    single warps at 32: no group sized for a role).  Still I = ResMII = 2048.  "A dedicated
    producer warp group runs the TMA loads" (Modular, Level 1): forced - by the variable-latency
    rule, which designates one single warp on this inventory too.  FA3's two consumer
    warpgroups (FA3 3.1): allowed, found on groups shaped like no published launch."""
    run = asker(*FA3_2_NEUTRAL).run
    assert [(g.warps, g.reg_limit) for g in run.model.machine.warp_groups] == \
        [(4, 160)] * 3 + [(1, 32)] * 4
    assert run.outcome.schedule.I == run.outcome.lower_bound == bounds(run.model).res_mii
    assert run.schedule.I == 2048
    assert answer("fa3-fwd", "producer warp", *FA3_2_NEUTRAL).verdict == FORCED
    assert answer("fa3-fwd", "two consumer warpgroups", *FA3_2_NEUTRAL).verdict == ALLOWED


def test_fa3_one_tile_cannot_reach_the_tensor_core_bound_on_one_consumer():
    """Modular's 8-op loop (one Q tile): "A separate consumer warp group runs everything else" is
    excluded at the tensor-core bound I = 1024: two blocking GEMMs 512 cycles apart meet the
    softmax on one warpgroup (the concurrency rule) - FA3's own reason for a second consumer."""
    a = asker("fa3-fwd", "h100")
    shape = question("fa3-fwd-one-tile", "one consumer runs the tile").shape(a.run.raw)
    assert a.I * a.run.normalized.scale == 1024
    assert a.decide([Require(shape)])[0] == "infeasible"           # excluded
    assert feasible_without("concurrency", "fa3-fwd-one-tile", "one consumer runs the tile",
                            "fa3-fwd", "h100")


# ---------------------------------------------------------------------------------------------
# gemm on b200: CUTLASS sm100 warp-specialized GEMM; "Unweaving warp specialization"


def test_gemm_b200_producer_warp_is_forced_and_the_mma_warp_allowed():
    """At the tensor-core bound (I = ResMII = 4096, two TMEM accumulators) "the TMA warp issue[s]
    copies" (Unweaving warp specialization) in every optimum, and every MMA alone on one warp
    (CUTLASS sm100's MMA warp) is among the optima, not required."""
    run = asker("gemm", "b200").run
    assert run.outcome.schedule.I == run.outcome.lower_bound == bounds(run.model).res_mii
    assert answer("gemm-b200", "producer warp", "gemm", "b200").verdict == FORCED
    assert answer("gemm-b200", "MMA warp", "gemm", "b200").verdict == ALLOWED


def test_gemm_b200_on_the_neutral_inventory_the_producer_is_forced_and_the_mma_warp_allowed():
    """The same two questions on the neutral inventory (equal 160-register groups, single warps
    at 32): still I = ResMII; the TMA warp (Unweaving warp specialization) forced, by the
    variable-latency rule; every MMA alone on one warp (CUTLASS sm100) allowed."""
    target = ("gemm", "b200", "inventory=neutral")
    run = asker(*target).run
    assert run.model.machine.variable_latency_group == "w15"
    assert run.outcome.schedule.I == run.outcome.lower_bound == bounds(run.model).res_mii
    assert answer("gemm-b200", "producer warp", *target).verdict == FORCED
    assert answer("gemm-b200", "MMA warp", *target).verdict == ALLOWED


# ---------------------------------------------------------------------------------------------
# gemm on h100, two output tiles: CUTLASS sm90 warp-specialized GEMM (ping-pong / cooperative)

GEMM_H100_2 = ("gemm", "h100", "subtiles=2")


def test_gemm_h100_two_tiles_force_the_producer_and_allow_two_consumers():
    """CUTLASS's sm90 kernels: a producer warpgroup and two consumer warpgroups, each on its own
    output tile.  With two tiles per iteration I = ResMII = 8192 (2 x 4096: the tensor core
    busy every cycle, where one tile stops at 4480).  "The TMA warp issue[s] copies and
    notifies the Tensor Core warps" (Unweaving warp specialization): forced.  Each tile's MMAs
    and epilogue on its own consumer group: allowed."""
    run = asker(*GEMM_H100_2).run
    assert run.outcome.schedule.I == run.outcome.lower_bound == bounds(run.model).res_mii
    assert run.schedule.I == 8192
    assert answer("gemm-h100", "producer warp", *GEMM_H100_2).verdict == FORCED
    assert answer("gemm-h100", "two consumer warpgroups", *GEMM_H100_2).verdict == ALLOWED


# ---------------------------------------------------------------------------------------------
# fa4-fwd on b200: FA4 flash_fwd_sm100.py (warp roles); Twill paper 6.2.2, Figure 9


def test_fa4_load_warp_is_forced():
    """FA4's warp ids (flash_fwd_sm100.py:300-306: "load 14"), and Twill 6.2.2: "variable-latency
    operations (green) ... onto separate warps": the TMA loads alone on one warp is forced at
    the optimal I (3610 cycles, 95 units of 38) - by the variable-latency rule, as for FA3."""
    run = asker("fa4-fwd", "b200").run
    assert run.schedule.I == 3610
    assert answer("fa4-fwd", "load warp", "fa4-fwd", "b200").verdict == FORCED


@pytest.mark.slow
def test_fa4_mma_warp_needs_the_hand_offs_and_tmem_together_to_be_excluded():
    """FA4's MMA warp (the four MMAs alone on one warp) at the optimal I: feasible once the
    hand-offs (rule 1: P and the corrected O reach PV through an mbarrier across groups) or the
    Tensor Memory capacity are dropped, and two units above the optimum the decision's schedule
    has every FA4 role besides it - load warp, two softmax groups, a correction group.  That the
    shape is infeasible at the optimum with both (docs/reproduction.md: 170 s of SAT) is left to
    `warpweave reproduce`.  70-90 s under load 5-7 (the optimal-I search, then three
    decisions): the issue's headline question, so it stays."""
    a = asker("fa4-fwd", "b200")
    assert feasible_without("cross_warp_spill", "fa4-fwd", "MMA warp", "fa4-fwd", "b200")
    assert feasible_without("memory", "fa4-fwd", "MMA warp", "fa4-fwd", "b200")
    q = question("fa4-fwd", "all of FA4's roles")
    assert a.decide([Require(q.shape(a.run.raw))], I=a.I + 2)[0] == "feasible"


# ---------------------------------------------------------------------------------------------
# fa-bwd on h100: Twill paper 6.3.1 (FA3's backward pass)


def test_fa_bwd_h100_every_optimum_overlaps_iterations_and_registers_do_not_decide_it():
    """Twill 6.3.1: on Hopper the backward pass "could not [exploit ILP] across iterations due
    to register capacity".  In the model (64x128 tile, FA3's inventory) it differs: I = ResMII
    = 2560, no cross-iteration overlap is excluded at that I - by the tensor core's capacity
    (dropped, it is feasible) and not by the registers (dropped, still infeasible) - and the
    optimum's loop fits its registers in every iteration (the loop semantics verified it)."""
    a = asker("fa-bwd", "h100")
    run = a.run
    assert run.outcome.schedule.I == run.outcome.lower_bound == bounds(run.model).res_mii
    shape = question("fa-bwd-h100", "no cross-iteration ILP").shape(run.raw)
    assert a.decide([Require(shape)])[0] == "infeasible"           # excluded
    assert feasible_without("capacity", "fa-bwd-h100", "no cross-iteration ILP", "fa-bwd", "h100")
    assert not feasible_without("register_limit", "fa-bwd-h100", "no cross-iteration ILP",
                                "fa-bwd", "h100")


def test_fa_bwd_h100_on_the_neutral_inventory_overlap_is_forced_by_the_tensor_core_too():
    """Twill 6.3.1 (as above) asked on the neutral inventory (equal 160-register groups): the
    same answer as on FA3's - I = ResMII = 2560, no cross-iteration overlap excluded, feasible
    once the tensor core's capacity is dropped and not once the register limit is."""
    target = ("fa-bwd", "h100", "inventory=neutral")
    a = asker(*target)
    run = a.run
    assert [(g.warps, g.reg_limit) for g in run.model.machine.warp_groups] == \
        [(4, 160)] * 3 + [(1, 32)] * 4
    assert run.outcome.schedule.I == run.outcome.lower_bound == bounds(run.model).res_mii
    shape = question("fa-bwd-h100", "no cross-iteration ILP").shape(run.raw)
    assert a.decide([Require(shape)])[0] == "infeasible"           # excluded
    assert feasible_without("capacity", "fa-bwd-h100", "no cross-iteration ILP", *target)
    assert not feasible_without("register_limit", "fa-bwd-h100", "no cross-iteration ILP",
                                *target)
