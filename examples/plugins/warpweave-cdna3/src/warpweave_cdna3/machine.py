"""AMD Instinct MI300X (CDNA3, gfx942) as a warpweave machine, one compute unit (CU) per tile loop.

What differs from Hopper and Blackwell, and how the model states it:

- **Matrix cores (MFMA)**: each of the CU's four SIMDs has one; a tile-level MFMA step uses all
  four (a wave group of 4 waves, one per SIMD), so the model has one `mfma` unit per CU.
- **No TMA**: global memory reaches LDS through the waves' own vector-memory instructions
  (`buffer_load ... lds` / `global_load_lds`: straight into LDS, no VGPRs), counted by the issuing
  wave's `vmcnt`.  The `vmem` unit is the CU's vector-memory path; an LDS copy holds it for its
  share of HBM bandwidth.  There is no variable-latency producer group: the waves that compute
  issue their copies (see `constraint.LdsCopyWave`).
- **LDS**: 64 KiB per CU (`lds`, bytes).
- **Registers**: a wavefront is 64 lanes; VGPRs and AGPRs (MFMA accumulators) share one unified
  file of 512 per lane and SIMD, at most 256 of each, allocated in granules of 8.  A wave group of
  4 waves puts one wave on each SIMD, so the groups' limits sum to at most 512 (`REGISTERS`).
"""

from __future__ import annotations

from warpweave.core.model import WarpGroup
from warpweave.machines.figures import SOURCES, Figure, Figures
from warpweave.machines.gpu import MachineSpec, MemorySpec, UnitSpec
from warpweave.machines.inventory import RegisterRule

# The documents behind the figures, added to warpweave's table (a figure names its source by key).
SOURCES.update({
    "rocm-specs": "ROCm documentation, Accelerator and GPU hardware specifications "
                  "(docs/reference/gpu-arch-specs.rst in github.com/ROCm/ROCm at e396b48), "
                  "row MI300X",
    "rocm-mi300": "ROCm documentation, AMD Instinct MI300 series microarchitecture "
                  "(docs/conceptual/gpu-arch/mi300.md in github.com/ROCm/ROCm at e396b48), "
                  "table 'Peak-performance capabilities of the MI300X'",
    "llvm-amdgpu": "LLVM AMDGPU backend: lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp "
                   "(getVGPRAllocGranule: 8 with GFX90A instructions, which gfx942 has; "
                   "getMaxFlatWorkGroupSize: 1024) and commit b7611370 ('a total of 512 registers, "
                   "but a maximum of only 256 of each of AGPR and VGPR', gfx90a ISA 3.6.4)",
    "llvm-lds-dma": "LLVM IntrinsicsAMDGPU.td: llvm.amdgcn.raw.buffer.load.lds and "
                    "llvm.amdgcn.global.load.lds (global memory to LDS without VGPRs), waited "
                    "for with s_waitcnt vmcnt by the issuing wave (LLVM's AMDGPU codegen tests)",
})

FIGURES = Figures([
    Figure("cus", 304, "CUs", "rocm-specs"),
    Figure("wavefront", 64, "lanes", "rocm-specs"),
    Figure("lds_per_cu", 65536, "bytes", "rocm-specs", note="LDS 64 KiB"),
    Figure("vgpr_file_per_cu", 524288, "bytes", "rocm-specs",
           note="VGPR file 512 KiB per CU = 4 SIMDs x 512 registers x 64 lanes x 4 bytes"),
    Figure("mfma_flops_16bit", 2048, "FLOPs/clk/CU", "rocm-mi300",
           note="Matrix FP16 and BF16: 2048 FLOPS/CLOCK/CU, 1307.4 TFLOPS"),
    Figure("mfma_flops_8bit", 4096, "FLOPs/clk/CU", "rocm-mi300",
           note="Matrix FP8: 4096 FLOPS/CLOCK/CU, 2614.9 TFLOPS"),
    Figure("clock_ghz", 2.1, "GHz", "derived",
           note="1307.4 TFLOPS / (2048 FLOPs/clk/CU x 304 CUs)"),
    Figure("hbm_bytes_per_clk_per_cu", 5.3e12 / (304 * 2.1e9), "B/clk/CU", "derived", True,
           "the 5.3 TB/s peak HBM bandwidth (rocm-mi300) shared by 304 CUs at 2.1 GHz: a tile "
           "loop on every CU streaming from HBM, ignoring L2 and Infinity Cache reuse "
           "(estimate of the copy rate)"),
    Figure("copy_latency", 500, "cycles", "derived", True,
           "global-to-LDS copy latency beyond its bandwidth time: no CDNA3 cycle measurement at "
           "hand (estimate)"),
    Figure("vgpr_per_lane", 512, "registers", "llvm-amdgpu",
           note="unified ArchVGPR + AccVGPR file per lane and SIMD; at most 256 of each"),
    Figure("vgpr_granule", 8, "registers", "llvm-amdgpu"),
    Figure("max_workgroup", 1024, "work-items", "llvm-amdgpu", note="16 waves of 64"),
])

# A wave group of 4 waves (one per SIMD) shares nothing but the CU; every SIMD's 512 registers
# per lane hold one wave of each group, so the limits of the launched groups sum to <= 512:
# file = 4 SIMDs x 512 x 64 lanes, units of 4 waves x 64 lanes.
REGISTERS = RegisterRule("VGPR allocation (unified VGPR + AGPR)", low=8, high=512, step=8,
                         file=4 * 512 * 64, lanes=64, unit_warps=4, max_warps=16)

MI300X = MachineSpec(
    name="mi300x",
    arch="gfx942",
    description="AMD Instinct MI300X (CDNA3, gfx942): 304 CUs, MFMA matrix cores, direct "
                "global-to-LDS copies (no TMA), 64 KiB LDS, 64-lane wavefronts",
    figures=FIGURES,
    units=(UnitSpec("mfma", 1, "the CU's four MFMA matrix cores (one per SIMD) as one tile-level "
                    "unit"),
           UnitSpec("vmem", 1, "the CU's vector-memory path: global loads, including those "
                    "written straight into LDS"),
           UnitSpec("valu", 1, "the four SIMDs' vector ALUs")),
    memories=(MemorySpec("lds", "lds_per_cu", "bytes", "Local Data Share per CU (workgroup)"),),
    groups=(WarpGroup("wg0", 4, 256), WarpGroup("wg1", 4, 256)),
    variable_latency_group=None,
    groups_note="two wave groups of 4 waves (one per SIMD) at 256 registers per lane each: "
                "2 x 256 = 512, the whole unified file",
    registers=REGISTERS,
)
