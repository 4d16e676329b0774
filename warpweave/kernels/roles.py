"""Warp roles and pipeline shapes: measured on a schedule, and asked as questions.

The publications describe their strategies by shape - which group runs which ops, whether the QK
GEMM of the next iteration is issued before the softmax of this one ends, whether one tile's
exponential runs under the other tile's GEMMs, whether iterations overlap at all.  The functions
at the top measure those shapes on any schedule.

A `Shape` is such a statement as an object: `holds` measures it on a schedule, `when(view, lit,
positive)` states "lit implies the shape" (or its negation) through an encoding's variable view,
so shapes combine (`All`, `Any`, `Not`) and can be imposed or forbidden.  `Require(shape)` and
`Require(shape, False)` are ordinary `Constraint`s (a `check` and an `encode`), passed to
`run_solve(extra=...)` or `warpweave.search.decide`; they are not registered, because they are
questions about a kernel, not rules of the machine.  Asking both at the optimal I tells a shape
every optimal schedule has (forced) from one some have (allowed) and one none has (excluded):
`warpweave.kernels.questions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from warpweave.core.constraints import Constraint, Lit, VariableView, neg
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
# Shapes


class Shape:
    """A statement about a schedule that can be measured and stated through a view."""

    def holds(self, model: Model, s: Schedule) -> bool:
        raise NotImplementedError

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        """State `lit -> shape` (positive) or `lit -> not shape`."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.describe()


def _implies(view: VariableView, lit: Lit, clause: Sequence[Lit]) -> None:
    view.problem.add_clause([neg(lit), *clause])


class Together(Shape):
    """The ops run on one group."""

    def __init__(self, *ops: str):
        self.ops = ops

    def holds(self, model: Model, s: Schedule) -> bool:
        return len({s.group[v] for v in self.ops}) == 1

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        same = [view.same_group(self.ops[0], v) for v in self.ops[1:]]
        if positive:
            for x in same:
                _implies(view, lit, [x])
        else:
            _implies(view, lit, [neg(x) for x in same])

    def describe(self) -> str:
        return f"{', '.join(self.ops)} on one group"


class Apart(Shape):
    """The two ops run on different groups."""

    def __init__(self, a: str, b: str):
        self.a, self.b = a, b

    def holds(self, model: Model, s: Schedule) -> bool:
        return s.group[self.a] != s.group[self.b]

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        x = view.same_group(self.a, self.b)
        _implies(view, lit, [neg(x) if positive else x])

    def describe(self) -> str:
        return f"{self.a} and {self.b} on different groups"


class Alone(Shape):
    """The ops run on one group, and nothing else runs there."""

    def __init__(self, *ops: str):
        self.ops = ops

    def _others(self, view_or_model) -> list[str]:
        model = getattr(view_or_model, "model", view_or_model)
        return [v for v in model.op_names if v not in self.ops]

    def holds(self, model: Model, s: Schedule) -> bool:
        g = {s.group[v] for v in self.ops}
        return len(g) == 1 and all(s.group[o] not in g for o in self._others(model))

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        first = self.ops[0]
        same = [view.same_group(first, v) for v in self.ops[1:]]
        other = [view.same_group(first, o) for o in self._others(view)]
        if positive:
            for x in same:
                _implies(view, lit, [x])
            for x in other:
                _implies(view, lit, [neg(x)])
        else:
            _implies(view, lit, [*(neg(x) for x in same), *other])

    def describe(self) -> str:
        return f"{', '.join(self.ops)} on a group that runs nothing else"


class OnWarps(Shape):
    """The op runs on a group of exactly `warps` warps (a single warp: FA4's MMA warp)."""

    def __init__(self, op: str, warps: int):
        self.op, self.warps = op, warps

    def _groups(self, model: Model) -> list[str]:
        return [g.name for g in model.machine.warp_groups if g.warps == self.warps]

    def holds(self, model: Model, s: Schedule) -> bool:
        return s.group[self.op] in self._groups(model)

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        on = [view.on(self.op, g) for g in self._groups(view.model)]
        if positive:
            _implies(view, lit, on)
        else:
            for x in on:
                _implies(view, lit, [neg(x)])

    def describe(self) -> str:
        return f"{self.op} on a group of {self.warps} warp{'s' * (self.warps != 1)}"


class Sequential(Shape):
    """No cross-iteration overlap among `ops`: every op of iteration j+1 issues after every op
    of iteration j (M(u) + I > M(v) for all u, v), the negation of `iterations_overlap`."""

    def __init__(self, ops: Sequence[str]):
        self.ops = tuple(ops)

    def holds(self, model: Model, s: Schedule) -> bool:
        return not iterations_overlap(s, self.ops)

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        pairs = [(u, v) for u in self.ops for v in self.ops if u != v]
        if positive:
            for u, v in pairs:
                view.require_gap(v, u, 1, distance=1, unless=[neg(lit)])
            return
        xs = []
        for u, v in pairs:       # some M(v) - M(u) >= I
            x = view.problem.bool(f"overlap[{u},{v}]")
            view.require_gap(u, v, view.I, unless=[neg(x)])
            xs.append(x)
        _implies(view, lit, xs)

    def describe(self) -> str:
        return "no cross-iteration overlap (each iteration issues after the previous one)"


class IssuedBeforeEnd(Shape):
    """`first` of iteration j+1 issues before `later` of iteration j has finished."""

    def __init__(self, first: str, later: str):
        self.first, self.later = first, later

    def holds(self, model: Model, s: Schedule) -> bool:
        return issued_before_end(model, s, self.first, self.later)

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        c = view.model.op(self.later).cycles
        if positive:     # M(later) - M(first) >= I - c + 1
            view.require_gap(self.first, self.later, view.I - c + 1, unless=[neg(lit)])
        else:            # M(first) + I >= M(later) + c
            view.require_gap(self.later, self.first, c, distance=1, unless=[neg(lit)])

    def describe(self) -> str:
        return f"{self.first} of the next iteration issues before {self.later} ends"


class WindowsOverlap(Shape):
    """a's window on unit_a and b's window on unit_b share a slot modulo I (see `window`): e.g.
    tile 0's exponential runs while the tensor core works on a GEMM of tile 1."""

    def __init__(self, a: str, unit_a: str, b: str, unit_b: str):
        self.a, self.ua, self.b, self.ub = a, unit_a, b, unit_b

    def holds(self, model: Model, s: Schedule) -> bool:
        return overlaps(model, s, self.a, self.ua, self.b, self.ub)

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        m, span = view.model, view.S + 1    # M(v) lies in [0, S*I): differences within S*I
        wa, wb = busy(m, self.a, self.ua), busy(m, self.b, self.ub)
        ks = range(-span, span + 1)
        if not positive:     # neither window starts inside the other, in any pair of copies
            for k in ks:
                view.forbid_overlap(self.b, self.a, k, wa, unless=[neg(lit)])
                view.forbid_overlap(self.a, self.b, k, wb, unless=[neg(lit)])
            return
        xs = []
        for k in ks:         # M(a) + kI < M(b) + wb  and  M(b) < M(a) + kI + wa
            x = view.problem.bool(f"window[{self.a},{self.b},{k}]")
            view.require_gap(self.a, self.b, k * view.I - wb + 1, unless=[neg(x)])
            view.require_gap(self.b, self.a, 1 - wa - k * view.I, unless=[neg(x)])
            xs.append(x)
        _implies(view, lit, xs)

    def describe(self) -> str:
        return f"{self.a} ({self.ua}) overlaps {self.b} ({self.ub}) modulo I"


class All(Shape):
    """Every part holds."""

    def __init__(self, *parts: Shape, text: str = ""):
        self.parts, self.text = parts, text

    def holds(self, model: Model, s: Schedule) -> bool:
        return all(p.holds(model, s) for p in self.parts)

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        if positive:
            for p in self.parts:
                p.when(view, lit, True)
            return
        xs = [view.problem.bool(f"fails{i}") for i in range(len(self.parts))]
        for x, p in zip(xs, self.parts, strict=True):
            p.when(view, x, False)
        _implies(view, lit, xs)

    def describe(self) -> str:
        return self.text or " and ".join(p.describe() for p in self.parts)


class Any(Shape):
    """Some part holds."""

    def __init__(self, *parts: Shape, text: str = ""):
        self.parts, self.text = parts, text

    def holds(self, model: Model, s: Schedule) -> bool:
        return any(p.holds(model, s) for p in self.parts)

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        All(*(Not(p) for p in self.parts)).when(view, lit, not positive)

    def describe(self) -> str:
        return self.text or " or ".join(p.describe() for p in self.parts)


class Not(Shape):
    def __init__(self, shape: Shape):
        self.shape = shape

    def holds(self, model: Model, s: Schedule) -> bool:
        return not self.shape.holds(model, s)

    def when(self, view: VariableView, lit: Lit, positive: bool) -> None:
        self.shape.when(view, lit, not positive)

    def describe(self) -> str:
        return f"not ({self.shape.describe()})"


class Require(Constraint):
    """A shape imposed (`positive`) or forbidden, as an extra constraint of a solve.  Shapes
    relate ops to each other, never to a named group, so renaming interchangeable groups keeps
    them: encodings may break that symmetry."""

    name = "shape"
    group_symmetric = True

    def __init__(self, shape: Shape, positive: bool = True):
        self.shape, self.positive = shape, positive

    def check(self, model: Model, schedule: Schedule, semantics: str = "loop"
              ) -> list[Violation]:
        """The shape is about start times and groups: the same under every semantics."""
        if self.shape.holds(model, schedule) == self.positive:
            return []
        want = "wanted" if self.positive else "forbidden"
        return [Violation(self.name, f"{want}: {self.shape.describe()}")]

    def encode(self, view: VariableView) -> None:
        self.shape.when(view, True, self.positive)
