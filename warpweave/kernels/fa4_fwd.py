"""`fa4-fwd` on b200: the FlashAttention-4 forward inner loop as the 14-op graph of the Modular
post (seeds/modular-swp-part1.txt, "Flash Attention 4: the problem gets worse").

Two Q tiles (0 and 1) of `block_m` rows share each K/V tile.  Ops: load_k, load_v (TMA, variable
latency); per tile t: qk_t (tcgen05 MMA S_t = Q_t K^T into TMEM), rowmax_t (tcgen05.ld of S_t into
registers, row max, alpha = exp2(m_old - m_new)), softmax_t (exp2 on the MUFU with the scaling
FMAs, P_t stored back to TMEM over S_t), rowsum_t (l = alpha l + sum), rescale_t (the correction:
tcgen05.ld of O_t, O_t *= alpha, tcgen05.st), pv_t (MMA O_t += P_t V).  28 edges: 18
same-iteration, 6 loop-carried (m, l and O per tile) and 4 write-after-read edges of distance
`stages` for the K/V rings.  An op that reads an MMA result from TMEM waits on its commit barrier
(blocking edge), as does an MMA waiting for a TMA tile.

Footprints follow FA4's TMEM plan (S0, S1, O0, O1 of 128 columns each, P aliased in S): S_t and
P_t each hold `block_n` columns, O_t `head_dim` columns, so the 512 columns admit one S-or-P per
tile besides both accumulators - qk_t of the next iteration cannot start before pv_t has been
issued.  The row statistics are the only register values another group reads (the correction
group reads m); rowmax_t also keeps S_t in registers for softmax_t.  `exp_emulation` moves a
fraction (in percent) of the exponentials from the MUFU to a polynomial on the FMA lanes, as FA4
does; `emulation_ops` is that polynomial's FP32 instructions per element (an estimate).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from warpweave.core.model import Model
from warpweave.kernels.attention import (
    attention_flops,
    online_softmax_edges,
    regs,
    tile_params,
    tma_loads,
)
from warpweave.kernels.graph import Graph
from warpweave.kernels.spec import KernelSpec, Param, machine_for
from warpweave.machines.costs import dtype_bytes
from warpweave.machines.gpu import MachineSpec


def build(spec: MachineSpec, block_m: int, block_n: int, head_dim: int, dtype: str, stages: int,
          exp_emulation: int, emulation_ops: int, groups: str, vl: str, max_regs: int) -> Model:
    cost = spec.costs
    eb = dtype_bytes(dtype)
    kv_bytes = block_n * head_dim * eb
    machine = machine_for(spec, groups, vl, max_regs, smem_reserved=2 * block_m * head_dim * eb)
    g = Graph("fa4-fwd", machine)
    tma_loads(g, cost, ("load_k", "load_v"), kv_bytes)
    s_elems, o_elems = block_m * block_n, block_m * head_dim
    emulated = s_elems * exp_emulation // 100
    stats_handoff = cost.register_handoff(2 * block_m * 4)   # m and m_old, one fp32 per row
    for t in (0, 1):
        qk = g.op(f"qk{t}", cost.gemm(block_m, block_n, head_dim, dtype), warps=1,
                  is_async=True, footprint={"tmem": block_n})
        rowmax = g.op(f"rowmax{t}", cost.tmem_load(s_elems * 4),
                      cost.row_reduce(s_elems, "rowmax"), cost.exp(block_m),
                      regs=regs(s_elems, 4) + 2, warps=4, spill_cost=stats_handoff)
        # The scaling FMA runs beside the MUFU; emulated exp2s add their polynomial to it.
        fma = cost.fp32(s_elems + emulated * emulation_ops, 1, "scale, exp2 polynomial")
        exp_step = (fma,) if emulated == s_elems else (fma, cost.exp(s_elems - emulated))
        softmax = g.op(f"softmax{t}", exp_step, cost.tmem_store(s_elems * eb),
                       regs=1, warps=4, footprint={"tmem": block_n},
                       spill_cost=cost.register_handoff(block_m * 4))
        rowsum = g.op(f"rowsum{t}", cost.fp32(block_m, 2, "l = alpha l + sum"), regs=1, warps=4,
                      spill_cost=cost.register_handoff(block_m * 4))
        rescale = g.op(f"rescale{t}", cost.tmem_load(o_elems * 4),
                       cost.fp32(o_elems, 1, "O *= alpha"), cost.tmem_store(o_elems * 4),
                       warps=4, footprint={"tmem": head_dim})
        pv = g.op(f"pv{t}", cost.gemm(block_m, head_dim, block_n, dtype), warps=1,
                  is_async=True, footprint={"tmem": head_dim})
        online_softmax_edges(g, qk, rowmax, softmax, rescale, pv, stages)
        g.edge(softmax, rowsum)
        g.edge(softmax, pv)
        g.edge(rowsum, rowsum, distance=1)
    return g.model()


def work(machine: str | None, p: Mapping[str, Any]) -> int:
    """QK and PV of block_m x block_n x head_dim for each of the two Q tiles."""
    return attention_flops(2, 2, p["block_m"], p["block_n"], p["head_dim"])


SPEC = KernelSpec(
    name="fa4-fwd",
    description="FlashAttention-4 forward inner loop on Blackwell: two Q tiles sharing K/V, "
                "14 ops, 28 edges, S/P/O in Tensor Memory",
    machines=("b200",),
    params=(*tile_params(128, 128, 4),
            Param("exp_emulation", int, 0, "percent of exp2 computed by a polynomial on the FMA "
                  "lanes instead of the MUFU", low=0, high=100),
            Param("emulation_ops", int, 8, "FP32 instructions per emulated exp2 (estimate)",
                  low=1)),
    build_fn=build,
    follows="Modular, Software Pipelining for GPU Kernels part 1 (FA4 loop); FA4 "
            "flash_fwd_sm100.py; Twill paper section 6.2.2",
    work=work,
)
