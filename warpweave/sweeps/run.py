"""The driver of a sweep (`run_sweep`): plan the grid, reuse what the store has, solve the rest
on the executor, record each answer as it arrives, rank.

Data flows one way: grid (points) -> build each point's model (a point its builder rejects - a
tile too large for shared memory - is `rejected`, with the builder's reason) -> key (model +
solver configuration) -> the store's records -> tasks for the points without a reusable record ->
executor -> store -> figures (throughput, resources) -> ranking.  Points with the same key (two
parameter values that build the same model) are solved once.

Ctrl-C (KeyboardInterrupt) stops the executor and returns what is known: every point answered so
far is in the store, the rest are `pending`, and `Sweep.interrupted` is set; the same call again
resumes (it reuses the answered points).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from warpweave.core.formats import model_to_dict
from warpweave.errors import InputError
from warpweave.kernels import kernel_spec
from warpweave.sweeps.executors import check_executor, executor
from warpweave.sweeps.grid import Axis, Point, axes, machines_of, points
from warpweave.sweeps.point import Task
from warpweave.sweeps.store import Store, point_key, reusable
from warpweave.sweeps.throughput import Throughput, figures

REJECTED, PENDING = "rejected", "pending"  # statuses of points that were not solved
NOWHERE = "nowhere"  # where points ran when every one was in the store or rejected


@attrs.frozen
class Row:
    """One point of a sweep: its key in the store (None when its builder rejected it), the
    record (the worker's, or the stored one when `reused`), and its throughput figures (None
    without a schedule)."""

    point: Point
    label: str            # the machine and parameters, under the names the user gave them
    key: str | None
    record: Mapping[str, Any]
    reused: bool
    throughput: Throughput | None

    @property
    def status(self) -> str:
        return self.record["status"]

    def to_dict(self) -> dict:
        r = self.record
        out = {**self.point.to_dict(), "label": self.label, "key": self.key,
               "status": r["status"], "complete": r.get("complete", False),
               "reused": self.reused, "I": r.get("I"), "L": r.get("L"),
               "lower_bound": r.get("lower_bound"), "I_optimal": r.get("I_optimal"),
               "proven_in": r.get("proven_in"), "reason": r.get("reason"),
               "seconds": r.get("seconds"), "solved_by": r.get("solved_by")}
        for name in ("regs_peak", "regs_launch", "smem_peak"):
            out[name] = r.get(name)
        out["throughput"] = self.throughput.to_dict() if self.throughput else None
        out["solve"] = r.get("report")  # the schedule format of `solve --json`, with its proof
        return out


@attrs.frozen
class Sweep:
    """A sweep's outcome: the rows ranked (best predicted throughput first; points without a
    schedule after them, in grid order), the store, where the points ran, and counts."""

    kernel: str
    axes: tuple[Axis, ...]
    rows: tuple[Row, ...]
    store: str
    where: str
    options: Mapping[str, Any]
    solved: int           # points solved by this run
    interrupted: bool
    seconds: float

    @property
    def reused(self) -> int:
        return sum(r.reused for r in self.rows)

    @property
    def rejected(self) -> int:
        """Points the kernel's builder rejected (not solved: they cannot be built)."""
        return sum(r.status == REJECTED for r in self.rows)

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "store": self.store, "where": self.where,
                "params": {a.name: list(a.values) for a in self.axes},
                "options": dict(self.options), "points": len(self.rows),
                "solved": self.solved, "reused": self.reused, "rejected": self.rejected,
                "interrupted": self.interrupted,
                "seconds": round(self.seconds, 3),
                "ranking": [r.to_dict() for r in self.rows]}


def _throughput(spec, point: Point, record: Mapping[str, Any]) -> Throughput | None:
    if record.get("I") is None:
        return None
    params = dict(point.params)
    dtype = str(spec.resolve(params).get("dtype", "bf16"))
    return Throughput(flops=spec.flops(point.machine, params), I=record["I"],
                      lower_bound=record.get("lower_bound") or record["I"],
                      proven=bool(record.get("I_optimal")), **figures(point.machine, dtype))


def rank(rows: Sequence[Row]) -> list[Row]:
    """Rows with a schedule by predicted throughput, highest first (ties: fewer registers held,
    then less shared memory, then grid order), then the others in grid order."""
    order = {id(r): i for i, r in enumerate(rows)}

    def key(r: Row) -> tuple:
        return (-r.throughput.per_cycle, r.record.get("regs_peak") or 0,
                r.record.get("smem_peak") or 0, order[id(r)])

    return sorted((r for r in rows if r.throughput), key=key) + \
        [r for r in rows if not r.throughput]


def run_sweep(kernel: str, machines: str | Sequence[str] | None = None,
              params: Mapping[str, Any] | None = None, *,
              store: str | os.PathLike, cluster: str | None = None,
              workers: int | None = None,
              progress: Callable[[int, int, Row], None] | None = None,
              **options: Any) -> Sweep:
    """Solve `kernel` over the grid of `params` on each of `machines` (see the package
    docstring); `options` are `api.solve`'s (each point is solved as `warpweave solve` would).
    `progress(done, total, row)` is called for each point as it is answered or reused."""
    started = time.perf_counter()
    spec = kernel_spec(kernel)
    grid = axes(spec, params or {})
    chosen = machines_of(spec, machines)
    check_executor(cluster, workers)
    names = {a.param.name: a.name for a in grid}
    plan = [_planned(spec, point, options) for point in points(spec, chosen, grid)]
    check_options(options, next((p.doc for p in plan if p.doc is not None), None))
    built = [p.key for p in plan if p.key is not None]
    # A grid of which no point can be built has nothing to look up or keep: no store is made.
    with Store(store) if built else contextlib.nullcontext() as db:
        stored = {k: r for k, r in db.get(built).items() if reusable(r, options)} if db else {}
        records: dict[str, Mapping[str, Any]] = dict(stored)
        todo = {p.key: Task(p.key, p.doc, dict(options), isolate=cluster is None)
                for p in plan if p.key is not None and p.key not in stored}
        done = 0

        def row(p: Planned) -> Row:
            record = p.rejected or records.get(p.key, {"status": PENDING})
            return Row(p.point, p.point.label(names), p.key, record, p.key in stored,
                       _throughput(spec, p.point, record))

        def answered(ps: list[Planned]) -> None:
            nonlocal done
            for p in ps:
                done += 1
                if progress:
                    progress(done, len(plan), row(p))

        answered([p for p in plan if p.key is None or p.key in stored])  # no solve needed
        runner = executor(cluster, workers) if todo else None
        interrupted = False
        if runner is not None:
            answers = runner.run(list(todo.values()))
            try:
                try:
                    for key, record in answers:
                        if key in records:  # answered already (a re-run task's second answer)
                            continue
                        records[key] = record
                        same = [p for p in plan if p.key == key]
                        db.put(key, same[0].point.to_dict(), options, record)
                        answered(same)
                finally:
                    # The driver stops the executor's workers here, however the loop ended (a
                    # Ctrl-C here included), not whenever the generator is collected.
                    answers.close()
            except KeyboardInterrupt:
                interrupted = True
    return Sweep(spec.name, tuple(grid), tuple(rank([row(p) for p in plan])), os.fspath(store),
                 runner.where if runner else NOWHERE, dict(options),
                 sum(1 for k in todo if k in records), interrupted,
                 time.perf_counter() - started)


def check_options(options: Mapping[str, Any], model_doc: Mapping[str, Any] | None) -> None:
    """The solve options, checked once by the driver before any point is solved: a bad one is
    one input error, not a failed record for every point.  `model_doc`: a model of the sweep,
    to check the normalization against (None: none was built)."""
    from warpweave import defaults
    from warpweave.core.constraints import constraint_set
    from warpweave.core.formats import model_from_dict
    from warpweave.core.registry import ENCODINGS, backend
    from warpweave.pipeline import normalization
    from warpweave.search import check_limits
    check_limits(options.get("time_limit"), options.get("solve_limit"),
                 options.get("max_stages"))
    constraint_set(without=options.get("without", ()))
    for name, choices in (("search", ("auto", "minimize", "sweep")),
                          ("semantics", defaults.SEMANTICS_CHOICES),
                          ("method", defaults.METHODS)):
        if name in options and options[name] not in choices:
            raise InputError(f"must be one of {', '.join(choices)}", ("--" + name,),
                             options[name])
    ENCODINGS.get(options.get("encoding", defaults.ENCODING))
    if options.get("backend", "auto") != "auto":
        backend(options["backend"])
    if model_doc is not None:
        normalization(model_from_dict(model_doc), options.get("normalize", "auto"))


@attrs.frozen
class Planned:
    """A point before it is solved: its model document and key, or why its builder rejected
    it (a record of status `rejected`)."""

    point: Point
    key: str | None = None
    doc: Mapping[str, Any] | None = None
    rejected: Mapping[str, Any] | None = None


def _planned(spec, point: Point, options: Mapping[str, Any]) -> Planned:
    try:
        model = spec.build(point.machine, **dict(point.params))
    except InputError as exc:
        return Planned(point, rejected={"status": REJECTED, "complete": True,
                                        "reason": str(exc)})
    doc = model_to_dict(model)
    return Planned(point, point_key(doc, options), doc)
