"""The Python API: everything the `warpweave` command does, as functions returning objects.

The command line is a thin layer over these functions (same defaults: they come from
`pipeline.Options`), so a script, a notebook or a compiler pass gets exactly what a user of the
command gets::

    import warpweave as ww
    model = ww.kernel("fa3-fwd", "h100")           # or ww.load_model("m.json" | {...})
    result = ww.solve(model)                        # verified; result.optimal, result.I, ...
    ww.verify(model, result.schedule)               # [] : no violation
    ww.export_schedule(model, result.schedule, to="triton")

Inputs may be objects, file paths, or parsed documents (dicts) alike.  Bad input raises
`InputError` (one line naming the file, key path and value); library code never prints.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import attrs

from warpweave import defaults, limits
from warpweave.core.bounds import Bounds
from warpweave.core.bounds import bounds as _bounds
from warpweave.core.formats import (
    dumps,
    model_from_dict,
    read_document,
    read_text,
    schedule_from_dict,
)
from warpweave.core.formats import load_model as _load_model_file
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.core.verify import Violation
from warpweave.errors import InputError
from warpweave.outputs import file_stem, output_dir, output_file, replacing, write_into
from warpweave.pipeline import Options, Relaxation, Run, load_target, report, run_solve
from warpweave.scale.result import Improvement
from warpweave.search import Attempt

Source = str | os.PathLike | Mapping
_DEFAULT = Options()

__all__ = [
    "CrossCheck", "Emitted", "HeuristicRun", "InvalidSchedule", "Lowered", "Result",
    "ScheduleView", "Simulation", "Verdict", "bounds", "cross_check", "draw", "emit", "export_ir",
    "export_schedule", "heuristic", "import_graph", "kernel", "list_backends", "list_constraints",
    "list_kernels", "list_machines", "load_model", "load_schedule", "lower", "ring_depths",
    "schedule_for", "simulate", "solve", "sweep", "sweep_plot", "target", "verdict", "verify",
    "view",
]


# ---------------------------------------------------------------------------------------------
# Models and schedules


def load_model(source: Source) -> Model:
    """A model from a file (.json or .toml), a parsed document, or a `Model` (returned as is)."""
    if isinstance(source, Model):
        return source
    if isinstance(source, Mapping):
        return model_from_dict(source)
    return _load_model_file(source)


def _document(source: Source) -> tuple[Mapping, str | None]:
    """A parsed document and the file it came from (None for a dict)."""
    if isinstance(source, Mapping):
        return source, None
    return read_document(source), os.fspath(source)


RELAXED_NOTE = ("this schedule was solved with streaming ops at zero latency (its `streaming` "
                "key); it is checked on the model as given, at their real latency")


def _with_schedule(model: Source, schedule: Source | Schedule
                   ) -> tuple[Model, Schedule, str | None]:
    """The model, the schedule, and a note when the document says it was solved on the
    streaming relaxation: the schedule is read for the model as given all the same (nothing in
    a schedule file relaxes the model).  The document is read once (it may be standard
    input)."""
    m = load_model(model)
    if isinstance(schedule, Schedule):
        return m, schedule, None
    doc, path = _document(schedule)
    try:
        return m, schedule_from_dict(doc, m), RELAXED_NOTE if doc.get("streaming") else None
    except InputError as exc:
        raise (exc.with_file(path) if path else exc) from None


def load_schedule(source: Source | Schedule, model: Source) -> Schedule:
    """A schedule of `model` from a file, a parsed document, or a `Schedule` (returned as is),
    for the model as given."""
    return _with_schedule(model, source)[1]


def target(name: str, machine: str | None = None, params: Sequence[str] = ()) -> Model:
    """What a command's TARGET names: a model file, or a library kernel built on `machine`
    with command-line `key=value` params."""
    return load_target(name, machine, params)


def kernel(name: str, machine: str | None = None, **params: Any) -> Model:
    """Library kernel `name` built on `machine` (default: its first) with typed `params`
    (`ww.kernel("gemm", "b200", k_steps=4)`); strings are parsed as on the command line."""
    from warpweave.kernels import build
    return build(name, machine, **params)


def bounds(model: Source) -> Bounds:
    """ResMII, exact RecMII with its critical cycle, and the search limits."""
    return _bounds(load_model(model))


# ---------------------------------------------------------------------------------------------
# Solving


@attrs.frozen
class Result:
    """A solve: the verified schedule (raw cycles), whether it is proven optimal, the bounds,
    the proof (every question asked and what it ruled out) and timings."""

    run: Run
    buffers: Mapping[str, int] | None

    @property
    def model(self) -> Model:
        """The model as given: what the schedule is verified on."""
        return self.run.raw

    @property
    def schedule(self) -> Schedule | None:
        return self.run.schedule

    @property
    def I(self) -> int | None:  # noqa: E743
        """The initiation interval in cycles (None without a schedule)."""
        return self.schedule.I if self.schedule is not None else None

    @property
    def L(self) -> int | None:
        return self.schedule.L if self.schedule is not None else None

    @property
    def optimal(self) -> bool:
        """I and L proven minimal in raw cycles (DESIGN: "optimal" unqualified means raw
        cycles); `claim` says what was proven when costs were normalized."""
        return self.run.claim()["optimal"]

    @property
    def claim(self) -> dict:
        """What was proven: `optimal`, `I_optimal` (raw cycles), `proven_in` ("cycles" or
        "units of K cycles"), `stage_bound`, `stage_bound_needed` (`pipeline.Run.claim`)."""
        return self.run.claim()

    @property
    def status(self) -> str:
        """optimal | feasible | infeasible | unknown."""
        return self.run.outcome.status

    @property
    def lower_bound(self) -> int:
        """No I below this many cycles is feasible (the proven bound, in raw cycles)."""
        scale = self.run.normalized.scale if self.run.normalized else 1
        return self.run.outcome.lower_bound * scale

    @property
    def gap(self) -> float | None:
        """(I - lower bound) / lower bound in raw cycles (None without a schedule)."""
        return self.run.gap

    @property
    def method(self) -> str:
        """The scheduler that answered: exact, lns, gaus or heuristic."""
        return self.run.method

    @property
    def bounds(self) -> Bounds:
        """The bounds of the model searched (normalized units, if it was normalized)."""
        return self.run.outcome.bounds

    @property
    def proof(self) -> list[dict]:
        """Every question asked, its answer and the cases it rules out (see `solve --json`)."""
        return self.run.outcome.proof()

    @property
    def seconds(self) -> float:
        return self.run.outcome.seconds

    @property
    def relaxation(self) -> Relaxation | None:
        """The streaming relaxation the solve used (`streaming="bound"` or `"paper"`), if any."""
        return self.run.relaxation

    @property
    def exit_status(self) -> int:
        """What `warpweave solve` exits with: 0 optimal, 1 none exists, 3 a limit reached."""
        return self.run.exit_status

    def to_dict(self) -> dict:
        """The schedule format with the search's fields: what `solve --json` prints."""
        return report(self.run, dict(self.buffers) if self.buffers is not None else None)

    def to_json(self) -> str:
        return dumps(self.to_dict())

    def view(self) -> ScheduleView:
        if self.schedule is None:
            raise InputError(f"no schedule ({self.status})", value=self.model.name)
        return ScheduleView(self.model, self.schedule)

    def _repr_html_(self) -> str:
        head = (f"<p><b>{html.escape(self.model.name)}</b>: {html.escape(self.status)}, "
                f"I = {self.I}, lower bound {self.lower_bound}, {self.seconds:.2f} s</p>")
        return head + (self.view()._repr_html_() if self.schedule is not None else "")


def solve(model: Source, *, backend: str = _DEFAULT.backend, encoding: str = _DEFAULT.encoding,
          search: str = _DEFAULT.search, without: Sequence[str] = _DEFAULT.without,
          max_stages: int | None = _DEFAULT.max_stages,
          time_limit: float | None = _DEFAULT.time_limit,
          solve_limit: float | None = _DEFAULT.solve_limit,
          paper_search: bool = _DEFAULT.paper_search,
          tie_breakers: Sequence[str] = _DEFAULT.tie_breakers, seed: int = _DEFAULT.seed,
          streaming: str = _DEFAULT.streaming, normalize: str = _DEFAULT.normalize,
          isolate: bool = _DEFAULT.isolate, semantics: str = _DEFAULT.semantics,
          method: str = _DEFAULT.method,
          progress: Callable[[Attempt], None] | None = None,
          improvements: Callable[[Improvement], None] | None = None) -> Result:
    """An optimal schedule and warp assignment of `model`, with its proof, verified in raw
    cycles; the options and their defaults are `warpweave solve`'s (`warpweave solve --help`).
    `isolate=False` runs solver calls in this process (faster for many tiny models; no hard time
    limit).  A time limit returns the best verified schedule so far with `optimal` False.
    `method` is `solve --method`: exact, lns, gaus, heuristic or auto (exact up to 60 ops, LNS
    above); a scalable method reports each better schedule or bound to `improvements`."""
    options = Options(backend=backend, encoding=encoding, search=search,
                      without=tuple(without), max_stages=max_stages, time_limit=time_limit,
                      solve_limit=solve_limit, paper_search=paper_search,
                      tie_breakers=tuple(tie_breakers), seed=seed, streaming=streaming,
                      normalize=normalize, isolate=isolate, semantics=semantics, method=method)
    with limits.within(time_limit):
        run = run_solve(load_model(model), options, progress=progress,
                        improvements=improvements)
        depths, skipped = _report_depths(run)
    if skipped:
        run = attrs.evolve(run, outcome=attrs.evolve(run.outcome,
                                                     notes=(*run.outcome.notes, skipped)))
    return Result(run, depths)


# Seconds the report's ring depths may take past the run's deadline (a run stopped by its
# time limit still reports them, in milliseconds on the kernels; on 10,000 ops they took 5 s).
REPORT_GRACE = 1.0


def _report_depths(run: Run) -> tuple[dict[str, int] | None, str | None]:
    """The ring depths of the run's schedule for its report, within the run's time limit or
    REPORT_GRACE seconds, and a note when they were not computed: None without a valid
    schedule, or when they did not fit that time (or a new Ctrl-C came)."""
    if run.schedule is None or run.raw_violations:
        return None, None
    try:
        with limits.grace(REPORT_GRACE):
            return ring_depths(run.raw, run.schedule), None
    except limits.TimeUp:
        why = f"the time limit and {REPORT_GRACE:g} s more"
    except KeyboardInterrupt:
        why = "interrupted"
    return None, f"buffer depths not computed ({why})"


def ring_depths(model: Model, schedule: Schedule) -> dict[str, int]:
    """Slots of each value's buffer, as the code generator allocates them."""
    from warpweave.codegen.buffers import plan
    return {name: b.depth for name, b in plan(model, schedule).buffers.items()}


def verify(model: Source, schedule: Source | Schedule, rules: Sequence[str] | None = None,
           semantics: str = defaults.SEMANTICS) -> list[Violation]:
    """Every violated rule with its witness (an empty list: the schedule is valid), on the
    model as given, whatever the schedule document says of how it was solved."""
    from warpweave.core.verify import verify as _verify
    m, s, _ = _with_schedule(model, schedule)
    return _verify(m, s, rules, semantics)


# ---------------------------------------------------------------------------------------------
# Sweeps


def sweep(kernel: str, machines: str | Sequence[str] | None = None,
          params: Mapping[str, Any] | None = None, *,
          store: str | os.PathLike = defaults.SWEEP_STORE, cluster: str | None = None,
          workers: int | None = None, backend: str = _DEFAULT.backend,
          encoding: str = _DEFAULT.encoding, search: str = _DEFAULT.search,
          without: Sequence[str] = _DEFAULT.without,
          max_stages: int | None = _DEFAULT.max_stages,
          time_limit: float | None = defaults.SWEEP_TIME_LIMIT,
          solve_limit: float | None = _DEFAULT.solve_limit,
          tie_breakers: Sequence[str] = _DEFAULT.tie_breakers, seed: int = _DEFAULT.seed,
          streaming: str = _DEFAULT.streaming, normalize: str = _DEFAULT.normalize,
          semantics: str = _DEFAULT.semantics, method: str = _DEFAULT.method,
          progress: Callable[[int, int, Any], None] | None = None) -> Any:
    """Library kernel `kernel` solved over the grid of `params` ({name: value or list of
    values}, e.g. `{"tile_m": [64, 80, 128], "tile_n": [64, 128]}`) on each of `machines` (a
    list or comma-separated text; default the kernel's first), each point as `solve` would
    (verified), ranked by predicted throughput (`warpweave.sweeps.throughput`).  Answers are
    kept in the SQLite file `store` and reused by the next sweep with the same model and solver
    configuration; points run on `workers` local processes (default: one per core), or on the
    Dask cluster whose scheduler is at `cluster`.  `time_limit` is per point.  Returns a
    `warpweave.sweeps.run.Sweep`; Ctrl-C returns what was answered, `interrupted` set."""
    from warpweave.sweeps.run import run_sweep
    options = dict(backend=backend, encoding=encoding, search=search, without=list(without),
                   max_stages=max_stages, time_limit=time_limit, solve_limit=solve_limit,
                   tie_breakers=list(tie_breakers), seed=seed, streaming=streaming,
                   normalize=normalize, semantics=semantics, method=method)
    return run_sweep(kernel, machines, params, store=store, cluster=cluster, workers=workers,
                     progress=progress, **options)


def sweep_plot(result: Any, out: str | os.PathLike) -> str:
    """The Pareto front of a sweep (throughput against registers and shared memory) written to
    `out` (.svg, or .png with matplotlib); returns how it was drawn."""
    from warpweave.sweeps.plot import plot
    return plot(result, out)


# ---------------------------------------------------------------------------------------------
# A fast answer without a proof


@attrs.frozen
class HeuristicRun:
    """A heuristic run mapped back to raw cycles: the result (its schedule verified there), the
    buffers, and the normalization note."""

    result: Any                      # core.heuristic.HeuristicResult, in raw cycles
    buffers: Mapping[str, int] | None
    note: str | None                 # how costs were normalized, if they were

    @property
    def schedule(self) -> Schedule | None:
        return self.result.schedule

    @property
    def gap(self) -> float | None:
        """(I - lower bound) / lower bound in raw cycles (None without a schedule), as
        `solve --method heuristic` reports it."""
        from warpweave.scale.result import gap
        s = self.result.schedule
        return None if s is None else gap(s.I, self.result.lower_bound)

    def to_dict(self) -> dict:
        """What `heuristic --json` prints: the schedule format, never optimal."""
        from warpweave.core.formats import schedule_report
        r, s = self.result, self.result.schedule
        extra = {"optimal": False, "status": "feasible" if s else "unknown",
                 "lower_bound": r.lower_bound,
                 "gap": None if self.gap is None else round(self.gap, 4),
                 "seconds": round(r.seconds, 3),
                 "constraints": list(r.rules),
                 "heuristic": {"method": "iterative modulo scheduling with greedy warp "
                                         "assignment",
                               "max_stages": r.max_stages, "steps": r.steps, "tried": r.tried,
                               "trials": [t.to_dict() for t in r.trials], "why": r.why}}
        return schedule_report(r.model.name, s, extra,
                               dict(self.buffers) if self.buffers is not None else None)


def heuristic(model: Source, *, max_stages: int | None = None, budget: int = defaults.BUDGET,
              without: Sequence[str] = (), normalize: str = defaults.NORMALIZE,
              time_limit: float | None = None, seed: int = defaults.SEED,
              semantics: str = defaults.SEMANTICS) -> HeuristicRun:
    """Iterative modulo scheduling with greedy warp assignment (no optimality claim), in
    normalized units when costs are large, the schedule mapped back to raw cycles and verified
    there; the options and defaults are `warpweave heuristic`'s (the model as given: streaming
    ops at their real latency)."""
    from warpweave.core.heuristic import heuristic_schedule
    from warpweave.core.registry import CONSTRAINTS
    from warpweave.core.verify import verify as _verify
    from warpweave.pipeline import normalized_as

    m = load_model(model)
    known = CONSTRAINTS.names()
    for name in without:
        if name not in known:
            raise InputError(f"unknown rule (known: {', '.join(known)})", ("--without",), name)
    rules = [r for r in known if r not in set(without)]
    norm, unit_note = normalized_as(m, normalize)
    result = heuristic_schedule(norm.model if norm else m, max_stages=max_stages, rules=rules,
                                budget=budget, seed=seed, time_limit=time_limit,
                                semantics=semantics)
    note = None
    if norm is not None:
        note = f"costs normalized: 1 unit = {norm.scale} cycles (I tried in units)"
        raw = norm.denormalize(result.schedule) if result.schedule is not None else None
        if raw is not None and _verify(m, raw, rules, semantics):
            note += "; the schedule fails in raw cycles, so none is reported"
            raw = None
        b = _bounds(m, set(rules))
        result = attrs.evolve(result, model=m, schedule=raw, bounds=b, lower_bound=b.lower,
                              why=result.why or (None if raw else "raw-cycle check failed"))
    if unit_note:  # a finer unit than the resolution's, or raw cycles: why
        note = f"{note}; {unit_note}" if note else unit_note
    s = result.schedule
    return HeuristicRun(result, ring_depths(m, s) if s is not None else None, note)


# ---------------------------------------------------------------------------------------------
# From a schedule to the program


class InvalidSchedule(Exception):
    """Code generation was given a schedule the verifier rejects (`violations`; `note` when the
    document says it was solved on the streaming relaxation)."""

    def __init__(self, violations: Sequence[Violation], note: str | None = None):
        self.violations = list(violations)
        self.note = note
        n = len(self.violations)
        super().__init__(f"invalid schedule ({n} violation{'s' * (n != 1)}); codegen needs a "
                         "valid one")


@attrs.frozen
class Lowered:
    """A valid schedule lowered to warp programs: the model (as given), the schedule and the
    warp program."""

    model: Model
    schedule: Schedule
    program: Any                     # codegen.warp_ir.WarpProgram


def schedule_for(model: Source, schedule: Source | Schedule | None = None,
                 **solve_options: Any) -> tuple[Model, Schedule, str | None]:
    """The schedule the codegen commands work on: `schedule`, or `model` solved with
    `solve_options`; with the model (as given) and a note when the document says it was solved
    on the streaming relaxation.  InputError when the search finds no verified schedule."""
    m = load_model(model)
    if schedule is None:
        res = solve(m, **solve_options)
        if res.schedule is None or res.run.raw_violations:
            raise InputError(f"the search found no verified schedule ({res.status}); give a "
                             "schedule or other solve options", value=m.name)
        return res.model, res.schedule, None
    return _with_schedule(m, schedule)


def lower(model: Source, schedule: Source | Schedule | None = None, *,
          depths: Mapping[str, int] | None = None, **solve_options: Any) -> Lowered:
    """The warp programs of a valid schedule (or of `model` solved with `solve_options`);
    `InvalidSchedule` when the verifier rejects it.  `depths` gives values' rings other depths
    than the plan's (an experiment: `simulate --depth`)."""
    from warpweave.codegen.lower import lower as _lower
    from warpweave.core.verify import verify as _verify
    m, s, note = schedule_for(model, schedule, **solve_options)
    violations = _verify(m, s)
    if violations:
        raise InvalidSchedule(violations, note)
    for name, n in (depths or {}).items():
        if not m.has_op(name):
            raise InputError(f"unknown op {name!r}", ("--depth",), f"{name}={n}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InputError("a ring needs at least 1 slot", ("--depth",), f"{name}={n}")
    return Lowered(m, s, _lower(m, s, dict(depths) if depths else None))


@attrs.frozen
class Simulation:
    """A simulation (`codegen.simulate.SimResult` as `result`; its `passed` is the check
    `warpweave simulate` makes) of a lowered program."""

    lowered: Lowered
    result: Any


def simulate(model: Source, schedule: Source | Schedule | None = None, *,
             iterations: int = defaults.ITERATIONS, jitter: float = 0.0,
             seed: int = defaults.SEED, pace: str = defaults.PACE,
             depths: Mapping[str, int] | None = None, **solve_options: Any) -> Simulation:
    """Run the warp programs in the discrete-event simulator (`warpweave simulate`): deadlock,
    races, late issues and the steady-state rate against 1/I.  `jitter` is a percentage; `seed`
    also seeds the solver when `model` is solved."""
    from warpweave.codegen.simulate import simulate as _simulate
    low = lower(model, schedule, depths=depths, seed=seed, **solve_options)
    if iterations < low.program.min_iterations:
        raise InputError(f"must be >= {low.program.min_iterations} for this schedule",
                         ("--iterations",), iterations)
    if not 0 <= jitter < 100:
        raise InputError("must be in [0, 100)", ("--jitter",), jitter)
    return Simulation(low, _simulate(low.model, low.schedule, low.program, iterations,
                                     jitter / 100, seed, pace))


@attrs.frozen
class Emitted:
    """What `emit` wrote: the lowered program, the files (in `out`), and for CUDA the source
    and the nvcc result (None when not compiled: `compiled` says why)."""

    lowered: Lowered
    out: Path
    written: tuple[str, ...]
    cuda: Any = None                 # codegen.cuda.CudaSource
    compile: Any = None              # codegen.cuda.CompileResult
    compiled: str | None = None      # why it was not compiled, if it was not
    renamed: tuple[str, ...] = ()    # names from the input made file names or C identifiers

    def over_limits(self) -> list[str]:
        """Each limit the written program breaks, as a line with the figures: a register peak or
        memory allocation of the plan over its limit, and for CUDA a warp group set to fewer
        registers than the limits the schedule was proven with (DESIGN section 6)."""
        short = self.cuda.layout.short if self.cuda is not None else ()
        return [*self.lowered.program.plan.over_limits(), *short]


TARGETS = ("pseudo", "ir", "cuda", "all")
NOT_ASKED = "not asked to compile"


def emit(model: Source, schedule: Source | Schedule | None = None, *, out: str | os.PathLike,
         target: str = defaults.EMIT_TARGET, arch: str | None = None, compile: bool = True,
         **solve_options: Any) -> Emitted:
    """Lower a valid schedule (or `model` solved with `solve_options`) and write, to `out`,
    the Q table and pseudocode (pseudo), the warp-program IR (ir) and CUDA C++ (cuda; compiled
    with nvcc when present and `compile`); `all` writes every one."""
    from warpweave.codegen import cuda, text
    if target not in TARGETS:
        raise InputError(f"must be one of {', '.join(TARGETS)}", ("--target",), target)
    output_dir(out, make=False)  # before the solve, not after it
    low = lower(model, schedule, **solve_options)
    m, s, program = low.model, low.schedule, low.program
    d = output_dir(out)
    stem = file_stem(m.name)  # the model's name comes from a file: it may not leave `out`
    names = [f"model name {m.name!r} -> file names {stem + '.*'!r}"] if stem != m.name else []
    targets = {"pseudo", "ir", "cuda"} if target == "all" else {target}
    files: dict[str, str] = {}
    if "pseudo" in targets:
        files[f"{stem}.qtable.txt"] = text.q_table(m, s) + "\n"
        files[f"{stem}.pseudo.txt"] = text.pseudocode(m, program)
    if "ir" in targets:
        files[f"{stem}.ir.txt"] = text.ir_text(program)
        files[f"{stem}.ir.json"] = text.ir_json(program) + "\n"
    for name, content in files.items():
        write_into(d, name, content)
    written = list(files)
    if "cuda" not in targets:
        return Emitted(low, d, tuple(written), renamed=tuple(names))
    src = cuda.emit_cuda(m, program, arch)
    cu = cuda.write_cuda(src, d, stem)
    written += [cu.name, src.hooks_name]
    done = partial(Emitted, low, d, tuple(written), src,
                   renamed=(*names, *(f"C identifier {r}" for r in src.renamed)))
    if not compile:
        return done(None, NOT_ASKED)
    if cuda.nvcc_path() is None:
        return done(None, "nvcc not found: not compiled")
    return done(cuda.compile_cuda(cu, src.arch))


def draw(model: Source, schedule: Source | Schedule | None = None, *, out: str | os.PathLike,
         **solve_options: Any) -> dict[str, str]:
    """Write timeline.svg (and .png with matplotlib), graph.dot and graph.svg to `out`; return
    each file with how it was made."""
    from warpweave.codegen.draw import draw_all
    output_dir(out, make=False)  # before the solve, not after it
    low = lower(model, schedule, **solve_options)
    return draw_all(low.model, low.schedule, out)


@attrs.frozen
class Verdict:
    """A schedule checked against the model as given: the violations (empty: valid), Q's stage
    count and horizon, and a note when the document says it was solved on the streaming
    relaxation."""

    model: Model
    schedule: Schedule
    violations: tuple[Violation, ...]
    stages: int
    T: int
    semantics: str = defaults.SEMANTICS
    note: str | None = None

    @property
    def valid(self) -> bool:
        return not self.violations

    def to_dict(self) -> dict:
        """What `verify --json` prints."""
        return {"valid": self.valid, "model": self.model.name, "I": self.schedule.I,
                "L": self.schedule.L, "stages": self.stages, "T": self.T,
                "semantics": self.semantics, "violations": [v.to_dict() for v in self.violations]}


def verdict(model: Source, schedule: Source | Schedule, rules: Sequence[str] | None = None,
            semantics: str = defaults.SEMANTICS) -> Verdict:
    """`verify` with Q's shape (and the note on a schedule solved on the streaming relaxation):
    what `warpweave verify` reports."""
    from warpweave.core.schedule import straight_line
    m, s, note = _with_schedule(model, schedule)
    q = straight_line(m, s)
    return Verdict(m, s, tuple(verify(m, s, rules, semantics)), q.S, q.T, semantics, note)


# ---------------------------------------------------------------------------------------------
# Display


@attrs.frozen
class ScheduleView:
    """A schedule with its model, for display: in Jupyter the Q table and the timeline."""

    model: Model
    schedule: Schedule

    def q_table(self, fold: bool = False) -> str:
        """Q, a row per cycle (with `fold`, only the cycles where an op issues)."""
        from warpweave.codegen.text import q_table
        return q_table(self.model, self.schedule, fold)

    def timeline_svg(self) -> str:
        from warpweave.codegen.draw import timeline_svg
        return timeline_svg(self.model, self.schedule)

    def _repr_html_(self) -> str:
        """The Q table folded to the cycles where an op issues (a row per cycle of fa3-fwd's Q
        made a page of 558 KB), then the timeline."""
        s = self.schedule
        return (f"<div><p>I = {s.I}, L = {s.L}, {s.stages} stage{'s' * (s.stages != 1)}; Q "
                f"below shows only the cycles where an op issues (`q_table()`: every cycle)</p>"
                f"<pre>{html.escape(self.q_table(fold=True))}</pre>{self.timeline_svg()}</div>")


def view(model: Source, schedule: Source | Schedule) -> ScheduleView:
    """A displayable schedule (the Q table and the timeline in a notebook)."""
    m, s, _ = _with_schedule(model, schedule)
    return ScheduleView(m, s)


# ---------------------------------------------------------------------------------------------
# Import and export


def import_graph(source: Source, fmt: str, **options: Any) -> Model:
    """A model from an external graph (a file or a parsed document) in format `fmt`
    (`warpweave.importers` entry points: meta-ddg, meta-curated, hatschet, plugins)."""
    from warpweave.importers import import_model
    return import_model(source, fmt, **options)


def export_schedule(model: Source, schedule: Source | Schedule, to: str = "triton",
                    **options: Any) -> dict:
    """`schedule` in the form a compiler reads (`warpweave.exporters` entry points: triton,
    llvm, plugins), keyed by the source graph's node ids when the model was imported."""
    from warpweave.exporters import export_schedule as _export
    m, s, _ = _with_schedule(model, schedule)
    return _export(m, s, to, **options)


def export_ir(source: str | os.PathLike | Mapping, to: str, out: str | os.PathLike, *,
              encodings: str | None = None) -> dict:
    """Translate a saved IR problem (`warpweave.ir/1`: a file or a parsed document) to `to` (lp,
    mps, smt2, cnf, wcnf) in file `out`, to replay it with an external solver; `encodings` is
    `CARD/PB` for cnf and wcnf.  Returns what was written: counts and the objective offset."""
    from warpweave.backends.exports import export
    from warpweave.ir import Problem
    target = output_file(out)  # before reading the problem
    path = None if isinstance(source, Mapping) else os.fspath(source)
    try:
        doc = source if path is None else json.loads(read_text(path))
        problem = Problem.from_dict(doc)
    except InputError as exc:
        raise (exc.with_file(path) if path else exc) from None
    except (OSError, ValueError) as exc:   # unreadable, or not JSON
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InputError(f"not a readable IR file ({reason})", file=path) from None
    card, _, pb = (encodings or "").partition("/")
    try:
        with replacing(target) as tmp:  # whole, or not at all
            offset = export(problem, to, tmp,
                            **{k: v for k, v in (("card", card), ("pb", pb)) if v})
    except ValueError as exc:
        raise InputError(str(exc), ("--to" if to not in EXPORT_FORMATS else "--encodings",),
                         to if to not in EXPORT_FORMATS else encodings) from None
    summary = problem.summary()
    return {"out": os.fspath(out), "format": to, "bools": summary["bools"],
            "ints": summary["ints"], "constraints": sum(summary["constraints"].values()),
            "objective_offset": offset}


EXPORT_FORMATS = ("lp", "mps", "smt2", "cnf", "wcnf")


def cross_check(model: Source, *, backends: Sequence[str] = (), encodings: Sequence[str] = (),
               without: Sequence[str] = (), max_stages: int | None = None,
               time_limit: float | None = None, seed: int = defaults.SEED,
               streaming: str = defaults.STREAMING, normalize: str = defaults.NORMALIZE,
               semantics: str = defaults.SEMANTICS, oracle: bool = False,
               oracle_budget: int = 200_000,
               out: str | os.PathLike | None = None,
               progress: Callable[[Any], None] | None = None) -> Any:
    """The optimal search on every backend x encoding (`warpweave crosscheck`): `backends` and
    `encodings` are specs or comma-separated lists (default: every available family, every
    encoding; `all`: every backend variant).  Returns the report (rows, disagreements, the
    oracle's answer, files written on a disagreement)."""
    from warpweave.core.registry import BACKENDS, ENCODINGS, backend, backend_specs
    from warpweave.crosscheck import crosscheck as _crosscheck
    from warpweave.crosscheck import parse_list
    m = load_model(model)
    families = [f for f in BACKENDS.load_all() if BACKENDS.get(f).unavailable() is None]
    chosen = parse_list(list(backends), families, backend_specs(), "backends")
    for spec in chosen:
        backend(spec)  # an unknown or unavailable backend is an input error before any solve
    encs = parse_list(list(encodings), ENCODINGS.names(), ENCODINGS.names(), "encodings")
    for name in encs:
        ENCODINGS.get(name)
    options = Options(without=tuple(without), max_stages=max_stages, time_limit=time_limit,
                      seed=seed, streaming=streaming, normalize=normalize, semantics=semantics)
    return CrossCheck(m, tuple(chosen), tuple(encs), options, _crosscheck(
        m, chosen, encs, options, oracle=oracle, oracle_budget=oracle_budget, out=out,
        progress=progress))


@attrs.frozen
class CrossCheck:
    """A cross-check: the model, the backends and encodings run, their options, and the report
    (`crosscheck.Report`)."""

    model: Model
    backends: tuple[str, ...]
    encodings: tuple[str, ...]
    options: Options
    report: Any


# ---------------------------------------------------------------------------------------------
# Registries


def list_backends() -> list[dict]:
    """One row per backend variant: spec, availability (and why not, with the extra that
    installs it), solver version, capabilities.  A solver package that is installed but broken
    shows as unavailable, never as an exception."""
    from warpweave.core.registry import BACKENDS, backend, backend_specs
    rows = []
    for family in BACKENDS.names():
        try:
            cls = BACKENDS.get(family)
        except InputError:
            rows.append({"spec": family, "available": False,
                         "reason": BACKENDS.failures.get(family, "failed to load"),
                         "version": None, "capabilities": []})
            continue
        reason = cls.unavailable()
        if reason is not None:
            rows.append({"spec": family, "available": False, "reason": reason, "version": None,
                         "capabilities": sorted(cls.capabilities)})
            continue
        for spec in [s for s in backend_specs() if s.partition(":")[0] == family]:
            b = backend(spec)
            try:
                version, why = b.version(), None
            except Exception as exc:  # noqa: BLE001 - a broken solver package is a row, not a crash
                version, why = None, f"{type(exc).__name__}: {exc}"
            rows.append({"spec": b.spec, "available": why is None, "reason": why,
                         "version": version, "capabilities": sorted(b.capabilities)})
    return rows


def list_machines() -> dict[str, Any]:
    """The registered machines by name (failures to load: `MACHINES.failures`)."""
    from warpweave.core.registry import MACHINES
    return MACHINES.load_all()


def list_kernels() -> dict[str, Any]:
    """The registered kernel builders by name."""
    from warpweave.core.registry import KERNELS
    return KERNELS.load_all()


def list_constraints() -> dict[str, Any]:
    """The registered constraints (built-in and plugins) by name."""
    from warpweave.core.registry import CONSTRAINTS
    return CONSTRAINTS.load_all()
