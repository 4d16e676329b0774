"""The kernel library: builders that return models, registered by entry point
(`warpweave.kernels`) as `KernelSpec`s.

`build("fa4-fwd", machine="b200", block_n=64)` builds through the registry; `parse_params` turns
command-line `key=value` items into typed values (InputError on a bad one).
"""

from __future__ import annotations

from typing import Any

from warpweave.core.model import Model
from warpweave.core.registry import KERNELS
from warpweave.errors import InputError
from warpweave.kernels.spec import KernelSpec, Param, parse_params

__all__ = ["KernelSpec", "Param", "build", "kernel_spec", "parse_params"]


def kernel_spec(name: str) -> KernelSpec:
    """The registered kernel `name`; InputError if unknown or not a KernelSpec."""
    spec = KERNELS.get(name)
    if not isinstance(spec, KernelSpec):
        raise InputError("registered kernel is not a KernelSpec", ("kernel",), name)
    return spec


def build(name: str, machine: str | None = None, **params: Any) -> Model:
    """Build kernel `name` on `machine` (default: its first) with `params` (strings are parsed)."""
    return kernel_spec(name).build(machine, **params)
