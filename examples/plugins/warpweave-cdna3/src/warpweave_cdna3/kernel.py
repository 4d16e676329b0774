"""`cdna3-gemm` on mi300x: the K loop of GEMM output tiles, as a CU runs it.

Per iteration and output tile, `k_steps` k-steps; k-step i copies the A and B slices (block_m x
block_k and block_k x block_n) from global memory straight into LDS (`copy<i>`: holds the
vector-memory path for its bandwidth time, then lands after the copy latency; LDS footprint of both
slices) and multiplies them with MFMA (`mfma<i>`: the four matrix cores for 2 x block_m x block_n
x block_k / (FLOPs per clock per CU) cycles, accumulating into block_m x block_n fp32 AGPRs of a
wave group of 4 waves).  A tile's MFMAs form its accumulator chain, across iterations too; the
accumulator cannot move to another wave group through LDS (it is as large as LDS), so moving it
goes through scratch memory at the copy rate (the MFMAs' hand-off cost).  The next iteration's copy
into a k-step's LDS slot waits until `stages` iterations have passed since the MFMA that read it.
With `tiles=2` the CU computes two tiles side by side (ops `copy<t>_<i>`, `mfma<t>_<i>`), the
setting of a two-wave-group ping-pong.

Every cycle count comes from the machine's figures (`warpweave machines`), so the model is as good
as those figures; the copy rate is an estimate (HBM share per CU, see the figure's note).
"""

from __future__ import annotations

import math

from warpweave.core.model import Edge, Model, Op
from warpweave.kernels.spec import KernelSpec, Param, machine_for
from warpweave.machines.gpu import MachineSpec

BYTES = {"fp16": 2, "bf16": 2, "fp8": 1}


def build(spec: MachineSpec, block_m: int, block_n: int, block_k: int, dtype: str,
          k_steps: int, stages: int, tiles: int, inventory: str, groups: str, vl: str,
          max_regs: int) -> Model:
    f = spec.figures
    machine = machine_for(spec, inventory, groups, vl, max_regs)
    eb = BYTES[dtype]
    flops = f["mfma_flops_8bit"] if eb == 1 else f["mfma_flops_16bit"]
    rate = f["hbm_bytes_per_clk_per_cu"]
    copy_bytes = (block_m + block_n) * block_k * eb
    busy = math.ceil(copy_bytes / rate)
    land = busy + int(f["copy_latency"])
    mma = math.ceil(2 * block_m * block_n * block_k / flops)
    threads = 4 * int(f["wavefront"])                  # a wave group: one wave per SIMD
    acc_regs = math.ceil(block_m * block_n / threads)  # fp32 accumulators per lane (AGPRs)
    handoff = math.ceil(block_m * block_n * 4 / rate)  # the accumulator through scratch memory
    ops, edges = [], []
    for t in range(tiles):
        tag = f"{t}_" if tiles > 1 else ""
        for i in range(k_steps):
            copy, mfma = f"copy{tag}{i}", f"mfma{tag}{i}"
            ops.append(Op(copy, land, rrt=[{"vmem": 1}] * busy, footprint={"lds": copy_bytes},
                          is_async=True))
            ops.append(Op.using(mfma, mma, {"mfma": 1}, regs=acc_regs, warps=4,
                                spill_cost=handoff, is_async=True))
            edges.append(Edge(copy, mfma, land, blocking=True))      # s_waitcnt vmcnt
            edges.append(Edge(mfma, copy, mma, stages, "order"))     # the LDS slot is free
            prev = f"mfma{tag}{(i - 1) % k_steps}"
            edges.append(Edge(prev, mfma, mma, 1 if i == 0 else 0))  # accumulator chain
    return Model(f"cdna3-gemm-{block_m}x{block_n}x{block_k}" + (f"x{tiles}" if tiles > 1 else ""),
                 machine, ops, edges)


SPEC = KernelSpec(
    name="cdna3-gemm",
    description="K loop of a GEMM tile on a CDNA3 CU: direct global-to-LDS copies, MFMA into "
                "AGPR accumulators",
    machines=("mi300x",),
    params=(
        Param("block_m", int, 128, "tile rows", low=16, high=256),
        Param("block_n", int, 128, "tile columns", low=16, high=256),
        Param("block_k", int, 32, "k-step depth", low=8, high=128),
        Param("dtype", str, "fp16", "operand type", choices=tuple(BYTES)),
        Param("k_steps", int, 2, "k-steps per loop iteration", low=1, high=8),
        Param("stages", int, 1, "LDS slots per k-step, in iterations (ring depth)", low=1,
              high=4),
        Param("tiles", int, 1, "output tiles per CU, side by side (2: the ping-pong setting)",
              low=1, high=2),
    ),
    build_fn=build,
    follows="CDNA3's GEMM pattern of direct-to-LDS copies feeding MFMA (no TMA, no producer "
            "warps); no published warp-specialized schedule to compare with",
)
