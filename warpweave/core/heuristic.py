"""The heuristic scheduler: iterative modulo scheduling jointly with warp-group assignment.

For each I from max(ResMII, RecMII) up to `Bounds.i_upper` (one by one: feasibility is not monotone
in I), a few group assignments are tried - neighbours together, load spread out, repairs of what
the verifier rejected, moves of ops the scheduler could not settle, seeded random ones and other
priority orders.  Each is scheduled by Rau's IMS (`core.ims`) with
cross-group data edges lengthened by the spill and group occupancy checked for rule 9, within the
stage bound; the tight length L is taken, and the schedule is returned only if the verifier accepts
it under the caller's rules - as placed, or with values' lifetimes shortened (`sink`) when the
liveness limits (memory, registers) fail.  The run's deadline (`warpweave.limits`) is checked at
every scheduling step, so a time limit stops it even within one I on a large model.

It gives a fast upper bound and warm start for the optimal search and is the baseline a user would
otherwise reach for.  It proves nothing: a failure at some I is not infeasibility.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable

import attrs

from warpweave import limits
from warpweave.core.assign import Assignment, Planner, allowed_groups
from warpweave.core.bounds import Bounds, bounds
from warpweave.core.ims import ModuloScheduler, folded_runs
from warpweave.core.model import Model
from warpweave.core.registry import CONSTRAINTS
from warpweave.core.schedule import Schedule
from warpweave.core.verify import Violation, check_semantics, verify
from warpweave.errors import InputError


@attrs.frozen
class Trial:
    """One (I, assignment) the heuristic tried, and what became of it."""

    I: int  # noqa: E741
    assignment: str          # how the assignment was made: together, spread, random, move ...
    steps: int
    why: str | None = None   # None: accepted

    def to_dict(self) -> dict:
        return attrs.asdict(self, filter=lambda a, v: v is not None)


@attrs.frozen
class HeuristicResult:
    """What the heuristic found: a verified schedule or None, and what it tried."""

    model: Model
    schedule: Schedule | None
    bounds: Bounds
    max_stages: int
    rules: tuple[str, ...]
    trials: tuple[Trial, ...]
    seconds: float
    steps: int
    why: str | None          # None when a schedule was found
    lower_bound: int         # max(ResMII, RecMII), each only if its rule is among `rules`
    stopped: bool = False    # cut short by `time_limit` or the run's deadline

    @property
    def tried(self) -> list[int]:
        """The initiation intervals tried, in order."""
        return list(dict.fromkeys(t.I for t in self.trials))


def heuristic_schedule(model: Model, *, max_stages: int | None = None,
                       rules: Iterable[str] | None = None, budget: int = 6,
                       attempts: int = 10, seed: int = 0,
                       time_limit: float | None = None,
                       semantics: str = "loop") -> HeuristicResult:
    """A schedule of `model` that `verify(model, s, rules)` accepts, with the smallest I found.

    `rules` are names in the constraint registry (default: every registered constraint, plugins
    included: the answer is verified against each).  `budget` is Rau's budget ratio: scheduling
    steps per op for one IMS run; `attempts` is the number of assignments tried per I;
    `max_stages` bounds S = ceil(L/I) as in the search (default `Bounds.default_max_stages`).
    Deterministic for a `seed` unless `time_limit` (seconds) cuts the run short.

    `time_limit` is checked before each I; the run's deadline (`warpweave.limits`, e.g.
    `solve --time-limit`) also within one, at every scheduling step: past it, the result has
    no schedule and `stopped` set (a Ctrl-C raises KeyboardInterrupt, as everywhere).
    """
    started = time.perf_counter()
    known = CONSTRAINTS.names()
    rule_set = tuple(rules) if rules is not None else tuple(known)
    for name in rule_set:
        if name not in known:
            raise InputError(f"unknown rule (known: {', '.join(known)})", value=name)
    check_semantics(semantics)
    b = bounds(model)
    s_max = b.default_max_stages() if max_stages is None else max_stages
    if s_max < 1:  # 0 too: not "the default"
        raise InputError("must be >= 1", ("--max-stages",), s_max)
    run = _Run(model, rule_set, s_max, budget * len(model.ops), attempts, seed, semantics)
    res_mii = b.res_mii if "capacity" in rule_set else 0
    lower = max(1, res_mii, b.rec_mii if "dependence" in rule_set else 0)
    schedule, why, stopped = None, None, False
    # Dependences are always honoured, so no I below RecMII can come out.
    first = max(1, res_mii, b.rec_mii)
    I = first  # noqa: E741
    try:
        for I in range(first, b.i_upper + 1):  # noqa: E741
            if time_limit is not None and time.perf_counter() - started > time_limit:
                why, stopped = f"time limit of {time_limit} s reached before I={I}", True
                break
            schedule = run.at(I)
            if schedule is not None:
                break
        else:
            why = run.summary(b)
    except limits.TimeUp as stop:  # the run's deadline, within one I (on a large model)
        schedule, why, stopped = None, f"{stop} while trying I={I}", True
    return HeuristicResult(model, schedule, b, s_max, rule_set, tuple(run.trials),
                           time.perf_counter() - started, run.steps, why, lower, stopped)


# Rules the modulo scheduler and the assignment satisfy as they build (rule 9 modulo I between
# distinct ops, as the loop asks; an op overlapping its own next copy is not seen).  Candidates
# are first checked against the other rules; an answer against all of them.
BY_CONSTRUCTION = ("dependence", "cross_warp_spill", "capacity", "completion", "warp_uniqueness",
                   "variable_latency", "concurrency")


class _Run:
    """The state of one heuristic run across I: trials and steps so far."""

    def __init__(self, model: Model, rules: tuple[str, ...], s_max: int, budget: int,
                 attempts: int, seed: int, semantics: str):
        self.model, self.rules, self.s_max = model, rules, s_max
        self.semantics = semantics
        self.budget, self.attempts, self.seed = budget, attempts, seed
        self.allowed = allowed_groups(model, rules)
        self.trials: list[Trial] = []
        self.steps = 0
        self.weight = self._lifetime_weights()

    def _lifetime_weights(self) -> dict[str, dict[str, float]]:
        """Per group: the cost per cycle of each op's value being live there (registers against
        the group's limit, footprints against each memory's capacity)."""
        out = {}
        for g in self.model.machine.warp_groups:
            out[g.name] = {}
            for op in self.model.ops:
                w = op.regs / max(1, g.reg_limit) if "register_limit" in self.rules else 0.0
                if "memory" in self.rules:
                    w += sum(op.footprint_in(m.name) / max(1, m.capacity)
                             for m in self.model.machine.memories)
                out[g.name][op.name] = w
        return out

    def _record(self, I: int, label: str, steps: int, why: str | None) -> None:  # noqa: E741
        self.trials.append(Trial(I, label, steps, why))
        self.steps += steps

    def _scheduler(self, I: int, group: Assignment, runs,  # noqa: E741
                   jitter: random.Random | None) -> ModuloScheduler:
        return ModuloScheduler(self.model, I, group, max_stages=self.s_max, runs=runs,
                               spill="cross_warp_spill" in self.rules,
                               concurrency="concurrency" in self.rules, jitter=jitter)

    def at(self, I: int) -> Schedule | None:  # noqa: E741
        """A verified schedule at this I, or None after `attempts` assignments."""
        stuck = next((v for v, gs in self.allowed.items() if not gs), None)
        if stuck is not None:
            self._record(I, "-", 0, f"no group may run {stuck} (warp fit, variable latency)")
            return None
        rng = random.Random(self.seed * 1_000_003 + I)
        planner = Planner(self.model, self.allowed, I, self.rules, rng)
        guesses = planner.guesses()
        queue = [(label, group, False) for label, group in guesses]
        runs = folded_runs(self.model, I) if "capacity" in self.rules else None
        seen: set[tuple[str, ...]] = set()
        tries = draws = 0
        while tries < self.attempts and draws < 4 * self.attempts:
            if not queue:  # other priority orders, with the first guess or a random assignment
                draws += 1
                jitter = draws % 3 != 1  # random assignments, and other priority orders
                label, group = planner.random() if draws % 3 != 2 else guesses[0]
                queue.append((f"{label}, jittered" if jitter else label, group, jitter))
            label, group, jitter = queue.pop(0)
            limits.check()
            key = tuple(group[v] for v in self.model.op_names)
            if key in seen and not jitter:
                continue
            seen.add(key)
            tries += 1
            ims = self._scheduler(I, group, runs, rng if jitter else None)
            unfit = ims.unfit()
            if unfit:  # the same for every assignment: this I is out
                self._record(I, label, 0, unfit)
                return None
            placed = ims.run(self.budget)
            if placed.start is None:
                self._record(I, label, placed.steps, placed.why)
                queue.extend((label, group, False) for label, group in
                             planner.unstick(group, placed.troubled)[:1])
                continue
            schedule, violations = self._check(I, group, placed.start)
            if violations and any(self.weight[g][v] for v, g in group.items()):
                sunk, more = self._check(I, group, ims.sink(
                    {v: self.weight[group[v]][v] for v in group}))
                if not more:
                    schedule, violations = sunk, []
                else:
                    violations = more
            if not violations:  # the answer is checked against every rule asked for
                violations = verify(self.model, schedule, self.rules, self.semantics)
            self._record(I, label, placed.steps, str(violations[0]) if violations else None)
            if not violations:
                return schedule
            queue[:0] = [(label, group, False) for label, group in
                         planner.repairs(group, violations)]
        return None

    def _check(self, I: int, group: Assignment,  # noqa: E741
               start: dict[str, int]) -> tuple[Schedule, list[Violation]]:
        """The schedule with tight L, and its violations of the rules the modulo scheduler does
        not ensure by construction (those over Q's lifetimes); `at` verifies all before use."""
        s = Schedule.tight(self.model, I, start, group)
        return s, verify(self.model, s, [r for r in self.rules if r not in BY_CONSTRUCTION],
                         self.semantics)

    def summary(self, b: Bounds) -> str:
        """Why the run found nothing: the last reason at the last I tried."""
        if not self.trials:
            return f"no I to try below the limit {b.i_upper}"
        return (f"no schedule for I in [{self.trials[0].I}, {b.i_upper}]; at the last I: "
                f"{self.trials[-1].why}")

