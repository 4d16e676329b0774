"""Warp-group inventories and the register rule of a machine.

On NVIDIA's SM90/SM100 a kernel launches whole hardware warpgroups (4 consecutive warps, 128
threads).  `setmaxnreg` sets the per-thread register limit of a whole warpgroup (PTX ISA: executed
by all warps of the warpgroup; a multiple of 8 in [24, 256]), and all launched warpgroups draw from
the CTA's share of the 64K-register file.  An inventory lists the groups the solver may assign ops
to, in warp order: a group of 4 or more warps is one or more whole warpgroups; groups of 1-3 warps
are packed into the open warpgroup while they fit (else a new one starts) and must then share its
register limit.  Warps of a warpgroup that no group uses are launched idle at that warpgroup's
limit, so they count against the register file.

`RegisterRule` states that once per machine (`MachineSpec.registers`): which per-thread limits a
group may have, how many warps share one limit, and the file they draw from.  Another vendor's
machine (a plugin) brings its own rule: on AMD CDNA3 a wavefront has 64 lanes, a workgroup's waves
spread over the CU's four SIMDs, and each SIMD's VGPR file holds 512 registers per lane, allocated
in granules of 8 (see examples/plugins/warpweave-cdna3).  Codegen reads the same rule.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from warpweave.core.model import WarpGroup
from warpweave.errors import InputError

WARPGROUP = 4          # warps per hardware warpgroup
THREADS_PER_WARP = 32
SETMAXNREG_MIN, SETMAXNREG_MAX, SETMAXNREG_STEP = 24, 256, 8


@attrs.frozen
class RegisterRule:
    """How a machine's warp groups get registers: a group's per-thread limit is a multiple of
    `step` in [`low`, `high`] (or one of `fixed`: a limit set without the instruction, e.g. 255,
    the compile-time maximum); `unit_warps` consecutive warps share one limit (they are launched
    together); the launched units, `lanes` threads per warp, draw from a file of `file` 32-bit
    registers; at most `max_warps` warps per block."""

    name: str                     # what sets a limit: "setmaxnreg", "VGPR allocation", ...
    low: int
    high: int
    step: int
    file: int
    lanes: int = THREADS_PER_WARP
    unit_warps: int = WARPGROUP
    max_warps: int = 32
    fixed: tuple[int, ...] = ()

    @property
    def unit_threads(self) -> int:
        return self.lanes * self.unit_warps

    def allows(self, limit: int) -> bool:
        return limit in self.fixed or (self.low <= limit <= self.high and limit % self.step == 0)

    def check_limit(self, limit: int, path: tuple, who: str = "") -> int:
        """`limit` if this rule allows it, else an InputError naming `path` and the rule."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not self.allows(limit):
            also = f" (or {', '.join(map(str, self.fixed))})" if self.fixed else ""
            raise InputError(f"{who + ': ' if who else ''}{self.name} takes a multiple of "
                             f"{self.step} in [{self.low}, {self.high}]{also}", path, limit)
        return limit

    def cap(self, limit: int) -> int:
        """The largest limit this rule allows at or below `limit` (InputError below `low`, and
        above the most registers a thread can have: a budget no launch can be given)."""
        if limit < self.low:
            raise InputError(f"at least {self.low} ({self.name})", ("max_regs",), limit)
        most = max(self.high, *self.fixed)
        if limit > most:
            raise InputError(f"a register budget over the {most} registers a thread can have "
                             f"({self.name})", ("max_regs",), limit)
        return min(self.high, limit - limit % self.step)


# NVIDIA SM90 / SM100: setmaxnreg over 128-thread warpgroups, a 64K-register file per SM (the
# figures `registers_per_sm`, `max_regs_per_thread` and `max_warps_per_block` of both machines).
# 255 is the limit of a launch without setmaxnreg (the most registers a thread can address).
SETMAXNREG = RegisterRule("setmaxnreg", SETMAXNREG_MIN, SETMAXNREG_MAX, SETMAXNREG_STEP, 65536,
                          fixed=(255,))


def parse_groups(text: str, path: tuple = ("groups",)) -> list[WarpGroup]:
    """`"w0:1:24,wg1:4:240"` (name:warps:regs, comma separated) -> warp groups."""
    out = []
    for i, item in enumerate(x.strip() for x in text.split(",")):
        parts = item.split(":")
        if len(parts) != 3 or not parts[0]:
            raise InputError("each group is name:warps:regs", path + (i,), item)
        try:
            warps, regs = int(parts[1]), int(parts[2])
        except ValueError:
            raise InputError("warps and regs must be integers", path + (i,), item) from None
        out.append(WarpGroup(parts[0], warps, regs))
    return out


def format_groups(groups: Sequence[WarpGroup]) -> str:
    return ",".join(f"{g.name}:{g.warps}:{g.reg_limit}" for g in groups)


def warpgroup_limits(groups: Sequence[WarpGroup], max_warps: int = 32,
                     rule: RegisterRule = SETMAXNREG) -> list[tuple[int, str]]:
    """Check the packing and return, per launched hardware warpgroup (per unit of `rule`), (its
    register limit, the first group in it).  InputError names the group that breaks a rule."""
    unit = rule.unit_warps
    limits: list[tuple[int, str]] = []     # one entry per hardware warpgroup
    warp = 0
    seen: set[str] = set()
    for i, g in enumerate(groups):
        path = ("machine", "warp_groups", i)
        if g.name in seen:
            raise InputError(f"duplicate group name {g.name!r}", path + ("name",), g.name)
        seen.add(g.name)
        if g.warps < 1 or (g.warps > unit and g.warps % unit):
            raise InputError(f"group {g.name}: 1-{unit} warps, or a multiple of {unit}",
                             path + ("warps",), g.warps)
        rule.check_limit(g.reg_limit, path + ("reg_limit",), f"group {g.name}")
        offset = warp % unit
        if offset and (g.warps >= unit or offset + g.warps > unit):
            warp += unit - offset   # the rest of the open warpgroup idles
            offset = 0
        if offset:
            shared, first = limits[-1]
            if shared != g.reg_limit:
                raise InputError(f"group {g.name} shares a warpgroup with {first}, whose register "
                                 f"limit is {shared} ({rule.name} applies to a whole warpgroup)",
                                 path + ("reg_limit",), g.reg_limit)
        else:
            limits.extend([(g.reg_limit, g.name)] * max(1, g.warps // unit))
        warp += g.warps
        if warp > max_warps:
            raise InputError(f"group {g.name} brings the launch to {warp} warps, more than "
                             f"{max_warps} per block", path + ("warps",), g.warps)
    return limits


def check_inventory(groups: Sequence[WarpGroup], registers: int | None = None,
                    max_warps: int | None = None, rule: RegisterRule = SETMAXNREG) -> int:
    """Apply the register rule: sum over launched warpgroups of limit x their threads fits the
    register file (`registers`, default the rule's).  Returns the registers used; InputError
    names the group that overflows."""
    registers = rule.file if registers is None else registers
    total = 0
    for limit, name in warpgroup_limits(groups, max_warps or rule.max_warps, rule):
        total += limit * rule.unit_threads
        if total > registers:
            i = next(k for k, g in enumerate(groups) if g.name == name)
            raise InputError(f"group {name}: the launched warpgroups need {total} registers at "
                             f"their {rule.name} limits, more than the {registers}-register file",
                             ("machine", "warp_groups", i, "reg_limit"), limit)
    return total
