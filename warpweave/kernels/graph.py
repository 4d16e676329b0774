"""Building a model from cost phases: `Graph` turns chains of `Phase`s into ops with reservation
tables, and collects edges.

An op is a sequence of steps; a step is one `Phase` or a tuple of phases that run side by side
(the exp on the MUFU while the FMA lanes scale).  A step starts when the previous step's result is
ready; the op's `cycles` is the sum of step latencies, and each phase reserves its unit for its
`busy` cycles from the step's start.  Edges default to data edges with delay = cycles(src).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from warpweave.core.model import Edge, EdgeKind, Machine, Model, Op
from warpweave.core.validate import check_model
from warpweave.machines.costs import Phase

Step = Phase | tuple[Phase, ...]


def reservation(steps: tuple[Step, ...]) -> tuple[int, list[dict[str, int]]]:
    """(cycles, reservation rows) of a chain of steps; trailing empty rows are dropped."""
    rows: list[Counter] = []
    start = 0
    for step in steps:
        phases = step if isinstance(step, tuple) else (step,)
        for p in phases:
            if p.unit is None:
                continue
            rows.extend(Counter() for _ in range(start + p.busy - len(rows)))
            for c in range(start, start + p.busy):
                rows[c][p.unit] += 1
        start += max(p.latency for p in phases)
    while rows and not rows[-1]:
        rows.pop()
    return start, [dict(r) for r in rows]


class Graph:
    """Ops and edges of a loop body on a machine, added in order."""

    def __init__(self, name: str, machine: Machine):
        self.name = name
        self.machine = machine
        self.ops: list[Op] = []
        self.edges: list[Edge] = []
        self._cycles: dict[str, int] = {}

    def op(self, name: str, *steps: Step, regs: int = 0,
           footprint: Mapping[str, int] | None = None, spill_cost: int = 0, warps: int = 0,
           variable_latency: bool = False, is_async: bool = False) -> str:
        """Add an op whose time and reservations come from `steps`; returns its name."""
        cycles, rows = reservation(steps)
        self.ops.append(Op(name, cycles, rrt=rows, variable_latency=variable_latency, regs=regs,
                           footprint=footprint or {}, spill_cost=spill_cost, warps=warps,
                           is_async=is_async))
        self._cycles[name] = cycles
        return name

    def cycles(self, name: str) -> int:
        return self._cycles[name]

    def edge(self, src: str, dst: str, distance: int = 0, kind: EdgeKind = "data",
             blocking: bool = False, delay: int | None = None) -> None:
        """dst of iteration i + distance waits `delay` (default: cycles(src)) after src of i."""
        d = self._cycles[src] if delay is None else delay
        self.edges.append(Edge(src, dst, d, distance, kind, blocking))

    def reuse(self, reader: str, writer: str, depth: int, delay: int | None = None) -> None:
        """A write-after-read anti-dependence on a `depth`-deep buffer ring: the writer of
        iteration i + depth waits until the reader of iteration i is done with the slot."""
        self.edge(reader, writer, distance=depth, kind="order", delay=delay)

    def model(self) -> Model:
        return check_model(Model(self.name, self.machine, self.ops, self.edges))
