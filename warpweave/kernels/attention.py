"""What the attention kernels share: tile parameters and their checks, register sizes of tile
values, the K/V loads that feed every Q tile, and the edges of an online-softmax tile.

Sizes: a value of `elements` items of `nbytes` each, spread over the 128 threads of a warpgroup,
takes ceil(elements * nbytes / 4 / 128) 32-bit registers per thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from warpweave.errors import InputError
from warpweave.kernels.graph import Graph
from warpweave.kernels.spec import Param
from warpweave.machines.costs import CostModel, dtype_bytes

WARPGROUP_THREADS = 128
MMA_M = 64        # wgmma's M, and the smaller of tcgen05's (64, 128) per CTA
MMA_N = 8         # N granularity of both
MMA_K_BYTES = 32  # K granularity: 16 elements of 16 bits, 32 of 8 bits


def tile_params(block_m: int, block_n: int, stages: int, what_m: str = "rows of a Q tile",
                what_n: str = "rows of a K/V tile") -> tuple[Param, ...]:
    return (
        Param("block_m", int, block_m, what_m, low=16, aliases=("tile_m",)),
        Param("block_n", int, block_n, what_n, low=16, aliases=("tile_n",)),
        Param("head_dim", int, 128, "head dimension d", low=16),
        Param("dtype", str, "bf16", "input dtype", choices=("bf16", "fp16", "fp8")),
        Param("stages", int, stages, "buffer ring depth: the write-after-read edge distance",
              low=1),
    )


def attention_flops(tiles: int, gemms: int, block_m: int, block_n: int, head_dim: int) -> int:
    """Useful FLOPs of `tiles` Q tiles each doing `gemms` GEMMs over block_m x block_n x
    head_dim (2mnd each; the exponentials and the row statistics are not counted, as in the
    FlashAttention papers' TFLOPS)."""
    return tiles * gemms * 2 * block_m * block_n * head_dim


def check_gemm(m: int, n: int, k: int, dtype: str, names: tuple[str, str, str],
               parts: Mapping[str, int] | None = None) -> None:
    """An m x n x k GEMM of a tile must be issuable by wgmma / tcgen05 MMAs: M or N (the kernel
    may compute the transpose) a multiple of 64, the other a multiple of 8, K a multiple of 16
    16-bit (32 8-bit) elements.  `names` are the tile parameters that are M, N and K, in that
    order; `parts` maps a parameter to the parts its value is split in when a dimension is one
    part (fa-bwd's subtiles: N is block_n / 2).  InputError otherwise, on the parameter to
    change - K's if K is off its step, else M's or N's if one is not a multiple of 8, else M's -
    with its value as given, and every dimension's - non-power-of-two tiles such as 80 are fine
    when they meet this."""
    step_k = MMA_K_BYTES // dtype_bytes(dtype)
    ok = k % step_k == 0 and ((m % MMA_M == 0 and n % MMA_N == 0)
                              or (n % MMA_M == 0 and m % MMA_N == 0))
    if not ok:
        parts = parts or {}
        dims = dict(zip(names, (m, n, k), strict=True))
        culprit = names[2] if k % step_k else names[1] if m % MMA_N == 0 and n % MMA_N else \
            names[0]
        shown = ", ".join(f"{a}/{parts[a]}={v}" if parts.get(a, 1) > 1 else f"{a}={v}"
                          for a, v in dims.items())
        raise InputError(f"the {m}x{n}x{k} GEMM cannot be issued as MMAs: needs M or N a "
                         f"multiple of {MMA_M}, the other of {MMA_N}, and K a multiple of "
                         f"{step_k} for {dtype} ({shown})", ("params", culprit),
                         dims[culprit] * parts.get(culprit, 1))


def regs(elements: int, nbytes: int) -> int:
    """Registers per thread of a warpgroup holding `elements` values of `nbytes` bytes."""
    return math.ceil(elements * nbytes / 4 / WARPGROUP_THREADS)


def tma_loads(g: Graph, cost: CostModel, names: tuple[str, ...], nbytes: int) -> None:
    """TMA tile loads: async, one warp, variable latency, holding their SMEM slot while live."""
    for name in names:
        g.op(name, cost.tma_load(nbytes), footprint={"smem": nbytes}, warps=1,
             variable_latency=True, is_async=True)


def online_softmax_edges(g: Graph, qk: str, rowmax: str, softmax: str, rescale: str, pv: str,
                         stages: int, *, s_bytes: int, o_bytes: int, stats_bytes: int,
                         loaded: str | None = None, first_chunk: int = 0) -> None:
    """The edges every online-softmax tile has (FA3 and FA4 alike): the K/V tiles feed the two
    GEMMs (blocking on the TMA barrier), S feeds the row max and the softmax (the first read waits
    for the MMA), the row max feeds the softmax and the rescale, the rescaled O feeds PV; m and O
    are carried to the next iteration (O through a blocking wait on PV); the K and V slots are
    refilled `stages` iterations later, once the GEMM that read them is done.

    With S in Tensor Memory (`loaded`: the op that loads it into registers, whose first column
    chunk the row max may start on after `first_chunk` cycles) the MMA results are handed over by
    its commit barrier and the corrected O goes back to TMEM (an mbarrier to PV's group, a fence
    and named barrier within one).  Without, S and O land in the registers of the warpgroup
    that issued the wgmma (`s_bytes`, `o_bytes`) and cross groups through shared memory.  The
    row statistics (`stats_bytes`) are register values either way."""
    tmem = loaded is not None
    mma_out = {"payload": "async"} if tmem else {"payload": "registers"}
    g.edge("load_k", qk, blocking=True, payload="async")
    g.edge("load_v", pv, blocking=True, payload="async")
    if tmem:
        g.edge(qk, loaded, blocking=True, **mma_out)
        g.edge(qk, softmax, **mma_out)    # P overwrites S: its columns stay S's until then
        g.edge(loaded, rowmax, delay=first_chunk, payload="registers", nbytes=s_bytes)
        g.edge(loaded, softmax, payload="registers", nbytes=s_bytes)
    else:
        g.edge(qk, rowmax, blocking=True, nbytes=s_bytes, **mma_out)
        g.edge(qk, softmax, nbytes=s_bytes, **mma_out)
    g.edge(rowmax, softmax, payload="registers", nbytes=stats_bytes)
    g.edge(rowmax, rescale, payload="registers", nbytes=stats_bytes)
    g.edge(rowmax, rowmax, distance=1, payload="registers", nbytes=stats_bytes)
    g.edge(pv, rescale, distance=1, blocking=True, nbytes=o_bytes, **mma_out)
    g.edge(rescale, pv, payload="tmem" if tmem else "registers", nbytes=o_bytes, in_place=True)
    g.reuse(qk, "load_k", stages)
    g.reuse(pv, "load_v", stages)
