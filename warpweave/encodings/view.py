"""What every encoding of time shares: groups, auxiliary literals, the length, decoding.

An encoding is built for one (I, S): S copies in Q, lengths L in ((S-1)*I, S*I], horizon
T = (S-1)*I + S*I.  Its constructor creates the time variables and the structural constraints the
encoding needs (uniqueness, consistency, order chains), then lets each constraint state itself
through the view, and sets the objective: minimize L.  A solved problem decodes to a Schedule;
a Schedule encodes to assumptions that pin it (for tests and replay).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from warpweave.core.bounds import start_windows
from warpweave.core.constraints import Constraint, uses_in_q
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.encodings.ir import BoolVar, LitOrConst, Problem


def neg(x: LitOrConst) -> LitOrConst:
    return (not x) if isinstance(x, bool) else ~x


class TimeView:
    """Base of the encodings: everything except how start times and lifetimes are represented."""

    name: ClassVar[str] = ""

    def __init__(self, model: Model, I: int, S: int,  # noqa: E741
                 constraints: Sequence[Constraint], min_length: int = 1):
        self.model = model
        self.I, self.S = I, S
        self.L = S * I
        self.T = (S - 1) * I + self.L
        self.problem = Problem(f"{model.name}/I={I}/S={S}/{self.name}")
        self._aux: dict[tuple, LitOrConst] = {}
        self._live: dict[tuple[str, int], object] = {}
        self._on = {(op.name, g.name): self.problem.bool(f"on[{op.name},{g.name}]")
                    for op in model.ops for g in model.machine.warp_groups}
        names = {c.name for c in constraints}
        windows = start_windows(model, I, self.L, edges="dependence" in names)
        if windows is None:
            windows = {op.name: (0, -1) for op in model.ops}  # empty: no schedule at this (I, S)
            self.problem.add_clause([])
        self.window = windows
        self._length_lits(max(min_length, (S - 1) * I + 1))
        self.build()
        for c in constraints:
            c.encode(self)
        self.problem.minimize([(1, neg(z)) for z in self._short.values() if z is not True])
        self.problem.objective_offset += self._lengths.start

    # -- encoding-specific parts
    def build(self) -> None:
        """Create the time variables and the encoding's structural constraints."""
        raise NotImplementedError

    def start_of(self, values, v: str) -> int:
        """Decode M(v) from a solution."""
        raise NotImplementedError

    def pin_start(self, v: str, t: int) -> list[LitOrConst]:
        """Literals that hold iff M(v) = t."""
        raise NotImplementedError

    def bind_liveness(self, v: str, i: int, uses: Sequence[tuple[str, int]],
                      to_end: bool) -> object:
        """Define the lifetime of instance (v, i); return what `live_at` reads."""
        raise NotImplementedError

    def live_at(self, binding: object, v: str, i: int, t: int) -> LitOrConst:
        raise NotImplementedError

    # -- shared view methods
    def on(self, v: str, g: str) -> BoolVar:
        return self._on[(v, g)]

    def same_group(self, u: str, v: str) -> LitOrConst:
        if u == v:
            return True
        return self.disj([self.conj([self.on(u, g.name), self.on(v, g.name)])
                          for g in self.model.machine.warp_groups])

    def conj(self, lits: Sequence[LitOrConst]) -> LitOrConst:
        """A literal equal to the conjunction (constants folded; cached)."""
        if any(x is False for x in lits):
            return False
        xs = tuple(dict.fromkeys(x for x in lits if x is not True))
        if not xs:
            return True
        if len(xs) == 1:
            return xs[0]
        key = ("and", frozenset(xs))
        if key not in self._aux:
            a = self.problem.bool(f"and{len(self._aux)}")
            for x in xs:
                self.problem.add_clause([~a, x])
            self.problem.add_clause([a, *(neg(x) for x in xs)])
            self._aux[key] = a
        return self._aux[key]

    def disj(self, lits: Sequence[LitOrConst]) -> LitOrConst:
        """A literal equal to the disjunction (constants folded; cached)."""
        return neg(self.conj([neg(x) for x in lits]))

    def lengths(self) -> range:
        return self._lengths

    def length_at_most(self, length: int) -> LitOrConst:
        if length < self._lengths.start:
            return False
        if length >= self._lengths.stop - 1:
            return True
        return self._short[length]

    def _length_lits(self, lo: int) -> None:
        if lo > self.L:  # no length of this many stages reaches the lower bound
            self.problem.add_clause([])
            lo = self.L
        self._lengths = range(lo, self.L + 1)
        self._short: dict[int, LitOrConst] = {}
        prev = None
        for length in range(lo, self.L):
            z = self.problem.bool(f"L<={length}")
            if prev is not None:
                self.problem.add_clause([~prev, z])
            self._short[length] = prev = z

    def live(self, v: str, i: int, t: int) -> LitOrConst:
        key = (v, i)
        if key not in self._live:
            self._live[key] = self.bind_liveness(v, i, *uses_in_q(self.model, v, i, self.S))
        return self.live_at(self._live[key], v, i, t)

    def times(self) -> range:
        return range(self.T + 1)

    # -- schedules in and out
    def decode(self, values) -> Schedule:
        """The schedule a solution describes."""
        start = {op.name: self.start_of(values, op.name) for op in self.model.ops}
        group = {}
        for op in self.model.ops:
            chosen = [g.name for g in self.model.machine.warp_groups
                      if values[self.on(op.name, g.name)]]
            group[op.name] = chosen[0] if chosen else self.model.machine.warp_groups[0].name
        length = self._lengths.start + sum(1 for z in self._short.values() if not values[z])
        return Schedule(self.model.name, self.I, length, start, group)

    def pin(self, schedule: Schedule) -> list[LitOrConst]:
        """Assumption literals that fix `schedule` (a False among them: not representable)."""
        lits: list[LitOrConst] = []
        for op in self.model.ops:
            lits += self.pin_start(op.name, schedule.start[op.name])
            for g in self.model.machine.warp_groups:
                x = self.on(op.name, g.name)
                lits.append(x if schedule.group[op.name] == g.name else ~x)
        if schedule.L not in self._lengths:
            return [False]
        lits.append(self.length_at_most(schedule.L))
        lits.append(neg(self.length_at_most(schedule.L - 1)))
        return [x for x in lits if x is not True]
