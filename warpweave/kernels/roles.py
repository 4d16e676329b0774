"""Warp roles and pipeline shapes: measured on a schedule, and imposed as extra constraints.

The publications describe their strategies by shape - which group runs which ops, whether the QK
GEMM of the next iteration is issued before the softmax of this one ends, whether one tile's
exponential runs under the other tile's GEMMs, whether iterations overlap at all.  The functions
here measure those shapes on any schedule.  The constraints state a shape (or its absence) as an
extra question for the search: solving again with a shape imposed or forbidden tells a shape every
optimal schedule has from one optimum among several.  They are ordinary `Constraint`s (a `check`
and an `encode` through the view), passed to `run_solve(extra=...)` or `core.search.decide`; they
are not registered, because they are questions about a kernel, not rules of the machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from warpweave.core.constraints import Constraint, VariableView, neg
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.core.verify import Violation

# ---------------------------------------------------------------------------------------------
# Measured


def roles(schedule: Schedule) -> dict[str, tuple[str, ...]]:
    """The ops each used group runs, in start order."""
    out: dict[str, list[str]] = {}
    for v in sorted(schedule.start, key=lambda v: (schedule.start[v], v)):
        out.setdefault(schedule.group[v], []).append(v)
    return {g: tuple(ops) for g, ops in sorted(out.items())}


def busy(model: Model, v: str, unit: str) -> int:
    """Cycles from v's issue to the end of its last reservation of `unit` (0 if it has none)."""
    return max((c + 1 for c, u, _ in model.op(v).usage() if u == unit), default=0)


def window(model: Model, s: Schedule, v: str, unit: str) -> set[int]:
    """The modulo slots of [M(v), M(v) + busy(v, unit)): when, in the steady state, v holds (or
    is still working towards the end of its use of) `unit`."""
    return {(s.start[v] + c) % s.I for c in range(busy(model, v, unit))}


def overlaps(model: Model, s: Schedule, a: str, unit_a: str, b: str, unit_b: str) -> bool:
    """Whether a's window on unit_a and b's window on unit_b share a slot modulo I."""
    return bool(window(model, s, a, unit_a) & window(model, s, b, unit_b))


def issue_span(s: Schedule, ops: Iterable[str]) -> int:
    """max M - min M over `ops`: the ops of one iteration are issued within this many cycles."""
    starts = [s.start[v] for v in ops]
    return max(starts) - min(starts)


def iterations_overlap(s: Schedule, ops: Iterable[str]) -> bool:
    """Whether some op of iteration j+1 issues no later than some op of iteration j (among
    `ops`): the issue streams of consecutive iterations interleave - a software pipeline across
    the iteration boundary.  False means each iteration's ops are all issued before any op of
    the next one."""
    return issue_span(s, ops) >= s.I


def issued_before_end(model: Model, s: Schedule, first: str, later: str) -> bool:
    """Whether `first` of iteration j+1 issues before `later` of iteration j has finished (FA3:
    the QK GEMM of the next iteration is issued before this iteration's softmax completes)."""
    return s.start[first] + s.I < s.start[later] + model.op(later).cycles


# ---------------------------------------------------------------------------------------------
# Imposed


class Roles(Constraint):
    """Ops pinned to named groups, pairs of ops on one group, pairs on different groups."""

    name = "roles"

    def __init__(self, pinned: Mapping[str, str] | None = None,
                 same: Sequence[tuple[str, str]] = (), apart: Sequence[tuple[str, str]] = ()):
        self.pinned = dict(pinned or {})
        self.same, self.apart = tuple(same), tuple(apart)
        # Relations survive renaming interchangeable groups; pins to a name do not.
        self.group_symmetric = not self.pinned

    def check(self, model: Model, schedule: Schedule, semantics: str = "loop"
              ) -> list[Violation]:
        g = schedule.group
        out = [Violation(self.name, f"{v} on {g[v]}, pinned to {want}", ops=(v,))
               for v, want in self.pinned.items() if g[v] != want]
        out += [Violation(self.name, f"{u} on {g[u]} and {v} on {g[v]}: wanted together",
                          ops=(u, v)) for u, v in self.same if g[u] != g[v]]
        out += [Violation(self.name, f"{u} and {v} both on {g[u]}: wanted apart", ops=(u, v))
                for u, v in self.apart if g[u] == g[v]]
        return out

    def encode(self, view: VariableView) -> None:
        p = view.problem
        for v, g in self.pinned.items():
            p.add_clause([view.on(v, g)])
        for u, v in self.same:
            p.add_clause([view.same_group(u, v)])
        for u, v in self.apart:
            p.add_clause([neg(view.same_group(u, v))])


class Sequential(Constraint):
    """No cross-iteration overlap among `ops`: every op of iteration j+1 issues after every op
    of iteration j (M(u) + I > M(v) for all u, v), the negation of `iterations_overlap`."""

    name = "sequential"
    group_symmetric = True

    def __init__(self, ops: Sequence[str]):
        self.ops = tuple(ops)

    def check(self, model: Model, schedule: Schedule, semantics: str = "loop"
              ) -> list[Violation]:
        if not iterations_overlap(schedule, self.ops):
            return []
        first = min(self.ops, key=schedule.start.get)
        last = max(self.ops, key=schedule.start.get)
        return [Violation(self.name, f"{first} of the next iteration issues at "
                          f"{schedule.start[first] + schedule.I}, not after {last} at "
                          f"{schedule.start[last]}", ops=(first, last))]

    def encode(self, view: VariableView) -> None:
        for u in self.ops:
            for v in self.ops:
                if u != v:
                    view.require_gap(v, u, 1, distance=1)


class Overlapping(Constraint):
    """Cross-iteration overlap among `ops` (`iterations_overlap`): some op of iteration j+1
    issues no later than some op of iteration j, i.e. M(v) - M(u) >= I for some pair."""

    name = "overlapping"
    group_symmetric = True

    def __init__(self, ops: Sequence[str]):
        self.ops = tuple(ops)

    def check(self, model: Model, schedule: Schedule, semantics: str = "loop"
              ) -> list[Violation]:
        if iterations_overlap(schedule, self.ops):
            return []
        return [Violation(self.name, f"the ops of one iteration issue within "
                          f"{issue_span(schedule, self.ops)} < I = {schedule.I} cycles",
                          ops=self.ops)]

    def encode(self, view: VariableView) -> None:
        p, pairs = view.problem, []
        for u in self.ops:
            for v in self.ops:
                if u != v:
                    x = p.bool(f"overlap[{u},{v}]")
                    view.require_gap(u, v, view.I, unless=[neg(x)])
                    pairs.append(x)
        p.add_clause(pairs)


class Disjoint(Constraint):
    """Windows that must not share a modulo slot: (a, unit_a, b, unit_b) says a's window on
    unit_a and b's on unit_b (see `window`) are disjoint modulo I - e.g. "tile 0's exponential
    never runs under a GEMM of tile 1", the negation of ping-pong."""

    name = "disjoint"
    group_symmetric = True

    def __init__(self, pairs: Sequence[tuple[str, str, str, str]]):
        self.pairs = tuple(pairs)

    def check(self, model: Model, schedule: Schedule, semantics: str = "loop"
              ) -> list[Violation]:
        return [Violation(self.name, f"{a} ({ua}) overlaps {b} ({ub}) modulo I", ops=(a, b))
                for a, ua, b, ub in self.pairs if overlaps(model, schedule, a, ua, b, ub)]

    def encode(self, view: VariableView) -> None:
        m, span = view.model, view.S + 1    # M(v) lies in [0, S*I): differences within S*I
        for a, ua, b, ub in self.pairs:
            for k in range(-span, span + 1):
                # neither window starts inside the other, in any pair of copies
                view.forbid_overlap(b, a, k, busy(m, a, ua))
                view.forbid_overlap(a, b, k, busy(m, b, ub))
