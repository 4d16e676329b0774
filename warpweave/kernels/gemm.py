"""`gemm` on h100 and b200: output tiles of a persistent, warp-specialized GEMM, one per iteration
(`subtiles=2`: two per iteration, as Hopper's two consumer warpgroups each work on their own tile).

Per iteration: `k_steps` k-steps, each a TMA load of the A and B slices (`load<i>`, variable
latency, into a shared-memory ring of `stages` slots) and an MMA (`mma<i>`) accumulating into the
tile's accumulator; then the epilogue `epi` (accumulator to 16 bits into shared memory) and the TMA
store `store`.  The k-step MMAs form a chain on the tensor core (each may issue once the previous
one has left it); the ring's write-after-read edges run from the MMA that last read a slot to the
load that refills it.

h100 (CUTLASS Hopper warp-specialized GEMM): TMA on a producer warp, wgmma from a 4-warp consumer
whose registers hold the fp32 accumulator (block_m x block_n / 128 threads), the epilogue by a
consumer warpgroup; the accumulator registers are reused by the next tile once `epi` has read
them.  b200 (CUTLASS / FA4-style SM100 GEMM): tcgen05 MMAs issued by one warp into a TMEM
accumulator of block_n columns, `acc_stages` accumulators (TMEM double buffering lets the
epilogue of one tile overlap the MMAs of the next), the epilogue loads the accumulator from TMEM.

With `subtiles=2` each iteration computes two output tiles, each with its own k-step loads, MMAs,
accumulator, epilogue and store; the producer fills one ring with tile 0's k-steps, then tile
1's (op names `load<t>_<i>`, `mma<t>_<i>`, `epi<t>`, `store<t>`).

Hand-offs: an MMA after an MMA on the same accumulator pays an mbarrier when another warp issues
it (b200; on h100 the accumulator is in the issuer's registers and crosses through shared
memory); the epilogue's staged tile reaches the TMA store through shared memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from warpweave.core.model import Model
from warpweave.errors import InputError
from warpweave.kernels.attention import check_gemm, regs, tma_loads
from warpweave.kernels.graph import Graph
from warpweave.kernels.spec import KernelSpec, Param, machine_for
from warpweave.machines.costs import Phase, cycles, dtype_bytes
from warpweave.machines.gpu import MachineSpec

DEFAULT_BLOCK_N = {"h100": 128, "b200": 256}


def ring_reader(step: int, k_steps: int, stages: int) -> tuple[int, int]:
    """The k-step that last used the ring slot that k-step `step` loads into, and how many
    iterations back it ran: global step g reuses the slot of g - stages."""
    earlier = step - stages
    return earlier % k_steps, -(earlier // k_steps)


def build(spec: MachineSpec, block_m: int, block_n: int, block_k: int, dtype: str, k_steps: int,
          stages: int, acc_stages: int, subtiles: int, inventory: str, groups: str, vl: str,
          max_regs: int) -> Model:
    cost = spec.costs
    tmem = cost.has_tmem
    eb = dtype_bytes(dtype)
    block_n = block_n or DEFAULT_BLOCK_N.get(spec.name, 128)
    if tmem and block_m not in (64, 128):
        raise InputError("a tcgen05 MMA of one CTA has M = 64 or 128", ("params", "block_m"),
                         block_m)
    check_gemm(block_m, block_n, block_k, dtype, ("block_m", "block_n", "block_k"))
    columns = int(cost.f["tmem_columns"]) if tmem else 0
    acc_stages = acc_stages or (max(1, min(2, columns // (block_n * subtiles))) if tmem else 1)
    if tmem and subtiles * acc_stages * block_n > columns:
        raise InputError(f"{subtiles} x {acc_stages} accumulators of {block_n} columns exceed "
                         f"Tensor Memory ({columns})", ("params", "acc_stages"), acc_stages)
    machine = machine_for(spec, inventory, groups, vl, max_regs)
    g = Graph("gemm" if subtiles == 1 else "gemm-2tiles", machine, cost,
              tile={"block_m": block_m, "block_n": block_n, "block_k": block_k})
    acc_elems = block_m * block_n
    if tmem:
        acc = {"footprint": {"tmem": block_n}, "warps": 1}
        chain = {"payload": "accumulator"}
    else:
        acc = {"regs": regs(acc_elems, 4), "warps": 4,
               "spill_cost": cost.register_handoff(acc_elems * 4)}
        chain = {"payload": "registers", "nbytes": acc_elems * 4}
    total = subtiles * k_steps

    def tag(t: int, i: int | None = None) -> str:
        if subtiles == 1:
            return "" if i is None else str(i)
        return str(t) if i is None else f"{t}_{i}"

    loads = [f"load{tag(t, i)}" for t in range(subtiles) for i in range(k_steps)]
    tma_loads(g, cost, tuple(loads), (block_m + block_n) * block_k * eb)
    phase = cost.gemm(block_m, block_n, block_k, dtype)
    mmas = [g.op(f"mma{tag(t, i)}", phase, is_async=True, **acc)
            for t in range(subtiles) for i in range(k_steps)]
    c_bytes = acc_elems * 2   # the output tile in 16 bits
    for t in range(subtiles):
        fetch = (cost.tmem_load(acc_elems),) if tmem else ()
        epi = g.op(f"epi{tag(t)}", *fetch, cost.convert(acc_elems),
                   Phase(None, 0, cycles(c_bytes / cost.f["smem_bytes_per_clk"]), "st.shared"),
                   warps=4, footprint={"smem": c_bytes})
        store = g.op(f"store{tag(t)}", cost.tma_store(c_bytes, until_read=True), warps=1,
                     is_async=True)
        mine = mmas[t * k_steps:(t + 1) * k_steps]
        for a, b in itertools.pairwise(mine):
            # issue once the previous left the TC; accumulate into its result
            g.edge(a, b, delay=phase.busy, in_place=True, **chain)
        g.edge(mine[-1], epi, blocking=True, payload="async" if tmem else "registers",
               nbytes=acc_elems * 4)
        g.edge(epi, store, payload="smem")
        g.reuse(store, epi, 1)                          # the C staging tile, once read by TMA
        g.reuse(epi, mine[0], acc_stages)               # the accumulator is free once read
    for step in range(total):
        g.edge(loads[step], mmas[step], blocking=True, payload="async")
        reader, back = ring_reader(step, total, stages)
        g.reuse(mmas[reader], loads[step], back)
    return g.model()


def work(machine: str | None, p: Mapping[str, Any]) -> int:
    """k_steps MMAs of block_m x block_n x block_k for each output tile of the iteration."""
    block_n = p["block_n"] or DEFAULT_BLOCK_N.get(machine or "", 128)
    return p.get("subtiles", 1) * p["k_steps"] * 2 * p["block_m"] * block_n * p["block_k"]


SPEC = KernelSpec(
    name="gemm",
    description="persistent warp-specialized GEMM, one or two output tiles per iteration: TMA "
                "ring, k-step MMAs, epilogue and TMA store",
    machines=("h100", "b200"),
    params=(Param("block_m", int, 128, "rows of the output tile", low=16, aliases=("tile_m",)),
            Param("block_n", int, 0, "columns of the output tile (default: 128 on h100, 256 on "
                  "b200)", low=8, aliases=("tile_n",)),
            Param("block_k", int, 64, "depth of one k-step", low=8, aliases=("tile_k",)),
            Param("dtype", str, "bf16", "input dtype", choices=("bf16", "fp16", "fp8")),
            Param("k_steps", int, 8, "k-steps per output tile in the loop body", low=1,
                  high=16),
            Param("stages", int, 4, "shared-memory ring depth in k-steps", low=1),
            Param("acc_stages", int, 0, "accumulator buffers per tile (default: 1 in h100 "
                  "registers, 2 in b200 TMEM when they fit)", low=0),
            Param("subtiles", int, 1, "output tiles per iteration (2: Hopper's two consumer "
                  "warpgroups)", choices=(1, 2))),
    build_fn=build,
    follows="CUTLASS warp-specialized GEMM (sm90 TMA+wgmma, sm100 tcgen05 + TMEM epilogue)",
    work=work,
)
