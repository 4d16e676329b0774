"""The commands: each turns its parsed arguments into a call of the Python API (`warpweave.api`),
prints the renderer's text (or, with --json, the result's document) and returns the exit status.
No job logic lives here: what a command computes, `warpweave.api` computes for scripts too."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from warpweave import api
from warpweave.cli import render
from warpweave.core.formats import (
    DOCUMENT_SUFFIXES,
    STDIN,
    dumps,
    model_to_dict,
    read_document,
    write_document,
)
from warpweave.errors import InputError
from warpweave.outputs import output_dir, output_file, write
from warpweave.progress import Progress
from warpweave.scale.result import improvement_printer

EXIT_OK, EXIT_NO, EXIT_INPUT, EXIT_LIMIT = 0, 1, 2, 3


class Output:
    """Where a command's report goes: stdout, unless -q; --json documents always."""

    def __init__(self, args):
        self.quiet = getattr(args, "quiet", False)
        self.json = getattr(args, "json", False)

    def text(self, text: str) -> None:
        if not self.quiet and text:
            print(text)

    def document(self, doc: Any) -> None:
        print(render.json_text(doc), end="")

    def report(self, doc: Callable[[], Any], text: Callable[[], str]) -> None:
        """The JSON document with --json, else the text (each made only when printed)."""
        if self.json:
            self.document(doc())
        else:
            self.text(text())


def progress(args) -> Progress:
    """The live progress display, as --progress (and -q, --json, TERM, CI) say."""
    how = getattr(args, "progress", "auto")
    if how == "auto":
        live = (sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
                and not os.environ.get("CI") and not getattr(args, "json", False)
                and not getattr(args, "quiet", False))
    else:
        live = how == "always"
    return Progress(live=live)


# The numbers of the command line that argparse only checks to be numbers: seconds must be
# > 0 (0 is not "no limit"), counts >= 1 (0 is not "the default").
SECONDS = ("time_limit", "solve_limit", "timeout")
COUNTS = ("max_stages", "budget", "oracle_budget", "limit", "workers", "repeat")


def check_arguments(args) -> None:
    """Every number of SECONDS and COUNTS the command has, and at most one file read from
    standard input (`-` twice would read the model and find the input spent), before any work
    is done."""
    if getattr(args, "model", None) == STDIN and getattr(args, "schedule", None) == STDIN:
        where = "--schedule" if args.command in ("emit", "simulate", "draw") else "SCHEDULE"
        raise InputError("only one argument can be - (standard input), and the model is "
                         "read from it", (where,), STDIN)
    for dests, low, rule in ((SECONDS, 0, "> 0"), (COUNTS, 1, ">= 1")):
        for dest in dests:
            value = getattr(args, dest, None)
            if value is not None and not (value > low if rule == "> 0" else value >= low):
                raise InputError(f"must be {rule}", ("--" + dest.replace("_", "-"),), value)


def search_options(args) -> dict:
    """The search options of the parsed arguments, as `api.solve` takes them (`api.sweep`: all
    but --paper-search, which it does not have)."""
    options = dict(backend=args.backend, encoding=args.encoding, search=args.search,
                   without=tuple(args.without), max_stages=args.max_stages,
                   time_limit=args.time_limit, solve_limit=args.solve_limit,
                   tie_breakers=tuple(args.tie_break), seed=args.seed,
                   streaming=args.streaming, normalize=args.normalize,
                   semantics=args.semantics, method=args.method)
    if hasattr(args, "paper_search"):
        options["paper_search"] = args.paper_search
    return options


def target(args):
    return api.target(args.model, args.machine, args.params)


# ---------------------------------------------------------------------------------------------
# Models and schedules


def cmd_verify(args) -> int:
    v = api.verdict(args.model, args.schedule, semantics=args.semantics)
    Output(args).report(v.to_dict, lambda: render.describe_verdict(v))
    return EXIT_NO if v.violations else EXIT_OK


def cmd_bounds(args) -> int:
    model = target(args)
    b = api.bounds(model)
    Output(args).report(lambda: render.bounds_dict(model, b),
                        lambda: render.describe_bounds(model, b))
    return EXIT_OK


def cmd_show(args) -> int:
    model = target(args)
    Output(args).report(lambda: model_to_dict(model), lambda: render.describe_model(model))
    return EXIT_OK


def cmd_build(args) -> int:
    model = api.target(args.kernel, args.machine, args.params)
    out = Output(args)
    if args.out:
        write_document(model_to_dict(model), args.out, "--out")
        out.text(f"wrote {args.out}: {model.name} on {model.machine.name}, {len(model.ops)} "
                 f"ops, {len(model.edges)} edges")
    if args.json:
        out.document(model_to_dict(model))
    elif not args.out:
        out.text(render.describe_model(model))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# Solving


def documents(args, *options: str) -> None:
    """The document files `options` name (dests of args), checked before any work: a bad path
    is one line, not a traceback after the solve."""
    for dest in options:
        if getattr(args, dest, None):
            output_file(getattr(args, dest), "--" + dest.replace("_", "-"), DOCUMENT_SUFFIXES)


def keep(doc: dict, path: str | None) -> None:
    """Write `doc` to --out once the answer is printed: a failed write then costs the file, not
    the answer (one error line after it, exit 2)."""
    if path:
        sys.stdout.flush()
        write_document(doc, path)


def cmd_solve(args) -> int:
    documents(args, "out", "save_model")
    model = target(args)
    if args.save_model:
        write_document(model_to_dict(model), args.save_model, "--save-model")
    with progress(args) as shown:
        result = api.solve(model, progress=shown, **search_options(args),
                           improvements=improvement_printer(sys.stderr, shown.live))
    doc = result.to_dict()
    out = Output(args)
    if args.json:
        print(dumps(doc), end="")
    else:
        out.text(render.describe_result(result))
    keep(doc, args.out)
    return result.exit_status


def cmd_heuristic(args) -> int:
    documents(args, "out")
    run = api.heuristic(target(args), max_stages=args.max_stages, budget=args.budget,
                        without=args.without, normalize=args.normalize,
                        time_limit=args.time_limit, seed=args.seed, semantics=args.semantics)
    doc = run.to_dict()
    if args.json:
        print(dumps(doc), end="")
    else:
        Output(args).text(render.describe_heuristic(run))
    keep(doc, args.out)
    if run.schedule is not None:
        return EXIT_OK
    return EXIT_LIMIT if run.result.stopped else EXIT_NO  # stopped: the time limit cut it


def cmd_crosscheck(args) -> int:
    if args.out:  # made by crosscheck only when it has something to write
        output_dir(args.out, "--out", make=False)
    from warpweave.crosscheck import reduce_disagreement

    def row(r) -> None:
        if shown.live:
            print(f"  {r.backend}/{r.encoding}: {r.status} ({r.seconds:.2f} s)", file=sys.stderr)

    with progress(args) as shown:
        cc = api.cross_check(target(args), backends=args.backends, encodings=args.encodings,
                            without=args.without, max_stages=args.max_stages,
                            time_limit=args.time_limit, seed=args.seed,
                            streaming=args.streaming, normalize=args.normalize,
                            semantics=args.semantics, oracle=args.oracle,
                            oracle_budget=args.oracle_budget, out=args.out,
                            progress=row)
    rep, model = cc.report, cc.model
    out = Output(args)
    out.report(lambda: render.crosscheck_dict(model, rep),
               lambda: render.describe_crosscheck(model, cc.backends, cc.encodings, rep,
                                                  args.oracle))
    if args.reduce and rep.problems:
        red = reduce_disagreement(model, list(cc.backends), list(cc.encodings), cc.options,
                                  oracle=args.oracle, oracle_budget=args.oracle_budget,
                                  budget=args.reduce)
        path = rep.written[0].parent / "reduced.json"
        write_document(model_to_dict(red.model.replace(name=f"{model.name}-reduced")), path)
        out.text(f"  reduced from {len(model.ops)} ops / {len(model.edges)} edges to "
                 f"{len(red.model.ops)} / {len(red.model.edges)} ({red.calls} cross-checks"
                 f"{'; interrupted: the smallest model so far' if red.interrupted else ''}), "
                 f"still disagreeing: {path}")
    return rep.exit_status


# ---------------------------------------------------------------------------------------------
# From a schedule to the program


def _codegen(args, run: Callable[..., Any]) -> Any:
    """`run(target, schedule, **search options)`; None after printing the violations of an
    invalid schedule (codegen needs a valid one)."""
    options = search_options(args)
    try:
        with progress(args) as shown:
            return run(target(args), args.schedule, progress=shown, **options)
    except api.InvalidSchedule as exc:
        print(f"{exc}:", file=sys.stderr)
        for v in exc.violations:
            print(f"  {v}", file=sys.stderr)
        if exc.note:
            print(f"  note: {exc.note}", file=sys.stderr)
        return None


def cmd_emit(args) -> int:
    e = _codegen(args, lambda m, s, **o: api.emit(m, s, out=args.out, target=args.target,
                                                   arch=args.arch, compile=not args.no_compile,
                                                   **o))
    if e is None:
        return EXIT_NO
    Output(args).report(lambda: render.emitted_dict(e), lambda: render.describe_emitted(e))
    if e.compile is not None and not e.compile.ok:
        print(e.compile.output, file=sys.stderr)
        return EXIT_NO
    over = e.over_limits()
    if over:  # DESIGN section 6: what is emitted must fit what was proven
        print(f"FAILED: the plan exceeds {'a limit' if len(over) == 1 else 'limits'} "
              f"({'; '.join(over)}); the files are written for inspection", file=sys.stderr)
        return EXIT_NO
    return EXIT_OK


def _depths(pairs: Sequence[str]) -> dict[str, int]:
    """`--depth VALUE=N` pairs."""
    out = {}
    for pair in pairs:
        name, _, n = pair.partition("=")
        if not n.isdigit() or int(n) < 1:
            raise InputError("expected VALUE=N with N >= 1", ("--depth",), pair)
        out[name] = int(n)
    return out


def cmd_simulate(args) -> int:
    depths = _depths(args.depth)
    sim = _codegen(args, lambda m, s, **o: api.simulate(
        m, s, iterations=args.iterations, jitter=args.jitter, pace=args.pace,
        depths=depths, **o))
    if sim is None:
        return EXIT_NO
    low, res = sim.lowered, sim.result
    Output(args).report(
        lambda: render.simulation_dict(res, low.model, low.schedule),
        lambda: render.describe_simulation(res, low.model, args.jitter, args.seed, args.pace))
    return EXIT_OK if res.passed else EXIT_NO


def cmd_draw(args) -> int:
    made = _codegen(args, lambda m, s, **o: api.draw(m, s, out=args.out, **o))
    if made is None:
        return EXIT_NO
    Output(args).report(lambda: {"out": args.out, "files": made},
                        lambda: "\n".join(f"{Path(args.out) / name}: {how}"
                                          for name, how in made.items()))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# Import and export


def cmd_import(args) -> int:
    from warpweave.importers.meta_b200 import parse_groups
    options = dict(loop=args.loop, rm=args.rm, reg_limit=args.reg_limit,
                   groups=parse_groups(args.groups) if args.groups is not None else None,
                   async_units=[u for u in args.async_units.split(",") if u]
                   if args.async_units is not None else None)
    source = read_document(STDIN) if args.file == STDIN else args.file
    model = api.import_graph(source, args.source, **options)
    doc = model_to_dict(model)
    if not args.out:
        print(dumps(doc), end="")
        return EXIT_OK
    write_document(doc, args.out)
    summary = {"out": args.out, "model": model.name, "ops": len(model.ops),
               "edges": len(model.edges)}
    Output(args).report(lambda: summary, lambda: f"wrote {args.out}: model {model.name}, "
                        f"{len(model.ops)} ops, {len(model.edges)} edges")
    return EXIT_OK


def cmd_export_schedule(args) -> int:
    doc = api.export_schedule(args.model, args.schedule, to=args.to)
    if args.out:
        write_document(doc, args.out)
        Output(args).text(f"wrote {args.out} ({args.to}): {doc.get('model')}")
    else:
        print(render.json_text(doc), end="")
    return EXIT_OK


def cmd_export(args) -> int:
    source = read_document(STDIN) if args.ir == STDIN else args.ir
    done = api.export_ir(source, args.to, args.out, encodings=args.encodings)
    offset = done["objective_offset"]
    note = f", objective = file objective + {offset}" if offset else ""
    Output(args).report(lambda: done, lambda: (
        f"wrote {args.out} ({args.to}): {done['bools']} Booleans, {done['ints']} integers, "
        f"{done['constraints']} constraints{note}"))
    return EXIT_OK


def cmd_schema(args) -> int:
    from warpweave.schemas import schema
    print(render.json_text(schema(args.format)), end="")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# Registries


def _loaded(registry) -> dict:
    """Every entry of a registry that loads; failures are reported on stderr, not fatal."""
    loaded = registry.load_all()
    for name, why in registry.failures.items():
        print(f"warpweave: warning: {registry.kind} {name} not loaded: {why}", file=sys.stderr)
    return loaded


def cmd_kernels(args) -> int:
    from warpweave.core.registry import KERNELS
    kernels = {n: k for n, k in _loaded(KERNELS).items() if hasattr(k, "to_dict")}
    Output(args).report(lambda: [k.to_dict() for k in kernels.values()],
                        lambda: render.describe_kernels(kernels))
    return EXIT_OK


def cmd_machines(args) -> int:
    from warpweave.core.registry import MACHINES
    machines = {n: m for n, m in _loaded(MACHINES).items() if hasattr(m, "to_dict")}
    Output(args).report(lambda: [m.to_dict() for m in machines.values()],
                        lambda: render.describe_machines(machines))
    return EXIT_OK


def cmd_constraints(args) -> int:
    from importlib.metadata import entry_points

    from warpweave.core.registry import CONSTRAINTS
    points = {ep.name: ep.value for ep in entry_points(group=CONSTRAINTS.group)}
    rows = render.constraint_rows(_loaded(CONSTRAINTS), points)
    Output(args).report(lambda: rows, lambda: render.describe_constraints(rows))
    return EXIT_OK


def cmd_backends(args) -> int:
    from warpweave.core.registry import BACKENDS
    rows = api.list_backends()
    choices = {family: cls.choices() for family, cls in BACKENDS.load_all().items()
               if hasattr(cls, "choices") and cls.unavailable() is None}
    Output(args).report(lambda: {"backends": rows, "options": choices},
                        lambda: render.describe_backends(rows, choices))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# Sweeps


def cmd_sweep(args) -> int:
    from warpweave.charts import check_path
    from warpweave.kernels import kernel_spec
    from warpweave.sweeps.grid import parse_axes
    if args.plot:  # before the sweep, not after it
        check_path(args.plot)
    params = parse_axes(kernel_spec(args.kernel), args.param)
    live = progress(args).live

    def shown(done: int, total: int, row) -> None:
        if live:
            print(render.sweep_progress(done, total, row), file=sys.stderr, flush=True)

    result = api.sweep(args.kernel, args.machine, params, store=args.store,
                       cluster=args.cluster, workers=args.workers, progress=shown,
                       **search_options(args))
    if result.rows and result.rejected == len(result.rows):  # bad input: nothing to solve
        for r in result.rows:
            print(f"warpweave: error: {r.label}: {r.record['reason']}", file=sys.stderr)
        return EXIT_INPUT
    drawn = api.sweep_plot(result, args.plot) if args.plot and not result.interrupted else None
    out = Output(args)
    if args.json:
        out.document({**result.to_dict(), "plot": {"file": args.plot, "drawn_by": drawn}
                      if drawn else None})
    else:
        out.text(render.describe_sweep(result))
        if drawn:
            out.text(f"wrote {args.plot}: the Pareto front ({drawn})")
    # a rejected point is answered: it cannot be built, and would not be on any run
    answered = all(r.record.get("complete") and r.status != "error" for r in result.rows)
    return EXIT_OK if answered and not result.interrupted else EXIT_LIMIT


# ---------------------------------------------------------------------------------------------
# Benchmarks


def _items(values: list[str]) -> list[str]:
    """Repeated and comma-separated option values, in order."""
    return [x for item in values for x in item.split(",") if x]


def cmd_bench(args) -> int:
    from warpweave.bench import (
        Settings,
        Writer,
        disagreements,
        markdown,
        matrix,
        read_results,
        run_header,
        run_matrix,
        select,
    )
    from warpweave.bench.configs import SUITE_DEFAULTS
    from warpweave.bench.csvfile import csv_text
    from warpweave.bench.plot import plot
    from warpweave.charts import check_path
    from warpweave.defaults import NORMALIZE
    from warpweave.pipeline import normalization
    for dest in ("out", "markdown", "csv"):  # before the run, not after it
        if getattr(args, dest):
            output_file(getattr(args, dest), "--" + dest)
    if args.plot:
        check_path(args.plot)
    if args.report:
        header, records = read_results(args.report)
    else:
        targets = args.targets + _items(args.suite) or ["kernels"]
        labels = _items(args.configs)
        if not (labels or args.backends or args.encodings or args.searches or args.all) and \
                all(t in SUITE_DEFAULTS for t in targets):
            labels = list(dict.fromkeys(x for t in targets for x in SUITE_DEFAULTS[t]))
        normalizations = _items([args.normalize]) or [NORMALIZE]
        configs, notes = matrix(_items(args.backends), _items(args.encodings),
                                _items(args.searches), args.all, not args.no_heuristic, labels,
                                normalizations, args.peers)
        cases = select(targets, Path(args.data) if args.data else None, args.limit)
        if cases:  # a bad --normalize is one input error here, not one per case
            for how in {*normalizations, *(c.normalize for c in configs if c.normalize)}:
                normalization(cases[0].load(), how)
        settings = Settings(timeout=args.timeout, normalize=normalizations[0],
                            max_stages=args.max_stages, seed=args.seed)
        header = run_header(targets, configs, settings, notes)
        for note in notes:
            print(f"warpweave bench: {note}", file=sys.stderr)
        print(f"warpweave bench: {len(cases)} cases x {len(configs)} configurations"
              f"{f' x {args.repeat} repeats' * (args.repeat > 1)}, timeout {args.timeout:g} s",
              file=sys.stderr)
        writer = Writer(args.out)
        writer.write(header)
        records: list[dict] = []
        total = len(cases) * len(configs) * args.repeat

        def emit(record: dict) -> None:
            records.append(record)
            writer.write(record)
            if not args.quiet:
                print(render.bench_line(len(records), total, record), file=sys.stderr,
                      flush=True)

        try:
            run_matrix(cases, configs, settings, emit, args.repeat)
        finally:
            header.update(writer.close(), type="run")
    text = markdown(header, records)
    if args.markdown:
        write(args.markdown, text, "--markdown")
    Output(args).report(lambda: {"header": header, "records": records}, lambda: text.rstrip("\n"))
    if args.csv:
        write(args.csv, csv_text(records), "--csv")
    if args.plot:
        drawn = plot(header, records, args.plot)
        if not args.quiet:
            print(f"warpweave bench: wrote {args.plot} ({drawn})", file=sys.stderr)
    bad = disagreements(records)
    for x in bad:
        print(f"warpweave bench: DISAGREEMENT (a bug): {x}", file=sys.stderr)
    return EXIT_NO if bad else EXIT_OK


def cmd_reproduce(args) -> int:
    from warpweave import reproduce
    settings = reproduce.Settings(backend=args.backend, encoding=args.encoding,
                                  solve_limit=args.solve_limit, time_limit=args.time_limit,
                                  explain_forced=args.explain_forced, reach=not args.no_reach)
    report = reproduce.main(args.only, args.json, settings, quiet=args.quiet)
    unknown = any(c["status"] != "optimal" or any(a["verdict"] == reproduce.UNKNOWN
                                                  for a in c["answers"])
                  for c in report["cases"])
    return EXIT_LIMIT if unknown else EXIT_OK


COMMANDS: dict[str, Callable[[Any], int]] = {
    "verify": cmd_verify, "bounds": cmd_bounds, "show": cmd_show, "build": cmd_build,
    "solve": cmd_solve, "heuristic": cmd_heuristic, "crosscheck": cmd_crosscheck,
    "emit": cmd_emit, "simulate": cmd_simulate, "draw": cmd_draw, "import": cmd_import,
    "export-schedule": cmd_export_schedule, "export": cmd_export, "schema": cmd_schema,
    "kernels": cmd_kernels, "machines": cmd_machines, "constraints": cmd_constraints,
    "backends": cmd_backends, "bench": cmd_bench, "sweep": cmd_sweep, "reproduce": cmd_reproduce,
}
