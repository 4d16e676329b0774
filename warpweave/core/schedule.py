"""A modulo schedule (I, L, start times, warp-group assignment) and its straight-line programs.

The pipelined loop of n >= 1 iterations is the straight-line program Q_n (DESIGN section 3): n
copies of the schedule, copy i shifted by i*I, of length T_n = (n-1)*I + L.  Each instance (v, i)
issues at tau = M(v) + i*I and its result is live over [tau, end): end is the latest time a data
use inside Q_n is done reading it - the use's issue plus its edge's `hold` (an asynchronous MMA
reads its operand until it completes) -, T_n + 1 when some use lies beyond Q_n (read after the
loop), and tau itself when the value has no data use.  A value that enters the loop - iteration
j < 0, read at distance delta by the copies i = j + delta >= 0, like an accumulator's initial
value - is an instance with a negative copy number, live from t = 0 until its last read.

The paper's Q is Q_S with S = ceil(L / I) and no entering values (`paper_q`).
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
    """Copy `copy` of op `op` in Q: issued at `issue`, its result live over [issue, end).  A
    negative copy is a value entering the loop: never issued in Q, live from `issue` = 0.
    `count` > 1 stands for that many entering values with the same lifetime (copies `copy`,
    `copy` + 1, ...: those read after the loop, for a distance far beyond the trip count)."""

    op: str
    copy: int
    issue: int
    end: int
    count: int = 1

    @property
    def entering(self) -> bool:
        return self.copy < 0

    def live_at(self, t: int) -> bool:
        return self.issue <= t < self.end


@attrs.frozen
class Program:
    """A straight-line program Q_n of a schedule: `n` copies (`S` = ceil(L / I) is the schedule's
    stage count), horizon `T` = T_n, the instances of the copies and the entering values."""

    I: int  # noqa: E741
    L: int
    S: int
    T: int
    instances: tuple[Instance, ...]
    n: int = 0
    _index: dict[tuple[str, int], Instance] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_index", {(x.op, x.copy): x for x in self.instances})

    def instance(self, op: str, copy: int) -> Instance:
        return self._index[(op, copy)]

    def live_at(self, t: int) -> list[Instance]:
        return [x for x in self.instances if x.live_at(t)]


def max_distance(model: Model, v: str) -> int:
    """The largest iteration distance of a data edge out of v (0 if none): copy i's value is
    read after the loop Q_n when i + max_distance >= n, and copies j in [-max_distance, -1] of v
    enter the loop."""
    return max((e.distance for e in model.out_edges(v) if e.is_data), default=0)


def loop_program(model: Model, schedule: Schedule, n: int, entering: bool = True) -> Program:
    """Q_n: copies 0..n-1 issued at M(v) + i*I, lifetimes by DESIGN rule 4, and (unless
    `entering` is False) the values entering the loop, live from t = 0 until their last read."""
    I, L = schedule.I, schedule.L  # noqa: E741
    T = (n - 1) * I + L
    M = schedule.start
    instances = []
    for v in model.op_names:
        uses = [e for e in model.out_edges(v) if e.is_data]
        far = max_distance(model, v) if entering else 0
        # Entering values j in [-far, n - far) are read inside Q_n; those above all live from 0
        # to the end (read after the loop): one instance counts them.
        after = range(max(-far, n - far), 0)
        if len(after) > 0:
            instances.append(Instance(v, after[0], 0, T + 1, len(after)))
        for i in [*range(-far, min(n - far, 0)), *range(n)]:
            reads = [e for e in uses if i + e.distance >= 0]
            ends = [M[e.dst] + (i + e.distance) * I + e.hold if i + e.distance < n else T + 1
                    for e in reads]
            issue = M[v] + i * I if i >= 0 else 0
            instances.append(Instance(v, i, issue, max(ends, default=issue)))
    return Program(I, L, -(-L // I), T, tuple(instances), n)


def straight_line(model: Model, schedule: Schedule) -> Program:
    """The paper's Q: Q_S with S = ceil(L / I) copies and no entering values."""
    return loop_program(model, schedule, schedule.stages, entering=False)
