"""The points of a sweep: a kernel's parameters crossed, on each machine.

A parameter's values come as a list (the API) or as command-line text `key=v1,v2,v3`.  Values of
a free-form text parameter (a warp inventory `groups=w0:1:24,wg1:4:240`, which has commas of its
own) are separated by `;` instead.  Every value is checked against the kernel's declared
parameter (type, choices, limits) here, before anything is built or solved; an alias
(`tile_m`) is kept as the user wrote it for display and stored under the parameter's own name
(`block_m`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from warpweave.errors import InputError
from warpweave.kernels.spec import KernelSpec, Param


@attrs.frozen
class Axis:
    """One swept (or fixed) parameter: the name as given, the parameter, its values in order."""

    name: str
    param: Param
    values: tuple[Any, ...]


@attrs.frozen
class Point:
    """One point of the grid: a kernel on a machine (None: the kernel's own toy machine) with
    the parameters given (under their own names; the rest take the kernel's defaults)."""

    kernel: str
    machine: str | None
    params: tuple[tuple[str, Any], ...]

    def label(self, names: Mapping[str, str] | None = None) -> str:
        """`h100 tile_m=80 tile_n=128`: the machine and the parameters, each under the name the
        user gave it (`names`: parameter -> name shown)."""
        names = names or {}
        parts = [self.machine] if self.machine else []
        parts += [f"{names.get(k, k)}={v}" for k, v in self.params]
        return " ".join(parts)

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "machine": self.machine, "params": dict(self.params)}


def separator(param: Param) -> str:
    """What separates a parameter's values on the command line: `;` for free-form text (a warp
    inventory has commas of its own), `,` otherwise."""
    return ";" if param.type is str and not param.choices else ","


def parse_axes(spec: KernelSpec, items: Iterable[str]) -> dict[str, list[str]]:
    """Command-line `key=v1,v2` items -> {key: [values as text]}; a key given again adds its
    values.  InputError names the bad item."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key or not text:
            raise InputError("a swept parameter is key=value[,value...]", ("--param",), item)
        values = [v.strip() for v in text.split(separator(spec.param(key)))]
        if not all(values):
            raise InputError("an empty value", ("--param",), item)
        out.setdefault(key, []).extend(values)
    return out


def axes(spec: KernelSpec, params: Mapping[str, Any]) -> list[Axis]:
    """The checked axes of `params` ({name: value or list of values}); values are typed (text is
    parsed), duplicates dropped.  InputError names a parameter the kernel lacks, a bad value,
    or one parameter given under two names (`tile_m` and `block_m`)."""
    out: list[Axis] = []
    seen: dict[str, str] = {}
    for name, given in params.items():
        p = spec.param(name)
        if p.name in seen:
            raise InputError(f"given twice (as {seen[p.name]} and {name})", ("params", name))
        seen[p.name] = name
        raw = list(given) if isinstance(given, list | tuple) else [given]
        if not raw:
            raise InputError("no values", ("params", name))
        values = tuple(dict.fromkeys(p.check(v) for v in raw))
        out.append(Axis(name, p, values))
    return out


def machines_of(spec: KernelSpec, machines: str | Sequence[str] | None) -> list[str | None]:
    """The machines to sweep: a list, or comma-separated text; default the kernel's first (None
    for a kernel with its own toy machine).  InputError names one the kernel does not support."""
    if isinstance(machines, str):
        machines = [m.strip() for m in machines.split(",")]
    chosen = list(dict.fromkeys(machines or []))
    if not spec.machines:
        if chosen:
            raise InputError(f"kernel {spec.name} builds its own machine", ("--machine",),
                             ",".join(chosen))
        return [None]
    for m in chosen:
        if m not in spec.machines:
            raise InputError(f"kernel {spec.name} supports {', '.join(spec.machines)}",
                             ("--machine",), m)
    return chosen or [spec.machines[0]]


def points(spec: KernelSpec, machines: Sequence[str | None], grid: Sequence[Axis]) -> list[Point]:
    """Every machine crossed with every combination of the axes' values, in order (the last
    axis varies fastest)."""
    names = [a.param.name for a in grid]
    return [Point(spec.name, m, tuple(zip(names, combo, strict=True)))
            for m in machines for combo in itertools.product(*(a.values for a in grid))]
