"""`fa3-fwd` on h100: the FlashAttention-3 forward inner loop as the 8-op graph of the Modular
post (seeds/modular-swp-part1.txt, "The unpipelined FA3 inner loop").

Ops: load_k, load_v (TMA, variable latency, on the producer), qk (wgmma S = Q K^T), rowmax (new
row max and the rescale factor alpha = exp2(m_old - m_new)), softmax (P = exp2(S - m) with the row
sums on the FMA lanes), cast (P to 16 bits), rescale (O *= alpha), pv (wgmma O += P V, A from
registers).  13 edges: 9 same-iteration, 2 loop-carried (m, and O into the next rescale) and 2
write-after-read edges of distance `stages` for the K and V rings.  A consumer waits on an
mbarrier for a TMA tile and on wgmma completion for S and O: those edges are blocking.

`subtiles=2` gives two Q tiles of `block_m` rows sharing each K/V tile (FA3's two consumer
warpgroups, the setting of its ping-pong schedule): the six compute ops per tile, loads shared.
Defaults follow FA3 for head dim 128: 64 rows per consumer warpgroup, 16-bit inputs, 2 K/V stages
(FA3 uses 176-column K/V tiles; 128 keeps tiles powers of two, as the Twill paper's Triton input).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from warpweave.core.model import Model
from warpweave.kernels.attention import (
    attention_flops,
    check_gemm,
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
          subtiles: int, inventory: str, groups: str, vl: str, max_regs: int) -> Model:
    cost = spec.costs
    eb = dtype_bytes(dtype)
    check_gemm(block_m, block_n, head_dim, dtype, ("block_m", "block_n", "head_dim"))
    check_gemm(block_m, head_dim, block_n, dtype, ("block_m", "head_dim", "block_n"))
    kv_bytes = block_n * head_dim * eb
    machine = machine_for(spec, inventory, groups, vl, max_regs,
                          smem_reserved=subtiles * block_m * head_dim * eb)  # resident Q tiles
    name = "fa3-fwd" if subtiles == 1 else "fa3-fwd-subtiled"
    g = Graph(name, machine, cost,
              tile={"block_m": block_m, "block_n": block_n, "head_dim": head_dim})
    tma_loads(g, cost, ("load_k", "load_v"), kv_bytes)
    s_elems, o_elems = block_m * block_n, block_m * head_dim
    stats = 2 * -(-block_m // 32)   # m and m_old: each thread holds block_m/32 rows (wgmma layout)

    def value(elements: int, nbytes: int) -> dict:
        """A register-resident result: its size and the cost of handing it to another group
        (every value of this kernel lives in registers: wgmma writes the issuer's registers)."""
        return {"regs": regs(elements, nbytes), "warps": 4,
                "spill_cost": cost.register_handoff(elements * nbytes)}

    for t in range(subtiles):
        x = str(t) if subtiles > 1 else ""
        qk = g.op(f"qk{x}", cost.gemm(block_m, block_n, head_dim, dtype), is_async=True,
                  **value(s_elems, 4))
        rowmax = g.op(f"rowmax{x}", cost.row_max(s_elems), cost.exp(block_m),
                      regs=stats, warps=4, spill_cost=cost.register_handoff(stats * 128 * 4))
        softmax = g.op(f"softmax{x}", (cost.exp(s_elems), cost.fp32(s_elems, 2, "scale, rowsum")),
                       **value(s_elems, 4))
        cast = g.op(f"cast{x}", cost.convert(s_elems), **value(s_elems, eb))
        rescale = g.op(f"rescale{x}", cost.fp32(o_elems, 1, "O *= alpha"), **value(o_elems, 4))
        pv = g.op(f"pv{x}", cost.gemm(block_m, head_dim, block_n, dtype), is_async=True,
                  **value(o_elems, 4))
        online_softmax_edges(g, qk, rowmax, softmax, rescale, pv, stages, s_bytes=s_elems * 4,
                             o_bytes=o_elems * 4, stats_bytes=stats * 128 * 4)
        g.edge(softmax, cast, payload="registers", nbytes=s_elems * 4)
        g.edge(cast, pv, payload="registers", nbytes=s_elems * eb)
    return g.model()


def work(machine: str | None, p: Mapping[str, Any]) -> int:
    """QK and PV of block_m x block_n x head_dim for each of the `subtiles` Q tiles."""
    return attention_flops(p["subtiles"], 2, p["block_m"], p["block_n"], p["head_dim"])


SPEC = KernelSpec(
    name="fa3-fwd",
    description="FlashAttention-3 forward inner loop on Hopper: 8 ops, 13 edges "
                "(subtiles=2: two Q tiles sharing K/V)",
    machines=("h100",),
    params=(*tile_params(64, 128, 2),
            Param("subtiles", int, 1, "Q tiles sharing each K/V tile", choices=(1, 2))),
    build_fn=build,
    follows="Modular, Software Pipelining for GPU Kernels part 1 (FA3 loop); FA3 paper",
    work=work,
)
