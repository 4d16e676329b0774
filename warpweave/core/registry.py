"""Registries of machines, constraints, backends and kernels, filled from Python entry points.

Built-ins register through the same entry points (`pyproject.toml`) as plugins do.  An entry point
is loaded when first asked for; one that fails to import is recorded with its reason and the rest
keep working.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from warpweave.errors import InputError


class Registry:
    """Named objects from the entry-point group `group`, loaded lazily."""

    def __init__(self, group: str, kind: str):
        self.group = group
        self.kind = kind
        self._points: dict[str, EntryPoint] | None = None
        self._loaded: dict[str, Any] = {}
        self._extra: dict[str, Any] = {}
        self.failures: dict[str, str] = {}

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._points is None:
            self._points = {ep.name: ep for ep in entry_points(group=self.group)}
        return self._points

    def names(self) -> list[str]:
        return sorted(set(self._entry_points()) | set(self._extra))

    def add(self, name: str, obj: Any) -> None:
        """Register `obj` in this process only (tests, notebooks); entry points are the norm."""
        self._extra[name] = obj

    def get(self, name: str) -> Any:
        """The object registered as `name`; InputError if unknown or if its plugin fails to load."""
        if name in self._extra:
            return self._extra[name]
        if name in self._loaded:
            return self._loaded[name]
        point = self._entry_points().get(name)
        if point is None:
            known = ", ".join(self.names()) or "none installed"
            raise InputError(f"unknown {self.kind} (known: {known})", value=name)
        if name in self.failures:
            raise InputError(f"{self.kind} plugin failed to load: {self.failures[name]}",
                             value=name)
        try:
            obj = point.load()
        except Exception as exc:  # a broken plugin must not take the others down
            self.failures[name] = f"{point.value}: {type(exc).__name__}: {exc}"
            raise InputError(f"{self.kind} plugin failed to load: {self.failures[name]}",
                             value=name) from None
        self._loaded[name] = obj
        return obj

    def load_all(self) -> dict[str, Any]:
        """Every object that loads; failures are kept in `self.failures`."""
        out = {}
        for name in self.names():
            try:
                out[name] = self.get(name)
            except InputError:
                pass
        return out


MACHINES = Registry("warpweave.machines", "machine")
CONSTRAINTS = Registry("warpweave.constraints", "constraint")
BACKENDS = Registry("warpweave.backends", "backend")
KERNELS = Registry("warpweave.kernels", "kernel")
ENCODINGS = Registry("warpweave.encodings", "encoding")


def hardware(machine: Any) -> Any | None:
    """The registered machine whose hardware facts hold for `machine` (a `core.model.Machine`):
    the one of the same name, else the first whose arch is `machine.arch`; None for a machine of
    its own (a model file's toy machine).  A registered machine states its facts as `arch` (the
    compilation target) and `registers` (its register rule, `machines.inventory.RegisterRule`):
    a `machines.gpu.MachineSpec` does; a plain callable a plugin registers states none.  Found
    here, through the registry, so that the model checks in `core` read the rule without
    importing `machines`."""
    def facts(obj: Any) -> bool:
        return hasattr(obj, "arch") and hasattr(obj, "registers")

    if machine.name in MACHINES.names():
        try:
            spec = MACHINES.get(machine.name)
        except InputError:  # a plugin that fails to load states nothing (its failure is kept)
            spec = None
        if facts(spec):
            return spec
    if not machine.arch:
        return None
    return next((s for s in MACHINES.load_all().values() if facts(s) and s.arch == machine.arch),
                None)


def backend(spec: str, seed: int = 0) -> Any:
    """A backend instance from its spec `family[:options]` (e.g. `sat:cadical195/totalizer`);
    InputError naming the spec if the family is unknown or the options are bad."""
    family, _, options = spec.partition(":")
    cls = BACKENDS.get(family)
    reason = cls.unavailable() if hasattr(cls, "unavailable") else None
    if reason:
        raise InputError(f"backend not available here: {reason}", value=spec)
    try:
        return cls(options or None, seed=seed)
    except ValueError as exc:
        raise InputError(str(exc), value=spec) from None


def backend_specs() -> list[str]:
    """Every backend family, expanded into its concrete variants where it has some (the sat
    solver x encoding combinations, cpsat worker counts); families that fail to load are
    left out (see `BACKENDS.failures`)."""
    out = []
    for family, cls in BACKENDS.load_all().items():
        variants = cls.variants() if hasattr(cls, "variants") else []
        out += [f"{family}:{v}" for v in variants] if variants else [family]
    return out
