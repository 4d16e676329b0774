"""Cost models: cycles of each tile-level op kind as a function of tile shape and dtype.

Every cost is a `Phase`: the unit it holds, for how many cycles the unit is busy (throughput:
work / rate per SM per clock) and after how many cycles its result is ready (latency, from a
measurement or `busy` plus a fixed overhead).  Kernel builders chain phases into ops
(`warpweave.kernels.graph`).  All formulas read named figures (`warpweave.machines.figures`), so
the provenance of every number is in one table per machine.
"""

from __future__ import annotations

import math

import attrs

from warpweave.core.errors import InputError
from warpweave.machines.figures import Figures

DTYPE_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
_TC_RATE = {"bf16": "tc_flops_16bit", "fp16": "tc_flops_16bit", "fp8": "tc_flops_8bit",
            "tf32": "tc_flops_tf32"}
KB = 1024


def cycles(x: float) -> int:
    """Whole cycles, rounded up, at least 1 (a tiny tolerance absorbs float noise)."""
    return max(1, math.ceil(x - 1e-9))


def dtype_bytes(dtype: str) -> int:
    if dtype not in DTYPE_BYTES:
        raise InputError(f"unknown dtype (known: {', '.join(DTYPE_BYTES)})", ("dtype",), dtype)
    return DTYPE_BYTES[dtype]


@attrs.frozen
class Phase:
    """A stretch of an op: `unit` (or nothing) busy for `busy` cycles from the phase's start;
    the phase's result is ready `latency` cycles after its start."""

    unit: str | None
    busy: int
    latency: int
    what: str = ""

    def __attrs_post_init__(self) -> None:
        if self.busy < 0 or self.latency < 1 or (self.unit is not None
                                                 and self.busy > self.latency):
            raise ValueError(f"bad phase {self}")


class CostModel:
    """The cost formulas of one machine, reading its figures."""

    def __init__(self, machine: str, figures: Figures):
        self.machine = machine
        self.f = figures

    @property
    def has_tmem(self) -> bool:
        return "tmem_columns" in self.f

    # -- tensor core -------------------------------------------------------------------------
    def gemm(self, m: int, n: int, k: int, dtype: str = "bf16") -> Phase:
        """An m x n x k MMA: busy 2mnk / (dense FLOPs/clk/SM); latency = base + slope * busy."""
        dtype_bytes(dtype)
        if dtype not in _TC_RATE:
            raise InputError("the tensor core has no rate for this dtype", ("dtype",), dtype)
        busy = cycles(2 * m * n * k / self.f[_TC_RATE[dtype]])
        latency = cycles(self.f["mma_latency_base"] + self.f["mma_latency_slope"] * busy)
        return Phase("tc", busy, max(latency, busy), f"gemm {m}x{n}x{k} {dtype}")

    # -- CUDA cores --------------------------------------------------------------------------
    def exp(self, elements: int) -> Phase:
        """exp2 on the MUFU: elements / (MUFU ops/clk/SM)."""
        busy = cycles(elements / self.f["mufu_per_clk"])
        return Phase("sfu", busy, busy, f"exp2 x{elements}")

    def fp32(self, elements: int, ops: int = 1, what: str = "fp32") -> Phase:
        """`ops` FP32 instructions per element on the FMA lanes."""
        busy = cycles(elements * ops / self.f["fp32_lanes"])
        return Phase("alu", busy, busy, f"{what} x{elements}")

    def row_reduce(self, elements: int, what: str = "row reduce") -> Phase:
        """A row reduction (max or sum): FMA-lane throughput, latency scaled from a measurement."""
        busy = cycles(elements / self.f["fp32_lanes"])
        latency = cycles(elements * self.f["row_reduce_cycles_per_element"])
        return Phase("alu", busy, max(busy, latency), f"{what} x{elements}")

    def convert(self, elements: int) -> Phase:
        """fp32 -> 16-bit packed conversion (two values per instruction) on the FMA lanes."""
        busy = cycles(elements / 2 / self.f["fp32_lanes"])
        return Phase("alu", busy, busy, f"cvt x{elements}")

    # -- data movement -----------------------------------------------------------------------
    def tma_load(self, nbytes: int) -> Phase:
        """A TMA tile load: the unit is busy nbytes / SMEM fill bandwidth; latency base + per KB."""
        busy = cycles(nbytes / self.f["smem_bytes_per_clk"])
        latency = cycles(self.f["tma_load_base"] + self.f["tma_load_per_kb"] * nbytes / KB)
        return Phase("tma", busy, max(busy, latency), f"TMA load {nbytes} B")

    def tma_store(self, nbytes: int, what: str = "TMA store", until_read: bool = False) -> Phase:
        """A TMA store or bulk reduce-add from SMEM to global memory: the unit reads the source
        at the SMEM rate; the write completes after the measured latency line.  With
        `until_read`, the phase ends when the source has been read (`cp.async.bulk.wait_group
        .read`), which is all a loop waits for before reusing the buffer."""
        busy = cycles(nbytes / self.f["smem_bytes_per_clk"])
        latency = cycles(self.f["tma_store_base"] + self.f["tma_store_per_kb"] * nbytes / KB)
        return Phase("tma", busy, busy if until_read else max(busy, latency),
                     f"{what} {nbytes} B")

    def _need_tmem(self) -> None:
        if not self.has_tmem:
            raise InputError("this machine has no Tensor Memory", ("machine",), self.machine)

    def tmem_load(self, nbytes: int) -> Phase:
        """tcgen05.ld of nbytes into registers (then wait::ld): measured cycles scaled by size."""
        self._need_tmem()
        busy = cycles(nbytes / self.f["tmem_load_bytes_per_clk"])
        latency = cycles(self.f["tmem_load_cycles_64kb"] * nbytes / (64 * KB))
        return Phase("tmem", busy, max(busy, latency), f"TMEM load {nbytes} B")

    def tmem_store(self, nbytes: int) -> Phase:
        """tcgen05.st of nbytes from registers: measured cycles scaled by size."""
        self._need_tmem()
        busy = cycles(nbytes / self.f["tmem_store_bytes_per_clk"])
        latency = cycles(self.f["tmem_store_cycles_32kb"] * nbytes / (32 * KB))
        return Phase("tmem", busy, max(busy, latency), f"TMEM store {nbytes} B")

    # -- synchronization: the price of handing a value to another warp group --------------------
    def register_handoff(self, nbytes: int) -> int:
        """Registers -> SMEM -> registers of another group, with its barrier: base + per KB."""
        return cycles(self.f["smem_handoff_base"] + self.f["smem_handoff_per_kb"] * nbytes / KB)

    def mbarrier_handoff(self) -> int:
        """One-way mbarrier arrive -> wait hand-off between groups."""
        return cycles(self.f["mbarrier_handoff"])

    def named_barrier(self) -> int:
        return cycles(self.f["named_barrier"])
