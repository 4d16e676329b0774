"""The model of DESIGN section 3: a machine (units, memories, warp groups) and a dependence graph.

Everything is frozen; names are unique within their kind and are how edges, reservation tables
and schedules refer to things.  `check_model` (in `warpweave.core.validate`) states which models
are well formed; builders and loaders call it so that no malformed model reaches a solver.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

import attrs

EdgeKind = Literal["data", "order"]


def _frozen_mapping(value: Mapping[str, int] | None) -> tuple[tuple[str, int], ...]:
    """Store a {name: amount} mapping as a sorted tuple of pairs without zero entries."""
    if not value:
        return ()
    items = value.items() if isinstance(value, Mapping) else value
    return tuple(sorted((k, v) for k, v in items if v != 0))


def _frozen_rows(rows) -> tuple[tuple[tuple[str, int], ...], ...]:
    return tuple(_frozen_mapping(row) for row in rows)


@attrs.frozen
class Unit:
    """A functional unit kind with `capacity` identical instances (tensor core, TMA, SFU, ...)."""

    name: str
    capacity: int


@attrs.frozen
class Memory:
    """A memory with a capacity in the model's units of footprint (bytes, TMEM columns, ...)."""

    name: str
    capacity: int


@attrs.frozen
class WarpGroup:
    """A target of warp assignment: `warps` warps with `reg_limit` registers per thread."""

    name: str
    warps: int = 1
    reg_limit: int = 255


@attrs.frozen
class Machine:
    """Units, memories and warp groups; optionally the group that runs variable-latency ops."""

    name: str
    units: tuple[Unit, ...] = attrs.field(converter=tuple, default=())
    memories: tuple[Memory, ...] = attrs.field(converter=tuple, default=())
    warp_groups: tuple[WarpGroup, ...] = attrs.field(converter=tuple, default=())
    variable_latency_group: str | None = None
    # The compilation target (`sm_90a`, `sm_100a`, `gfx942`, ...): a registered machine sets its
    # own; a machine of a model file may name one for codegen (default: the registered machine of
    # the same name, else sm_90a).
    arch: str | None = None

    def unit(self, name: str) -> Unit:
        return next(u for u in self.units if u.name == name)

    def memory(self, name: str) -> Memory:
        return next(m for m in self.memories if m.name == name)

    def group(self, name: str) -> WarpGroup:
        return next(g for g in self.warp_groups if g.name == name)


@attrs.frozen
class Op:
    """A tile-level operation of the loop body.

    `rrt[c]` is the row of the reservation table for cycle `c` of the op, a sorted tuple of
    (unit, count); rows past `len(rrt)` (up to `cycles`) use nothing.
    """

    name: str
    cycles: int = 1
    rrt: tuple[tuple[tuple[str, int], ...], ...] = attrs.field(converter=_frozen_rows, default=())
    variable_latency: bool = False
    regs: int = 0
    footprint: tuple[tuple[str, int], ...] = attrs.field(converter=_frozen_mapping, default=())
    spill_cost: int = 0
    warps: int = 0
    is_async: bool = False
    # The op's id in the graph it was imported from (Meta's DDG node id, ...): what exporters
    # key a schedule by, so a compiler can map it back to its own ops.
    source_id: int | str | None = None

    @classmethod
    def using(cls, name: str, cycles: int = 1, uses: Mapping[str, int] | None = None, **kw) -> Op:
        """An op that holds `uses` for every one of its `cycles` (the `uses` shorthand)."""
        row = _frozen_mapping(uses)
        return cls(name, cycles, rrt=[row] * cycles if row else (), **kw)

    def usage(self) -> Iterator[tuple[int, str, int]]:
        """Every nonzero reservation: (cycle offset, unit, count)."""
        for c, row in enumerate(self.rrt):
            for unit, count in row:
                yield c, unit, count

    def total_use(self, unit: str) -> int:
        return sum(n for _, u, n in self.usage() if u == unit)

    def uniform_use(self) -> dict[str, int] | None:
        """The `uses` shorthand if every cycle has the same row (or there are none), else None."""
        if not self.rrt:
            return {}
        if len(self.rrt) == self.cycles and all(row == self.rrt[0] for row in self.rrt):
            return dict(self.rrt[0])
        return None

    def footprint_in(self, memory: str) -> int:
        return dict(self.footprint).get(memory, 0)


@attrs.frozen
class Edge:
    """A dependence `src -> dst`: dst of iteration i + distance starts >= delay after src of i.

    A data edge's hand-off (rule 1): dst waits `handoff` more cycles when it runs on another
    group than src, `handoff_local` more when on the same one.  What a hand-off costs depends
    on where the value lives (registers cross through shared memory; a TMEM or SMEM value only
    needs a barrier).  `handoff=None` means src's `spill_cost`, Twill's per-op annotation for
    register values; a `Model` fills it in, so every edge of a model carries its figure.

    `hold` (data edges, 0 <= hold <= cycles(dst)): dst keeps reading the value for that many
    cycles after it issues - an asynchronous MMA reads its operand tile until it completes - so
    the value lives until then (rule 4), and what holds it cannot be reused earlier.
    """

    src: str
    dst: str
    delay: int
    distance: int = 0
    kind: EdgeKind = "data"
    blocking: bool = False
    handoff: int | None = None
    handoff_local: int = 0
    hold: int = 0

    @property
    def is_data(self) -> bool:
        return self.kind == "data"


@attrs.frozen
class Model:
    """A dependence graph on a machine (DESIGN section 3)."""

    name: str
    machine: Machine
    ops: tuple[Op, ...] = attrs.field(converter=tuple)
    edges: tuple[Edge, ...] = attrs.field(converter=tuple, default=())
    _by_name: dict[str, Op] = attrs.field(init=False, repr=False, eq=False)
    _out: dict[str, list[Edge]] = attrs.field(init=False, repr=False, eq=False)
    _in: dict[str, list[Edge]] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        spill = {op.name: op.spill_cost for op in self.ops}
        if any(e.handoff is None for e in self.edges):
            object.__setattr__(self, "edges", tuple(
                attrs.evolve(e, handoff=spill.get(e.src, 0)) if e.handoff is None else e
                for e in self.edges))
        out: dict[str, list[Edge]] = {op.name: [] for op in self.ops}
        inc: dict[str, list[Edge]] = {op.name: [] for op in self.ops}
        for e in self.edges:
            out.setdefault(e.src, []).append(e)
            inc.setdefault(e.dst, []).append(e)
        object.__setattr__(self, "_by_name", {op.name: op for op in self.ops})
        object.__setattr__(self, "_out", out)
        object.__setattr__(self, "_in", inc)

    def op(self, name: str) -> Op:
        return self._by_name[name]

    def has_op(self, name: str) -> bool:
        return name in self._by_name

    @property
    def op_names(self) -> list[str]:
        return [op.name for op in self.ops]

    def out_edges(self, name: str) -> list[Edge]:
        return self._out.get(name, [])

    def in_edges(self, name: str) -> list[Edge]:
        return self._in.get(name, [])

    def replace(self, **changes) -> Model:
        return attrs.evolve(self, **changes)
