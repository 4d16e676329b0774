"""The strategies: which questions a search puts, in what order, and what their answers prove.

- `sweep`: every stage count at every I from the lower bound up, until the first schedule (the
  default for encodings that need a fixed I).
- `minimize`: I a variable, one question per stage count (encodings with `variable_interval`),
  after a probe at the lower bound itself.
- `algorithm_1`: the Twill paper's Algorithm 1 (a modulo schedule fixes the stage count).

Each works on a `Run` (`warpweave.search.run`): it puts its questions through `Run.ask` /
`Run.ask_range` and keeps `Run.lower`, `Run.best` and `Run.optimal` true at every step, so a
time limit or Ctrl-C between two questions loses nothing proven.  Stage counts whose S*I cannot
hold the longest path are answered without a solver, however many they are, in one answer.
"""

from __future__ import annotations

import math

from warpweave.core.schedule import Schedule
from warpweave.search.attempt import too_short
from warpweave.search.run import Run, lengths
from warpweave.search.solver import SearchBug

MODULO_ONLY = ("dependence", "capacity", "completion")  # Algorithm 1, phase 1


def first_stage(run: Run, I: int, phase: str) -> int:  # noqa: E741
    """The first stage count whose S*I holds the longest path; the ones below it (at most the
    stage bound) recorded as one answer, however many: a long latency must not cost a loop."""
    min_length = run.bounds.min_length
    first = max(1, -(-min_length // I))
    if first > 1:
        run.record(too_short(min_length, I, min(first - 1, run.max_stages), phase,
                             stages_from=1))
    return first


def first_interval(run: Run, phase: str) -> int:
    """The first I at which the stage bound's stages hold the longest path; the I below it
    recorded as one answer (every stage count of each is too short) and no longer possible."""
    b, s_max = run.bounds, run.max_stages
    first = max(b.lower, -(-b.min_length // s_max))
    if first > b.lower:
        run.record(too_short(b.min_length, b.lower, s_max, phase, interval=(b.lower, first - 1),
                             stages_from=1))
        run.lower = max(run.lower, first)
    return first


def sweep(run: Run) -> None:
    """Every stage count at every I, until the first schedule.

    At each I a relaxation first keeps only the constraints that ignore Q's copies and only get
    easier as L grows: if it is infeasible at L = S_max * I, no stage count can work at this I.
    """
    b, s_max, cons = run.bounds, run.max_stages, run.cons
    relaxed = [c for c in cons if c.q_free]
    for I in range(first_interval(run, "joint"), b.i_upper + 1):  # noqa: E741
        if len(relaxed) < len(cons) and run.ask(I, s_max, relaxed, "relaxation",
                                                b.min_length)[0] == "infeasible":
            if run.lower == I:
                run.lower = I + 1
            continue
        proven_below = True  # every smaller S at this I shown infeasible
        for S in range(first_stage(run, I, "joint"), s_max + 1):
            status, schedule = run.ask(I, S, cons, "joint", b.min_length)
            if schedule is not None:  # `ask` has kept it as run.best
                run.optimal = proven_below and status == "optimal"
                return
            if status != "infeasible":
                proven_below = False
        if proven_below and run.lower == I:
            run.lower = I + 1


def minimize(run: Run, upper: Schedule | None = None) -> None:
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

    With a valid schedule `upper`, the questions ask for I up to its I from the start: the
    stage counts too short for the longest path at that I are answered without a solver, and
    the one that holds `upper` starts from it.  Within the stage bound, every I up to `upper.I`
    shown infeasible contradicts `upper`: SearchBug.  (Beyond it, `upper` still bounds I: when
    its I is the lower bound, only L is left to find, at I fixed.)"""
    b, s_max = run.bounds, run.max_stages
    probed = 0  # the stage count the probe showed infeasible at the lower bound (0: none)
    if max(1, -(-b.min_length // b.lower)) <= s_max:
        S = first_stage(run, b.lower, "probe")
        status, schedule = run.ask(b.lower, S, run.cons, "probe", b.min_length)
        if schedule is not None:  # its L is minimal only if the solve was
            run.optimal, run.lower = status == "optimal", b.lower
            return
        probed = S if status == "infeasible" else 0
    proven = True
    floor = None  # smallest I not ruled out at the stage counts not decided
    S = 0
    while S < s_max:
        S += 1
        top = (upper.I if upper else b.i_upper) if run.best is None else run.best.I - 1
        if top < b.lower:
            break
        shortest, longest = lengths(b.min_length, S, b.lower, top)
        if shortest > longest:  # S up to `last` cannot hold the longest path: one answer
            last = min(s_max, -(-b.min_length // top) - 1)
            run.record(too_short(b.min_length, b.lower, last, "minimize",
                                 interval=(b.lower, top), stages_from=S))
            S = last
            continue
        if top == b.lower and S == probed:
            continue  # the probe's own question, answered already
        hint = upper if run.best is None else None
        if run.best is not None:  # usually infeasible: first the question without objective
            status, schedule, _ = run.ask_range(S, (b.lower, top), feasibility=True)
            if status == "infeasible":
                continue
            if schedule is None:
                proven = False
                floor = b.lower if floor is None else min(floor, b.lower)
                continue
            top, hint = schedule.I, schedule  # a better I: minimize from it
        status, _, at = run.ask_range(S, (b.lower, top), hint=hint)
        if status not in ("optimal", "infeasible"):
            proven = False
            floor = at if floor is None else min(floor, at)
    if proven and run.best is None and upper is not None and upper.stages <= s_max:
        raise SearchBug(f"{run.solver.how} showed every I up to {upper.I} infeasible at every "
                        f"stage count, but a valid schedule has I = {upper.I} in "
                        f"{upper.stages}")
    if proven:
        run.optimal = run.best is not None
        run.lower = run.best.I if run.best else b.i_upper + 1
    else:
        run.lower = max(b.lower, floor if floor is not None else b.lower)


def algorithm_1(run: Run) -> None:
    """The Twill paper's Algorithm 1: per I, phase 1 (an optimal modulo schedule without the
    warp constraints) fixes the stage count; phase 2 tries only it, seeded with that schedule
    (a warm start) and its length.  Not a proof of optimality: a smaller I may be feasible at
    a stage count phase 1 did not pick."""
    b, s_max = run.bounds, run.max_stages
    modulo = [c for c in run.cons if c.name in MODULO_ONLY]
    for I in range(first_interval(run, "modulo"), b.i_upper + 1):  # noqa: E741
        seed = None
        for S in range(first_stage(run, I, "modulo"), s_max + 1):
            _, seed = run.ask(I, S, modulo, "modulo", b.min_length)
            if seed is not None:
                break
        if seed is None:
            continue
        length = seed.L
        S = math.ceil(length / I)
        _, schedule = run.ask(I, S, run.cons, "seeded", length, hint=seed)
        if schedule is not None:  # `ask` has kept it as run.best
            run.notes.append(f"Algorithm 1: phase 1 length {length} fixed {S} stage(s) at I={I}")
            return
