"""`KernelSpec`: a named model builder with typed parameters, registered by entry point
(`warpweave.kernels`), and the parsing of `key=value` parameters from the command line.

A builder is called as `build(spec, **params)` with `spec` the `MachineSpec` of the machine it
builds for (None for a kernel with its own toy machine) and every parameter filled in; it returns
a model that `check_model` accepts.  Machine parameters (`groups`, `vl`, `max_regs`) are shared by
every kernel that runs on a registered machine.

A parameter may have aliases (the tile parameters answer to `tile_m` / `tile_n` as well as
`block_m` / `block_n`: the names sweeps and the Twill paper use); values are always stored under
the parameter's own name.  A kernel may state its useful work (`work`: the FLOPs one loop
iteration computes, from the resolved parameters), which `warpweave sweep` divides by the proven
I to rank tile shapes by throughput.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from warpweave.core.model import Machine, Model
from warpweave.core.validate import check_model
from warpweave.errors import InputError
from warpweave.machines import machine_spec
from warpweave.machines.gpu import NEUTRAL_VL, MachineSpec

_BOOLS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


@attrs.frozen
class Param:
    """A builder parameter: name, type (int, str or bool), default, help, optional limits."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple = ()
    low: int | None = None
    high: int | None = None
    aliases: tuple[str, ...] = ()

    def check(self, value: Any) -> Any:
        """`value` as this parameter's type (strings are parsed); InputError if it does not fit."""
        path = ("params", self.name)
        if isinstance(value, str) and self.type is not str:
            value = self._parse(value)
        if self.type is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise InputError("must be an integer", path, value)
        if self.type is bool and not isinstance(value, bool):
            raise InputError("must be true or false", path, value)
        if self.type is str and not isinstance(value, str):
            raise InputError("must be a string", path, value)
        if self.choices and value not in self.choices:
            raise InputError(f"must be one of {', '.join(map(str, self.choices))}", path, value)
        if self.low is not None and value < self.low:
            raise InputError(f"must be >= {self.low}", path, value)
        if self.high is not None and value > self.high:
            raise InputError(f"must be <= {self.high}", path, value)
        return value

    def _parse(self, text: str) -> Any:
        path = ("params", self.name)
        if self.type is bool:
            if text.lower() not in _BOOLS:
                raise InputError("must be true or false", path, text)
            return _BOOLS[text.lower()]
        try:
            return int(text)
        except ValueError:
            raise InputError("must be an integer", path, text) from None

    def to_dict(self) -> dict:
        d = {"type": self.type.__name__, "default": self.default, "help": self.help}
        if self.choices:
            d["choices"] = list(self.choices)
        if self.low is not None:
            d["min"] = self.low
        if self.high is not None:
            d["max"] = self.high
        if self.aliases:
            d["aliases"] = list(self.aliases)
        return d


# Parameters every kernel on a registered machine takes: they configure the machine.
MACHINE_PARAMS = (
    Param("inventory", str, "published", "published: the launch the kernel follows (FA3's, "
          "FA4's, ...); neutral: equal groups shaped like no published answer "
          "(machines.gpu.NEUTRAL_GROUPS)", choices=("published", "neutral")),
    Param("groups", str, "", "warp-group inventory name:warps:regs,... (default: the "
          "inventory's)"),
    Param("vl", str, "", "the variable-latency group (default: the inventory's)"),
    Param("max_regs", int, 0, "cap every group's register limit (0: no cap)", low=0),
    Param("reads", str, "issue", "when an async reader (an MMA, a TMA store) is done with the "
          "tile it reads, for rule 4: at its issue (the Twill paper's lifetimes) or at its "
          "completion (the hardware's: the edges' hold; the plan emit builds keeps the tile "
          "that long)", choices=("issue", "completion")),
)


@attrs.frozen
class KernelSpec:
    """A registered kernel: what it is, the machines it supports, its parameters, its builder."""

    name: str
    description: str
    machines: tuple[str, ...]
    params: tuple[Param, ...]
    build_fn: Callable[..., Model] = attrs.field(eq=False, repr=False)
    follows: str = ""
    # Useful FLOPs of one loop iteration: work(machine name or None, resolved params) -> int.
    # None: the kernel states none (a sweep then ranks by iterations per cycle, 1/I).
    work: Callable[[str | None, Mapping[str, Any]], int] | None = attrs.field(
        default=None, eq=False, repr=False)

    @property
    def all_params(self) -> tuple[Param, ...]:
        return self.params + (MACHINE_PARAMS if self.machines else ())

    def param(self, name: str) -> Param:
        """The parameter called `name` (or with `name` as an alias)."""
        for p in self.all_params:
            if name == p.name or name in p.aliases:
                return p
        known = ", ".join(p.name for p in self.all_params) or "none"
        raise InputError(f"kernel {self.name} has no such parameter (parameters: {known})",
                         ("params", name))

    def canonical(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """`params` under the parameters' own names, typed and checked (strings parsed);
        InputError if one is given twice (by its name and an alias)."""
        out: dict[str, Any] = {}
        given: dict[str, str] = {}
        for name, value in params.items():
            p = self.param(name)
            if p.name in out:
                raise InputError(f"given twice (as {given[p.name]} and {name})", ("params", name),
                                 value)
            out[p.name], given[p.name] = p.check(value), name
        return out

    def resolve(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Every parameter, typed and checked, defaults filled in."""
        return {**{p.name: p.default for p in self.all_params}, **self.canonical(params)}

    def flops(self, machine: str | None, params: Mapping[str, Any]) -> int | None:
        """Useful FLOPs of one loop iteration with `params` on `machine` (None if the kernel
        states no work)."""
        if self.work is None:
            return None
        return self.work(machine or (self.machines[0] if self.machines else None),
                         self.resolve(params))

    def build(self, machine: str | None = None, **params: Any) -> Model:
        """Build and check the model on `machine` (default: the first supported one)."""
        if not self.machines:
            if machine is not None:
                raise InputError(f"kernel {self.name} builds its own machine", ("machine",),
                                 machine)
            return check_model(self.build_fn(None, **self.resolve(params)))
        name = machine or self.machines[0]
        if name not in self.machines:
            raise InputError(f"kernel {self.name} supports {', '.join(self.machines)}",
                             ("machine",), name)
        resolved = self.resolve(params)
        reads = resolved.pop("reads")
        model = self.build_fn(machine_spec(name), **resolved)
        if reads == "issue":  # the builders state the holds; the paper's lifetimes drop them
            model = model.replace(edges=[attrs.evolve(e, hold=0) for e in model.edges])
        return check_model(model)

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description,
                "machines": list(self.machines) or ["(own toy machine)"],
                "follows": self.follows, "states_work": self.work is not None,
                "params": {p.name: p.to_dict() for p in self.all_params}}


def parse_params(spec: KernelSpec, items: Iterable[str]) -> dict[str, Any]:
    """`["block_n=128", "dtype=fp8"]` -> typed values under the parameters' own names (an alias
    such as `tile_n=128` becomes `block_n`); InputError names the bad item."""
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError("a kernel parameter is key=value", ("params",), item)
        pairs.append((key, value))
    if len({k for k, _ in pairs}) < len(pairs):
        key = next(k for i, (k, _) in enumerate(pairs) if k in {x for x, _ in pairs[:i]})
        raise InputError("given twice", ("params", key))
    return spec.canonical(dict(pairs))


def machine_for(spec: MachineSpec, inventory: str, groups: str, vl: str, max_regs: int,
                default_groups: Sequence | str | None = None, default_vl: str | None = None,
                smem_reserved: int = 0) -> Machine:
    """The machine a builder works on, from the shared machine parameters; a kernel may bring
    its own published inventory (the launch it follows), the neutral one is the machine's."""
    if inventory == "neutral":
        if not spec.neutral:
            raise InputError(f"machine {spec.name} has no neutral inventory", ("inventory",),
                             inventory)
        default_groups, default_vl = spec.neutral, NEUTRAL_VL
    chosen_vl = vl or (default_vl if not groups else None)
    return spec(groups=groups or default_groups or None, variable_latency_group=chosen_vl,
                max_regs=max_regs or None, smem_reserved=smem_reserved)
