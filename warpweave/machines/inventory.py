"""Warp-group inventories and the `setmaxnreg` rule.

A kernel launches whole hardware warpgroups (4 consecutive warps, 128 threads).  `setmaxnreg` sets
the per-thread register limit of a whole warpgroup (PTX ISA: executed by all warps of the
warpgroup; a multiple of 8 in [24, 256]), and all launched warpgroups draw from the CTA's share of
the 64K-register file.  An inventory lists the groups the solver may assign ops to, in warp order:
a group of 4 or more warps is one or more whole warpgroups; groups of 1-3 warps are packed into the
open warpgroup while they fit (else a new one starts) and must then share its register limit.
Warps of a warpgroup that no group uses are launched idle at that warpgroup's limit, so they count
against the register file.
"""

from __future__ import annotations

from collections.abc import Sequence

from warpweave.core.errors import InputError
from warpweave.core.model import WarpGroup

WARPGROUP = 4          # warps per hardware warpgroup
THREADS_PER_WARP = 32
SETMAXNREG_MIN, SETMAXNREG_MAX, SETMAXNREG_STEP = 24, 256, 8


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


def _check_limit(g: WarpGroup, path: tuple) -> None:
    lim = g.reg_limit
    if not SETMAXNREG_MIN <= lim <= SETMAXNREG_MAX or lim % SETMAXNREG_STEP:
        raise InputError(f"group {g.name}: setmaxnreg takes a multiple of {SETMAXNREG_STEP} in "
                         f"[{SETMAXNREG_MIN}, {SETMAXNREG_MAX}]", path + ("reg_limit",), lim)


def warpgroup_limits(groups: Sequence[WarpGroup], max_warps: int = 32) -> list[tuple[int, str]]:
    """Check the packing and return, per launched hardware warpgroup, (its register limit, the
    first group in it).  InputError names the group that breaks a rule."""
    limits: list[tuple[int, str]] = []     # one entry per hardware warpgroup
    warp = 0
    seen: set[str] = set()
    for i, g in enumerate(groups):
        path = ("machine", "warp_groups", i)
        if g.name in seen:
            raise InputError(f"duplicate group name {g.name!r}", path + ("name",), g.name)
        seen.add(g.name)
        if g.warps < 1 or (g.warps > WARPGROUP and g.warps % WARPGROUP):
            raise InputError(f"group {g.name}: 1-4 warps, or a multiple of {WARPGROUP}",
                             path + ("warps",), g.warps)
        _check_limit(g, path)
        offset = warp % WARPGROUP
        if offset and (g.warps >= WARPGROUP or offset + g.warps > WARPGROUP):
            warp += WARPGROUP - offset   # the rest of the open warpgroup idles
            offset = 0
        if offset:
            shared, first = limits[-1]
            if shared != g.reg_limit:
                raise InputError(f"group {g.name} shares a warpgroup with {first}, whose register "
                                 f"limit is {shared} (setmaxnreg applies to a whole warpgroup)",
                                 path + ("reg_limit",), g.reg_limit)
        else:
            limits.extend([(g.reg_limit, g.name)] * max(1, g.warps // WARPGROUP))
        warp += g.warps
        if warp > max_warps:
            raise InputError(f"group {g.name} brings the launch to {warp} warps, more than "
                             f"{max_warps} per block", path + ("warps",), g.warps)
    return limits


def check_inventory(groups: Sequence[WarpGroup], registers: int = 65536,
                    max_warps: int = 32) -> int:
    """Apply the setmaxnreg rule: sum over launched warpgroups of limit x 128 threads fits the
    register file.  Returns the registers used; InputError names the group that overflows."""
    total = 0
    for limit, name in warpgroup_limits(groups, max_warps):
        total += limit * WARPGROUP * THREADS_PER_WARP
        if total > registers:
            i = next(k for k, g in enumerate(groups) if g.name == name)
            raise InputError(f"group {name}: the launched warpgroups need {total} registers at "
                             f"their setmaxnreg limits, more than the {registers}-register file",
                             ("machine", "warp_groups", i, "reg_limit"), limit)
    return total
