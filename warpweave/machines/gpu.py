"""`MachineSpec`: a GPU as the registry holds it - a callable that builds a `Machine`, plus the
figures and cost model that kernel builders read.

Calling a spec with no arguments gives the default machine (what `"machine": "h100"` in a model
file means).  Keyword options let a kernel builder or a user change the warp-group inventory, the
variable-latency group, cap every register limit (a reduced register budget), or reserve shared
memory for loop-invariant tiles (Q in attention); the setmaxnreg rule is checked on every call.

Besides its default inventory (a published launch), a spec has a `neutral` one: groups and
register limits shaped like no published answer, so that a published role can be found by the
solver instead of being built into the launch (`NEUTRAL_GROUPS`).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from warpweave.core.model import Machine, Memory, Unit, WarpGroup
from warpweave.errors import InputError
from warpweave.machines.costs import FORMULAS, CostModel
from warpweave.machines.figures import Figures
from warpweave.machines.inventory import SETMAXNREG, RegisterRule, check_inventory, parse_groups

# The neutral inventory (both machines): three 4-warp groups at one register limit and the four
# single warps of a fourth warpgroup at the setmaxnreg minimum, filling the register file
# (128 x (3 x 160 + 32) = 65536).  Any role - an MMA warp, one to three compute groups - is
# open, and no group's limit is sized for a role.  One single warp is the variable-latency group,
# as Twill's formulation designates W_vl (DESIGN rule 7): the producer warp stays a rule of the
# model, not a finding.
NEUTRAL_GROUPS = (WarpGroup("wg0", 4, 160), WarpGroup("wg1", 4, 160), WarpGroup("wg2", 4, 160),
                  WarpGroup("w12", 1, 32), WarpGroup("w13", 1, 32), WarpGroup("w14", 1, 32),
                  WarpGroup("w15", 1, 32))
NEUTRAL_VL = "w15"


@attrs.frozen
class UnitSpec:
    """A functional unit kind, its capacity in the model, and what it stands for."""

    name: str
    capacity: int
    description: str


@attrs.frozen
class MemorySpec:
    """A memory, its capacity (from a figure), the unit of footprints, and what it stands for."""

    name: str
    figure: str
    unit: str
    description: str


@attrs.frozen
class MachineSpec:
    """A registered GPU: call it (optionally with options) to get a `Machine`."""

    name: str
    arch: str
    description: str
    figures: Figures = attrs.field(eq=False)
    units: tuple[UnitSpec, ...]
    memories: tuple[MemorySpec, ...]
    groups: tuple[WarpGroup, ...]
    variable_latency_group: str | None   # None: a machine with no variable-latency group
    groups_note: str = ""
    # The hardware facts codegen and the inventory check read: how groups get registers (the
    # per-thread limits, the file, warps per unit); `arch` is the compilation target.
    registers: RegisterRule = SETMAXNREG
    neutral: tuple[WarpGroup, ...] = ()

    @property
    def costs(self) -> CostModel:
        return CostModel(self.name, self.figures)

    def __call__(self, groups: Sequence[WarpGroup] | str | None = None,
                 variable_latency_group: str | None = None, max_regs: int | None = None,
                 smem_reserved: int = 0) -> Machine:
        """The machine with the given (or default) inventory; InputError on a bad option."""
        inventory = list(self.groups if groups is None else
                         parse_groups(groups) if isinstance(groups, str) else groups)
        if max_regs is not None:
            cap = self.registers.cap(max_regs)
            inventory = [attrs.evolve(g, reg_limit=min(g.reg_limit, cap)) for g in inventory]
        check_inventory(inventory, rule=self.registers)
        vl = self.variable_latency_group if variable_latency_group is None \
            else variable_latency_group
        if vl is not None and vl not in {g.name for g in inventory}:
            if variable_latency_group is None:
                vl = min(inventory, key=lambda g: g.warps).name  # the smallest group loads
            else:
                raise InputError("not a group of the inventory", ("variable_latency_group",), vl)
        memories = []
        for m in self.memories:
            capacity = int(self.figures[m.figure]) - (smem_reserved if m.name == "smem" else 0)
            if capacity < 0:
                raise InputError(f"reserves more than the {int(self.figures[m.figure])} bytes "
                                 f"of shared memory a block may use on {self.name}: the "
                                 "kernel's loop-invariant tiles alone need that much (the tile "
                                 "is too large)", ("smem_reserved",), smem_reserved)
            memories.append(Memory(m.name, capacity))
        return Machine(self.name, [Unit(u.name, u.capacity) for u in self.units], memories,
                       inventory, vl, self.arch)

    def to_dict(self) -> dict:
        """Everything `warpweave machines --json` shows."""
        return {
            "name": self.name, "arch": self.arch, "description": self.description,
            "units": {u.name: {"capacity": u.capacity, "description": u.description}
                      for u in self.units},
            "memories": {m.name: {"capacity": int(self.figures[m.figure]), "unit": m.unit,
                                  "description": m.description} for m in self.memories},
            "warp_groups": [{"name": g.name, "warps": g.warps, "reg_limit": g.reg_limit}
                            for g in self.groups],
            "variable_latency_group": self.variable_latency_group,
            "groups_note": self.groups_note,
            "neutral_groups": [{"name": g.name, "warps": g.warps, "reg_limit": g.reg_limit}
                               for g in self.neutral],
            "neutral_variable_latency_group": NEUTRAL_VL if self.neutral else None,
            "registers_used": check_inventory(self.groups, rule=self.registers),
            "register_rule": attrs.asdict(self.registers),
            "figures": {f.name: f.to_dict() for f in self.figures},
            "costs": {kind: {"formula": text,
                             "figures": {n: {"value": self.figures[n],
                                             "source": self.figures.figure(n).source,
                                             "place": self.figures.figure(n).place}
                                         for n in names if n in self.figures}}
                      for kind, (text, names) in FORMULAS.items()},
        }
