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
        Param("block_m", int, block_m, what_m, low=16),
        Param("block_n", int, block_n, what_n, low=16),
        Param("head_dim", int, 128, "head dimension d", low=16),
        Param("dtype", str, "bf16", "input dtype", choices=("bf16", "fp16", "fp8")),
        Param("stages", int, stages, "buffer ring depth: the write-after-read edge distance",
              low=1),
    )


def regs(elements: int, nbytes: int) -> int:
    """Registers per thread of a warpgroup holding `elements` values of `nbytes` bytes."""
    return math.ceil(elements * nbytes / 4 / WARPGROUP_THREADS)


def tma_loads(g: Graph, cost: CostModel, names: tuple[str, ...], nbytes: int) -> None:
    """TMA tile loads: async, one warp, variable latency, holding their SMEM slot while live."""
    for name in names:
        g.op(name, cost.tma_load(nbytes), footprint={"smem": nbytes}, warps=1,
             variable_latency=True, is_async=True)
