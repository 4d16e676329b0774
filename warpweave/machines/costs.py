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

from warpweave.errors import InputError
from warpweave.machines.figures import Figures

DTYPE_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
# The tensor core's rate figure for each operand type (also what a sweep's throughput reads).
TC_RATE = {"bf16": "tc_flops_16bit", "fp16": "tc_flops_16bit", "fp8": "tc_flops_8bit",
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
    the phase's result is ready `latency` cycles after its start.  `issue` (default: latency)
    is how long the issuing warps are held: a reduction's instructions issue in its pipe
    occupancy, its result lands later (Meta's selfLatency against latency)."""

    unit: str | None
    busy: int
    latency: int
    what: str = ""
    issue: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.busy < 0 or self.latency < 1 or (self.unit is not None
                                                 and self.busy > self.latency) or \
                (self.issue is not None and not 1 <= self.issue <= self.latency):
            raise ValueError(f"bad phase {self}")

    @property
    def holds(self) -> int:
        """Cycles the issuing warps are held by this phase."""
        return self.latency if self.issue is None else self.issue


# Where a value handed from one op to another lives, which decides what the hand-off costs
# (`CostModel.handoff`): registers go through shared memory; a value already in TMEM or SMEM
# only needs its producer's stores fenced and signalled; an accumulator chain of MMAs is
# ordered by the tensor core when one warp issues it, by an mbarrier otherwise; an async
# producer (MMA, TMA) signals its own completion barrier, which its measured latency covers.
PAYLOADS = ("registers", "tmem", "smem", "accumulator", "async")

# Every cost formula and the figures it reads (`warpweave machines --json`, docs/machines.md).
FORMULAS = {
    "gemm": ("m x n x k MMA: busy 2mnk / tc_flops_<dtype> (tc); latency on B200 "
             "mma_latency_k128 if k >= 128 else mma_latency_k64, on H100 mma_latency_base + "
             "mma_latency_slope x busy; at least busy",
             ("tc_flops_16bit", "tc_flops_8bit", "tc_flops_tf32", "mma_latency_k128",
              "mma_latency_k64", "mma_latency_base", "mma_latency_slope")),
    "exp": ("exp2 over e elements: busy = latency = e / mufu_per_clk (sfu)", ("mufu_per_clk",)),
    "fp32": ("o FP32 instructions per element: busy = latency = e o / fp32_lanes (alu)",
             ("fp32_lanes",)),
    "row_max": ("row max over e elements: busy rowmax_occupancy x e / 16384 (alu), latency "
                "rowmax_latency x e / 16384", ("rowmax_occupancy", "rowmax_latency")),
    "row_sum": ("row sum over e elements: busy and issue rowsum_occupancy x e / 16384 (alu), "
                "result rowsum_latency x e / 16384 after issue",
                ("rowsum_occupancy", "rowsum_latency")),
    "convert": ("fp32 -> 16-bit, two per instruction: e / 2 / fp32_lanes (alu)",
                ("fp32_lanes",)),
    "tma_load": ("b bytes: busy b / smem_bytes_per_clk (tma), latency tma_load_base + "
                 "tma_load_per_kb x KB", ("smem_bytes_per_clk", "tma_load_base",
                                          "tma_load_per_kb")),
    "tma_store": ("b bytes: busy b / smem_bytes_per_clk (tma), latency tma_store_base + "
                  "tma_store_per_kb x KB (a loop waits only until the source is read: busy)",
                  ("smem_bytes_per_clk", "tma_store_base", "tma_store_per_kb")),
    "tmem_load": ("e elements: busy tmem_load_occupancy x e / 16384 (tmem), latency "
                  "tmem_load_latency x e / 16384", ("tmem_load_occupancy", "tmem_load_latency")),
    "tmem_store": ("e elements: busy tmem_store_occupancy x e / 16384 (tmem), latency "
                   "tmem_store_latency x e / 16384",
                   ("tmem_store_occupancy", "tmem_store_latency")),
    "handoff": ("a data edge's extra delay by payload, (across groups, within one group): "
                "registers (smem_handoff_base + smem_handoff_per_kb x KB, 0); tmem or smem "
                "(mbarrier_handoff, named_barrier); accumulator, an MMA after an MMA on the "
                "same accumulator (mbarrier_handoff, 0); async, an MMA or TMA result (0, 0)",
                ("smem_handoff_base", "smem_handoff_per_kb", "mbarrier_handoff",
                 "named_barrier")),
}
TILE_ELEMENTS = 128 * 128   # the tile Meta's per-tile figures are measured on


class CostModel:
    """The cost formulas of one machine, reading its figures."""

    def __init__(self, machine: str, figures: Figures):
        self.machine = machine
        self.f = figures

    @property
    def has_tmem(self) -> bool:
        return "tmem_columns" in self.f

    def _per_tile(self, name: str, elements: int) -> int:
        return cycles(self.f[name] * elements / TILE_ELEMENTS)

    # -- tensor core -------------------------------------------------------------------------
    def gemm(self, m: int, n: int, k: int, dtype: str = "bf16") -> Phase:
        """An m x n x k MMA: busy 2mnk / (dense FLOPs/clk/SM); latency by K where measured
        (B200: Meta's rule, K >= 128 -> 900, else 559), else base + slope * busy."""
        dtype_bytes(dtype)
        if dtype not in TC_RATE:
            raise InputError("the tensor core has no rate for this dtype", ("dtype",), dtype)
        busy = cycles(2 * m * n * k / self.f[TC_RATE[dtype]])
        if "mma_latency_k128" in self.f:
            latency = self.f["mma_latency_k128" if k >= 128 else "mma_latency_k64"]
        else:
            latency = self.f["mma_latency_base"] + self.f["mma_latency_slope"] * busy
        return Phase("tc", busy, max(cycles(latency), busy), f"gemm {m}x{n}x{k} {dtype}")

    # -- CUDA cores --------------------------------------------------------------------------
    def exp(self, elements: int) -> Phase:
        """exp2 on the MUFU: elements / (MUFU ops/clk/SM)."""
        busy = cycles(elements / self.f["mufu_per_clk"])
        return Phase("sfu", busy, busy, f"exp2 x{elements}")

    def fp32(self, elements: int, ops: float = 1, what: str = "fp32") -> Phase:
        """`ops` FP32 instructions per element on the FMA lanes."""
        busy = cycles(elements * ops / self.f["fp32_lanes"])
        return Phase("alu", busy, busy, f"{what} x{elements}")

    def row_max(self, elements: int) -> Phase:
        """A row max over `elements` inputs: measured pipe occupancy and latency, per element."""
        return Phase("alu", self._per_tile("rowmax_occupancy", elements),
                     self._per_tile("rowmax_latency", elements), f"row max x{elements}")

    def row_sum(self, elements: int) -> Phase:
        """A row sum: the warps are held for its pipe occupancy, the sum lands at its measured
        latency (a reader waits for that; the warps may go on meanwhile)."""
        busy = self._per_tile("rowsum_occupancy", elements)
        return Phase("alu", busy, self._per_tile("rowsum_latency", elements),
                     f"row sum x{elements}", issue=busy)

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

    def tmem_load(self, elements: int) -> Phase:
        """tcgen05.ld of `elements` 32-bit values into registers (then wait::ld)."""
        self._need_tmem()
        busy = self._per_tile("tmem_load_occupancy", elements)
        latency = self._per_tile("tmem_load_latency", elements)
        return Phase("tmem", busy, max(busy, latency), f"TMEM load x{elements}")

    def tmem_store(self, elements: int) -> Phase:
        """tcgen05.st of `elements` values from registers (then wait::st)."""
        self._need_tmem()
        busy = self._per_tile("tmem_store_occupancy", elements)
        latency = self._per_tile("tmem_store_latency", elements)
        return Phase("tmem", busy, max(busy, latency), f"TMEM store x{elements}")

    # -- synchronization: the price of handing a value over ----------------------------------------
    def register_handoff(self, nbytes: int) -> int:
        """Registers -> SMEM -> registers of another group, with its barrier: base + per KB."""
        return cycles(self.f["smem_handoff_base"] + self.f["smem_handoff_per_kb"] * nbytes / KB)

    def handoff(self, payload: str, nbytes: int = 0) -> tuple[int, int]:
        """(extra cycles across groups, within one group) for a data edge whose value lives in
        `payload` (one of PAYLOADS); `nbytes` sizes a register payload."""
        if payload == "registers":
            return self.register_handoff(nbytes), 0
        if payload in ("tmem", "smem"):
            return cycles(self.f["mbarrier_handoff"]), cycles(self.f["named_barrier"])
        if payload == "accumulator":
            return cycles(self.f["mbarrier_handoff"]), 0
        if payload == "async":
            return 0, 0
        raise ValueError(f"unknown payload {payload!r} (known: {', '.join(PAYLOADS)})")
