"""Every published role as a question: what FA3, FA4, the FlashAttention backward passes and
warp-specialized GEMMs do, quoted from their publications, stated as `roles.Shape`s of our models.

A `Topic` is one kernel configuration and the publications' statements about it; each
`Question` is one statement (with its quote and source) and the shape that says it.  The cases
ask each topic on the published inventory (the launch the publication uses) and on the neutral
one (`machines.gpu.NEUTRAL_GROUPS`), and where the publication varies the budget, on that too.
`warpweave.kernels.reproduce` answers them: forced, allowed or excluded at the optimal I.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from warpweave.core.model import Model
from warpweave.kernels.roles import (
    All,
    Alone,
    Any,
    Apart,
    IssuedBeforeEnd,
    Not,
    OnWarps,
    Sequential,
    Shape,
    Together,
    WindowsOverlap,
)

ShapeFor = Callable[[Model], Shape]


@attrs.frozen
class Question:
    """A published statement: its key, what it says (quoted), where, and the shape."""

    key: str
    claim: str
    source: str
    shape: ShapeFor
    given: ShapeFor | None = None     # asked among the schedules that have this shape

    def to_dict(self, model: Model) -> dict:
        d = {"key": self.key, "claim": self.claim, "source": self.source,
             "shape": self.shape(model).describe()}
        if self.given is not None:
            d["given"] = self.given(model).describe()
        return d


@attrs.frozen
class Case:
    """A kernel on a machine with parameters: `inventory` names the launch it is asked on."""

    label: str
    kernel: str
    machine: str
    params: tuple[str, ...] = ()
    inventory: str = "published"

    def target(self) -> tuple[str, str, tuple[str, ...]]:
        extra = ("inventory=neutral",) if self.inventory == "neutral" else ()
        return self.kernel, self.machine, (*self.params, *extra)


@attrs.frozen
class Topic:
    key: str
    title: str
    cases: tuple[Case, ...]
    questions: tuple[Question, ...]


def _both(label: str, kernel: str, machine: str, *params: str,
          published: str = "published") -> tuple[Case, ...]:
    return (Case(f"{label}, {published} inventory", kernel, machine, params),
            Case(f"{label}, neutral inventory", kernel, machine, params, "neutral"))


def _vl_ops(m: Model) -> list[str]:
    return [op.name for op in m.ops if op.variable_latency]


def _compute_ops(m: Model) -> list[str]:
    return [op.name for op in m.ops if not op.variable_latency]


def _with(m: Model, prefix: str) -> list[str]:
    return [v for v in m.op_names if v.startswith(prefix)]


# ---------------------------------------------------------------------------------------------
# FA3 forward on Hopper

FA3_TILE = ("qk", "rowmax", "softmax", "cast", "rescale", "pv")
TWILL = "Twill paper (Soi, Yadav et al.)"
FA3 = "FA3 paper (Shah et al. 2024)"
MODULAR = "Modular, Software Pipelining for GPU Kernels, part 1 (Level 1: inter-warp-group)"


def _alone_on_one_warp(ops: list[str], text: str) -> Shape:
    return All(Alone(*ops), OnWarps(ops[0], 1), text=text)


def _producer(m: Model) -> Shape:
    return _alone_on_one_warp(_vl_ops(m), "the TMA loads alone on one warp")


def _fa3_consumers(m: Model) -> Shape:
    return All(Together(*(f"{k}0" for k in FA3_TILE)), Together(*(f"{k}1" for k in FA3_TILE)),
               Apart("qk0", "qk1"), text="tile t's six ops on consumer t, the tiles apart")


def _fa3_pingpong(m: Model) -> Shape:
    def under(t: int) -> Shape:
        o = 1 - t
        return Any(WindowsOverlap(f"softmax{t}", "sfu", f"qk{o}", "tc"),
                   WindowsOverlap(f"softmax{t}", "sfu", f"pv{o}", "tc"))
    return All(under(0), under(1), text="each tile's exponential runs while the tensor core "
                                        "works on a GEMM of the other tile")


def _fa3_intra(m: Model) -> Shape:
    return All(IssuedBeforeEnd("qk0", "softmax0"), IssuedBeforeEnd("qk1", "softmax1"),
               text="in both tiles, QK(j+1) issues before softmax(j) ends")


def _fa3_intra_one(m: Model) -> Shape:
    a, b = IssuedBeforeEnd("qk0", "softmax0"), IssuedBeforeEnd("qk1", "softmax1")
    return Any(All(a, Not(b)), All(Not(a), b),
               text="in exactly one tile, QK(j+1) issues before softmax(j) ends")


FA3_FWD = Topic(
    "fa3-fwd", "FA3 forward on H100 (two Q tiles, FA3's two consumer warpgroups)",
    _both("fa3-fwd h100 subtiles=2", "fa3-fwd", "h100", "subtiles=2", published="FA3's"),
    (Question("producer warp",
              "\"A dedicated producer warp group runs the TMA loads. A separate consumer warp "
              "group runs everything else.\"", MODULAR, _producer),
     Question("two consumer warpgroups",
              "two consumer warpgroups, each computing the attention of its own Q tile",
              f"{FA3}, section 3.1", _fa3_consumers),
     Question("ping-pong",
              "\"Twill's functional unit capacity constraints recover the ping-pong scheduling "
              "strategy described in FA3: since only one operation may use the TC at a time, "
              "Twill skews groups of warps so that one issues exponentials while the other "
              "uses the TC.\"", f"{TWILL}, section 6.2.1", _fa3_pingpong),
     Question("ping-pong, given the consumer roles",
              "ping-pong scheduling: \"schedules the GEMM from one sub-tile while the "
              "exponential from another sub-tile executes\"", f"{TWILL}, section 6.2.1; "
              f"{FA3}, section 3.1", _fa3_pingpong, given=_fa3_consumers),
     Question("intra-warpgroup overlap in both tiles",
              "a software pipeline \"that extracts one GEMM into the loop's prologue so that "
              "latency of the exponential is not exposed\" (FA3's, in each consumer)",
              f"{TWILL}, section 6.2.1; {FA3}, section 3.2", _fa3_intra),
     Question("intra-warpgroup overlap in one tile only",
              "\"Twill discovers the software pipeline used in FA3, but applies it only to one "
              "warp group\"", f"{TWILL}, section 6.2.1", _fa3_intra_one)))

FA3_ONE_TILE = Topic(
    "fa3-fwd-one-tile", "FA3 forward on H100, one Q tile per iteration (Modular's 8-op loop)",
    (Case("fa3-fwd h100, FA3's inventory", "fa3-fwd", "h100"),),
    (Question("one consumer runs the tile",
              "\"A separate consumer warp group runs everything else.\"", MODULAR,
              lambda m: Together(*FA3_TILE)),))


# ---------------------------------------------------------------------------------------------
# FA4 forward on Blackwell

FA4_SRC = "FA4, flash_attn/cute/flash_fwd_sm100.py (warp ids, lines 300-306)"


def _fa4_softmax(m: Model) -> Shape:
    return All(Together("rowmax0", "softmax0", "rowsum0"),
               Together("rowmax1", "softmax1", "rowsum1"), Apart("softmax0", "softmax1"),
               text="each tile's softmax (row max, exp2, row sum) on its own group")


def _fa4_correction(m: Model) -> Shape:
    return All(Together("rescale0", "rescale1"), Apart("rescale0", "softmax0"),
               Apart("rescale0", "softmax1"),
               text="both corrections on one group that runs neither softmax")


def _fa4_mma(m: Model) -> Shape:
    return _alone_on_one_warp(["qk0", "qk1", "pv0", "pv1"], "the four MMAs alone on one warp")


FA4_FWD = Topic(
    "fa4-fwd", "FA4 forward on B200 (two Q tiles sharing K/V)",
    _both("fa4-fwd b200", "fa4-fwd", "b200", published="FA4's"),
    (Question("load warp", "\"load 14\"; Twill places \"variable-latency operations (green) ... "
              "onto separate warps\"", f"{FA4_SRC}; {TWILL}, section 6.2.2", _producer),
     Question("MMA warp", "\"MMA 12\": one warp issues QK0(i), PV1(i-1), QK1(i), PV0(i); Twill "
              "places \"TC GEMMs (pink) onto separate warps\"",
              f"{FA4_SRC}; {TWILL}, section 6.2.2", _fa4_mma),
     Question("two softmax groups", "\"softmax calculations for each sub-tile onto two "
              "different groups of warps\" (FA4: softmax0 warps 0-3, softmax1 warps 4-7)",
              f"{TWILL}, section 6.2.2; {FA4_SRC}", _fa4_softmax),
     Question("correction group", "\"accumulator rescaling operations for both sub-tiles onto "
              "a third group of warps\" (FA4: correction warps 8-11)",
              f"{TWILL}, section 6.2.2; {FA4_SRC}", _fa4_correction),
     Question("all of FA4's roles", "Twill's strategy \"is exactly the same as proposed by "
              "FA4\": load warp, MMA warp, two softmax groups, a correction group",
              f"{TWILL}, section 6.2.2, Figure 9",
              lambda m: All(_producer(m), _fa4_mma(m), _fa4_softmax(m), _fa4_correction(m),
                            text="load warp, MMA warp, two softmax groups, correction group"))))


# ---------------------------------------------------------------------------------------------
# FlashAttention backward

BWD_H100_CLAIM = ("\"Backward attention on Hopper is register constrained, and thus FA3 does not "
                  "construct a software pipeline that exploits ILP across iteration boundaries. "
                  "Twill ... found a similar schedule: it exploited ILP within a loop iteration "
                  "but could not do so across iterations due to register capacity.\"")

FA_BWD_H100 = Topic(
    "fa-bwd-h100", "FlashAttention backward on H100 (Twill 6.3.1)",
    (*_both("fa-bwd h100", "fa-bwd", "h100", published="FA3's"),
     Case("fa-bwd h100 block_m=80 (FA3's 80x128 tile), FA3's inventory", "fa-bwd", "h100",
          ("block_m=80",)),
     *_both("fa-bwd h100 subtiles=2", "fa-bwd", "h100", "subtiles=2", published="FA3's")),
    (Question("no cross-iteration ILP", BWD_H100_CLAIM, f"{TWILL}, section 6.3.1",
              lambda m: Sequential(_compute_ops(m))),))


def _two_groups(m: Model) -> Shape:
    def on_an_exp(stage: str) -> Shape:
        return Any(Together(stage, "exp0"), Together(stage, "exp1"))
    return All(Apart("exp0", "exp1"), on_an_exp("dq_stage0"), on_an_exp("dq_stage1"),
               text="the exponentials on two groups, each dQ staging on one of them")


def _three_groups(m: Model) -> Shape:
    return All(Apart("exp0", "exp1"), Together("dq_stage0", "dq_stage1"),
               Apart("dq_stage0", "exp0"), Apart("dq_stage0", "exp1"),
               text="the exponentials on two groups, both dQ stagings on a third")


FULL_BUDGET = ("groups=wg0:4:240,wg1:4:240,w8:1:24,w9:1:24", "vl=w9")

FA_BWD_B200 = Topic(
    "fa-bwd-b200", "FlashAttention backward on B200, two K/V halves (Twill 6.3.2)",
    (Case("fa-bwd b200 subtiles=2, FA4 bwd's inventory (Twill-LR's reduced budget)", "fa-bwd",
          "b200", ("subtiles=2",)),
     Case("fa-bwd b200 subtiles=2, two 240-register groups (full budget)", "fa-bwd", "b200",
          ("subtiles=2", *FULL_BUDGET), "full"),
     Case("fa-bwd b200 subtiles=2, neutral inventory", "fa-bwd", "b200", ("subtiles=2",),
          "neutral")),
    (Question("two-group ping-pong", "\"Twill finds a different strategy in 269 seconds using "
              "only two groups of warps which ping-pong between performing exponentials and "
              "staging reduction data\"", f"{TWILL}, section 6.3.2", _two_groups),
     Question("three groups", "\"The FA4 strategy for Blackwell uses three groups of warps: two "
              "groups read accumulators from Tensor Memory to apply exponentials, and the last "
              "group stages accumulators in shared memory\"; with a reduced register budget "
              "Twill \"found the same strategy\"", f"{TWILL}, section 6.3.2", _three_groups),
     Question("MMA warp", "FA4 bwd: \"reduce 0-3, compute 4-11, MMA 12, load 13\"",
              "FA4, flash_attn/cute/flash_bwd_sm100.py",
              lambda m: _alone_on_one_warp([v for v in m.op_names if m.op(v).total_use("tc")],
                                           "the ten MMAs alone on one warp")),))


# ---------------------------------------------------------------------------------------------
# GEMM

CUTLASS = "CUTLASS warp-specialized GEMM (sm90 ping-pong / cooperative kernels)"
UNWEAVING = "Unweaving warp specialization (blog post)"


def _gemm_consumers(m: Model) -> Shape:
    return All(Together(*_with(m, "mma0_"), "epi0"), Together(*_with(m, "mma1_"), "epi1"),
               Apart("mma0_0", "mma1_0"),
               text="each output tile's MMAs and epilogue on its own consumer group")


GEMM_H100 = Topic(
    "gemm-h100", "GEMM on H100, two output tiles per iteration",
    _both("gemm h100 subtiles=2", "gemm", "h100", "subtiles=2", published="CUTLASS's"),
    (Question("producer warp", "\"The TMA warp issue copies and notifies the Tensor Core "
              "warps\"", UNWEAVING, _producer),
     Question("two consumer warpgroups", "a producer warpgroup and two consumer warpgroups, "
              "each on its own output tile (ping-pong)", CUTLASS, _gemm_consumers)))

GEMM_B200 = Topic(
    "gemm-b200", "GEMM on B200, one output tile per iteration",
    _both("gemm b200", "gemm", "b200"),
    (Question("producer warp", "\"The TMA warp issue copies and notifies the Tensor Core "
              "warps\"", UNWEAVING, _producer),
     Question("MMA warp", "one warp issues every tcgen05 MMA (CUTLASS sm100 kernels; FA4's "
              "MMA warp)", "CUTLASS sm100 warp-specialized GEMM",
              lambda m: _alone_on_one_warp(_with(m, "mma"), "every MMA alone on one warp")),))

TOPICS = (FA3_FWD, FA3_ONE_TILE, FA4_FWD, FA_BWD_H100, FA_BWD_B200, GEMM_H100, GEMM_B200)
