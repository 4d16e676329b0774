"""A brute-force oracle for tiny models: the ground truth that the encodings and backends are
checked against (tests and `warpweave crosscheck --oracle`).

It decides, by enumeration and with nothing but the verifier, whether a valid schedule exists at
an initiation interval `I` and length `L`; from that, feasibility and the minimal `L` at each
`(I, S)` and the optimal `I` within a stage bound.  It shares nothing with the encodings, the
bounds or the search: no start windows, no symmetry breaking, no lower bound on `I` or `L`, no
monotonicity in `L` is assumed.

Why the enumeration is exhaustive.  At fixed `(I, L)` the ops are placed one at a time (start time
and group); start times range over `[0, L - cycles(v)]`, outside of which rule 3 (completion)
fails.  After each placement the verifier judges the *restriction* of the partial schedule to the
placed ops: the sub-model with those ops and the edges among them.  Every rule of DESIGN section 3
is hereditary under that restriction - a valid schedule stays valid when ops and their edges are
removed: dependences, spills, reservations, completions and warp rules only lose terms; a value's
lifetime ends at its latest use, so with fewer uses it ends no later (with the liveness premise,
every use issues after the value), it is read after the loop only if it was before, fewer values
enter the loop, and every live set shrinks, under memory and register limits, for every trip
count; the concurrency trigger (an incoming blocking or cross-group data edge) only loses edges.
So a partial schedule whose restriction the verifier rejects has no valid extension, and pruning
it loses nothing; a complete schedule is returned only if the verifier accepts it on the whole
model.  A plugin's constraint prunes only if it says it is hereditary (`Constraint.hereditary`);
otherwise it judges complete schedules only.
Skipping start times that break a dependence to an already placed op is the same pruning, done
before the call instead of after it.
"""

from __future__ import annotations

from collections.abc import Collection

import attrs

from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.core.verify import check_semantics, rule_objects

# The built-in rules, the quick ones first: a candidate is rejected at its first violation.
CHEAP_FIRST = ("warp_uniqueness", "variable_latency", "completion", "dependence",
               "cross_warp_spill", "liveness", "capacity", "concurrency", "register_limit",
               "memory")


class OracleBudget(Exception):
    """The enumeration examined more candidate schedules than its budget allows.  `below`: when
    raised by `optimum`, every I below it was shown to have no schedule (else 0)."""

    def __init__(self, message: str, below: int = 0):
        super().__init__(message)
        self.below = below


@attrs.frozen
class Answer:
    """The oracle's answer at one `(I, S)`: the smallest valid `L` in `((S-1)*I, S*I]` with a
    witness schedule, or neither."""

    I: int  # noqa: E741
    S: int
    schedule: Schedule | None

    @property
    def feasible(self) -> bool:
        return self.schedule is not None

    @property
    def L(self) -> int | None:
        return self.schedule.L if self.schedule else None


class Oracle:
    """Exhaustive answers for one model; results are cached per `(I, L)`.

    `rules` are the rules in force: names in the constraint registry or constraint objects
    (default: every registered constraint, plugins included).  The hereditary ones prune partial
    placements (any subset prunes soundly); the others judge complete schedules.  `budget`
    bounds the number of candidate schedules judged over the oracle's lifetime (None: no
    bound); past it, `OracleBudget` is raised.  `semantics` as for `verify`.
    """

    def __init__(self, model: Model, budget: int | None = None,
                 rules: Collection | None = None, semantics: str = "loop"):
        chosen = rule_objects(rules)
        rank = {name: k for k, name in enumerate(CHEAP_FIRST)}
        chosen.sort(key=lambda c: rank.get(c.name, len(rank)))
        self.pruning = [c for c in chosen if c.hereditary]
        self.final = [c for c in chosen if not c.hereditary]
        self.semantics = check_semantics(semantics)
        self.model = model
        self.budget = budget
        self.calls = 0
        self._order = _placement_order(model)
        self._prefix = [self._restriction(k) for k in range(1, len(self._order) + 1)]
        self._cache: dict[tuple[int, int], Schedule | None] = {}

    def _restriction(self, k: int) -> Model:
        """The sub-model of the first k ops in placement order, with the edges among them."""
        names = set(self._order[:k])
        return Model(self.model.name, self.model.machine,
                     [op for op in self.model.ops if op.name in names],
                     [e for e in self.model.edges if e.src in names and e.dst in names])

    def valid_at(self, I: int, L: int) -> Schedule | None:  # noqa: E741
        """A valid schedule with this `I` and `L` (the first found), or None if there is none."""
        key = (I, L)
        if key not in self._cache:
            self._cache[key] = self._enumerate(I, L)
        return self._cache[key]

    def at(self, I: int, S: int) -> Answer:  # noqa: E741
        """Feasibility and the minimal L at `(I, S)`: the first L in ((S-1)*I, S*I] that has a
        valid schedule, trying every L in increasing order."""
        for L in range((S - 1) * I + 1, S * I + 1):
            found = self.valid_at(I, L)
            if found is not None:
                return Answer(I, S, found)
        return Answer(I, S, None)

    def optimum(self, max_stages: int, i_max: int) -> Schedule | None:
        """The smallest I in [1, i_max] that has a valid schedule with at most `max_stages`
        stages, with the smallest L at that I; None if no I up to `i_max` has one."""
        for I in range(1, i_max + 1):  # noqa: E741
            for L in range(1, max_stages * I + 1):
                try:
                    found = self.valid_at(I, L)
                except OracleBudget as exc:
                    raise OracleBudget(str(exc), below=I) from None
                if found is not None:
                    return found
        return None

    # -- the enumeration
    def _enumerate(self, I: int, L: int) -> Schedule | None:  # noqa: E741
        model, order = self.model, self._order
        groups = [g.name for g in model.machine.warp_groups]
        start: dict[str, int] = {}
        group: dict[str, str] = {}

        def place(k: int) -> Schedule | None:
            if k == len(order):
                return Schedule(model.name, I, L, dict(start), dict(group))
            v = order[k]
            lo, hi = 0, L - model.op(v).cycles
            for e in model.in_edges(v):      # M(v) >= M(u) + d - delta*I
                if e.src in start:
                    lo = max(lo, start[e.src] + e.delay - e.distance * I)
            for e in model.out_edges(v):     # M(u) + delta*I >= M(v) + d
                if e.dst in start:
                    hi = min(hi, start[e.dst] + e.distance * I - e.delay)
            for t in range(lo, hi + 1):
                start[v] = t
                for g in groups:
                    group[v] = g
                    if self._accepts(k, I, L, start, group):
                        found = place(k + 1)
                        if found is not None:
                            return found
            start.pop(v, None)
            group.pop(v, None)
            return None

        return place(0)

    def _accepts(self, k: int, I: int, L: int, start, group) -> bool:  # noqa: E741
        self.calls += 1
        if self.budget is not None and self.calls > self.budget:
            raise OracleBudget(f"more than {self.budget} candidate schedules")
        sub = self._prefix[k]
        schedule = Schedule(sub.name, I, L, start, group)
        rules = self.pruning + (self.final if k + 1 == len(self._order) else [])
        return not any(c.check(sub, schedule, semantics=self.semantics) for c in rules)


def _placement_order(model: Model) -> list[str]:
    """Ops in an order that places neighbours in the dependence graph close together (depth-first
    over edges in either direction, successors first), so that dependences prune early.  Any
    order is correct; this one is only faster."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(v: str) -> None:
        stack = [v]
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            seen.add(u)
            order.append(u)
            near = [e.src for e in model.in_edges(u)] + [e.dst for e in model.out_edges(u)]
            stack.extend(reversed([x for x in near if x not in seen]))

    for name in model.op_names:
        visit(name)
    return order
