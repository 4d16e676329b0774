"""Large-neighbourhood search over the exact model: start from a verified schedule, re-optimize
neighbourhoods of ops with the exact encoding and a short time limit each, keep the best verified
schedule.  Anytime: every better schedule and every better lower bound is reported as it comes.

1. **Start**: the given schedule, else the heuristic's (iterative modulo scheduling) and, when
   PyTorch is installed and the heuristic did not reach the lower bound, GauS's: the better.
2. **Lower bound**: max(ResMII, RecMII), raised by what the exact search proves in a share of the
   time (`lowerbound.exact_lower_bound`); if that search ends with a better schedule, it is kept.
3. **Smaller I**: the best schedule is projected onto I - 1 (each op keeps its stage and its
   offset in the stage, clipped to the shorter stage); the ops the verifier names in a violation,
   and their neighbours along edges up to the window size, are freed and re-optimized with every
   other op pinned (`neighbourhood.reoptimize`); what still fails is freed next, the window
   doubling each time, up to the whole model (then it is the exact question at that I).
4. **Shorter L** at the best I: windows of the ops that end last with their predecessors, and
   random windows, re-optimized for the shortest length; stop after `stall` windows in a row
   bring nothing.

Every schedule kept is verified against every constraint in force.  The lower bound comes only
from proofs (the structural bound and the exact search's), never from a neighbourhood that found
nothing.
"""

from __future__ import annotations

import math
import random
import time
from collections import deque
from collections.abc import Sequence

import attrs

from warpweave import limits
from warpweave.core.bounds import bounds
from warpweave.core.constraints import Constraint
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.scale.legalize import check
from warpweave.scale.lowerbound import LowerBound, exact_lower_bound, structural
from warpweave.scale.neighbourhood import binding, reoptimize
from warpweave.scale.result import Improvement, Listener, ScaleResult

DEFAULT_TIME = 60.0  # seconds, when no time limit is given


@attrs.frozen
class LnsOptions:
    """How the neighbourhoods are chosen and solved."""

    window: int = 12          # free ops in a first neighbourhood
    solve_limit: float = 5.0  # seconds per neighbourhood solve
    backend: str = "cpsat"
    encoding: str = "integer"
    start: str = "auto"       # auto | heuristic | gaus: where the first schedule comes from
    start_share: float = 0.5  # of the time: for the first schedule
    lower_share: float = 0.2  # of the time: for the exact search's lower bound
    stall: int = 20           # L windows in a row without improvement before stopping
    seed: int = 0
    isolate: bool = True      # each solver call in a child process
    semantics: str = "loop"   # what valid means (DESIGN section 3): loop | paper-q


class _Search:
    """The state of one LNS run."""

    def __init__(self, model: Model, constraints: Sequence[Constraint], options: LnsOptions,
                 deadline: float, listener: Listener | None):
        self.model, self.constraints, self.options = model, list(constraints), options
        self.binding = binding(model, constraints)  # what the neighbourhoods must state
        self.rules = {c.name for c in constraints}
        self.deadline, self.listener = deadline, listener
        self.started = time.perf_counter()
        self.rng = random.Random(options.seed)
        self.best: Schedule | None = None
        self.bounds = bounds(model, self.rules)  # now: after the deadline it would raise
        self.lower = structural(self.bounds)
        self.history: list[Improvement] = []
        self.notes: list[str] = []
        self.solves = 0
        self.slowest = 0.0  # the longest a neighbourhood took beyond its solver's limit
        self.shortest = self.bounds.min_length
        self.length_proven = False  # L shown minimal at the best I
        self.neighbours = {v: set() for v in model.op_names}
        for e in model.edges:
            if e.src != e.dst:
                self.neighbours[e.src].add(e.dst)
                self.neighbours[e.dst].add(e.src)

    # -- bookkeeping -----------------------------------------------------------------------------

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def time_up(self) -> limits.TimeUp:
        """LNS's time is up: named after the run's time limit when that is what ends it (its
        time is what the run had left), else after LNS's own."""
        run = limits.current()
        if run is not None and run.end is not None and run.end <= self.deadline + 0.01:
            return limits.TimeUp(run.limit)
        return limits.TimeUp(self.deadline - self.started)

    def event(self, how: str) -> None:
        b = self.best
        self.history.append(Improvement(time.perf_counter() - self.started,
                                        b.I if b else None, b.L if b else None,
                                        self.lower.value, how))
        if self.listener:
            self.listener(self.history[-1])

    def offer(self, schedule: Schedule | None, how: str) -> bool:
        """Keep `schedule` if it is better than the best and verifies."""
        if schedule is None or (self.best is not None and
                                (schedule.I, schedule.L) >= (self.best.I, self.best.L)):
            return False
        if check(self.model, schedule, self.constraints, self.options.semantics):
            return False
        if self.best is not None and schedule.I < self.best.I:
            self.length_proven = False
        self.best = schedule
        self.event(how)
        return True

    def raise_lower(self, found: LowerBound) -> None:
        if found.value > self.lower.value:
            self.lower = found
            self.event("lower bound: " + found.how[-1])
        else:
            self.lower = attrs.evolve(self.lower, how=found.how)

    # -- neighbourhoods --------------------------------------------------------------------------

    def grown(self, seeds: set[str], size: int) -> set[str]:
        """`seeds` and their neighbours along edges, breadth first, up to `size` ops."""
        out = set(seeds)
        queue = deque(sorted(seeds))
        while queue and len(out) < size:
            v = queue.popleft()
            for w in sorted(self.neighbours[v]):
                if w not in out and len(out) < size:
                    out.add(w)
                    queue.append(w)
        return out

    def solve(self, schedule: Schedule, free: set[str], stages: int):
        """One neighbourhood; none is started that the time left could not finish (stating one
        is not interruptible, and on a large model with lifetime rules it takes seconds)."""
        if self.solves and self.left() < self.slowest + 1.0:
            raise self.time_up()
        limit = min(self.options.solve_limit, max(0.1, self.left()))
        self.solves += 1
        tick = time.perf_counter()
        found = reoptimize(self.model, schedule, free, self.binding, stages=stages,
                           backend=self.options.backend, encoding=self.options.encoding,
                           time_limit=limit, seed=self.options.seed + self.solves,
                           isolate=self.options.isolate, semantics=self.options.semantics)
        self.slowest = max(self.slowest, time.perf_counter() - tick - limit)
        return found

    # -- phases ----------------------------------------------------------------------------------

    def smaller_interval(self, I: int) -> bool:  # noqa: E741
        """Try to reach a verified schedule at I from the best one (phase 3)."""
        b = self.best
        start = {v: (t // b.I) * I + min(t % b.I, I - 1) for v, t in b.start.items()}
        current = Schedule.tight(self.model, I, start, b.group)
        size = max(1, self.options.window)
        free: set[str] = set()
        while self.left() > 0:
            violations = check(self.model, current, self.constraints,
                               self.options.semantics)
            if not violations:
                return self.offer(current, f"lns: I={I} ({len(free)} ops re-optimized)")
            involved = {v for x in violations for v in x.ops} or set(self.model.op_names)
            free = self.grown(free | involved, max(size, len(free | involved)))
            stages = math.ceil(max(t + self.model.op(v).cycles
                                   for v, t in current.start.items()) / I) + 1
            found = self.solve(current, free, stages)
            if found.schedule is not None:
                current = found.schedule
                continue
            if len(free) >= len(self.model.ops):
                return False  # the whole model at this I and stage count: nothing
            size = min(len(self.model.ops), 2 * max(size, len(free)))
        return False

    def shorter_length(self) -> None:
        """Windows at the best I for a shorter length (phase 4).  Each window is tried at the
        smallest stage count its pinned ops allow first, up to the best schedule's; a window of
        every op whose answers are infeasible below and optimal at a stage count proves the
        length minimal at this I (`length_proven`)."""
        stalled = 0
        n = len(self.model.ops)
        while self.left() > 0 and stalled < self.options.stall and not self.length_proven:
            b = self.best
            end = {v: t + self.model.op(v).cycles for v, t in b.start.items()}
            # Windows double every few failures (a longer L needs more ops to move at once).
            size = min(n, self.options.window << (stalled // 4))
            if stalled % 2 == 0:  # the ops that end last, and what leads to them
                last = max(end.values())
                free = self.grown({v for v, e in end.items() if e == last}, size)
            else:
                free = set(self.rng.sample(self.model.op_names, size))
            pinned_end = max((e for v, e in end.items() if v not in free), default=1)
            improved, proven = False, len(free) == n
            for stages in range(max(1, math.ceil(max(pinned_end, self.shortest) / b.I)),
                                b.stages + 1):
                found = self.solve(b, free, stages)
                if found.schedule is not None:
                    improved = self.offer(found.schedule, f"lns: L={found.schedule.L} "
                                          f"({len(free)} ops re-optimized)")
                    proven = proven and found.status == "OPTIMAL"
                    break
                proven = proven and found.status == "UNSAT"
            if proven:
                self.length_proven = True
            stalled = 0 if improved else stalled + 1


def _first_schedule(run: _Search, model: Model, constraints: Sequence[Constraint],
                    options: LnsOptions, time_limit: float, longer: float,
                    max_stages: int | None) -> None:
    """The starting point (phase 1) within `time_limit` seconds, or `longer` if nothing is found
    by then, each schedule offered to `run` (and so reported) as soon as it is found:
    `heuristic`: the heuristic's schedule, else GauS's; `auto`: the heuristic's within half the
    time, and GauS's too (when PyTorch is installed) unless the heuristic reached the lower
    bound - the better of the two; `gaus`: GauS's."""
    from warpweave.core.heuristic import heuristic_schedule
    names = [c.name for c in constraints]
    started = time.perf_counter()
    if options.start in ("heuristic", "auto"):
        share = time_limit / 2 if options.start == "auto" else time_limit
        h = heuristic_schedule(model, rules=names, seed=options.seed, time_limit=share,
                               max_stages=max_stages, semantics=options.semantics)
        if h.schedule is not None:
            if not run.offer(h.schedule, "start: heuristic"):
                run.notes.append("the heuristic's schedule failed verification and was not used")
            elif options.start == "heuristic" or h.schedule.I == h.lower_bound:
                return
    left = (time_limit if run.best else longer) - (time.perf_counter() - started)
    limits.check()  # importing PyTorch takes seconds: not past the run's deadline
    if left <= 0:
        return
    try:
        from warpweave.scale.gaus import GausOptions, gaus_schedule
    except ImportError:  # PyTorch is not installed
        return
    g = gaus_schedule(model, constraints, options=GausOptions(seed=options.seed),
                      time_limit=max(0.0, left), max_stages=max_stages,
                      semantics=options.semantics)
    run.offer(g.schedule, "start: gaus")
    limits.check()  # a Ctrl-C that GauS took stops LNS too, before the lower bound's search


def lns_schedule(model: Model, constraints: Sequence[Constraint], *,
                 options: LnsOptions = LnsOptions(), time_limit: float | None = None,
                 start: Schedule | None = None, max_stages: int | None = None,
                 listener: Listener | None = None) -> ScaleResult:
    """LNS on `model` under `constraints` (see the module docstring); `time_limit` defaults to
    DEFAULT_TIME seconds.  The time limit (also the run's deadline, `warpweave.limits`, when
    one is open) and Ctrl-C stop it with the best schedule so far (`timed_out`: the time limit
    given cut it; `interrupted`: Ctrl-C did)."""
    budget = DEFAULT_TIME if time_limit is None else time_limit
    started = time.perf_counter()
    run = _Search(model, constraints, options, started + budget, listener)
    interrupted = timed_up = False
    try:
        _phases(run, model, constraints, options, budget, start, max_stages)
    except limits.TimeUp as stop:
        timed_up = True
        run.notes.append(str(stop))
    except KeyboardInterrupt:
        interrupted = True
        run.notes.append("interrupted")
    optimal = run.best is not None and (
        (run.best.I == run.lower.value and (run.best.L == run.shortest or run.length_proven))
        or (
            run.lower.optimal and run.lower.schedule is not None and
            (run.best.I, run.best.L) == (run.lower.schedule.I, run.lower.schedule.L)))
    if run.best is not None:
        run.notes.append(f"LNS: {run.solves} neighbourhood solve{'s' * (run.solves != 1)} "
                         f"({options.backend}/{options.encoding}, at most "
                         f"{options.solve_limit:g} s each)")
    # Its own end: both bounds reached, or the length search stalled; without `time_limit`,
    # DEFAULT_TIME is its own budget too.
    timed_out = time_limit is not None and (timed_up or run.left() <= 0)
    if timed_out and not timed_up and not interrupted:  # a phase saw no time left
        run.notes.insert(0, str(run.time_up()))
    return ScaleResult("lns", model, run.best, run.lower.value, run.bounds,
                       run.lower.how, tuple(run.history), time.perf_counter() - started,
                       None if run.best is not None else "no starting schedule was found",
                       tuple(run.notes), optimal, interrupted, timed_out)


def _phases(run: _Search, model: Model, constraints: Sequence[Constraint],
            options: LnsOptions, budget: float, start: Schedule | None,
            max_stages: int | None) -> None:
    """The four phases of the module docstring, keeping `run` up to date as they go."""
    if start is None:
        _first_schedule(run, model, constraints, options, options.start_share * budget,
                        (1 - options.lower_share) * budget, max_stages)
    elif not run.offer(start, "start: given"):
        run.notes.append("the given schedule failed verification and was not used")
    if run.best is None or run.best.I > run.lower.value:
        share = min(options.lower_share * budget, max(0.0, run.left()))
        found = exact_lower_bound(model, run.binding, time_limit=share,
                                  backend=options.backend, encoding=options.encoding,
                                  max_stages=max_stages, seed=options.seed,
                                  semantics=options.semantics)
        run.raise_lower(found)
        run.offer(found.schedule, "exact search")
    while run.best is not None and run.left() > 0:
        if (run.best.I, run.best.L) == (run.lower.value, run.shortest):
            return  # both at their lower bounds: optimal
        if run.best.I > run.lower.value and run.smaller_interval(run.best.I - 1):
            continue
        run.shorter_length()
        return
