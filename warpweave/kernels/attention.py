"""What the attention kernels share: tile parameters, register sizes of tile values, and the K/V
loads that feed every Q tile.

Sizes: a value of `elements` items of `nbytes` each, spread over the 128 threads of a warpgroup,
takes ceil(elements * nbytes / 4 / 128) 32-bit registers per thread.
"""

from __future__ import annotations

import math

from warpweave.kernels.graph import Graph
from warpweave.kernels.spec import Param
from warpweave.machines.costs import CostModel

WARPGROUP_THREADS = 128


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


def regs(elements: int, nbytes: int) -> int:
    """Registers per thread of a warpgroup holding `elements` values of `nbytes` bytes."""
    return math.ceil(elements * nbytes / 4 / WARPGROUP_THREADS)


def tma_loads(g: Graph, cost: CostModel, names: tuple[str, ...], nbytes: int) -> None:
    """TMA tile loads: async, one warp, variable latency, holding their SMEM slot while live."""
    for name in names:
        g.op(name, cost.tma_load(nbytes), footprint={"smem": nbytes}, warps=1,
             variable_latency=True, is_async=True)


def online_softmax_edges(g: Graph, qk: str, rowmax: str, softmax: str, rescale: str, pv: str,
                         stages: int) -> None:
    """The edges every online-softmax tile has (FA3 and FA4 alike): the K/V tiles feed the two
    GEMMs (blocking on the TMA barrier), S feeds the row max and the softmax (the first read waits
    for the MMA), the row max feeds the softmax and the rescale, the rescaled O feeds PV; m and O
    are carried to the next iteration (O through a blocking wait on PV); the K and V slots are
    refilled `stages` iterations later, once the GEMM that read them is done."""
    g.edge("load_k", qk, blocking=True)
    g.edge("load_v", pv, blocking=True)
    g.edge(qk, rowmax, blocking=True)
    g.edge(qk, softmax)
    g.edge(rowmax, softmax)
    g.edge(rowmax, rescale)
    g.edge(rescale, pv)
    g.edge(rowmax, rowmax, distance=1)
    g.edge(pv, rescale, distance=1, blocking=True)
    g.reuse(qk, "load_k", stages)
    g.reuse(pv, "load_v", stages)
