"""The whole job of `warpweave solve`: a model (a file or a library kernel), cost normalization
when cycle counts are large, the optimal search, and the answer mapped back to raw cycles and
verified there, on the model as given (DESIGN section 3, "Cost normalization").

Streaming ops (Twill paper section 5.3, `core.streaming`) are solved at their real latency
unless `Options.streaming` asks for the zero-latency relaxation: `bound` solves the relaxation
first and carries its proven lower bound on I into the search of the model as given (same
normalization, same stage bound); `paper` answers with the relaxation's schedule, the paper's
letter, checked on the model as given and labelled: optimal for the model as given only when
it is valid there (then it is: the relaxation has every schedule of the model as given).

Data flows one way: model -> normalize -> [relax streaming] -> search -> denormalize -> verify
(raw, the model as given).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from warpweave import defaults, limits
from warpweave.core.bounds import Bounds, bounds
from warpweave.core.constraints import Constraint, constraint_set
from warpweave.core.formats import STDIN, load_model, schedule_report
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.core.streaming import StreamingOp, apply_streaming
from warpweave.core.verify import Violation
from warpweave.errors import InputError
from warpweave.machines.normalize import Normalized, by_unit, choose_unit, normalize
from warpweave.scale.method import choose as choose_method
from warpweave.scale.method import run_method, to_outcome
from warpweave.scale.result import Listener, ScaleResult, gap
from warpweave.search import Attempt, Outcome, check_limits, choose, search

# The defaults live in warpweave.defaults (the command line's parser reads them too).
DEFAULT_ENCODING = defaults.ENCODING
SWEEP_BACKEND, MINIMIZE_BACKEND = defaults.SWEEP_BACKEND, defaults.MINIMIZE_BACKEND
# Above this lower bound on I (in cycles), `auto` normalizes to about RESOLUTION units
# (machines.normalize.choose_unit picks the unit that rounds the bound least, and a finer one
# or none when that would raise the bound more than MAX_INFLATION times).
AUTO_THRESHOLD, RESOLUTION = 128, 64
# The heuristic's time before a minimize search (its schedule bounds I and starts the search).
HEURISTIC_SECONDS = 2.0
# The lns, gaus and heuristic methods normalize only above this lower bound (cycles).
SCALABLE_RAW_UP_TO = 512
# Searches after the first whose answer's plan needs more memory than a capacity (`fit_plan`).
PLAN_ROUNDS = 3


@attrs.frozen
class Options:
    """What `solve` may be told (the command-line options of `warpweave solve`)."""

    backend: str = defaults.BACKEND  # auto: cpsat for the minimize search, sat for the sweep
    encoding: str = defaults.ENCODING
    search: str = defaults.SEARCH    # auto: minimize if the encoding takes I as a variable
    without: tuple[str, ...] = ()
    max_stages: int | None = None
    time_limit: float | None = None
    solve_limit: float | None = None
    paper_search: bool = False
    tie_breakers: tuple[str, ...] = ()
    seed: int = defaults.SEED
    streaming: str = defaults.STREAMING  # given | bound | paper: the relaxation (module doc)
    normalize: str = defaults.NORMALIZE  # auto | off | unit=K | paper=U
    bug_dir: Path | None = None  # where a solve the verifier rejects is saved (default: .)
    isolate: bool = True      # each solver call in a child process (tests turn it off: faster)
    semantics: str = defaults.SEMANTICS  # loop (every trip count) | paper-q (Q_S only)
    method: str = defaults.METHOD  # exact | lns | gaus | heuristic | auto (scale.method.choose)
    plan: bool = True  # the answer's plan (emit's buffers) must fit each memory (`fit_plan`)


@attrs.frozen
class Relaxation:
    """The streaming relaxation a solve used: the ops it gave zero latency (with their real
    latency), how its answer was used (`mode`), and what its own search showed."""

    mode: str                          # bound | paper
    ops: tuple[StreamingOp, ...]
    outcome: Outcome                   # the search on the relaxed model (normalized, if it was)

    def to_dict(self) -> dict:
        """Its fields in the `streaming` key of `solve --json` (I and the bound in the units the
        search used, as `scale` gives them)."""
        o = self.outcome
        return {"mode": self.mode, "ops": [{"op": x.op, "latency": x.latency} for x in self.ops],
                "assumed": "these ops at zero latency: their out-edges at delay 0, the op "
                           "only as long as it holds a unit",
                "status": o.status, "lower_bound": o.lower_bound,
                "I": o.schedule.I if o.schedule else None, "seconds": round(o.seconds, 3)}


@attrs.frozen
class Refit:
    """A valid schedule whose plan - the rings `emit` lays out at fixed places in each memory -
    needs more than a capacity, and how the next search's model was made to account for it:
    first each anti-dependent reader holds the value it reads until its order edge lets the
    slot be refilled (`holds`, the edges given a hold: what the plan keeps busy, where rule 4
    frees the value at the reader's issue), then each such memory less the excess
    (`capacities`: rule 5 bounds the footprint live at once, not where it sits)."""

    I: int  # noqa: E741
    L: int
    over: tuple[tuple[str, int, int], ...]        # (memory, allocated, capacity)
    optimal: bool                                 # the schedule was proven optimal
    lower_bound: int                              # raw cycles: no valid I below it
    holds: tuple[str, ...] = ()                   # edges "src->dst" given a hold next
    capacities: tuple[tuple[str, int], ...] = ()  # (memory, capacity searched next), if less

    def to_dict(self) -> dict:
        return {"I": self.I, "L": self.L, "optimal": self.optimal,
                "lower_bound": self.lower_bound,
                "over": [{"memory": m, "allocated": a, "capacity": c} for m, a, c in self.over],
                "next_holds": list(self.holds), "next_capacities": dict(self.capacities)}

    def __str__(self) -> str:
        over = ", ".join(f"{m} {a} > {c}" for m, a, c in self.over)
        what = "the optimum" if self.optimal else "the schedule found"
        if self.holds:
            then = (f"searched again with {len(self.holds)} reader(s) holding their tile "
                    f"until done, as the plan keeps it ({', '.join(self.holds)})")
        else:
            then = "searched again with " + ", ".join(f"{m} {c}" for m, c in self.capacities)
        return f"{what} (I = {self.I}, L = {self.L}) has no plan within {over}; {then}"


@attrs.frozen
class Run:
    """A solve: the model as given, what was solved, the search's outcome, and the raw answer."""

    raw: Model                        # as given (what `schedule` is verified on)
    model: Model                      # what the search solved (normalized, relaxed, if it was)
    relaxation: Relaxation | None
    normalized: Normalized | None
    outcome: Outcome
    schedule: Schedule | None         # in raw cycles
    raw_violations: tuple[Violation, ...]  # the schedule on the model as given, in raw cycles
    comparison: str | None = None     # Algorithm 1 against the full search
    raw_bounds: Bounds | None = None  # of `raw`, in raw cycles
    semantics: str = "loop"           # what "valid" meant (DESIGN section 3)
    method: str = "exact"             # which scheduler answered (scale.method)
    scaled: ScaleResult | None = None  # a scalable method's answer (its history, its bound)
    # Schedules whose plan did not fit, before this answer (`fit_plan`): the answer then solves
    # the model with less memory, and the first one's lower bound is the model's.
    refits: tuple[Refit, ...] = ()
    plan_fits: bool | None = None  # checked (`fit_plan`): the answer's plan fits each memory

    @property
    def lower_bound(self) -> int:
        """No valid I below this for the model as given, in raw cycles: the proven bound, at
        least the raw model's max(ResMII, RecMII) (only that when the proof is in normalized
        units, which says nothing in cycles; a streaming relaxation's proof holds for the model
        as given too); after a refit, the first search's."""
        if self.refits:
            return self.refits[0].lower_bound
        raw = self.raw_bounds.lower if self.raw_bounds is not None else 0
        if self.normalized is not None:
            return raw
        return max(self.outcome.lower_bound, raw)

    @property
    def raw_interval(self) -> int:
        """I in raw cycles: the answer's, or the proven lower bound's when there is none."""
        if self.schedule is not None:
            return self.schedule.I
        scale = self.normalized.scale if self.normalized else 1
        return self.outcome.lower_bound * scale

    @property
    def raw_lower_bound(self) -> int:
        """max(ResMII, RecMII) of the model as given, in raw cycles: no I below it is feasible
        for any stage count."""
        return self._raw_bounds().lower

    def _raw_bounds(self) -> Bounds:
        """The bounds of the model as given (not the relaxed or normalized one searched)."""
        if self.raw_bounds is not None:
            return self.raw_bounds
        if self.normalized is None and self.relaxation is None:
            return self.outcome.bounds
        return bounds(self.raw, set(self.outcome.constraints))

    def claim(self) -> dict:
        """What was proven, stated honestly (DESIGN section 3, "Search space and optimality"):
        `optimal` - I and L minimal in raw cycles (unqualified); `I_optimal` - I minimal in raw
        cycles; `proven_in` - "cycles", or "units of K cycles" when the proof holds for the
        rounded-up costs only (a raw schedule with a smaller I may exist, unless I is the raw
        lower bound), or None; `stage_bound_needed` - whether some I below the answer was shown
        infeasible only for stage counts up to `stage_bound` (every I below the lower bound is
        infeasible for every stage count)."""
        o, s = self.outcome, self.schedule
        proven = o.optimal and s is not None and not self.raw_violations and not self.refits
        n = self.normalized
        # At a proven lower bound in raw cycles (max(ResMII, RecMII), or a proof in cycles, or
        # the first search's before a refit) I is minimal whoever found it (a scalable method,
        # a search stopped at its limit, a search on a model refit for the plan).
        at_bound = s is not None and s.I == self.lower_bound
        I_optimal = (proven and n is None) or (at_bound and not self.raw_violations)
        raw_min_length = self._raw_bounds().min_length
        return {
            "optimal": proven and I_optimal and (n is None or s.L == raw_min_length),
            "I_optimal": I_optimal,
            "proven_in": None if not proven else
            ("cycles" if n is None else f"units of {n.scale} cycles"),
            "stage_bound": o.max_stages,
            "stage_bound_needed": s is not None and s.I != self.raw_lower_bound,
        }

    @property
    def gap(self) -> float | None:
        """(I - lower bound) / lower bound, in raw cycles (None without a schedule valid for
        the model as given)."""
        if self.schedule is None or self.raw_violations:
            return None
        return gap(self.schedule.I, self.lower_bound)

    @property
    def exit_status(self) -> int:
        """0 an optimal answer (or, with --paper-search, Algorithm 1's; with a scalable method,
        one whose method ended on its own: not cut by the time limit or Ctrl-C; after
        `fit_plan`, the best found whose plan fits), verified on the model as given; 1 none
        exists; 3 a limit was reached (a Ctrl-C included) before the answer was proven, the
        check on the model as given (raw cycles, real latencies) failed, or the answer's plan
        does not fit."""
        cut = self.outcome.interrupted or (self.scaled is not None and self.scaled.timed_out)
        anytime = self.method != "exact" and not cut
        if self.plan_fits is False:
            return 3  # a valid answer whose plan emit cannot fit: the rounds or time ran out
        if self.schedule is not None and not self.raw_violations and \
                (self.outcome.optimal or self.comparison is not None or anytime):
            return 0
        return 1 if self.outcome.status == "infeasible" else 3


def load_target(target: str, machine: str | None = None, params: Sequence[str] = ()) -> Model:
    """A model file, or a library kernel built on `machine` with `key=value` params."""
    from warpweave.kernels import kernel_spec, parse_params
    if Path(target).suffix in (".json", ".toml") or Path(target).exists() or target == STDIN:
        if machine or params:
            raise InputError("--machine and key=value parameters are for library kernels, "
                             "not model files", value=target)
        return load_model(target)
    spec = kernel_spec(target)
    return spec.build(machine, **parse_params(spec, params))


def normalization(model: Model, how: str, lower: int | None = None) -> Normalized | None:
    """Apply the normalization `how` asks for: auto | units | off | unit=K | paper=U (`lower`:
    the smallest I the search can reach, if known; default the model's lower bound on I).
    `units` (and `auto` where it normalizes: the heuristic, the scalable methods) rounds costs up
    to units of about lower/RESOLUTION cycles when the lower bound exceeds AUTO_THRESHOLD; the
    exact search under `auto` is in raw cycles (`_solve_once`)."""
    return normalized_as(model, how, lower)[0]


def normalized_as(model: Model, how: str, lower: int | None = None
                  ) -> tuple[Normalized | None, str | None]:
    """`normalization`, and for `auto` and `units` a note when it kept raw cycles or a finer
    unit than its resolution because rounding would raise the lower bound too much
    (`choose_unit`)."""
    if how == "off":
        return None, None
    kind, _, value = how.partition("=")
    if kind in ("auto", "units"):
        lower = bounds(model).lower if lower is None else lower
        if lower <= AUTO_THRESHOLD:
            return None, None
        unit, why = choose_unit(model, lower, RESOLUTION)
        return (None if why and unit == 1 else by_unit(model, unit)), why
    if kind in ("unit", "paper") and value.isdigit() and int(value) >= 1:
        return (by_unit(model, int(value)) if kind == "unit" else normalize(model, int(value)),
                None)
    raise InputError("expected auto, units, off, unit=K (cycles per unit) or paper=U (the "
                     "paper's ILP with bound U)", ("--normalize",), how)


def run_solve(model: Model, options: Options = Options(),
              progress: Callable[[Attempt], None] | None = None,
              extra: Sequence[Constraint] = (), improvements: Listener | None = None) -> Run:
    """Solve `model` as `options` say; the answer is verified in raw cycles on the model as
    given.  `extra` constraints (e.g. a pinned role from `kernels.roles`) join the registered
    ones.  `options.method` picks the scheduler (`scale.method`); a scalable one reports each
    better schedule or bound to `improvements` as it finds it.

    `options.time_limit` bounds the whole run, not only the search: the bounds, normalization and
    the streaming relaxation's search check the same deadline (`warpweave.limits`), and Ctrl-C is
    latched for the run.  Stopped before the search could start, the Run has no schedule, the
    bounds known on the raw model, and a note saying where it stopped.

    With `options.plan` (the default) the answer's plan must fit as well (`fit_plan`): what
    `emit` allocates for it is what was proven to fit."""
    check_limits(options.time_limit, options.solve_limit, options.max_stages)
    with limits.within(options.time_limit), limits.latch_interrupts():
        run = _solve_once(model, options, progress, extra, improvements)
        if not options.plan:
            return run
        return fit_plan(run, lambda m, proven: _solve_once(m, options, progress, extra,
                                                            improvements, proven))


def _solve_once(model: Model, options: Options, progress: Callable[[Attempt], None] | None,
                extra: Sequence[Constraint], improvements: Listener | None,
                proven: int = 0) -> Run:
    """One solve of `model` as `run_solve` describes it, without the plan's check; `proven`:
    no I below it (raw cycles) is feasible, shown by an earlier search of a model with every
    schedule this one has (the exact search starts there)."""
    if options.streaming not in defaults.STREAMING_MODES:
        raise InputError(f"expected one of {', '.join(defaults.STREAMING_MODES)}", ("--streaming",),
                         options.streaming)
    started = time.perf_counter()
    cons = [*constraint_set(without=options.without), *extra]
    backend, strategy = choose(options.backend, options.encoding, options.search,
                               options.paper_search)
    chosen = _chosen(options, strategy, backend)

    def go(m: Model, paper: bool, max_stages: int | None, proven: int = 0) -> Outcome:
        upper = None if paper or strategy != "minimize" else heuristic_bound(m, cons, options)
        return search(m, backend=backend, encoding=options.encoding, upper=upper,
                      strategy="sweep" if paper else strategy,
                      constraints=cons, max_stages=max_stages,
                      time_limit=options.time_limit, solve_limit=options.solve_limit,
                      paper=paper, tie_breakers=options.tie_breakers, seed=options.seed,
                      progress=progress, bug_dir=options.bug_dir, isolate=options.isolate,
                      semantics=options.semantics, proven=proven)

    with limits.within(options.time_limit), limits.latch_interrupts():
        known: Bounds | None = None
        relaxation: Relaxation | None = None
        stage = "computing the bounds"
        try:
            known = bounds(model, {c.name for c in cons})
            stage = "normalizing costs"
            # The I the search can reach: at least the lower bound, and at least what holds the
            # longest path within the stage bound (a long latency over a small bound on I).
            s_max = known.default_max_stages() if options.max_stages is None \
                else options.max_stages
            reach = max(known.lower, -(-known.min_length // s_max))
            method, chose = choose_method(model, options.method)
            # `auto`: the exact search in raw cycles where the problem does not grow with them
            # (an encoding without literals per cycle, a backend with integers: its answer is
            # then optimal in cycles, and measured side by side it costs about 1.1-1.6x the
            # time of 16-38-cycle units, which lose real cycles: benchmarks/README.md), else in
            # units; the scalable methods (tables of I slots) in raw cycles up to
            # SCALABLE_RAW_UP_TO, in units above.
            raw = options.normalize == "auto" and (
                _raw_exact(options.encoding, backend) if method == "exact"
                else known.lower <= SCALABLE_RAW_UP_TO)
            norm, unit_note = (None, None) if raw else \
                normalized_as(model, options.normalize, reach)
            solved = norm.model if norm else model
            # A raw bound in units: a schedule in units is one in cycles, scale times longer.
            carried = -(-proven // norm.scale) if norm else proven
            scaled = None
            relaxed, changed = apply_streaming(solved) \
                if options.streaming != "given" and method == "exact" else (solved, [])
            if method != "exact":
                scaled = run_method(solved, method, cons,
                                    time_limit=limits.remaining(), seed=options.seed,
                                    max_stages=options.max_stages,
                                    backend=backend if options.backend != "auto" else "cpsat",
                                    encoding=options.encoding,
                                    solve_limit=options.solve_limit, listener=improvements,
                                    semantics=options.semantics)
                outcome = to_outcome(scaled, cons, options.max_stages or
                                     scaled.bounds.default_max_stages(), backend,
                                     options.encoding)
                chosen = (chose,) if chose else ()
            elif changed:
                # One stage bound for both searches, the model as given's: the relaxation's
                # proof then covers every case the second search would otherwise rule out.
                s_max = options.max_stages or \
                    bounds(solved, {c.name for c in cons}).default_max_stages()
                stage = "solving the streaming relaxation"
                first = go(relaxed, options.paper_search, s_max)
                relaxation = Relaxation(options.streaming, tuple(changed), first)
                if options.streaming == "paper":
                    outcome, solved = first, relaxed
                else:
                    stage = "solving the model as given from the relaxation's bound"
                    outcome = _carried(first, go(solved, options.paper_search, s_max,
                                                 max(first.lower_bound, carried)))
            else:
                outcome = go(solved, options.paper_search, options.max_stages, carried)
        except (limits.TimeUp, KeyboardInterrupt) as stop:
            return _stopped(model, cons, known, backend, options, stop, stage, started, chosen)
        outcome = attrs.evolve(outcome, notes=(*chosen, *([unit_note] if unit_note else []),
                                           *outcome.notes, *_pick(outcome, method, options)))
        comparison = None
        if options.paper_search and outcome.schedule is not None and not limits.interrupted():
            proven = relaxation.outcome.lower_bound \
                if relaxation and relaxation.mode == "bound" else 0
            try:
                comparison = _compare(outcome, go(solved, False, outcome.max_stages, proven))
            except (limits.TimeUp, KeyboardInterrupt) as stop:  # in its bounds
                comparison = f"the full search was stopped: {stop or 'interrupted'}"
    schedule = outcome.schedule
    violations: tuple[Violation, ...] = ()
    if schedule is not None and (norm is not None or relaxation is not None):
        schedule = norm.denormalize(schedule) if norm else schedule
        violations = tuple(v for c in cons
                           for v in c.check(model, schedule, semantics=options.semantics))
    return Run(model, solved, relaxation, norm, outcome, schedule, violations, comparison,
               known, options.semantics, method, scaled)


def _raw_exact(encoding: str, backend: str) -> bool:
    """Does `auto` keep the exact search in raw cycles: an encoding whose size does not grow
    with cycle counts (`cycle_free`: the integer encoding) on a backend with native integers
    (the SAT backends order-encode them, one literal per value)?"""
    from warpweave.backends.base import INTEGERS
    from warpweave.core.registry import ENCODINGS
    from warpweave.core.registry import backend as make_backend
    return getattr(ENCODINGS.get(encoding), "cycle_free", False) and \
        INTEGERS in make_backend(backend).capabilities


def fit_plan(run: Run, solve: Callable[[Model, int], Run]) -> Run:
    """`run`, or, where the plan `emit` would build for its answer needs more of a memory than
    its capacity, the answer of `solve` on a model that accounts for what the plan needs
    (DESIGN section 6), at most PLAN_ROUNDS times while time is left: first with each
    anti-dependent reader holding its tile until its order edge lets the slot be refilled
    (`holding`; a model that states these holds, as the kernels' `reads=completion` does, needs
    no such round), then with each such memory's capacity less the excess (the rings are laid
    out at fixed places, which fragments: fa-bwd on B200 with two sub-tiles has a live peak of
    164864 bytes whose rings need 197632, docs/codegen.md).  The answer then is a valid
    schedule whose plan fits, not proven optimal: the first search's lower bound is the
    model's (`Run.lower_bound`), and `Run.refits` says what was done.  When no round (or no
    time) is left, or a round finds nothing, the last schedule is the answer and
    `Run.plan_fits` is False: `emit` names what it exceeds.  Each round's model has only
    schedules the previous one has (a hold only lengthens lives, a capacity only shrinks), so
    its search starts from the previous one's lower bound (`solve(model, proven)`)."""
    from warpweave.codegen.buffers import plan
    raw, refits, searched = run.raw, [], run.raw
    fits = None
    while run.schedule is not None and not run.raw_violations and not limits.interrupted():
        s = run.schedule
        try:
            over = [(u.memory, u.allocated, u.capacity) for u in plan(raw, s).memory
                    if u.exceeds]
        except (limits.TimeUp, KeyboardInterrupt):  # no time left to lay the plan out
            run = attrs.evolve(run, outcome=attrs.evolve(run.outcome, notes=(
                *run.outcome.notes, "the plan emit builds was not checked: no time left")))
            fits = None
            break
        fits = not over
        if fits:
            break
        held, holds = holding(searched)
        caps: tuple[tuple[str, int], ...] = ()
        if not holds:
            left = {m.name: m.capacity for m in searched.machine.memories}
            caps = tuple((m, max(0, left[m] - (allocated - capacity)))
                         for m, allocated, capacity in over)
            held = attrs.evolve(searched, machine=attrs.evolve(searched.machine, memories=tuple(
                attrs.evolve(m, capacity=dict(caps).get(m.name, m.capacity))
                for m in searched.machine.memories)))
        refits.append(Refit(s.I, s.L, tuple(over), not refits and run.outcome.optimal,
                            refits[0].lower_bound if refits else run.lower_bound, holds, caps))
        left_s = limits.remaining()
        if len(refits) > PLAN_ROUNDS or (left_s is not None and left_s <= 0):
            break  # the answer keeps its schedule; `plan_fits` says it does not fit
        tighter = solve(held, run.lower_bound)
        if tighter.schedule is None or tighter.raw_violations:
            break  # none found (or no time): the last schedule stays
        run, searched = tighter, held
    fits = fits if run.schedule is not None and not run.raw_violations else None
    if not refits:
        return attrs.evolve(run, plan_fits=fits)
    return attrs.evolve(run, raw=raw, refits=tuple(refits), plan_fits=fits,
                        raw_bounds=bounds(raw, set(run.outcome.constraints)))


def holding(model: Model) -> tuple[Model, tuple[str, ...]]:
    """`model` with each data edge p -> c whose reader c is anti-dependent on p (an order edge
    c -> p: p's slot is refilled only `delay` after c issues) holding p's value that long (at
    most c's cycles, as a hold may), and the edges changed ("p->c")."""
    from warpweave.codegen.buffers import anti_dependences
    until = {(a.src, a.dst): a.delay for a in anti_dependences(model)}
    edges, changed = [], []
    for e in model.edges:
        delay = until.get((e.dst, e.src))
        hold = min(delay, model.op(e.dst).cycles) if e.is_data and delay is not None else 0
        if hold > e.hold:
            e = attrs.evolve(e, hold=hold)
            changed.append(f"{e.src}->{e.dst}")
        edges.append(e)
    return attrs.evolve(model, edges=edges), tuple(changed)


def heuristic_bound(model: Model, cons: Sequence[Constraint], options: Options
                    ) -> Schedule | None:
    """The heuristic's schedule of `model` within HEURISTIC_SECONDS (an upper bound on I for
    the minimize search, and its warm start), or None.  In raw cycles it runs on the model
    normalized as `auto` would (far fewer I to try) and its answer is mapped back; the search
    verifies it before using it."""
    from warpweave.core.heuristic import heuristic_schedule
    from warpweave.core.registry import CONSTRAINTS
    names = set(CONSTRAINTS.names())
    seconds = HEURISTIC_SECONDS
    if limits.remaining() is not None:
        seconds = min(seconds, 0.1 * limits.remaining())
    norm = normalization(model, "auto")
    found = heuristic_schedule(norm.model if norm else model, max_stages=options.max_stages,
                               rules=[c.name for c in cons if c.name in names],
                               seed=options.seed, time_limit=seconds,
                               semantics=options.semantics).schedule
    return norm.denormalize(found) if found is not None and norm is not None else found


def _carried(first: Outcome, second: Outcome) -> Outcome:
    """The search of the model as given, with the relaxation's questions in its proof (each
    marked as the relaxation's: what they ruled out holds for the model as given too)."""
    mine = tuple(attrs.evolve(a, how=f"{a.how}, streaming relaxation") for a in first.attempts)
    return attrs.evolve(second, attempts=mine + second.attempts,
                        seconds=first.seconds + second.seconds,
                        interrupted=first.interrupted or second.interrupted,
                        notes=first.notes + second.notes)


PICK_NOTE = ("one optimum among possibly many (the solver's pick); --tie-break groups "
             "--tie-break cross_edges gives a canonical one")


def _pick(outcome: Outcome, method: str, options: Options) -> tuple[str, ...]:
    """The note that an optimum's roles are the solver's pick: said when the exact search's
    optimum uses more than one warp group and no tie-breaker chose among the optima."""
    s = outcome.schedule
    if method != "exact" or options.tie_breakers or not outcome.optimal or s is None or \
            len(set(s.group.values())) < 2:
        return ()
    return (PICK_NOTE,)


def _chosen(options: Options, strategy: str, backend: str) -> tuple[str, ...]:
    """What `auto` chose when it is not the default minimize search on CP-SAT, said aloud."""
    if options.search == "auto" and strategy == "sweep" and not options.paper_search:
        return (f"--encoding {options.encoding} takes I fixed: the search sweeps I"
                + (f" on {backend} (--backend chooses another)"
                   if options.backend == "auto" else ""),)
    if options.backend == "auto" and strategy == "sweep":
        return (f"the sweep search runs on {backend} (--backend chooses another)",)
    return ()


def _stopped(model: Model, cons: Sequence[Constraint], known: Bounds | None, backend: str,
             options: Options, stop: BaseException, stage: str, started: float,
             chosen: tuple[str, ...]) -> Run:
    """The Run of a solve stopped (time limit or Ctrl-C) before its search could start: no
    schedule, and the bounds of the raw model - without RecMII when it was their computation
    that was stopped (ResMII and the longest path take one pass and check no deadline)."""
    b = known or bounds(model, {c.name for c in cons} - {"dependence"})
    where = stage if known else f"{stage} (the lower bound is without RecMII)"
    outcome = Outcome.stopped(model, b, options.max_stages, backend, options.encoding, cons,
                              time.perf_counter() - started, stop, where, chosen)
    return Run(model, model, None, None, outcome, None, (), raw_bounds=b,
               semantics=options.semantics)


def _compare(paper: Outcome, full: Outcome) -> str:
    a, b = paper.schedule, full.schedule
    if b is None:
        return f"the full search found no schedule ({full.status})"
    if (a.I, a.L) == (b.I, b.L):
        return f"the full search agrees: I={b.I}, L={b.L} ({full.status})"
    return (f"the full search differs: I={b.I}, L={b.L} ({full.status}) against Algorithm 1's "
            f"I={a.I}, L={a.L}")


# ---------------------------------------------------------------------------------------------
# Reports


def report(run: Run, buffers: dict[str, int] | None = None) -> dict:
    """The schedule format of DESIGN section 5 with the search's extra fields, every figure in
    raw cycles.  A search in normalized units is reported beside it, under `scale`: its I, L,
    start times, lower bound and proof in units (a proof about the rounded model, which says
    nothing in raw cycles); the top-level `lower_bound` is then the raw model's max(ResMII,
    RecMII), and `optimal` means optimal in raw cycles (`Run.claim`: `proven_in` says "units of
    K cycles" when the proof holds for the rounded costs only)."""
    o, s, n = run.outcome, run.schedule, run.normalized
    extra: dict = {**run.claim(), "semantics": run.semantics,
                   "status": "invalid" if run.raw_violations else
                   "feasible" if run.refits and s is not None else o.status,
                   "lower_bound": run.lower_bound, "backend": o.backend,
                   "encoding": o.encoding, "seconds": round(o.seconds, 3),
                   "constraints": list(o.constraints), "method": run.method,
                   "gap": None if run.gap is None else round(run.gap, 4),
                   "notes": list(o.notes) + ([run.comparison] if run.comparison else [])}
    if run.scaled is not None:
        extra["lower_bound_how"] = list(run.scaled.lower_how)
        extra["history"] = [x.to_dict() for x in run.scaled.history]
    if n is None:
        extra["proof"] = o.proof()
    if run.relaxation is not None:
        extra["streaming"] = run.relaxation.to_dict()
    if run.refits:
        extra["plan_refits"] = [r.to_dict() for r in run.refits]
    if run.raw_violations:  # on the model as given, in raw cycles
        extra["violations"] = [v.to_dict() for v in run.raw_violations]
    if n is not None:
        extra["scale"] = {**n.to_dict(), "cycles_per_unit": n.scale,
                          "I": o.schedule.I if o.schedule else None,
                          "L": o.schedule.L if o.schedule else None,
                          "start": dict(o.schedule.start) if o.schedule else None,
                          "lower_bound": o.lower_bound, "proof": o.proof(),
                          "raw_valid": not run.raw_violations,
                          "raw_violations": [v.to_dict() for v in run.raw_violations]}
    return schedule_report(run.raw.name, s, extra, buffers)
