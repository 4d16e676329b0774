"""Building a model from cost phases: `Graph` turns chains of `Phase`s into ops with reservation
tables, and collects edges.

An op is a sequence of steps; a step is one `Phase`, a tuple of phases that run side by side
(the exp on the MUFU while the FMA lanes scale), or `Timed` phases at given offsets - a
`pipelined` set of phases run over column chunks (chunk k's TMEM load while chunk k-1 is
reduced).  A step starts when the previous step's
result is ready; each phase reserves its unit for its `busy` cycles from its start.  The op holds
its group until its last step has issued (`Phase.issue`: a reduction's warps are free before its
result lands) - that is its `cycles`; its result is ready when the last step's latency has
passed, and edges default to that delay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import attrs

from warpweave.core.model import Edge, EdgeKind, Machine, Model, Op
from warpweave.core.validate import check_model
from warpweave.errors import InputError
from warpweave.machines.costs import CostModel, Phase, cycles


@attrs.frozen
class Timed:
    """Phases at given offsets from the step's start; the step's result is ready at `latency`."""

    placed: tuple[tuple[Phase, int], ...] = attrs.field(converter=tuple)
    latency: int = 1


def pipelined(stages: tuple[Phase | tuple[Phase, ...], ...], chunks: int) -> Timed:
    """Stages that process a tile in `chunks` column chunks, software-pipelined: chunk k's stage
    s starts when chunk k's stage s-1 is ready and stage s has taken chunk k-1 (its units busy
    for chunk k-1's share).  A stage is a phase or phases side by side, given for the whole
    tile; a chunk takes 1/chunks of its busy and latency cycles (the per-element scaling of the
    cost model).  chunks=1 is the stages one after the other."""
    def part(p: Phase) -> Phase:
        return Phase(p.unit, cycles(p.busy / chunks) if p.busy else 0,
                     cycles(p.latency / chunks), p.what)

    parts = [tuple(part(p) for p in (st if isinstance(st, tuple) else (st,))) for st in stages]
    placed: list[tuple[Phase, int]] = []
    free = [0] * len(parts)        # when each stage may take its next chunk
    end = 0
    for _ in range(chunks):
        t = 0                       # when this chunk's previous stage is ready
        for s, phases in enumerate(parts):
            start = max(t, free[s])
            placed += [(p, start) for p in phases]
            free[s] = start + max(1, max(p.busy for p in phases))
            t = start + max(p.latency for p in phases)
        end = max(end, t)
    return Timed(placed, end)


def split(timed: Timed, units: set[str | None], at: int) -> Timed:
    """The phases of `timed` on `units`, as a step that starts `at` cycles after `timed` did (a
    pipeline whose stages two ops run: the second starts when the first chunk is ready); its
    result is ready when the last of them is."""
    placed = [(p, t - at) for p, t in timed.placed if p.unit in units]
    return Timed(placed, max(t + p.latency for p, t in placed))


Step = Phase | tuple[Phase, ...] | Timed


def reservation(steps: tuple[Step, ...]) -> tuple[int, int, list[dict[str, int]]]:
    """(cycles the op holds its group, cycles until its result is ready, reservation rows) of a
    chain of steps; trailing empty rows are dropped."""
    rows: list[Counter] = []
    start = held = 0

    def reserve(p: Phase, at: int) -> None:
        if p.unit is None:
            return
        rows.extend(Counter() for _ in range(at + p.busy - len(rows)))
        for c in range(at, at + p.busy):
            rows[c][p.unit] += 1

    for step in steps:
        if isinstance(step, Timed):
            for p, at in step.placed:
                reserve(p, start + at)
            latency = step.latency
            held = start + latency
        else:
            phases = step if isinstance(step, tuple) else (step,)
            for p in phases:
                reserve(p, start)
            latency = max(p.latency for p in phases)
            held = start + max(p.holds for p in phases)
        start += latency
    while rows and not rows[-1]:
        rows.pop()
    return held, start, [dict(r) for r in rows]


class Graph:
    """Ops and edges of a loop body on a machine, added in order; `cost` prices hand-offs;
    `tile`: the kernel's tile parameters and their values (what sizes its ops), named by the
    error when a value cannot fit the machine."""

    def __init__(self, name: str, machine: Machine, cost: CostModel | None = None,
                 tile: Mapping[str, int] | None = None):
        self.name = name
        self.machine = machine
        self.cost = cost
        self.tile = dict(tile or {})
        self.ops: list[Op] = []
        self.edges: list[Edge] = []
        self._ready: dict[str, int] = {}

    def op(self, name: str, *steps: Step, regs: int = 0,
           footprint: Mapping[str, int] | None = None, spill_cost: int = 0, warps: int = 0,
           variable_latency: bool = False, is_async: bool = False) -> str:
        """Add an op whose time and reservations come from `steps`; returns its name."""
        held, ready, rows = reservation(steps)
        self.ops.append(Op(name, held, rrt=rows, variable_latency=variable_latency, regs=regs,
                           footprint=footprint or {}, spill_cost=spill_cost, warps=warps,
                           is_async=is_async))
        self._ready[name] = ready
        return name

    def ready(self, name: str) -> int:
        """Cycles from the op's issue until its result can be read."""
        return self._ready[name]

    def edge(self, src: str, dst: str, distance: int = 0, kind: EdgeKind = "data",
             blocking: bool = False, delay: int | None = None, payload: str | None = None,
             nbytes: int = 0, in_place: bool = False) -> None:
        """dst of iteration i + distance waits `delay` (default: src's result ready) after src
        of i.  `payload` (`machines.costs.PAYLOADS`; `nbytes` for registers) is where the
        value dst reads lives: it prices the hand-off across and within groups; without it a
        data edge takes src's `spill_cost`.  An asynchronous reader (an MMA, a TMA store) reads
        the value until it completes: a data edge into one holds it for the reader's cycles -
        unless the reader accumulates into it (`in_place`, and an accumulator's edge to itself):
        its result is then the value's next version in the same storage."""
        d = self._ready[src] if delay is None else delay
        across, within = (None, 0) if payload is None else self.cost.handoff(payload, nbytes)
        reader = next(op for op in self.ops if op.name == dst)
        held = kind == "data" and reader.is_async and not in_place and src != dst
        hold = reader.cycles if held else 0
        self.edges.append(Edge(src, dst, d, distance, kind, blocking, across, within, hold))

    def reuse(self, reader: str, writer: str, depth: int, delay: int | None = None) -> None:
        """A write-after-read anti-dependence on a `depth`-deep buffer ring: the writer of
        iteration i + depth waits until the reader of iteration i is done with the slot."""
        self.edge(reader, writer, distance=depth, kind="order", delay=delay)

    def model(self) -> Model:
        """The checked model; InputError if a tile cannot fit the machine at all (a value
        larger than every group's registers or than a memory), before anything is solved: on
        `params` with the tile's parameters and values (`params = {"block_m": 1024, ...}`)."""
        m = self.machine
        where = (("params",), self.tile) if self.tile else ()
        for op in self.ops:
            fits = [g.reg_limit for g in m.warp_groups if g.warps >= op.warps]
            if op.regs and fits and op.regs > max(fits):
                raise InputError(f"{self.name}: {op.name} holds {op.regs} registers per thread, "
                                 f"more than any group of the inventory ({max(fits)}): use a "
                                 "smaller tile or a larger register budget", *where)
            for mem, amount in op.footprint:
                capacity = m.memory(mem).capacity
                if amount > capacity:
                    raise InputError(f"{self.name}: {op.name} needs {amount} of {mem}, more than "
                                     f"its capacity {capacity}: use a smaller tile", *where)
        return check_model(Model(self.name, self.machine, self.ops, self.edges))
