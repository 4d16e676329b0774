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
from warpweave.machines.gpu import MachineSpec
from warpweave.machines.nvidia import SMEM, TMEM, TMEM_UNIT, UNITS, common_figures

FIGURES = Figures([
    Figure("sms", 148, "SMs", "b200-spec"),
    Figure("clock_ghz", 1.86, "GHz", "b200-spec", True,
           "tensor clock implied by 2.25 PFLOPS dense; Meta measured ~1.96 GHz"),
    Figure("tc_flops_16bit", 8192, "FLOPs/clk/SM", "meta-nvlat",
           note="a 128x64x128 tcgen05 MMA occupies the tensor core 256 cycles (= 8192); the "
                "datasheet's 2.25 PFLOPS / (148 SMs x 1.86 GHz) = 8173 agrees"),
    Figure("tc_flops_8bit", 16384, "FLOPs/clk/SM", "b200-spec", note="dense FP8: 4.5 PFLOPS"),
    Figure("tc_flops_tf32", 4096, "FLOPs/clk/SM", "b200-spec", note="dense TF32: 1.1 PFLOPS"),
    Figure("mma_latency_base", 218, "cycles", "meta-nvlat",
           note="line through the measured tcgen05 latencies 900 (128x128x128, busy 512) and "
                "559 (128x128x64, busy 256): latency = 218 + 1.332 x busy"),
    Figure("mma_latency_slope", 341 / 256, "", "meta-nvlat", note="see mma_latency_base"),
    Figure("tmem_columns", 512, "columns", "ptx-isa", note="128 lanes x 512 columns x 32 bit"),
    Figure("tmem_load_cycles_64kb", 532, "cycles", "meta-nvlat",
           note="tcgen05.ld of a 128x128 fp32 tile; scaled linearly by size (Meta's curated "
                "graphs do the same: 266 for 128x64; their 179-cycle 128x64 measurement says "
                "small loads cost less)"),
    Figure("tmem_load_bytes_per_clk", 256, "B/clk", "meta-nvlat",
           note="datapath occupancy: 256 cycles per 128x128 fp32 load in Meta's curated graphs"),
    Figure("tmem_store_cycles_32kb", 96, "cycles", "meta-nvlat",
           note="tcgen05.st of a 128x128 16-bit tile"),
    Figure("tmem_store_bytes_per_clk", 32768 / 48, "B/clk", "meta-nvlat",
           note="occupancy 48 cycles per 32 KB store in Meta's curated graphs"),
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
)

