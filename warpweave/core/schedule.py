"""A modulo schedule (I, L, start times, warp-group assignment) and its straight-line program Q.

Q (DESIGN section 3) overlaps S = ceil(L / I) copies of the schedule, copy i shifted by i*I; it
has length T = (S-1)*I + L.  Each instance (v, i) issues at tau = M(v) + i*I and its result is
live over [tau, end): end is the latest issue of a data use inside Q, T + 1 when some use lies
beyond Q, and tau itself when the value has no data use.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from warpweave.core.model import Model


@attrs.frozen
class Schedule:
    """`I`, `L`, `start[op] = M(op)` and `group[op] = A(op)` for the ops of `model` (a name)."""

    model: str
    I: int  # noqa: E741 - the paper's name
    L: int
    start: Mapping[str, int] = attrs.field(converter=dict)
    group: Mapping[str, str] = attrs.field(converter=dict)

    @property
    def stages(self) -> int:
        return -(-self.L // self.I)

    def stage(self, op: str) -> int:
        return self.start[op] // self.I

    @classmethod
    def tight(cls, model: Model, I: int, start: Mapping[str, int],  # noqa: E741
              group: Mapping[str, str]) -> Schedule:
        """A schedule whose length is the default: max over ops of M(v) + cycles(v)."""
        length = max(start[op.name] + op.cycles for op in model.ops)
        return cls(model.name, I, length, start, group)


@attrs.frozen
class Instance:
    """Copy `copy` of op `op` in Q: issued at `issue`, its result live over [issue, end)."""

    op: str
    copy: int
    issue: int
    end: int

    def live_at(self, t: int) -> bool:
        return self.issue <= t < self.end


@attrs.frozen
class Program:
    """The straight-line program Q of a schedule."""

    I: int  # noqa: E741
    L: int
    S: int
    T: int
    instances: tuple[Instance, ...]
    _index: dict[tuple[str, int], Instance] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_index", {(x.op, x.copy): x for x in self.instances})

    def instance(self, op: str, copy: int) -> Instance:
        return self._index[(op, copy)]

    def live_at(self, t: int) -> list[Instance]:
        return [x for x in self.instances if x.live_at(t)]


def straight_line(model: Model, schedule: Schedule) -> Program:
    """Build Q from a schedule: S copies, issue times, lifetimes by DESIGN rule 4."""
    I, L = schedule.I, schedule.L  # noqa: E741
    S = -(-L // I)
    T = (S - 1) * I + L
    tau = {(v, i): schedule.start[v] + i * I for v in model.op_names for i in range(S)}
    instances = []
    for v in model.op_names:
        uses = [e for e in model.out_edges(v) if e.is_data]
        for i in range(S):
            ends = [tau[(e.dst, i + e.distance)] if i + e.distance < S else T + 1 for e in uses]
            instances.append(Instance(v, i, tau[(v, i)], max(ends, default=tau[(v, i)])))
    return Program(I, L, S, T, tuple(instances))

