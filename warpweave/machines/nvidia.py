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


# Where Meta's B200 figures stand (github.com/facebookexperimental/triton at db4666f).
NVLAT = "third_party/nvidia/hopper/lib/Transforms/ModuloScheduling/NVLatencyModel.cpp"
MSP = "third_party/nvidia/hopper/lib/Transforms/ModuloScheduling/ModuloSchedulePass.cpp"
CUDA_SPECS = "Technical Specifications per Compute Capability table"
CUDA_THROUGHPUT = "Arithmetic Instructions throughput table (results per clock cycle per SM)"
PER_TILE = "cycles / 16384 elements"   # Meta scales from a 128x128 tile by element count


def common_figures(measured_here: bool) -> list[Figure]:
    """Figures shared by H100 and B200.  `measured_here` is False for a machine that reuses
    Meta's B200 measurements as estimates."""
    est = not measured_here
    reuse = "" if measured_here else " B200 measurement reused for H100 (estimate)."
    return [
        Figure("registers_per_sm", 65536, "32-bit registers", "cuda-guide",
               place=f"{CUDA_SPECS}: maximum number of 32-bit registers per SM"),
        Figure("max_regs_per_thread", 255, "registers", "cuda-guide",
               place=f"{CUDA_SPECS}: maximum number of 32-bit registers per thread"),
        Figure("max_warps_per_block", 32, "warps", "cuda-guide", note="1024 threads per block",
               place=f"{CUDA_SPECS}: maximum number of threads per block"),
        Figure("smem_per_block", 232448, "bytes", "cuda-guide",
               note="227 KB of the 228 KB per SM may be opted into by one block",
               place=f"{CUDA_SPECS}: maximum amount of shared memory per thread block (9.0, "
                     "10.0)"),
        Figure("smem_bytes_per_clk", 128, "B/clk/SM", "cuda-guide",
               note="shared-memory bandwidth; also bounds a TMA fill",
               place="Compute Capabilities, Shared Memory: 32 banks, each 32 bits per clock"),
        Figure("mufu_per_clk", 16, "ops/clk/SM", "cuda-guide",
               note="FA3 quotes 3.9 TFLOPS of special functions on H100 SXM5 "
                    "(= 16 x 132 SMs x 1.83 GHz); also the exp2 latency (1024 per 128x128), "
                    "where Meta's B200 chain measured 1140 from issue to result "
                    "(NVLatencyModel.cpp:477; docs/machines.md, Known limits)",
               place=f"{CUDA_THROUGHPUT}: base-2 exponential, cc 9.0 and 10.0"),
        Figure("fp32_lanes", 128, "FMA/clk/SM", "cuda-guide",
               place=f"{CUDA_THROUGHPUT}: 32-bit floating-point add, multiply, multiply-add"),
        Figure("rowmax_latency", 461, PER_TILE, "meta-nvlat", est,
               "a row max (last axis) from issue to result" + reuse,
               f"{NVLAT}:363 (max, last axis: 461)"),
        Figure("rowmax_occupancy", 304, PER_TILE, "meta-nvlat", est,
               "FMA-pipe cycles of a row max" + reuse, f"{NVLAT}:448 (304)"),
        Figure("rowsum_latency", 1691, PER_TILE, "meta-nvlat", est,
               "a row sum (last axis) from issue to result; benchmarks/data/meta-tlx/"
               "case3_FA_fp16-ddg.json node 19 has 845 for 128x64" + reuse,
               f"{NVLAT}:363 (sum, last axis: 1691)"),
        Figure("rowsum_occupancy", 639, PER_TILE, "meta-nvlat", est,
               "FMA-pipe cycles of a row sum; the issuing warps are free after them" + reuse,
               f"{NVLAT}:446 (639)"),
        Figure("tma_load_base", 399, "cycles", "meta-nvlat", est,
               "least-squares line through 16/32/64 KB = 530/663/925 cycles." + reuse,
               f"{NVLAT}:58-63 (kTMALoadTable)"),
        Figure("tma_load_per_kb", 8.223, "cycles/KB", "meta-nvlat", est,
               "see tma_load_base." + reuse, f"{NVLAT}:58-63 (kTMALoadTable)"),
        Figure("tma_store_base", 130, "cycles", "meta-nvlat", est, reuse.strip(),
               f"{NVLAT}:171 (kBase = 130)"),
        Figure("tma_store_per_kb", 52, "cycles/KB", "meta-nvlat", est, reuse.strip(),
               f"{NVLAT}:171 (kPerKB = 52)"),
        Figure("smem_handoff_base", 61, "cycles", "meta-nvlat", est,
               "a register payload: registers -> SMEM -> registers of another warp group, "
               "one way, measured (cross_wg_handoff.py)" + reuse, f"{MSP}:3163"),
        Figure("smem_handoff_per_kb", 16.1, "cycles/KB", "meta-nvlat", est,
               "see smem_handoff_base." + reuse, f"{MSP}:3163"),
        Figure("mbarrier_handoff", 92, "cycles", "meta-nvlat", est,
               "signal-only one way: mbarrier arrive -> waiter wake-up; what a TMEM or SMEM "
               "payload pays across warp groups" + reuse, f"{MSP}:3190"),
        Figure("named_barrier", 30, "cycles", "meta-nvlat", est,
               "bar.arrive / bar.sync one way; what a TMEM or SMEM payload pays within one "
               "group (the warps' stores fenced before one thread issues)" + reuse,
               f"{MSP}:2356-2364 (kNamedBarrierIssueCost)"),
    ]
