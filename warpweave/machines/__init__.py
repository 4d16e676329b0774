"""Machine models with cost models whose figures have sources, and cost normalization.

A machine is registered (entry point group `warpweave.machines`) as a `MachineSpec`: calling it
gives a `warpweave.core.model.Machine`; its `figures` and `costs` are what kernel builders read.
"""

from __future__ import annotations

from warpweave.core.registry import MACHINES
from warpweave.core.registry import hardware as hardware  # the machine's facts
from warpweave.errors import InputError
from warpweave.machines.gpu import MachineSpec


def machine_spec(name: str) -> MachineSpec:
    """The registered spec called `name`; InputError if unknown or not a `MachineSpec` (a plugin
    may register a plain callable, which has no cost model for kernel builders)."""
    spec = MACHINES.get(name)
    if not isinstance(spec, MachineSpec):
        raise InputError("machine has no cost model (not a MachineSpec)", ("machine",), name)
    return spec
