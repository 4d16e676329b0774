"""H100 SXM5 (SM90): tensor core, TMA, MUFU and FP32 lanes; 227 KB of shared memory per block; a
64K-register file shared by warpgroups through setmaxnreg.

The default inventory is FlashAttention-3's launch: one producer warpgroup at 24 registers (its
warp 0 issues TMA: the variable-latency group `w0`) and two 4-warp consumer warpgroups at 240
(`wg1`, `wg2`): 128 x (24 + 240 + 240) = 64512 <= 65536 registers.
"""

from __future__ import annotations

from warpweave.core.model import WarpGroup
from warpweave.machines.figures import Figure, Figures
from warpweave.machines.gpu import NEUTRAL_GROUPS, MachineSpec
from warpweave.machines.nvidia import SMEM, UNITS, common_figures

FIGURES = Figures([
    Figure("sms", 132, "SMs", "h100-wp",
           place="A100 vs H100 comparison table, H100 SXM5 column: SMs"),
    Figure("clock_ghz", 1.83, "GHz", "h100-wp", note="boost clock used for the TFLOPS figures",
           place="same table: GPU boost clock"),
    Figure("tc_flops_16bit", 4096, "FLOPs/clk/SM", "h100-wp",
           note="dense FP16/BF16: 989.4 TFLOPS / (132 SMs x 1.83 GHz) = 4096 "
                "(4 tensor cores x 512 FMA)", place="same table: peak FP16 tensor TFLOPS"),
    Figure("tc_flops_8bit", 8192, "FLOPs/clk/SM", "h100-wp", note="dense FP8: 1979 TFLOPS",
           place="same table: peak FP8 tensor TFLOPS"),
    Figure("tc_flops_tf32", 2048, "FLOPs/clk/SM", "h100-wp", note="dense TF32: 494.7 TFLOPS",
           place="same table: peak TF32 tensor TFLOPS"),
    Figure("mma_latency_base", 64, "cycles", "derived", True,
           "wgmma result latency = base + slope x busy cycles; no cycle-level H100 measurement "
           "at hand, so a small fill/drain overhead is assumed (estimate)"),
    Figure("mma_latency_slope", 1.0, "", "derived", True, "see mma_latency_base"),
    *common_figures(measured_here=False),
])

H100 = MachineSpec(
    name="h100",
    arch="sm_90a",
    description="NVIDIA H100 SXM5 (Hopper, SM90): 132 SMs, wgmma, TMA, no Tensor Memory",
    figures=FIGURES,
    units=UNITS,
    memories=(SMEM,),
    groups=(WarpGroup("w0", 1, 24), WarpGroup("wg1", 4, 240), WarpGroup("wg2", 4, 240)),
    variable_latency_group="w0",
    groups_note="FA3's launch: producer warpgroup at 24 registers (warp 0 issues TMA, warps 1-3 "
                "idle), two consumer warpgroups at 240",
    neutral=NEUTRAL_GROUPS,
)

