"""What a sweep ranks points by: predicted throughput, and the resources the schedule holds.

**Throughput** is the useful work of one loop iteration divided by the cycles between iterations:
`flops / I` FLOPs per cycle per SM, where `flops` is what the kernel states (`KernelSpec.work`:
2mnk for every GEMM of the iteration; exponentials, row statistics and conversions are not
counted, as in the FlashAttention papers' TFLOPS) and `I` is the initiation interval of the
point's verified schedule in raw cycles.  Beside it:

- `bound`: `flops / lower_bound`, the most any schedule of the model could reach (the lower
  bound on I in raw cycles); equal to the throughput when I is proven optimal in raw cycles;
- `share`: the throughput as a fraction of the tensor core's dense rate for the kernel's dtype
  (the machine's figure), i.e. how busy the loop keeps the tensor core;
- `tflops`: the throughput times the SM count and the clock of the machine's figures - every
  SM running one CTA of this loop in its steady state.

What the figure leaves out, by construction: the prologue and epilogue of the pipeline (`L - I`
over the trip count), the work outside the loop (loading K/V, writing dK/dV), tiles that do not
divide the problem (an 80-row tile over 16384 rows runs 205 iterations, the last 80% full),
waves of CTAs that do not fill the SMs, more than one CTA per SM, and every cost the model does
not have (docs/machines.md lists the figures; an MMA's cost there is linear in its size, with no
fixed cost per instruction).  It ranks steady-state schedules of the model; it is not a
measurement.

**Resources**, from the schedule's steady state (the loop, every trip count: the peak over the
modulo slots, `codegen.buffers.steady_peaks`): `regs_peak` - registers held live at the peak,
summed over warp groups (per-thread peak x the group's threads); `regs_launch` - what the launch
reserves at its groups' register limits (setmaxnreg x threads); `smem_peak` - shared memory at
the peak, the loop's live tiles plus what the kernel keeps resident for the whole loop.
"""

from __future__ import annotations

from typing import Any

import attrs

from warpweave.core.model import Model
from warpweave.core.schedule import Schedule


@attrs.frozen
class Throughput:
    """The ranking figures of a point with a schedule (see the module docstring); `None` where
    the kernel states no work or the machine has no such figure."""

    flops: int | None           # useful FLOPs of one iteration
    I: int                      # noqa: E741 - raw cycles of the verified schedule
    lower_bound: int            # raw cycles: no schedule has a smaller I
    proven: bool                # I proven optimal in raw cycles
    peak: float | None          # the tensor core's dense FLOPs per cycle per SM
    sms: int | None
    clock_ghz: float | None

    @property
    def per_cycle(self) -> float:
        """FLOPs per cycle per SM at the schedule's I (iterations per cycle if no work)."""
        return (self.flops or 1) / self.I

    @property
    def bound(self) -> float:
        """The most any schedule could reach: the work over the lower bound on I."""
        return (self.flops or 1) / max(1, self.lower_bound)

    @property
    def share(self) -> float | None:
        return self.per_cycle / self.peak if self.flops and self.peak else None

    @property
    def tflops(self) -> float | None:
        if not self.flops or self.sms is None or self.clock_ghz is None:
            return None
        return self.per_cycle * self.sms * self.clock_ghz / 1000

    def to_dict(self) -> dict:
        """The figures; `per_cycle` is FLOPs per cycle, or iterations per cycle when the
        kernel states no work (`flops_per_iteration` None)."""
        return {"flops_per_iteration": self.flops, "per_cycle": round(self.per_cycle, 6),
                "per_cycle_bound": round(self.bound, 6),
                "share_of_peak": None if self.share is None else round(self.share, 4),
                "tflops": None if self.tflops is None else round(self.tflops, 1),
                "I_proven_optimal": self.proven}


def figures(machine: str | None, dtype: str) -> dict[str, Any]:
    """The machine figures the throughput reads: the tensor core's rate for `dtype`, the SM
    count and the clock (None each for a machine without them, e.g. a kernel's toy machine)."""
    if machine is None:
        return {"peak": None, "sms": None, "clock_ghz": None}
    from warpweave.machines import machine_spec
    from warpweave.machines.costs import TC_RATE
    f = machine_spec(machine).figures
    rate = TC_RATE.get(dtype, "tc_flops_16bit")
    return {"peak": f[rate] if rate in f else None,
            "sms": int(f["sms"]) if "sms" in f else None,
            "clock_ghz": f["clock_ghz"] if "clock_ghz" in f else None}


def resources(model: Model, schedule: Schedule) -> dict[str, int]:
    """`regs_peak`, `regs_launch` and `smem_peak` of a valid schedule (module docstring).  The
    registered machine's register rule gives the threads per warp and how the launch reserves
    registers; a machine of the model's own counts 32 threads and each group at its limit."""
    from warpweave.codegen.buffers import steady_peaks
    from warpweave.machines import hardware
    from warpweave.machines.inventory import check_inventory
    peaks = {(p.kind, p.pool): p.peak for p in steady_peaks(model, schedule)}
    groups = model.machine.warp_groups
    spec = hardware(model.machine)
    lanes = spec.registers.lanes if spec is not None else 32
    out = {"regs_peak": sum(peaks.get(("registers", g.name), 0) * g.warps * lanes
                            for g in groups),
           "regs_launch": check_inventory(groups, rule=spec.registers) if spec is not None
           else sum(g.reg_limit * g.warps * lanes for g in groups)}
    if any(m.name == "smem" for m in model.machine.memories):
        full = next((int(spec.figures[m.figure]) for m in spec.memories if m.name == "smem"),
                    None) if spec is not None else None
        resident = full - model.machine.memory("smem").capacity if full is not None else 0
        out["smem_peak"] = peaks.get(("memory", "smem"), 0) + resident
    return out
