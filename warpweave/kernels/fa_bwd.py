"""`fa-bwd` on h100 and b200: the single-pass FlashAttention backward inner loop (FA2/FA3
algorithm; Twill paper section 6.3): for a fixed K/V tile, iterate over Q tiles.

Per iteration: load_q (Q and LSE), load_do (dO and D) by TMA; qk (S = Q K^T); exp (P = exp2(S -
LSE)); dp (dP = dO V^T); ds (dS = P (dP - D)); dv (dV += P^T dO) and dk (dK += dS^T Q), whose
accumulators are carried to the next iteration; dq (dQ = dS K); dq_stage (dQ through registers
to shared memory) and dq_store (the TMA reduce-add into global memory: the atomic reduction;
issued asynchronously, it only holds the staging buffer until the TMA has read it).  Five
GEMMs, one exponential, one reduction.  Write-after-read edges guard the Q and dO rings (`stages`),
the P and dS shared-memory tiles (`ps_stages`) and the single dQ staging buffer.

h100 (FA3 bwd): results live in registers of the 128 threads of a warpgroup: S, P, dP are
block_m x block_n fp32 (64 registers at 64 x 128), dS is kept in 16 bits for the dQ GEMM, and the
dV and dK accumulators take block_n x head_dim fp32 each (128 registers at 128 x 128), so the two
cannot share a 240-register warpgroup - the register limit is what shapes the Hopper schedule.
P and dS also go to shared memory as the dV / dK GEMM operands.
b200 (FA4 bwd): S, dP, dV, dK, dQ live in Tensor Memory (columns), the compute warps load S and dP
with tcgen05.ld (blocking on the MMA commit), keep P in registers for dS, store P (16-bit) back to
TMEM for the dV GEMM and dS to shared memory; dq_stage loads dQ from TMEM into registers and
writes it to shared memory for the reduce-add.  The default inventory is FA4 bwd's launch
(reduce 152, two compute warpgroups 136, MMA and load warps 88).  On both machines dq_stage holds
the dQ tile in registers while it writes it out (charged as its result's registers).

`subtiles=2` splits the K/V tile into two halves of block_n/2 rows, each with its own S, P, dP,
dS, dV, dK and a partial dQ (reduced separately by the atomic add).

Hand-offs follow where each value lives: wgmma results (h100) and P, dP in registers cross
through shared memory; tcgen05 results (b200) are handed over by the MMA's commit barrier; P in
TMEM (b200) and P, dS, the staged dQ in shared memory need an mbarrier to another group and a
fence with a named barrier within one (docs/machines.md).  Non-power-of-two tiles (FA3 bwd's 80
rows, say) are accepted when the GEMMs can be issued (`attention.check_gemm`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from warpweave.core.model import Model
from warpweave.errors import InputError
from warpweave.kernels.attention import attention_flops, check_gemm, regs, tile_params, tma_loads
from warpweave.kernels.graph import Graph
from warpweave.kernels.spec import KernelSpec, Param, machine_for
from warpweave.machines.costs import Phase, cycles, dtype_bytes
from warpweave.machines.gpu import MachineSpec

# FA4 bwd's launch on B200: reduce warpgroup, two compute warpgroups, MMA and load warps.
B200_GROUPS = "wg0:4:152,wg1:4:136,wg2:4:136,w12:1:88,w13:1:88"
B200_VL = "w13"
DEFAULT_BLOCK_M = {"h100": 64, "b200": 128}


def build(spec: MachineSpec, block_m: int, block_n: int, head_dim: int, dtype: str, stages: int,
          ps_stages: int, subtiles: int, inventory: str, groups: str, vl: str,
          max_regs: int) -> Model:
    cost = spec.costs
    tmem = cost.has_tmem
    eb = dtype_bytes(dtype)
    block_m = block_m or DEFAULT_BLOCK_M.get(spec.name, 64)
    n = block_n // subtiles
    if n * subtiles != block_n:
        raise InputError(f"block_n must split into {subtiles} halves", ("params", "block_n"),
                         block_n)
    split = {"block_n": subtiles}  # the GEMMs' N is a half of block_n with subtiles=2
    check_gemm(block_m, n, head_dim, dtype, ("block_m", "block_n", "head_dim"), split)  # S, dP
    check_gemm(n, head_dim, block_m, dtype, ("block_n", "head_dim", "block_m"), split)  # dV, dK
    check_gemm(block_m, head_dim, n, dtype, ("block_m", "head_dim", "block_n"), split)  # dQ
    q_bytes = block_m * head_dim * eb + block_m * 4             # Q and LSE (dO and D alike)
    kv_resident = 2 * block_n * head_dim * eb                   # K and V stay in shared memory
    machine = machine_for(spec, inventory, groups, vl, max_regs,
                          B200_GROUPS if tmem else None, B200_VL if tmem else None,
                          smem_reserved=kv_resident)
    name = "fa-bwd" if subtiles == 1 else "fa-bwd-subtiled"
    g = Graph(name, machine, cost,
              tile={"block_m": block_m, "block_n": block_n, "head_dim": head_dim})
    tma_loads(g, cost, ("load_q", "load_do"), q_bytes)
    s_elems, kv_elems, q_elems = block_m * n, n * head_dim, block_m * head_dim
    smem_write = Phase(None, 0, cycles(s_elems * eb / cost.f["smem_bytes_per_clk"]), "st.shared")
    mma = {"warps": 1 if tmem else 4, "is_async": True}
    # an MMA result: handed over by the commit barrier (TMEM), or the issuer's registers
    out = {"payload": "async"} if tmem else {"payload": "registers"}

    def result(elements: int, nbytes: int) -> dict:
        """Where a GEMM result lives: TMEM columns on b200, registers of a warpgroup on h100."""
        if tmem:
            return {"footprint": {"tmem": elements * nbytes // (128 * 4)}}
        return {"regs": regs(elements, nbytes),
                "spill_cost": cost.register_handoff(elements * nbytes)}

    for h in range(subtiles):
        x = str(h) if subtiles > 1 else ""
        qk = g.op(f"qk{x}", cost.gemm(block_m, n, head_dim, dtype), **mma, **result(s_elems, 4))
        dp = g.op(f"dp{x}", cost.gemm(block_m, n, head_dim, dtype), **mma, **result(s_elems, 4))
        if tmem:
            exp = g.op(f"exp{x}", cost.tmem_load(s_elems),
                       (cost.exp(s_elems), cost.fp32(s_elems, 1, "scale")),
                       cost.tmem_store(s_elems), warps=4, regs=regs(s_elems, 4),
                       footprint={"tmem": s_elems * eb // (128 * 4)},
                       spill_cost=cost.register_handoff(s_elems * 4))
            ds = g.op(f"ds{x}", cost.tmem_load(s_elems), cost.fp32(s_elems, 2, "P (dP - D)"),
                      cost.convert(s_elems), smem_write, warps=4,
                      footprint={"smem": s_elems * eb})
        else:
            exp = g.op(f"exp{x}", (cost.exp(s_elems), cost.fp32(s_elems, 1, "scale")),
                       cost.convert(s_elems), smem_write, warps=4, regs=regs(s_elems, 4),
                       footprint={"smem": s_elems * eb},
                       spill_cost=cost.register_handoff(s_elems * 4))
            ds = g.op(f"ds{x}", cost.fp32(s_elems, 2, "P (dP - D)"), cost.convert(s_elems),
                      smem_write, warps=4, regs=regs(s_elems, eb),
                      footprint={"smem": s_elems * eb},
                      spill_cost=cost.register_handoff(s_elems * eb))
        dv = g.op(f"dv{x}", cost.gemm(n, head_dim, block_m, dtype), **mma, **result(kv_elems, 4))
        dk = g.op(f"dk{x}", cost.gemm(n, head_dim, block_m, dtype), **mma, **result(kv_elems, 4))
        dq = g.op(f"dq{x}", cost.gemm(block_m, head_dim, n, dtype), **mma, **result(q_elems, 4))
        fetch = (cost.tmem_load(q_elems),) if tmem else ()
        # dQ passes through the registers of the staging warps (b200: tcgen05.ld from TMEM)
        # before it reaches shared memory; they are charged as its result's registers, live
        # until the reduce-add issues.
        stage = g.op(f"dq_stage{x}", *fetch,
                     Phase(None, 0, cycles(q_elems * 4 / cost.f["smem_bytes_per_clk"]),
                           "st.shared"), warps=4, regs=regs(q_elems, 4),
                     footprint={"smem": q_elems * 4})
        store = g.op(f"dq_store{x}", cost.tma_store(q_elems * 4, "TMA reduce-add", True),
                     warps=1, is_async=True)
        for load, gemm in (("load_q", qk), ("load_q", dk), ("load_do", dp), ("load_do", dv)):
            g.edge(load, gemm, blocking=True, payload="async")
        g.edge(qk, exp, blocking=True, nbytes=s_elems * 4, **out)
        g.edge(dp, ds, blocking=True, nbytes=s_elems * 4, **out)
        g.edge(exp, ds, payload="registers", nbytes=s_elems * 4)
        g.edge(exp, dv, payload="tmem" if tmem else "smem")     # P as the dV GEMM's operand
        g.edge(ds, dk, payload="smem")                          # dS^T from shared memory
        # the dQ GEMM reads dS from shared memory (b200) or from the registers (h100)
        g.edge(ds, dq, payload="smem" if tmem else "registers", nbytes=s_elems * eb)
        g.edge(dq, stage, blocking=True, nbytes=q_elems * 4, **out)
        g.edge(stage, store, payload="smem")
        acc = "accumulator" if tmem else "registers"
        g.edge(dv, dv, distance=1, payload=acc, nbytes=kv_elems * 4)
        g.edge(dk, dk, distance=1, payload=acc, nbytes=kv_elems * 4)
        g.reuse(dk, "load_q", stages)
        g.reuse(dv, "load_do", stages)
        g.reuse(dv, exp, ps_stages)
        g.reuse(dk, ds, ps_stages)
        if tmem:
            g.reuse(dq, ds, ps_stages)   # on b200 the dQ GEMM reads dS from shared memory too
        g.reuse(store, stage, 1)        # the staging buffer is free once the TMA has read it
    return g.model()


def work(machine: str | None, p: Mapping[str, Any]) -> int:
    """Five GEMMs (S, dP, dV, dK, dQ) of block_m x block_n x head_dim per iteration."""
    block_m = p["block_m"] or DEFAULT_BLOCK_M.get(machine or "", 64)
    return attention_flops(1, 5, block_m, p["block_n"], p["head_dim"])


SPEC = KernelSpec(
    name="fa-bwd",
    description="single-pass FlashAttention backward inner loop: 5 GEMMs, one exponential, dQ "
                "atomic reduction (subtiles=2: the K/V tile in two halves)",
    machines=("h100", "b200"),
    params=(*tile_params(0, 128, 2, what_m="rows of a Q tile (default: 64 on h100 as FA3, "
                                           "128 on b200 as FA4)"),
            Param("ps_stages", int, 1, "depth of the P and dS shared-memory buffers", low=1),
            Param("subtiles", int, 1, "halves of the K/V tile", choices=(1, 2))),
    build_fn=build,
    follows="Twill paper section 6.3; FA3 hopper bwd; FA4 flash_bwd_sm100.py",
    work=work,
)
