"""The optimal search: the smallest I, then the smallest L at that I, with a proof.

For each I from max(ResMII, RecMII) upward (one by one: feasibility is not monotone in I), and each
stage count S = 1..S_max, one problem decides every length L in ((S-1)*I, S*I] at once and
minimizes L: within a stage count a feasible L stays feasible when L grows, and a smaller S always
means a smaller L.  The first I with a feasible S is optimal when every (I', S) below it was shown
infeasible; the L found is minimal when the smaller S at that I were infeasible and the solve was
optimal.  Beyond `Bounds.i_upper` a larger I cannot help, so the search ends.

Every schedule a backend returns is verified (each constraint's `check`) before it is reported; a
failed check writes the replayable IR and raises `SearchBug`.  Time limits and Ctrl-C return the
best schedule so far with its proven lower bound.

`progress` hears of each answer as it is recorded, and, before each solver call, of the question
being put (an `Attempt` with status `SOLVING`, never recorded): a caller can show what the search
is waiting on during a long call.

`paper=True` runs the Twill paper's Algorithm 1 instead: per I, an optimal modulo schedule without
the warp constraints fixes the stage count; only that stage count is tried for the joint problem,
seeded with that schedule (a warm start) and its length.

Incremental solving: each problem minimizes L within its stage count in one solver (natively, or
by bound tightening under assumptions in the same solver).  Warm starts (`Problem.hints`, for
backends that take them) are given where a feasible point is known: Algorithm 1's phase 2 and the
tie-breakers, which start from the optimum they refine.  Most questions of the search are
infeasibility proofs, which no starting point shortens.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs

from warpweave import limits
from warpweave.core.bounds import Bounds, bounds
from warpweave.core.constraints import Constraint
from warpweave.core.errors import InputError
from warpweave.core.model import Model
from warpweave.core.registry import CONSTRAINTS, ENCODINGS
from warpweave.core.registry import backend as make_backend
from warpweave.core.schedule import Schedule
from warpweave.core.verify import check_semantics

MODULO_ONLY = ("dependence", "capacity", "completion")  # Algorithm 1, phase 1
TIE_BREAKERS = ("groups", "cross_edges", "register_peak")
SOLVING = "solving"  # the status of an announcement: a solver call starts on this question


@attrs.frozen
class Attempt:
    """One question the search asked: is some L in `lengths` feasible at (I, S)?"""

    I: int  # noqa: E741
    S: int
    lengths: tuple[int, int]
    status: str            # infeasible | optimal | feasible | timeout | unknown (| SOLVING)
    how: str               # backend/encoding, or why no solver was needed
    seconds: float = 0.0
    L: int | None = None
    # joint | relaxation (every stage count at once, the constraints that ignore Q's copies) |
    # probe (the minimize search's first questions: I fixed at the lower bound) | minimize (I a
    # variable over `interval`) | modulo (Algorithm 1's phase 1) | seeded (Algorithm 1's phase
    # 2: L from phase 1's length) | tie-break
    phase: str = "joint"
    # `seconds` split (benchmarks read them): stating the problem in the IR (the encoding),
    # translating the IR into the solver, and the solver's own search.
    encode_seconds: float = 0.0
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    # The I range a `minimize` question covered; I is then the least I found in it (else its
    # lowest value).
    interval: tuple[int, int] | None = None
    # The lowest stage count of an answer that covers S = stages_from..S at once: the stage
    # counts too short for the longest path, recorded in one answer however many they are.
    stages_from: int | None = None

    def rules_out(self) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """The cases this answer shows to have no schedule at any length of their stage count:
        ((lowest I, highest I), (lowest S, highest S)); None when it shows none.  An optimal
        `minimize` answer shows that no I below the one it found works at its stage count."""
        if self.phase not in ("joint", "relaxation", "minimize", "modulo", "probe"):
            return None
        lo, hi = self.interval or (self.I, self.I)
        if self.status == "optimal" and self.interval is not None:
            hi = self.I - 1
        elif self.status != "infeasible":
            return None
        if lo > hi:
            return None
        first = 1 if self.phase == "relaxation" else (self.stages_from or self.S)
        return (lo, hi), (first, self.S)

    def to_dict(self) -> dict:
        d = attrs.asdict(self, filter=lambda a, v: v is not None)
        for key in ("seconds", "encode_seconds", "build_seconds", "solve_seconds"):
            d[key] = round(d[key], 4)
        shown = self.rules_out()
        if shown is not None:
            d["rules_out"] = {"I": list(shown[0]), "S": list(shown[1])}
        return d


@attrs.frozen
class Outcome:
    """What the search found and what it proved."""

    model: Model
    schedule: Schedule | None
    status: str                    # optimal | feasible | infeasible | unknown
    optimal: bool                  # I and L both proven minimal
    lower_bound: int               # no I below this is feasible (within S <= max_stages)
    bounds: Bounds
    max_stages: int
    attempts: tuple[Attempt, ...]
    backend: str
    encoding: str
    constraints: tuple[str, ...]
    seconds: float
    interrupted: bool = False
    notes: tuple[str, ...] = ()

    @classmethod
    def stopped(cls, model: Model, b: Bounds, max_stages: int | None, backend: str,
                encoding: str, constraints: Sequence[Constraint], seconds: float,
                stop: BaseException, where: str, notes: Sequence[str] = ()) -> Outcome:
        """A search stopped (a time limit, Ctrl-C) before its first question: no schedule,
        the bounds `b` (the lower bound is b.lower), and a note saying where it stopped."""
        interrupted = isinstance(stop, KeyboardInterrupt)
        note = f"{'interrupted' if interrupted else stop} while {where}, before any solver call"
        return cls(model, None, "unknown", False, b.lower, b,
                   b.default_max_stages() if max_stages is None else max_stages, (), backend,
                   encoding, tuple(c.name for c in constraints), seconds, interrupted,
                   (*notes, note))

    def proof(self) -> list[dict]:
        """Every question asked, in order, with its answer, how it was answered, and the cases
        it shows infeasible (`rules_out`): together, each I below the answer and each stage
        count below the answer's at its I, shown infeasible."""
        return [a.to_dict() for a in self.attempts]

    def ruled_out(self) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
        """The cases shown infeasible, ((I from, to), (S from, to), how), grouped by how (in the
        order first used); contiguous stage counts of one I range, then contiguous I ranges of
        one stage-count range, are merged."""
        by_how: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
        for a in self.attempts:
            shown = a.rules_out()
            if shown is not None:
                by_how.setdefault(a.how, []).append(shown)
        return [(i, s, how) for how, cases in by_how.items()
                for i, s in _merge(_merge(cases, 1), 0)]


Case = tuple[tuple[int, int], tuple[int, int]]


def _merge(cases: list[Case], axis: int) -> list[Case]:
    """Neighbouring cases equal on the other axis whose ranges on `axis` meet or overlap (the
    probe's I = lower bound, then the minimize question from it), made one."""
    out: list[Case] = []
    for case in cases:
        if out and out[-1][1 - axis] == case[1 - axis] and \
                out[-1][axis][0] <= case[axis][0] <= out[-1][axis][1] + 1:
            joined = (out[-1][axis][0], max(out[-1][axis][1], case[axis][1]))
            out[-1] = (joined, case[1]) if axis == 0 else (case[0], joined)
        else:
            out.append(case)
    return out


@attrs.define
class _Found:
    """What a search has established so far, kept up to date as it goes, so that a time limit
    or Ctrl-C that stops it still returns the best schedule and the proven lower bound."""

    lower: int                       # no I below this is feasible (within S <= max_stages)
    best: Schedule | None = None     # the best verified schedule found
    optimal: bool = False            # its L is proven minimal at its I, and no smaller I works


class SearchBug(Exception):
    """A backend returned a schedule the verifier rejects: a bug, with the IR saved to replay it."""


def check_limits(time_limit: float | None, solve_limit: float | None,
                 max_stages: int | None) -> None:
    """The limits of a search, as the options that give them say: seconds > 0, stages >= 1
    (None: no limit, or the default).  A zero is an error, not "no limit"."""
    for option, seconds in (("--time-limit", time_limit), ("--solve-limit", solve_limit)):
        if seconds is not None and not seconds > 0:  # NaN too
            raise InputError("must be > 0", (option,), seconds)
    if max_stages is not None and max_stages < 1:
        raise InputError("must be >= 1", ("--max-stages",), max_stages)


def constraint_set(without: Iterable[str] = (),
                   only: Iterable[str] | None = None) -> list[Constraint]:
    """The constraints of a run: every registered one (built-ins and plugins) minus `without`."""
    names = CONSTRAINTS.names()
    for name in [*without, *(only or [])]:
        if name not in names:
            raise InputError(f"unknown constraint (known: {', '.join(names)})", value=name)
    chosen = [n for n in names if n not in set(without) and (only is None or n in set(only))]
    return [CONSTRAINTS.get(n)() for n in chosen]


class _Solver:
    """Builds and solves one (I, S) problem; verifies what comes back."""

    def __init__(self, model: Model, backend: str, encoding: str, seed: int,
                 bug_dir: Path | None, isolate: bool = True, semantics: str = "loop"):
        self.model = model
        self.semantics = semantics
        self.backend = make_backend(backend, seed=seed)
        self.encoding = ENCODINGS.get(encoding)
        self.how = f"{self.backend.spec}/{encoding}"
        self.bug_dir = bug_dir
        self.isolate = isolate

    def view(self, I: int, S: int, cons: Sequence[Constraint], min_length: int,  # noqa: E741
             interval: tuple[int, int] | None = None):
        if interval is None:
            return self.encoding(self.model, I, S, cons, min_length=min_length,
                                 semantics=self.semantics)
        return self.encoding(self.model, I, S, cons, min_length=min_length,
                             semantics=self.semantics, interval=interval)

    def solve(self, view, cons: Sequence[Constraint], limit: float | None):
        """(result, verified schedule or None)."""
        solve = self.backend.solve
        if self.isolate and hasattr(self.backend, "solve_isolated"):
            solve = self.backend.solve_isolated
        result = solve(view.problem, time_limit=limit)
        if not result.status.has_solution:
            return result, None
        schedule = view.decode(result.values)
        violations = [v for c in cons
                      for v in c.check(self.model, schedule, semantics=self.semantics)]
        if violations:
            raise SearchBug(self._report(view, schedule, violations))
        return result, schedule

    def _report(self, view, schedule: Schedule, violations) -> str:
        where = self.bug_dir or Path(".")
        stem = f"warpweave-bug-{self.model.name}-I{view.I}-S{view.S}-{self.how.replace('/', '_')}"
        path = Path(where) / f"{stem}.ir.json".replace(":", "_")
        view.problem.write(path)
        return (f"{self.how} returned a schedule the verifier rejects at I={view.I}, S={view.S}: "
                f"{violations[0]} (and {len(violations) - 1} more); IR saved to {path}; "
                f"schedule: start={dict(schedule.start)} group={dict(schedule.group)}")


def _status(result) -> str:
    return {"UNSAT": "infeasible", "OPTIMAL": "optimal", "SAT": "feasible",
            "TIMEOUT": "timeout"}.get(result.status.value, "unknown")


@limits.within_time_limit  # the whole search, its bounds and encodings included
def search(model: Model, *, backend: str = "cpsat", encoding: str = "compact",
           constraints: Sequence[Constraint] | None = None, max_stages: int | None = None,
           time_limit: float | None = None, solve_limit: float | None = None,
           paper: bool = False, tie_breakers: Sequence[str] = (), seed: int = 0,
           progress: Callable[[Attempt], None] | None = None,
           bug_dir: Path | None = None, strategy: str = "sweep",
           isolate: bool = True, semantics: str = "loop",
           upper: Schedule | None = None, proven: int = 0) -> Outcome:
    """Find an optimal schedule of `model` (see the module docstring).  `strategy` is `sweep`
    (one problem per I and stage count) or `minimize` (I a variable: one problem per stage
    count; needs an encoding that takes I as a variable).  With `isolate` every solver call runs
    in a child process (hard time limits, prompt Ctrl-C, contained crashes; ~20-40 ms each).
    `semantics`: "loop" (DESIGN section 3: every trip count) or "paper-q" (the paper's Q_S).
    `upper`: a schedule of `model` found otherwise (the heuristic's): if every constraint
    accepts it and it has at most the stage bound's stages, the minimize search asks only for
    I up to its I, starting from it (a warm start), and returns it if stopped before finding
    one.
    `proven`: no I below it is feasible, shown elsewhere (a relaxation's search, with the same
    stage bound); the search starts there."""
    check_semantics(semantics)
    if strategy not in ("sweep", "minimize"):
        raise InputError("must be sweep or minimize", ("--search",), strategy)
    if strategy == "minimize" and paper:
        raise InputError("Algorithm 1 sweeps I: it cannot be combined with --search minimize",
                         ("--search",), strategy)
    check_limits(time_limit, solve_limit, max_stages)
    started = time.perf_counter()
    cons = list(constraints) if constraints is not None else constraint_set()
    for t in tie_breakers:
        if t not in TIE_BREAKERS:
            raise InputError(f"unknown tie-breaker (known: {', '.join(TIE_BREAKERS)})", value=t)
    solver = _Solver(model, backend, encoding, seed, bug_dir, isolate, semantics)
    if strategy == "minimize" and not getattr(solver.encoding, "variable_interval", False):
        raise InputError("this encoding needs a fixed I; the minimize search takes I as a "
                         "variable: use --encoding integer", ("--encoding",), encoding)
    try:
        b = bounds(model, {c.name for c in cons})
    except (limits.TimeUp, KeyboardInterrupt) as stop:
        return Outcome.stopped(model, bounds(model, {c.name for c in cons} - {"dependence"}),
                               max_stages, solver.backend.spec, encoding, cons,
                               time.perf_counter() - started, stop,
                               "computing the bounds (the lower bound is without RecMII)")
    s_max = b.default_max_stages() if max_stages is None else max_stages
    b = attrs.evolve(b, proven=proven)
    attempts: list[Attempt] = []
    notes: list[str] = []
    found = _Found(b.lower)

    def record(a: Attempt) -> None:
        attempts.append(a)
        if progress:
            progress(a)

    def announce(a: Attempt) -> None:
        """Tell `progress` that a solver call starts on `a`'s question (status SOLVING); only
        answers are recorded."""
        if progress:
            progress(a)

    def limit() -> float | None:
        """The seconds the next solver call may take; TimeUp when none are left (the
        search's deadline or an enclosing one), KeyboardInterrupt after a Ctrl-C that was
        swallowed on the way (`warpweave.limits`)."""
        limits.check()
        left = limits.remaining()
        return left if solve_limit is None else min(solve_limit, left if left is not None
                                                    else solve_limit)

    def ask(I: int, S: int, cs: Sequence[Constraint], phase: str,  # noqa: E741
            min_length: int, hint: Schedule | None = None) -> tuple[str, Schedule | None]:
        lengths = (max(min_length, (S - 1) * I + 1), S * I)  # never empty: see _first_stage
        limit()  # out of time: stop before stating a problem that will not be solved
        announce(Attempt(I, S, lengths, SOLVING, solver.how, phase=phase))
        tick = time.perf_counter()
        view = solver.view(I, S, cs, min_length)
        if hint is not None:
            view.hint(hint)
        encoded = time.perf_counter() - tick
        if phase == "relaxation":  # only its feasibility matters
            view.problem.objective = None
        result, schedule = solver.solve(view, cs, limit())
        status = _status(result)
        if schedule is not None and phase in ("joint", "seeded", "probe"):
            found.best = schedule  # kept before anything else can be interrupted
        record(Attempt(I, S, lengths, status, solver.how, time.perf_counter() - tick,
                       schedule.L if schedule else None, phase, encoded,
                       result.build_seconds, result.solve_seconds))
        return status, schedule

    interrupted = False
    try:
        if paper:
            _algorithm_1(b, s_max, cons, ask, record, notes, found)
        elif strategy == "minimize":
            if upper is not None and (upper.stages > s_max or any(
                    c.check(model, upper, semantics=semantics) for c in cons)):
                notes.append("the upper bound given was not used: it breaks a constraint or the "
                             "stage bound")
                upper = None
            _minimize(b, s_max, cons, solver, limit, record, announce, found, ask, upper)
        else:
            _full_search(b, s_max, cons, ask, record, found)
        if found.best is not None and tie_breakers:
            _tie_break(solver, found, cons, tie_breakers, limit, record, announce, b)
    except limits.TimeUp as stop:
        notes.append(str(stop))
    except KeyboardInterrupt:
        interrupted = True
        notes.append("interrupted")
    if found.best is None and upper is not None and strategy == "minimize" and not paper:
        found.best = upper  # stopped before finding one: the schedule given, not proven
    stopped = sum(a.status == "timeout" for a in attempts)
    if stopped and not any(n.startswith("time limit") for n in notes):
        notes.append(f"{stopped} solver call(s) stopped at a time limit")
    best, lower = found.best, found.lower
    if best is not None:
        lower = min(lower, best.I)
        status = "optimal" if found.optimal and lower == best.I else "feasible"
    elif lower > b.i_upper and not interrupted:
        status = "infeasible"
    else:
        status = "unknown"
    return Outcome(model, best, status, status == "optimal", lower, b, s_max, tuple(attempts),
                   solver.backend.spec, encoding, tuple(c.name for c in cons),
                   time.perf_counter() - started, interrupted, tuple(notes))


def decide(model: Model, I: int, *, backend: str = "cpsat",  # noqa: E741
           encoding: str = "compact", constraints: Sequence[Constraint] | None = None,
           max_stages: int | None = None, solve_limit: float | None = None,
           seed: int = 0, isolate: bool = True, semantics: str = "loop"
           ) -> tuple[str, Schedule | None]:
    """One initiation interval only: ("feasible", the shortest schedule of the first feasible
    stage count), ("infeasible", None) when every S <= max_stages was shown infeasible, else
    ("unknown", None).  For questions about a known optimum (is it still reachable with a shape
    imposed?) without searching every I below it again."""
    cons = list(constraints) if constraints is not None else constraint_set()
    b = bounds(model, {c.name for c in cons})
    solver = _Solver(model, backend, encoding, seed, None, isolate, check_semantics(semantics))
    proven = True
    for S in range(max(1, -(-b.min_length // I)), (max_stages or b.default_max_stages()) + 1):
        result, schedule = solver.solve(solver.view(I, S, cons, b.min_length), cons, solve_limit)
        if schedule is not None:
            return "feasible", schedule
        proven = proven and _status(result) == "infeasible"
    return ("infeasible" if proven else "unknown"), None


def _too_short(min_length: int, I: int, S: int, phase: str, *,  # noqa: E741
               interval: tuple[int, int] | None = None, stages_from: int | None = None) -> Attempt:
    """The answer, without a solver, that S stages (from `stages_from`) of I (over `interval`)
    are too short for the longest path."""
    top = interval[1] if interval else I
    return Attempt(I, S, (min_length, S * top), "infeasible",
                   f"L >= {min_length} (longest path) exceeds S*I", phase=phase,
                   interval=interval, stages_from=stages_from if stages_from != S else None)


def _first_stage(min_length: int, I: int, s_max: int, phase: str, record) -> int:  # noqa: E741
    """The first stage count whose S*I holds the longest path; the ones below it (at most
    `s_max`) recorded as one answer, however many: a long latency must not cost a loop."""
    first = max(1, -(-min_length // I))
    if first > 1:
        record(_too_short(min_length, I, min(first - 1, s_max), phase, stages_from=1))
    return first


def _first_interval(b: Bounds, s_max: int, phase: str, record, found: _Found) -> int:
    """The first I at which `s_max` stages hold the longest path; the I below it recorded as
    one answer (every stage count of each is too short) and no longer possible."""
    first = max(b.lower, -(-b.min_length // s_max))
    if first > b.lower:
        record(_too_short(b.min_length, b.lower, s_max, phase, interval=(b.lower, first - 1),
                          stages_from=1))
        found.lower = max(found.lower, first)
    return first


def _full_search(b: Bounds, s_max: int, cons, ask, record, found: _Found) -> None:
    """Every stage count at every I, until the first schedule.

    At each I a relaxation first keeps only the constraints that ignore Q's copies and only get
    easier as L grows: if it is infeasible at L = S_max * I, no stage count can work at this I.
    """
    relaxed = [c for c in cons if c.q_free]
    for I in range(_first_interval(b, s_max, "joint", record, found), b.i_upper + 1):  # noqa: E741
        if len(relaxed) < len(cons) and ask(I, s_max, relaxed, "relaxation",
                                            b.min_length)[0] == "infeasible":
            if found.lower == I:
                found.lower = I + 1
            continue
        proven_below = True  # every smaller S at this I shown infeasible
        for S in range(_first_stage(b.min_length, I, s_max, "joint", record), s_max + 1):
            status, schedule = ask(I, S, cons, "joint", b.min_length)
            if schedule is not None:  # `ask` has kept it as found.best
                found.optimal = proven_below and status == "optimal"
                return
            if status != "infeasible":
                proven_below = False
        if proven_below and found.lower == I:
            found.lower = I + 1


def _minimize(b: Bounds, s_max: int, cons, solver: _Solver, limit, record, announce,
              found: _Found, ask, upper: Schedule | None = None) -> None:
    """I as a variable: per stage count, minimize I then L.

    First a probe: the lower bound itself, at the smallest stage count that can hold the
    longest path at it (the smaller ones are shown infeasible without a solver).  Many kernels
    reach it (a saturated tensor core), and one problem with I fixed is much easier than one
    with I ranging; a schedule there is optimal in I and, being at the smallest stage count
    possible, in L.  Otherwise, per stage count upward: a later stage count only has a longer
    L, so after the first answer it only has to beat I: `I <= best - 1` is asked, and
    infeasibility then proves the answer optimal for that stage count too.  That question is
    usually infeasible, so it is asked first without an objective (a feasibility question; the
    CP-SAT backend then drops its LP relaxation, which costs more than it prunes on such proofs:
    benchmarks/README.md); only a schedule it finds is then minimized, from that schedule.  Once
    the best I is the lower bound, no later stage count can beat it and nothing is left to ask.

    With a valid schedule `upper` (at most `s_max` stages), the questions ask for I up to its
    I from the start: the stage counts too short for the longest path at that I are answered
    without a solver, and the one that holds `upper` starts from it."""
    first = max(1, -(-b.min_length // b.lower))
    if first <= s_max:
        S = _first_stage(b.min_length, b.lower, s_max, "probe", record)
        status, schedule = ask(b.lower, S, cons, "probe", b.min_length)
        if schedule is not None:  # its L is minimal only if the solve was
            found.optimal, found.lower = status == "optimal", b.lower
            return

    def question(S: int, top: int, lengths: tuple[int, int], hint: Schedule | None,  # noqa: N803
                 feasibility: bool = False) -> tuple[str, Schedule | None, int]:
        """Is some I in [lower, top] feasible at S (the least, then the least L, unless only
        `feasibility` is asked)?  (status, its schedule, the least I not ruled out)."""
        limit()  # out of time: stop before stating a problem that will not be solved
        announce(Attempt(b.lower, S, lengths, SOLVING, solver.how, phase="minimize",
                         interval=(b.lower, top)))
        tick = time.perf_counter()
        view = solver.view(top, S, cons, b.min_length, interval=(b.lower, top))
        if hint is not None:
            view.hint(hint)  # nothing where it does not fit
        if feasibility:
            view.problem.objective = None
        encoded = time.perf_counter() - tick
        result, schedule = solver.solve(view, cons, limit())
        status = _status(result)
        if schedule is not None:
            found.best = schedule
        record(Attempt(schedule.I if schedule else b.lower, S, lengths, status, solver.how,
                       time.perf_counter() - tick, schedule.L if schedule else None,
                       "minimize", encoded, result.build_seconds, result.solve_seconds,
                       interval=(b.lower, top)))
        at = result.bound // (view.L + 1) if result.bound is not None else b.lower
        return status, schedule, at

    proven = True
    floor = None  # smallest I not ruled out at the stage counts not decided
    S = 0
    while S < s_max:
        S += 1
        top = (upper.I if upper else b.i_upper) if found.best is None else found.best.I - 1
        if top < b.lower:
            break
        lengths = (max(b.min_length, (S - 1) * b.lower + 1), S * top)
        if lengths[0] > lengths[1]:  # S up to `last` cannot hold the longest path: one answer
            last = min(s_max, -(-b.min_length // top) - 1)
            record(_too_short(b.min_length, b.lower, last, "minimize", interval=(b.lower, top),
                              stages_from=S))
            S = last
            continue
        hint = upper if found.best is None else None
        if found.best is not None:  # usually infeasible: first the question without objective
            status, schedule, _ = question(S, top, lengths, None, feasibility=True)
            if status == "infeasible":
                continue
            if schedule is None:
                proven = False
                floor = b.lower if floor is None else min(floor, b.lower)
                continue
            top, hint = schedule.I, schedule  # a better I: minimize from it
            lengths = (lengths[0], S * top)
        status, schedule, view_bound = question(S, top, lengths, hint)
        if status not in ("optimal", "infeasible"):
            proven = False
            floor = view_bound if floor is None else min(floor, view_bound)
    if proven and found.best is None and upper is not None:
        raise SearchBug(f"{solver.how} showed every I up to {upper.I} infeasible at every stage "
                        f"count, but a valid schedule has I = {upper.I} in {upper.stages}")
    if proven:
        found.optimal = found.best is not None
        found.lower = found.best.I if found.best else b.i_upper + 1
    else:
        found.lower = max(b.lower, floor if floor is not None else b.lower)


def _algorithm_1(b: Bounds, s_max: int, cons, ask, record, notes: list[str],
                 found: _Found) -> None:
    """The Twill paper's Algorithm 1: phase 1 fixes the stage count, phase 2 tries only it."""
    modulo = [c for c in cons if c.name in MODULO_ONLY]
    for I in range(_first_interval(b, s_max, "modulo", record, found), b.i_upper + 1):  # noqa: E741
        seed = None
        for S in range(_first_stage(b.min_length, I, s_max, "modulo", record), s_max + 1):
            status, seed = ask(I, S, modulo, "modulo", b.min_length)
            if seed is not None:
                break
        if seed is None:
            continue
        length = seed.L
        S = math.ceil(length / I)
        status, schedule = ask(I, S, cons, "seeded", length, hint=seed)
        if schedule is not None:  # `ask` has kept it as found.best
            notes.append(f"Algorithm 1: phase 1 length {length} fixed {S} stage(s) at I={I}")
            return


def _tie_break(solver: _Solver, found: _Found, cons, order: Sequence[str], limit, record,
               announce, b: Bounds) -> None:
    """Among schedules with the optimal (I, L), minimize the tie-breakers lexicographically."""
    best = found.best
    I, S = best.I, best.stages  # noqa: E741
    view = solver.view(I, S, cons, b.min_length)
    p = view.problem
    for lit in view.pin_length(best.L):
        p.add_clause([lit])
    for name in order:
        announce(Attempt(I, S, (best.L, best.L), SOLVING, f"{solver.how} min {name}",
                         phase="tie-break"))
        tick = time.perf_counter()
        objective = _objective(view, name)
        p.minimize(objective)
        view.hint(found.best)  # a warm start: the best so far is feasible here
        result, schedule = solver.solve(view, cons, limit())
        if schedule is None:
            break
        found.best = schedule
        record(Attempt(I, S, (best.L, best.L), _status(result), f"{solver.how} min {name}",
                       time.perf_counter() - tick, schedule.L, "tie-break",
                       build_seconds=result.build_seconds, solve_seconds=result.solve_seconds))
        p.add_linear(objective, "<=", result.objective - p.objective_offset)


def _objective(view, name: str) -> list:
    """Terms to minimize for a tie-breaker, with the auxiliaries it needs."""
    model, p = view.model, view.problem
    if name == "groups":
        terms = []
        for g in model.machine.warp_groups:
            used = p.bool(f"used[{g.name}]")
            for op in model.ops:
                p.add_clause([~view.on(op.name, g.name), used])
            terms.append((1, used))
        return terms
    if name == "cross_edges":
        terms = []
        for e in model.edges:
            if e.is_data and e.src != e.dst:
                same = view.same_group(e.src, e.dst)
                if same is not True:
                    cross = p.bool(f"cross[{e.src},{e.dst}]")
                    p.add_clause([same, cross])
                    terms.append((1, cross))
        return terms
    copies = max(len(values) for values in view.programs()) if view.programs() else 0
    peak = p.int("register_peak", 0, sum(op.regs for op in model.ops) * max(1, copies))
    weights = {op.name: op.regs for op in model.ops if op.regs}
    for g in model.machine.warp_groups:
        view.limit_live(weights, peak, group=g.name)
    return [(1, peak)]
