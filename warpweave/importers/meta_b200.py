"""Meta's B200 machine (`provenance.machine` of their prepared solutions) as warp groups.

Their solver gives each op a *set* of physical warps out of 32 (warp 0 reserved for
variable-latency ops), with a register budget of 8160 32-bit words per warp (255 x 32).  Our model
(DESIGN section 3) has disjoint warp groups with a per-thread register limit.  An inventory of
group sizes cuts the 32 warps into groups named by the warps they cover (`w0`, `w1_4`, ...); the
first group is the variable-latency group when the graph has variable-latency ops.
"""

from __future__ import annotations

from collections.abc import Iterable

from warpweave.core.model import Machine, Memory, Unit, WarpGroup
from warpweave.errors import InputError
from warpweave.machines.inventory import SETMAXNREG

PHYSICAL_WARPS = 32
THREADS_PER_WARP = 32
REG_WORDS_PER_WARP = 8160
DEFAULT_REG_LIMIT = REG_WORDS_PER_WARP // THREADS_PER_WARP  # 255 registers per thread
# Warp 0 alone (Meta's variable-latency warp), seven 4-warp groups, three single warps: 32 warps.
DEFAULT_GROUPS: tuple[int, ...] = (1,) + (4,) * 7 + (1,) * 3
SMEM_BYTES = 232448
TMEM_COLUMNS = 512


def parse_groups(spec: str) -> tuple[int, ...]:
    """A group inventory from text: `1,4x7,1x3` is one 1-warp group, seven 4-warp, three 1-warp."""
    sizes: list[int] = []
    for part in spec.split(","):
        warps, _, count = part.strip().partition("x")
        try:
            w, n = int(warps), int(count) if count else 1
        except ValueError:
            raise InputError("must be warp counts like 1,4x7,1x3", ("--groups",), spec) from None
        if w < 1 or n < 1:
            raise InputError("warp counts and repeats must be >= 1", ("--groups",), spec)
        sizes += [w] * n
    return check_groups(sizes)


def check_groups(sizes: Iterable[int]) -> tuple[int, ...]:
    sizes = tuple(sizes)
    if not sizes or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in sizes):
        raise InputError("need at least one group, each of >= 1 warps", ("--groups",), sizes)
    if sum(sizes) > PHYSICAL_WARPS:
        raise InputError(f"{sum(sizes)} warps: a B200 block has at most {PHYSICAL_WARPS}",
                         ("--groups",), list(sizes))
    return sizes


def warp_groups(sizes: Iterable[int], reg_limit: int) -> tuple[WarpGroup, ...]:
    """Groups over consecutive physical warps from warp 0, named `w<first>` or `w<first>_<last>`."""
    out, first = [], 0
    for w in check_groups(sizes):
        last = first + w - 1
        name = f"w{first}" if w == 1 else f"w{first}_{last}"
        out.append(WarpGroup(name, w, reg_limit))
        first = last + 1
    return tuple(out)


def regs_per_thread(words: int, warps: int) -> int:
    """Meta's whole-tile register words spread over `warps` warps, rounded up per thread."""
    return -(-words // (THREADS_PER_WARP * max(warps, 1)))


def check_reg_limit(reg_limit: int) -> int:
    """A register limit the B200's rule allows (setmaxnreg's, or 255 without it)."""
    return SETMAXNREG.check_limit(reg_limit, ("--reg-limit",))


def b200_machine(units: Iterable[str], memories: dict[str, int], sizes: Iterable[int],
                 reg_limit: int, variable_latency: bool) -> Machine:
    """Units of capacity 1, the given memories, and the group inventory."""
    groups = warp_groups(sizes, check_reg_limit(reg_limit))
    return Machine(name="meta-b200", units=[Unit(u, 1) for u in units],
                   memories=[Memory(n, c) for n, c in memories.items()], warp_groups=groups,
                   variable_latency_group=groups[0].name if variable_latency else None)
