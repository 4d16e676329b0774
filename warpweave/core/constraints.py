"""The constraints of DESIGN section 3 as first-class objects.

Each constraint has a stable `name`, a `check` (the verifier's rule of the same name: its meaning on
a concrete schedule) and an `encode(view)` that states it through an encoding's variable view.  It
decides *what* must hold, from the model; the view decides *how* that is written in the IR (the
paper's time-indexed literals, order-encoded start times, ...).  A constraint never mentions a
solver, and `encode` shares no code with `check`.

The view protocol (`VariableView`) is what every encoding implements.  Times are start times of
copy 0, M(v); copy i of v issues at M(v) + i*I.  The view also knows the semantics the problem is
stated in (`view.semantics`: "loop", the default, or "paper-q"): which trip counts and copies a
rule over Q must cover is the view's business (`limit_live`, `overlap_distances`), so that a rule
is written once for both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from warpweave.core import verify
from warpweave.core.model import Model
from warpweave.core.registry import CONSTRAINTS
from warpweave.core.schedule import Schedule
from warpweave.core.verify import Rule, Violation
from warpweave.errors import InputError

Lit = Any  # an IR literal, or True / False: constraints only pass them back to the view


class VariableView(Protocol):
    """How an encoding exposes a model at fixed (I, S) to the constraints.

    The vocabulary (literals a constraint may combine) and the statements (what a rule asks for,
    which each encoding writes in its own way).  Constants True/False may stand for literals.
    """

    model: Model
    I: int  # noqa: E741
    S: int           # stages: the length L lies in ((S-1)*I, S*I]
    L: int           # the largest length this problem allows (S * I)
    T: int           # the horizon of Q_S at that length: (S - 1) * I + L
    semantics: str   # "loop" (every trip count, entering values) or "paper-q" (Q_S only)
    problem: Any     # the IR Problem being built

    def on(self, v: str, g: str) -> Lit:
        """Op v runs on group g."""

    def same_group(self, u: str, v: str) -> Lit: ...
    def conj(self, lits: Sequence[Lit]) -> Lit: ...
    def disj(self, lits: Sequence[Lit]) -> Lit: ...

    def require_gap(self, u: str, v: str, delay: int, distance: int = 0,
                    unless: Sequence[Lit] = ()) -> None:
        """M(v) + distance*I - M(u) >= delay, unless one of `unless` is true."""

    def forbid_overlap(self, v: str, o: str, k: int, occupancy: int,
                       unless: Sequence[Lit] = ()) -> None:
        """Copy i of v does not issue while copy i-k of o occupies its first `occupancy` cycles:
        not 0 <= M(v) - M(o) + k*I < occupancy, unless one of `unless` is true."""

    def forbid_overlaps(self, v: str, o: str, occupancy: int,
                        unless: Sequence[Lit] = ()) -> None:
        """`forbid_overlap` at every copy distance of `overlap_distances` (but copy 0 of v
        itself): no copy of v issues while a copy of o occupies its first `occupancy` cycles."""

    def overlap_distances(self, occupancy: int) -> range:
        """The copy distances k that `forbid_overlap` must cover for an op occupying its group
        `occupancy` cycles: those of Q_S (|k| < S) for "paper-q"; every k the start windows
        allow for the loop (k up to S - 1 + ceil(occupancy / I))."""

    def limit_unit(self, rows: Sequence[tuple[str, int, int]], capacity: int) -> None:
        """Reservations (op, row c, count) of one unit fit `capacity` in every modular slot."""

    def finish_within_length(self, v: str, cycles: int) -> None:
        """M(v) + cycles <= L, the length the problem chooses."""

    def limit_live(self, weights: Mapping[str, int], bound: Any,
                   group: str | None = None) -> None:
        """At every cycle of every program the semantics covers (Q_n for every n with the values
        entering the loop; or Q_S), the live values of the ops in `weights` (only those on
        `group`, if given) weigh at most `bound` (an integer or an IR integer variable), each
        instance of op v weighing weights[v].  Lifetimes are rule 4's."""


class Constraint:
    """A rule of DESIGN section 3 (or a plugin's): `check` is its meaning, `encode` its
    statement in a view.  `verify` and every search ask the constraint registry for the rules,
    so a registered constraint is part of validity (DESIGN rule 10)."""

    name: ClassVar[str] = ""
    # True when renaming interchangeable warp groups (same warps and register limit, neither the
    # variable-latency group) never changes whether the constraint holds: encodings may then
    # break that symmetry.  Built-ins are; a plugin must say so to allow it.
    group_symmetric: ClassVar[bool] = False
    # True when the constraint does not look at Q's copies (only at start times, groups and L),
    # and a longer L only relaxes it: infeasible at L = S*I then means infeasible for every
    # shorter L too, which lets the search rule out a whole I with one solve.
    q_free: ClassVar[bool] = False
    # True when a schedule that holds stays holding when ops and the edges touching them are
    # removed: the brute-force oracle then prunes partial placements with it (else it judges
    # complete schedules only).  Built-ins are (see `core.oracle`).
    hereditary: ClassVar[bool] = False

    def check(self, model: Model, schedule: Schedule, semantics: str = "loop"
              ) -> list[Violation]:
        """The violations of this rule by `schedule` (empty if it holds), under `semantics`
        ("loop": every trip count; "paper-q": the paper's Q_S)."""
        raise NotImplementedError

    def encode(self, view: VariableView) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<constraint {self.name}>"


def neg(x: Lit) -> Lit:
    """The negation of a literal or a constant."""
    return (not x) if isinstance(x, bool) else ~x


class _Builtin(Constraint):
    """A rule of DESIGN section 3: its meaning is the verifier's function `rule`."""

    group_symmetric = True
    hereditary = True
    rule: ClassVar[Rule]

    def check(self, model: Model, schedule: Schedule, semantics: str = "loop"
              ) -> list[Violation]:
        return type(self).rule(model, schedule, semantics)


class Dependence(_Builtin):
    """Rule 1: M(v) + delta*I >= M(u) + d for every edge."""

    rule = staticmethod(verify.check_dependence)
    q_free = True
    name = "dependence"

    def encode(self, view: VariableView) -> None:
        for e in view.model.edges:
            view.require_gap(e.src, e.dst, e.delay, e.distance)


class CrossWarpSpill(_Builtin):
    """Rule 1's hand-off term: a data edge also waits `handoff` between groups and
    `handoff_local` within one."""

    rule = staticmethod(verify.check_cross_warp_spill)
    q_free = True
    name = "cross_warp_spill"

    def encode(self, view: VariableView) -> None:
        for e in view.model.edges:
            if not e.is_data:
                continue
            same = view.same_group(e.src, e.dst)
            if e.handoff:
                view.require_gap(e.src, e.dst, e.delay + e.handoff, e.distance, unless=[same])
            if e.handoff_local:
                view.require_gap(e.src, e.dst, e.delay + e.handoff_local, e.distance,
                                 unless=[neg(same)])


class Capacity(_Builtin):
    """Rule 2: reservations on each unit fit its capacity in every slot."""

    rule = staticmethod(verify.check_capacity)
    q_free = True
    name = "capacity"

    def encode(self, view: VariableView) -> None:
        for unit in view.model.machine.units:
            rows = [(op.name, c, n) for op in view.model.ops for c, u, n in op.usage()
                    if u == unit.name]
            if sum(n for _, _, n in rows) > unit.capacity:
                view.limit_unit(rows, unit.capacity)


class Completion(_Builtin):
    """Rule 3: M(v) + cycles(v) <= L for the length L the problem picks."""

    rule = staticmethod(verify.check_completion)
    q_free = True
    name = "completion"

    def encode(self, view: VariableView) -> None:
        for op in view.model.ops:
            view.finish_within_length(op.name, op.cycles)


class Liveness(_Builtin):
    """Rule 4: no data use issues before the value it reads.  The lifetimes themselves are defined
    by the view, for the constraints that weigh them (memory, registers)."""

    rule = staticmethod(verify.check_liveness)
    q_free = True
    name = "liveness"

    def encode(self, view: VariableView) -> None:
        for e in view.model.edges:
            if e.is_data:
                view.require_gap(e.src, e.dst, 0, e.distance)


class Memory(_Builtin):
    """Rule 5: live footprints fit each memory at every cycle of Q."""

    rule = staticmethod(verify.check_memory)
    name = "memory"

    def encode(self, view: VariableView) -> None:
        for mem in view.model.machine.memories:
            weights = {op.name: op.footprint_in(mem.name) for op in view.model.ops
                       if op.footprint_in(mem.name)}
            view.limit_live(weights, mem.capacity)


class RegisterLimit(_Builtin):
    """Rule 8: live registers of the ops on each group fit its per-thread limit at every cycle."""

    rule = staticmethod(verify.check_register_limit)
    name = "register_limit"

    def encode(self, view: VariableView) -> None:
        weights = {op.name: op.regs for op in view.model.ops if op.regs}
        for g in view.model.machine.warp_groups:
            view.limit_live(weights, g.reg_limit, group=g.name)


class WarpUniqueness(_Builtin):
    """Rule 6: each op on a group with at least warps(v) warps (that each op is on exactly one
    group is what a schedule is: the view states it, so dropping this rule keeps it)."""

    rule = staticmethod(verify.check_warp_uniqueness)
    q_free = True
    name = "warp_uniqueness"

    def encode(self, view: VariableView) -> None:
        for op in view.model.ops:
            for g in view.model.machine.warp_groups:
                if g.warps < op.warps:
                    view.problem.add_clause([neg(view.on(op.name, g.name))])


class VariableLatency(_Builtin):
    """Rule 7: exactly the variable-latency ops run on the variable-latency group."""

    rule = staticmethod(verify.check_variable_latency)
    q_free = True
    name = "variable_latency"

    def encode(self, view: VariableView) -> None:
        vl = view.model.machine.variable_latency_group
        if vl is None:
            return
        for op in view.model.ops:
            lit = view.on(op.name, vl)
            view.problem.add_clause([lit if op.variable_latency else neg(lit)])


class Concurrency(_Builtin):
    """Rule 9: an instance that waits on a blocking edge, or reads a value from another group,
    issues while no other instance occupies its group (occupancy 1 cycle if async, else cycles)."""

    rule = staticmethod(verify.check_concurrency)
    name = "concurrency"

    def encode(self, view: VariableView) -> None:
        model = view.model
        for op in model.ops:
            v = op.name
            incoming = model.in_edges(v)
            if any(e.blocking for e in incoming):
                trigger = True
            else:
                trigger = view.disj([neg(view.same_group(e.src, v)) for e in incoming
                                     if e.is_data and e.src != v])
            if trigger is False:
                continue
            for other in model.ops:
                occ = 1 if other.is_async else other.cycles
                view.forbid_overlaps(v, other.name, occ, unless=[
                    neg(trigger), neg(view.same_group(v, other.name))])


def constraint_set(without: Iterable[str] = (),
                   only: Iterable[str] | None = None) -> list[Constraint]:
    """The constraints of a run, as instances: every registered one (built-ins and plugins, the
    registry's `CONSTRAINTS`) minus `without`, and, with `only`, just those; InputError naming
    an unknown one."""
    names = CONSTRAINTS.names()
    for name in [*without, *(only or [])]:
        if name not in names:
            raise InputError(f"unknown constraint (known: {', '.join(names)})", value=name)
    chosen = [n for n in names if n not in set(without) and (only is None or n in set(only))]
    return [CONSTRAINTS.get(n)() for n in chosen]
