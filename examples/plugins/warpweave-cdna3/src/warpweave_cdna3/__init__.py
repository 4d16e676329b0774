"""warpweave-cdna3: AMD Instinct MI300X (CDNA3) for warpweave, as a plugin.

- `machine.MI300X`: the machine (MFMA matrix cores, the vector-memory path that copies global
  memory straight into LDS, 64 KiB of LDS, wave groups of 64-lane wavefronts with the unified
  VGPR/AGPR budget), every figure with its source;
- `constraint.LdsCopyWave`: CDNA3 has no TMA and no transaction barrier: a copy into LDS is
  waited for with the issuing wave's own `s_waitcnt vmcnt`, so its readers run on its wave group;
- `kernel.SPEC`: the K loop of a GEMM tile on it (`cdna3-gemm`).
"""
