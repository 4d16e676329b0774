"""The warp-program IR: one in-order instruction stream per warp group (frozen attrs).

A group's stream is a *trip template*: the instructions of one steady-state trip `k` of the loop.
Every instruction concerns one loop iteration, `k - lag`, and is present in trip `k` iff that
iteration exists (`0 <= k - lag < n`); the prologue is trips `0 .. E-1`, the steady-state loop trips
`E .. n-1` (every instruction present), the epilogue trips `n .. n+E-1`, where `E` is the group's
largest lag.  `Commit` is present in every trip (an empty group where its op is absent) so that the
wait-group counts are the same in every trip.  The simulator and every printer read this IR.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from warpweave.codegen.buffers import Plan


@attrs.frozen
class Read:
    """An operand: instance `k - lag` of `value`."""

    value: str
    lag: int


@attrs.frozen
class Hazard:
    """An in-group dependence kept by in-order issue and fixed latency: `op` of iteration `k - lag`
    must have issued `delay` cycles before (a scoreboard stall if not)."""

    op: str
    lag: int
    delay: int


@attrs.frozen
class Issue:
    """Issue op `op` for iteration `k - lag` (a call to its hook)."""

    op: str
    lag: int
    reads: tuple[Read, ...] = ()
    hazards: tuple[Hazard, ...] = ()


@attrs.frozen
class WaitFull:
    """Consumer side of an aref `get`: wait until `full[slot]` completes the instance's phase."""

    channel: str
    lag: int


@attrs.frozen
class WaitEmpty:
    """Producer side of an aref `put`: wait until every consumer released the slot's last round."""

    channel: str
    lag: int


@attrs.frozen
class ArriveFull:
    """Publish instance `k - lag` on `full[slot]` when op `op` of that instance completes
    (an async op's hook arrives itself: TMA transaction bytes, tcgen05.commit)."""

    channel: str
    lag: int
    op: str


@attrs.frozen
class ArriveEmpty:
    """aref `consumed`: release the slot of instance `k - lag`; if `after` is set, only when that
    op (iteration `k - after_lag`) completes (an anti-dependence: the reader reads until done)."""

    channel: str
    lag: int
    after: str | None = None
    after_lag: int = 0


@attrs.frozen
class Commit:
    """Close an async group after the MMA `op` of iteration `k - lag` (empty when it is absent)."""

    op: str
    lag: int


@attrs.frozen
class WaitGroup:
    """One reader's wait for async MMA results of its own group: `waits` names each instance
    it needs and when, after that instance issues, the reader's edge says the result is there
    - (op, lag, delay).  The wait returns when every one of them is there for this reader,
    never later for another reader's sake (a per-instance barrier lowering waits on exactly
    these); `n` is the wgmma count that does the same on sm_90a: at most `n` committed groups
    still pending, the newest `n` (module docstring of `lower`)."""

    n: int
    lag: int
    waits: tuple[tuple[str, int, int], ...]


@attrs.frozen
class NamedSync:
    """bar.sync on a named barrier: arrive and wait for the generation (`threads` participants)."""

    channel: str
    barrier: str
    id: int
    threads: int
    lag: int


@attrs.frozen
class NamedArrive:
    """bar.arrive on a named barrier; if `after` is set, when that op instance completes."""

    channel: str
    barrier: str
    id: int
    threads: int
    lag: int
    after: str | None = None


Instr = (Issue | WaitFull | WaitEmpty | ArriveFull | ArriveEmpty | Commit | WaitGroup | NamedSync
         | NamedArrive)


def always_present(x: Instr) -> bool:
    return isinstance(x, Commit)


@attrs.frozen
class GroupProgram:
    """The stream of one warp group: a preamble, the trip template, and a drain after the loop."""

    group: str
    warps: int
    reg_limit: int
    body: tuple[Instr, ...]
    preamble: tuple[Instr, ...] = ()
    drain: tuple[Instr, ...] = ()

    @property
    def depth(self) -> int:
        """E: the largest lag, the number of prologue (and epilogue) trips."""
        return max((x.lag for x in self.body), default=0)

    def trip(self, k: int, n: int) -> list[Instr]:
        """The instructions present in trip k of a loop of n iterations."""
        return [x for x in self.body if always_present(x) or 0 <= k - x.lag < n]

    def trips(self, n: int) -> Iterator[tuple[str, int, list[Instr]]]:
        """(phase, k, instructions) for every trip of a run of n >= depth iterations."""
        e = self.depth
        for k in range(n + e):
            phase = "prologue" if k < e else ("steady" if k < n else "epilogue")
            yield phase, k, self.trip(k, n)


@attrs.frozen
class WarpProgram:
    """All groups' streams for one schedule, with the plan (buffers, channels) they use."""

    model: str
    I: int  # noqa: E741
    L: int
    S: int
    groups: tuple[GroupProgram, ...]
    plan: Plan
    notes: tuple[str, ...] = ()

    @property
    def min_iterations(self) -> int:
        """The smallest n the code handles (every group's prologue must fit)."""
        return max(1, max(g.depth for g in self.groups))

    def group(self, name: str) -> GroupProgram:
        return next(g for g in self.groups if g.group == name)
