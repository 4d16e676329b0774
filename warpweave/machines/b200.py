"""B200 (SM100): tensor core writing Tensor Memory (tcgen05), TMA, MUFU, FP32 lanes, and the TMEM
load/store datapath; 227 KB of shared memory per block and 512 TMEM columns.

The default inventory is FlashAttention-4's forward launch (16 warps): three 4-warp groups
(`wg0`, `wg1` at 192 registers - FA4's two softmax groups; `wg2` at 80 - its correction group) and
three single warps of the fourth warpgroup at 48 (`w12`, `w13`, `w14`; FA4 uses them for MMA,
epilogue and load, warp 15 idles): 128 x (192 + 192 + 80 + 48) = 65536 registers.  `w14` is the
variable-latency group.
"""

from __future__ import annotations

from warpweave.core.model import WarpGroup
from warpweave.machines.figures import Figure, Figures
from warpweave.machines.gpu import NEUTRAL_GROUPS, MachineSpec
from warpweave.machines.nvidia import (
    NVLAT,
    PER_TILE,
    SMEM,
    TMEM,
    TMEM_UNIT,
    UNITS,
    common_figures,
)

FIGURES = Figures([
    Figure("sms", 148, "SMs", "b200-spec", place="specifications table"),
    Figure("clock_ghz", 1.86, "GHz", "b200-spec", True,
           "tensor clock implied by 2.25 PFLOPS dense; Meta measured ~1.96 GHz"),
    Figure("tc_flops_16bit", 8192, "FLOPs/clk/SM", "meta-nvlat",
           note="the datasheet's 2.25 PFLOPS / (148 SMs x 1.86 GHz) = 8173 agrees; every MMA "
                "occupancy in benchmarks/data/meta-tlx/case*-ddg.json is 2MNK / 8192",
           place=f"{NVLAT}:197 (kTCMacsPerCycleFp16 = 4096 MACs per cycle per SM)"),
    Figure("tc_flops_8bit", 16384, "FLOPs/clk/SM", "b200-spec", note="dense FP8: 4.5 PFLOPS",
           place="specifications table (per GPU, dense)"),
    Figure("tc_flops_tf32", 4096, "FLOPs/clk/SM", "b200-spec", note="dense TF32: 1.1 PFLOPS",
           place="specifications table (per GPU, dense)"),
    Figure("mma_latency_k128", 900, "cycles", "meta-nvlat",
           note="tcgen05 MMA issue to result, K >= 128 (whatever M, N); the DDGs agree: "
                "case3_FA_fp16 node 7, case4_FA_bwd node 31, case4_FA_bwd-ddg_hd128 nodes 11, "
                "21, 31",
           place=f"{NVLAT}:181, 214 (K >= 128 ? 900 : 559)"),
    Figure("mma_latency_k64", 559, "cycles", "meta-nvlat",
           note="tcgen05 MMA issue to result, K < 128; case3_FA_fp16 node 28, case4_FA_bwd "
                "nodes 11, 21, 22, 36, case1_simple_gemm node 4, case2_persistent_gemm node 6",
           place=f"{NVLAT}:182, 214"),
    Figure("tmem_columns", 512, "columns", "ptx-isa", note="128 lanes x 512 columns x 32 bit",
           place="tcgen05 Tensor Memory: organization"),
    Figure("tmem_load_latency", 532, PER_TILE, "meta-nvlat",
           note="tcgen05.ld + wait; scaled by element count as the source does (its 179-cycle "
                "128x64 measurement says small loads cost less)",
           place=f"{NVLAT}:326"),
    Figure("tmem_load_occupancy", 256, PER_TILE, "meta-nvlat",
           note="cycles the TMEM datapath is busy", place=f"{NVLAT}:411"),
    Figure("tmem_store_latency", 96, PER_TILE, "meta-nvlat",
           note="scaled by element count as the source does (its 64-cycle 128x64 measurement "
                "is above the scaled 48)",
           place=f"{NVLAT}:333"),
    Figure("tmem_store_occupancy", 48, PER_TILE, "meta-nvlat", place=f"{NVLAT}:413"),
    *common_figures(measured_here=True),
])

B200 = MachineSpec(
    name="b200",
    arch="sm_100a",
    description="NVIDIA B200 (Blackwell, SM100): 148 SMs, tcgen05 MMA into Tensor Memory, TMA",
    figures=FIGURES,
    units=(*UNITS, TMEM_UNIT),
    memories=(SMEM, TMEM),
    groups=(WarpGroup("wg0", 4, 192), WarpGroup("wg1", 4, 192), WarpGroup("wg2", 4, 80),
            WarpGroup("w12", 1, 48), WarpGroup("w13", 1, 48), WarpGroup("w14", 1, 48)),
    variable_latency_group="w14",
    groups_note="FA4's forward launch: softmax 0 and 1 at 192, correction at 80, and single "
                "warps 12-14 (MMA, epilogue, load in FA4) at 48; warp 15 idles",
    neutral=NEUTRAL_GROUPS,
)

