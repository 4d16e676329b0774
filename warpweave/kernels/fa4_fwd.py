"""`fa4-fwd` on b200: the FlashAttention-4 forward inner loop as the 14-op graph of the Modular
post (seeds/modular-swp-part1.txt, "Flash Attention 4: the problem gets worse").

Two Q tiles (0 and 1) of `block_m` rows share each K/V tile.  Ops: load_k, load_v (TMA, variable
latency); per tile t: qk_t (tcgen05 MMA S_t = Q_t K^T into TMEM), load_s_t (tcgen05.ld of S_t into
registers), rowmax_t (row max, alpha = exp2(m_old - m_new)), softmax_t (the scaling FMAs and exp2
- on the MUFU, part emulated on the FMA lanes - P_t stored back to TMEM over S_t), rowsum_t (the
row sum of P_t, l = alpha l + sum), rescale_t (the correction: tcgen05.ld of O_t, O_t *= alpha,
tcgen05.st), pv_t (MMA O_t += P_t V).  That is Modular's 14-op graph with each tile's S load split
from its row max (16 ops), because the two hold different values: S's 128 registers until the
softmax, the row statistics until the next row max.  32 edges: 22 same-iteration, 6 loop-carried
(m, l and O per tile) and 4 write-after-read edges of distance `stages` for the K/V rings.  An op
that reads an MMA result from TMEM waits on its commit barrier (blocking edge), as does an MMA
waiting for a TMA tile.

What follows FA4's source (github.com/Dao-AILab/flash-attention at 0251105,
flash_attn/cute/flash_fwd_sm100.py, `softmax_step`; docs/machines.md has the places):
- S is loaded with one `cute.copy` of four 32-column atoms and one wait, then reduced: the load and
  the reduction run one after the other (`chunks=1`).  `chunks=c` models them (and the exp2 with
  the P store) software-pipelined over c column chunks instead, which FA4's code does not do.
- P is stored to TMEM and handed to the MMA warp before the row sum (`update_row_sum` follows
  `consumer_release`): rowsum_t is its own op, after the softmax, off the path to PV; it holds P in
  registers.  Its cost is Meta's measured B200 row sum (the warps are held for its pipe occupancy).
- exp2 emulation: FA4's `apply_exp2_convert` (softmax.py) computes, in each 32-column fragment j
  with `ex2_emu_start_frg` <= j < last, the pairs k with k % freq >= freq - 4 by a polynomial on
  the FMA lanes (`ex2_emulation_2`, utils.py: 12 instructions per pair); `ex2_emu_freq` defaults to
  16, FA4's value for 1-CTA head dim 128 (flash_fwd_sm100.py:528).  At block_n = 128 that is 16 of
  128 columns (12.5%).
- The correction is conditional (rescale threshold 8.0 for 16-bit inputs; `should_rescale` is a
  warp vote): `rescale=always` (default) charges the worst case, every iteration;
  `rescale=never` the best, where the correction warps only vote and release O.

Footprints follow FA4's TMEM plan (S0, S1, O0, O1 of 128 columns each, P aliased in S): S_t and
P_t each hold `block_n` columns, O_t `head_dim` columns, so the 512 columns admit one S-or-P per
tile besides both accumulators - qk_t of the next iteration cannot start before pv_t has been
issued.  Hand-offs follow where each value lives: S and O from the MMA (its commit barrier), P and
the corrected O in TMEM (an mbarrier to another group, a fence and named barrier within one), the
row statistics and S in registers (through shared memory).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from warpweave.core.model import Model
from warpweave.errors import InputError
from warpweave.kernels.attention import (
    attention_flops,
    check_gemm,
    online_softmax_edges,
    regs,
    tile_params,
    tma_loads,
)
from warpweave.kernels.graph import Graph, pipelined, split
from warpweave.kernels.spec import KernelSpec, Param, machine_for
from warpweave.machines.costs import dtype_bytes
from warpweave.machines.gpu import MachineSpec

FRAGMENT = 32        # columns per exp2 fragment (softmax.py: frg_tile = 32)
EMULATED_PER_PERIOD = 4   # pairs emulated per `freq` pairs (apply_exp2_convert's ex2_emu_res)


def emulated_columns(block_n: int, freq: int, start_frg: int) -> int:
    """How many of a row's `block_n` exponentials FA4 computes by polynomial (softmax.py,
    apply_exp2_convert): in fragments start_frg <= j < last of 32 columns, the pairs k (k even)
    with k % freq >= freq - 4; none when freq is 0."""
    if freq == 0:
        return 0
    fragments = block_n // FRAGMENT
    pairs = sum(1 for k in range(0, FRAGMENT, 2) if k % freq >= freq - EMULATED_PER_PERIOD)
    return 2 * pairs * max(0, fragments - 1 - start_frg)


def build(spec: MachineSpec, block_m: int, block_n: int, head_dim: int, dtype: str, stages: int,
          ex2_emu_freq: int, ex2_emu_start_frg: int, emulation_ops: int, rescale: str,
          chunks: int, inventory: str, groups: str, vl: str, max_regs: int) -> Model:
    cost = spec.costs
    eb = dtype_bytes(dtype)
    if block_m not in (64, 128):
        raise InputError("a tcgen05 MMA of one CTA has M = 64 or 128 (the Q tile's rows)",
                         ("params", "block_m"), block_m)
    check_gemm(block_m, block_n, head_dim, dtype, ("block_m", "block_n", "head_dim"))
    check_gemm(block_m, head_dim, block_n, dtype, ("block_m", "head_dim", "block_n"))
    if ex2_emu_freq and ex2_emu_freq <= EMULATED_PER_PERIOD:
        raise InputError(f"FA4 emulates {EMULATED_PER_PERIOD} pairs per period: the period must "
                         f"exceed it (or be 0: no emulation)", ("params", "ex2_emu_freq"),
                         ex2_emu_freq)
    kv_bytes = block_n * head_dim * eb
    machine = machine_for(spec, inventory, groups, vl, max_regs,
                          smem_reserved=2 * block_m * head_dim * eb)
    g = Graph("fa4-fwd", machine, cost,
              tile={"block_m": block_m, "block_n": block_n, "head_dim": head_dim})
    tma_loads(g, cost, ("load_k", "load_v"), kv_bytes)
    s_elems, o_elems = block_m * block_n, block_m * head_dim
    emulated = block_m * emulated_columns(block_n, ex2_emu_freq, ex2_emu_start_frg)
    stats = 2 * block_m * 4                      # m and alpha: one fp32 each per row
    for t in (0, 1):
        qk = g.op(f"qk{t}", cost.gemm(block_m, block_n, head_dim, dtype), warps=1,
                  is_async=True, footprint={"tmem": block_n})
        # S into registers, then the row max: one pipeline that two ops run (the registers of S
        # and the row statistics live for different times); the row max starts on the first
        # chunk.
        load = pipelined((cost.tmem_load(s_elems), cost.row_max(s_elems)), chunks)
        first = load.placed[0][0].latency
        load_s = g.op(f"load_s{t}", split(load, {"tmem"}, 0), regs=regs(s_elems, 4), warps=4)
        rowmax = g.op(f"rowmax{t}", split(load, {"alu"}, first), cost.exp(block_m), regs=2,
                      warps=4)
        # The scaling FMA (one per element) runs beside the MUFU; emulated exp2s add their
        # polynomial to the FMA lanes.
        fma = cost.fp32(s_elems + emulated * emulation_ops, 1, "scale, exp2 polynomial")
        exp = (fma,) if emulated == s_elems else (fma, cost.exp(s_elems - emulated))
        softmax = g.op(f"softmax{t}", pipelined((exp, cost.tmem_store(s_elems)), chunks),
                       regs=regs(s_elems, 4), warps=4, footprint={"tmem": block_n})
        rowsum = g.op(f"rowsum{t}", cost.row_sum(s_elems), regs=1, warps=4)
        if rescale == "always":
            correct = (cost.tmem_load(o_elems), cost.fp32(o_elems, 1, "O *= alpha"),
                       cost.tmem_store(o_elems))
        else:
            correct = (cost.fp32(block_m, 1, "vote: alpha < 1"),)
        resc = g.op(f"rescale{t}", *correct, warps=4, footprint={"tmem": head_dim})
        pv = g.op(f"pv{t}", cost.gemm(block_m, head_dim, block_n, dtype), warps=1,
                  is_async=True, footprint={"tmem": head_dim})
        online_softmax_edges(g, qk, rowmax, softmax, resc, pv, stages, s_bytes=s_elems * 4,
                             o_bytes=o_elems * 4, stats_bytes=stats, loaded=load_s,
                             first_chunk=first)
        g.edge(softmax, rowsum, payload="registers", nbytes=s_elems * 4)
        g.edge(softmax, pv, payload="tmem")
        g.edge(rowsum, rowsum, distance=1, payload="registers", nbytes=block_m * 4)
    return g.model()


def work(machine: str | None, p: Mapping[str, Any]) -> int:
    """QK and PV of block_m x block_n x head_dim for each of the two Q tiles."""
    return attention_flops(2, 2, p["block_m"], p["block_n"], p["head_dim"])


SPEC = KernelSpec(
    name="fa4-fwd",
    description="FlashAttention-4 forward inner loop on Blackwell: two Q tiles sharing K/V, "
                "16 ops, 32 edges, S/P/O in Tensor Memory",
    machines=("b200",),
    params=(*tile_params(128, 128, 4),
            Param("ex2_emu_freq", int, 16, "FA4's exp2 emulation period: per 32-column "
                  "fragment, 4 of every freq pairs by polynomial (0: all on the MUFU)", low=0),
            Param("ex2_emu_start_frg", int, 1, "first fragment FA4 emulates in", low=0),
            Param("emulation_ops", int, 6, "FP32 instructions per emulated exp2 (FA4's "
                  "ex2_emulation_2: 12 per pair)", low=1),
            Param("rescale", str, "always", "the conditional correction: always (worst case) "
                  "or never (best case)", choices=("always", "never")),
            Param("chunks", int, 1, "column chunks the S load / row max and the exp2 / P store "
                  "are pipelined over (1: in sequence, as FA4's code)", low=1, high=16)),
    build_fn=build,
    follows="Modular, Software Pipelining for GPU Kernels part 1 (FA4 loop); FA4 "
            "flash_fwd_sm100.py; Twill paper section 6.2.2",
    work=work,
)
