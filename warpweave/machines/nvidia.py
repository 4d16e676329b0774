"""What SM90 and SM100 share: the units, the shared-memory spec, and the figures that are the same
on both (per-SM CUDA-core rates, capacities, and Meta's measured B200 latencies, which H100 reuses
as estimates where no H100 measurement is at hand)."""

from __future__ import annotations

from warpweave.machines.figures import Figure
from warpweave.machines.gpu import MemorySpec, UnitSpec

UNITS = (
    UnitSpec("tc", 1, "tensor core: the SM's four sub-core tensor cores as one tile-level unit "
             "(wgmma on SM90, tcgen05.mma on SM100)"),
    UnitSpec("tma", 1, "Tensor Memory Accelerator: bulk tile copies global <-> shared"),
    UnitSpec("sfu", 1, "MUFU special-function units (exp2), all four sub-partitions"),
    UnitSpec("alu", 1, "FP32 FMA lanes (CUDA cores), all four sub-partitions"),
)
TMEM_UNIT = UnitSpec("tmem", 1, "Tensor Memory <-> register datapath (tcgen05.ld / tcgen05.st)")

SMEM = MemorySpec("smem", "smem_per_block", "bytes", "shared memory per thread block")
TMEM = MemorySpec("tmem", "tmem_columns", "columns",
                  "Tensor Memory: 128 lanes x 512 columns x 32 bit")


def common_figures(measured_here: bool) -> list[Figure]:
    """Figures shared by H100 and B200.  `measured_here` is False for a machine that reuses
    Meta's B200 measurements as estimates."""
    est = not measured_here
    reuse = "" if measured_here else "B200 measurement reused for H100 (estimate)"
    return [
        Figure("registers_per_sm", 65536, "32-bit registers", "cuda-guide"),
        Figure("max_regs_per_thread", 255, "registers", "cuda-guide"),
        Figure("max_warps_per_block", 32, "warps", "cuda-guide", note="1024 threads per block"),
        Figure("smem_per_block", 232448, "bytes", "cuda-guide",
               note="227 KB of the 228 KB per SM may be opted into by one block"),
        Figure("smem_bytes_per_clk", 128, "B/clk/SM", "fa4",
               note="shared-memory bandwidth; also bounds a TMA fill"),
        Figure("mufu_per_clk", 16, "ops/clk/SM", "cuda-guide",
               note="exp2/rcp/rsqrt: 4 per sub-partition; FA3 quotes 3.9 TFLOPS of special "
                    "functions on H100 SXM5 (= 16 x 132 SMs x 1.83 GHz)"),
        Figure("fp32_lanes", 128, "FMA/clk/SM", "cuda-guide", note="32 per sub-partition"),
        Figure("row_reduce_cycles_per_element", 461 / 16384, "cycles/element", "meta-nvlat",
               est, "rowmax over 128x128 measured at 461 cycles; " + reuse),
        Figure("tma_load_base", 399, "cycles", "meta-nvlat", est,
               "least-squares line through 16/32/64 KB = 530/663/925 cycles. " + reuse),
        Figure("tma_load_per_kb", 8.223, "cycles/KB", "meta-nvlat", est, reuse),
        Figure("tma_store_base", 130, "cycles", "meta-nvlat", est, reuse),
        Figure("tma_store_per_kb", 52, "cycles/KB", "meta-nvlat", est, reuse),
        Figure("smem_handoff_base", 61, "cycles", "meta-nvlat", est,
               "registers -> SMEM -> registers of another warp group. " + reuse),
        Figure("smem_handoff_per_kb", 16.1, "cycles/KB", "meta-nvlat", est, reuse),
        Figure("mbarrier_handoff", 92, "cycles", "meta-nvlat", est,
               "one-way arrive -> try_wait. " + reuse),
        Figure("named_barrier", 30, "cycles", "meta-nvlat", est, reuse),
    ]
