"""The `warpweave` command.  Exit status: 0 success, 1 a negative answer (violations, no schedule),
2 bad input, 3 a limit (a time limit, Ctrl-C) reached without a complete answer."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from warpweave import __version__
from warpweave.core.bounds import bounds
from warpweave.core.errors import InputError
from warpweave.core.formats import (
    dumps,
    load_model,
    model_to_dict,
    read_document,
    schedule_from_dict,
    schedule_report,
    write_document,
)
from warpweave.core.heuristic import HeuristicResult, heuristic_schedule
from warpweave.core.model import Model
from warpweave.core.registry import (
    BACKENDS,
    ENCODINGS,
    KERNELS,
    MACHINES,
    backend,
    backend_specs,
)
from warpweave.core.schedule import Schedule, straight_line
from warpweave.core.search import SearchBug
from warpweave.core.streaming import StreamingOp, apply_streaming
from warpweave.core.verify import RULES, verify
from warpweave.pipeline import (
    DEFAULT_ENCODING,
    MINIMIZE_BACKEND,
    SWEEP_BACKEND,
    Options,
    load_target,
    normalization,
    report,
    run_solve,
)
from warpweave.progress import Progress

EXIT_OK, EXIT_NO, EXIT_INPUT, EXIT_LIMIT = 0, 1, 2, 3
EXIT_BUG = 4  # a backend's schedule failed verification: a bug, its IR saved to replay


def _print_json(doc) -> None:
    print(json.dumps(doc, indent=2))


def _table(rows: list[list[str]], indent: str = "  ") -> str:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "\n".join(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


# ---------------------------------------------------------------------------------------------


def cmd_verify(args) -> int:
    model = load_model(args.model)
    doc = read_document(args.schedule)
    if doc.get("streaming"):  # solved with streaming ops at zero latency: verify the same model
        model, _ = apply_streaming(model)
    try:
        schedule = schedule_from_dict(doc, model)
    except InputError as exc:
        raise exc.with_file(args.schedule) from None
    violations = verify(model, schedule)
    q = straight_line(model, schedule)
    if args.json:
        _print_json({"valid": not violations, "model": model.name, "I": schedule.I,
                     "L": schedule.L, "stages": q.S, "T": q.T,
                     "violations": [v.to_dict() for v in violations]})
    elif violations:
        print(f"invalid: {len(violations)} violation{'s' * (len(violations) != 1)} "
              f"({model.name}, I={schedule.I}, L={schedule.L})")
        for v in violations:
            print(f"  {v}")
    else:
        print(f"valid: {model.name}, I={schedule.I}, L={schedule.L} "
              f"({q.S} stage{'s' * (q.S != 1)}, Q has T={q.T} cycles)")
    return EXIT_NO if violations else EXIT_OK


def cmd_bounds(args) -> int:
    model = load_model(args.model)
    b = bounds(model)
    crit = b.critical
    if args.json:
        _print_json({"model": model.name, "res_mii": b.res_mii, "res_unit": b.res_unit,
                     "rec_mii": b.rec_mii,
                     "rec_ratio": [crit.delay, crit.distance] if crit else None,
                     "critical_cycle": [e.src for e in crit.edges] if crit else None,
                     "lower_bound": b.lower, "min_length": b.min_length, "i_upper": b.i_upper,
                     "default_max_stages": b.default_max_stages()})
        return EXIT_OK
    rows = [["ResMII", str(b.res_mii), f"unit {b.res_unit}" if b.res_unit else "no unit used"],
            ["RecMII", str(b.rec_mii),
             f"cycle {crit.describe()}: delay {crit.delay} / distance {crit.distance}"
             if crit else "no dependence cycle"],
            ["I >=", str(b.lower), "lower bound max(1, ResMII, RecMII)"],
            ["L >=", str(b.min_length), "longest distance-0 path"],
            ["I <=", str(b.i_upper), "beyond this a larger I cannot help"],
            ["stages <=", str(b.default_max_stages()), "default search bound"]]
    print(f"{model.name}:")
    print(_table(rows))
    return EXIT_OK


def _reservation_runs(op) -> str:
    """A reservation table as runs of equal rows: `+0..95 TMA:1; +96 ...` (empty rows skipped)."""
    runs: list[list] = []  # [first cycle, last cycle, row]
    for c, row in enumerate(op.rrt):
        if runs and runs[-1][2] == row and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c, row])
    return "; ".join(f"+{a}" + (f"..{b}" if b > a else "") + " "
                     + ", ".join(f"{u}:{n}" for u, n in row)
                     for a, b, row in runs if row) or "-"


def describe_model(model: Model) -> str:
    """A readable summary: machine, ops with their resources, edges."""
    m = model.machine
    out = [f"model {model.name} on machine {m.name}: {len(model.ops)} ops, "
           f"{len(model.edges)} edges"]
    out.append("units:    " + ", ".join(f"{u.name} x{u.capacity}" for u in m.units))
    if m.memories:
        out.append("memories: " + ", ".join(f"{x.name} {x.capacity}" for x in m.memories))
    out.append("groups:   " + ", ".join(
        f"{g.name} ({g.warps} warps, {g.reg_limit} regs"
        + (", variable latency" if g.name == m.variable_latency_group else "") + ")"
        for g in m.warp_groups))
    rows = [["op", "cycles", "uses", "regs", "footprint", "notes"]]
    for op in model.ops:
        uniform = op.uniform_use()
        if uniform is None:
            uses = _reservation_runs(op)
        else:
            uses = ", ".join(f"{u}:{n}" for u, n in uniform.items()) or "-"
        notes = [k for k, on in (("variable-latency", op.variable_latency),
                                 ("async", op.is_async)) if on]
        if op.spill_cost:
            notes.append(f"spill {op.spill_cost}")
        if op.warps:
            notes.append(f">= {op.warps} warps")
        rows.append([op.name, str(op.cycles), uses, str(op.regs),
                     ", ".join(f"{k} {v}" for k, v in op.footprint) or "-", " ".join(notes)])
    out.append(_table(rows))
    if model.edges:
        rows = [["edge", "delay", "distance", "kind"]]
        for e in model.edges:
            rows.append([f"{e.src} -> {e.dst}", str(e.delay), str(e.distance),
                         e.kind + (" blocking" if e.blocking else "")])
        out.append(_table(rows))
    return "\n".join(out)


def cmd_show(args) -> int:
    print(describe_model(load_model(args.model)))
    return EXIT_OK


def _loaded(registry) -> dict:
    """Every entry of a registry that loads; failures are reported on stderr, not fatal."""
    loaded = registry.load_all()
    for name, why in registry.failures.items():
        print(f"warpweave: warning: {registry.kind} {name} not loaded: {why}", file=sys.stderr)
    return loaded


def cmd_kernels(args) -> int:
    kernels = {n: k for n, k in _loaded(KERNELS).items() if hasattr(k, "to_dict")}
    if args.json:
        _print_json([k.to_dict() for k in kernels.values()])
        return EXIT_OK
    for name, k in kernels.items():
        print(f"{name}: {k.description}")
        print(f"  machines: {', '.join(k.machines) or 'its own toy machine'}")
        if k.follows:
            print(f"  follows:  {k.follows}")
        rows = [[p.name, p.type.__name__, str(p.default), p.help] for p in k.all_params]
        if rows:
            print(_table(rows, indent="    "))
    return EXIT_OK


def cmd_machines(args) -> int:
    machines = {n: m for n, m in _loaded(MACHINES).items() if hasattr(m, "to_dict")}
    if args.json:
        _print_json([m.to_dict() for m in machines.values()])
        return EXIT_OK
    for name, m in machines.items():
        d = m.to_dict()
        print(f"{name} ({d['arch']}): {d['description']}")
        print("  units:    " + ", ".join(f"{u} x{x['capacity']}" for u, x in d["units"].items()))
        print("  memories: " + ", ".join(f"{k} {x['capacity']} {x['unit']}"
                                         for k, x in d["memories"].items()))
        print("  groups:   " + ", ".join(
            f"{g['name']} ({g['warps']} warp{'s' * (g['warps'] != 1)}, {g['reg_limit']} regs"
            + (", variable latency" if g["name"] == d["variable_latency_group"] else "") + ")"
            for g in d["warp_groups"]) + f" = {d['registers_used']} registers")
        rows = [[f, str(round(x["value"], 4)), x["unit"],
                 x["source"] + (" (estimate)" if x["estimate"] else "")]
                for f, x in d["figures"].items()]
        print("  figures:")
        print(_table(rows, indent="    "))
    return EXIT_OK


def cmd_build(args) -> int:
    from warpweave.kernels import kernel_spec, parse_params
    spec = kernel_spec(args.kernel)
    model = spec.build(args.machine, **parse_params(spec, args.params))
    if args.output:
        write_document(model_to_dict(model), args.output)
        print(f"wrote {args.output}: {model.name} on {model.machine.name}, {len(model.ops)} ops, "
              f"{len(model.edges)} edges")
    else:
        print(describe_model(model))
    return EXIT_OK


def _buffers(run) -> dict[str, int]:
    """Ring depth per value, as the code generator allocates them (raw schedule)."""
    return _ring_depths(run.raw, run.schedule, run.streaming)


def _ring_depths(model: Model, schedule: Schedule, streaming) -> dict[str, int]:
    from warpweave.codegen.buffers import plan
    ahead = {x.op: x.depth(schedule.I) for x in streaming}
    return {name: b.depth for name, b in plan(model, schedule,
                                              run_ahead=ahead).buffers.items()}


def _schedule_lines(m: Model, s: Schedule | None, streaming, at: int,
                    depths: dict[str, int]) -> list[str]:
    """The table of start times, stages, groups and buffers, and the streaming ops."""
    lines = []
    if s is not None:
        rows = [["op", "start", "stage", "group", "cycles", "buffer"]]
        for op in m.ops:
            rows.append([op.name, str(s.start[op.name]), str(s.stage(op.name)),
                         s.group[op.name], str(op.cycles), str(depths.get(op.name, "-"))])
        lines.append(_table(rows))
    for x in streaming:
        lines.append(f"  streaming: {x.op} (latency {x.latency} -> 0), runs "
                     f"{x.depth(at)} iteration(s) ahead")
    return lines


def describe_run(run) -> str:
    """The readable report of a solve."""
    o, s, m = run.outcome, run.schedule, run.raw
    b = o.bounds
    n = run.normalized
    unit = f" units of {n.scale} cycles" if n else ""
    why = f"ResMII {b.res_mii}" + (f" on {b.res_unit}" if b.res_unit else "") + \
        f", RecMII {b.rec_mii}"
    lines = [f"{m.name}: {o.status}"]
    if n:
        lines.append(f"  costs normalized: 1 unit = {n.scale} cycles ({'; '.join(n.warnings)})"
                     if n.warnings else f"  costs normalized: 1 unit = {n.scale} cycles")
    if s is not None:
        if o.optimal:
            proof = "proven optimal" + (" in units" if n else "")
        elif o.lower_bound >= o.schedule.I:
            proof = "I proven optimal" + (" in units" if n else "") + "; L not proven minimal"
        else:
            proof = f"not proven optimal: no I < {o.lower_bound}{unit} is feasible"
        if n:
            lines.append(f"  I = {s.I} cycles = {o.schedule.I}{unit} ({proof}; lower bound "
                         f"{b.lower}{unit}: {why})")
        else:
            lines.append(f"  I = {s.I} ({proof}; lower bound {b.lower}: {why})")
        lines.append(f"  L = {s.L}, {s.stages} stage{'s' * (s.stages != 1)}")
    elif o.status == "infeasible":
        lines.append(f"  no schedule with I <= {b.i_upper}{unit} (beyond which a larger I cannot "
                     f"help) and at most {o.max_stages} stages")
    else:
        lines.append(f"  no schedule found; no I < {o.lower_bound}{unit} is feasible")
    calls = sum(a.how.startswith(o.backend) for a in o.attempts)  # not the longest-path ones
    lines.append(f"  backend {o.backend}, encoding {o.encoding}, {o.seconds:.2f} s, "
                 f"{calls} solver call{'s' * (calls != 1)}")
    for note in o.notes + ((run.comparison,) if run.comparison else ()):
        lines.append(f"  note: {note}")
    for v in run.raw_violations:
        lines.append(f"  RAW-CYCLE VIOLATION (normalization hid it): {v}")
    lines.extend(_schedule_lines(m, s, run.streaming, run.raw_interval,
                                 _buffers(run) if s is not None else {}))
    lines.append(_proof_line(o, unit))
    return "\n".join(lines)


def _proof_line(o, unit: str) -> str:
    """What was shown: no I below the lower bound, then each (I range, stage counts) shown to
    have no schedule at any length, grouped by how (the first 12)."""
    def span(lo: int, hi: int) -> str:
        return str(lo) if lo == hi else f"{lo}..{hi}"

    cases = o.ruled_out()
    text = f"  proof{',' if unit else ''}{' in' + unit if unit else ''}: " \
        f"no I < {o.bounds.lower} (lower bound)"
    if not cases:
        return text
    parts: list[str] = []
    for k, ((i_lo, i_hi), (s_lo, s_hi), how) in enumerate(cases[:12]):
        case = f"I={span(i_lo, i_hi)} S={span(s_lo, s_hi)}"
        last = k + 1 == min(len(cases), 12) or cases[k + 1][2] != how
        parts.append(f"{case} ({how})" if last else case)
    more = f" and {len(cases) - 12} more" if len(cases) > 12 else ""
    return f"{text}; no schedule at {', '.join(parts)}{more}"


def solve_options(args) -> Options:
    return Options(backend=args.backend, encoding=args.encoding, search=args.search,
                   without=tuple(args.without),
                   max_stages=args.max_stages, time_limit=args.time_limit,
                   solve_limit=args.solve_limit, paper_search=args.paper_search,
                   tie_breakers=tuple(args.tie_break), seed=args.seed,
                   streaming=not args.no_streaming, normalize=args.normalize)


def cmd_solve(args) -> int:
    model = load_target(args.model, args.machine, args.params)
    if args.save_model:
        write_document(model_to_dict(model), args.save_model)
    with Progress() as progress:
        run = run_solve(model, solve_options(args), progress=progress)
    doc = report(run, _buffers(run) if run.schedule is not None else None)
    if args.out:
        write_document(doc, args.out)
    if args.json:
        print(dumps(doc), end="")
    else:
        print(describe_run(run))
    return run.exit_status


def heuristic_report(result: HeuristicResult, streaming, buffers: dict[str, int] | None) -> dict:
    """The schedule format of DESIGN section 5, marked as a heuristic answer (never optimal)."""
    s = result.schedule
    extra = {"optimal": False, "status": "feasible" if s else "unknown",
             "lower_bound": result.lower_bound, "seconds": round(result.seconds, 3),
             "constraints": list(result.rules),
             "heuristic": {"method": "iterative modulo scheduling with greedy warp assignment",
                           "max_stages": result.max_stages, "steps": result.steps,
                           "tried": result.tried, "trials": [t.to_dict() for t in result.trials],
                           "why": result.why}}
    if streaming:
        extra["streaming"] = [x.to_dict(s.I if s else result.lower_bound) for x in streaming]
    return schedule_report(result.model.name, s, extra, buffers)


def describe_heuristic(result: HeuristicResult, streaming, buffers: dict[str, int]) -> str:
    """The readable report of a heuristic run: no optimality claim, only max(ResMII, RecMII)."""
    b, s, m, low = result.bounds, result.schedule, result.model, result.lower_bound
    lines = [f"{m.name}: {'feasible' if s else 'no schedule found'} (heuristic: iterative "
             f"modulo scheduling with greedy warp assignment; no optimality claim)"]
    terms = ([f"ResMII {b.res_mii}" + (f" on {b.res_unit}" if b.res_unit else "")]
             if "capacity" in result.rules else []) + \
        ([f"RecMII {b.rec_mii}"] if "dependence" in result.rules else [])
    why = f"max({', '.join(terms)})" if terms else "no bound without capacity and dependence"
    if s is not None:
        gap = "equals the lower bound: no smaller I exists" if s.I == low else \
            "not proven minimal"
        lines.append(f"  I = {s.I} ({gap}; lower bound {low} = {why})")
        lines.append(f"  L = {s.L} (not minimized), {s.stages} stage{'s' * (s.stages != 1)} "
                     f"(at most {result.max_stages})")
    else:
        lines.append(f"  {result.why}")
        lines.append(f"  lower bound {low} = {why}; a heuristic failure proves nothing")
    tried, n = result.tried, len(result.trials)
    span = f"I = {tried[0]}..{tried[-1]}" if len(tried) > 1 else \
        (f"I = {tried[0]}" if tried else "nothing")
    lines.append(f"  tried {span}: {n} attempt{'s' * (n != 1)}, {result.steps} scheduling "
                 f"steps, {result.seconds:.3f} s")
    lines.append(f"  verified against: {', '.join(result.rules)}")
    lines.extend(_schedule_lines(m, s, streaming, s.I if s else low, buffers))
    return "\n".join(lines)


def cmd_heuristic(args) -> int:
    model = load_target(args.model, args.machine, args.params)
    streaming = []
    if not args.no_streaming:
        model, streaming = apply_streaming(model)
    for name in args.without:
        if name not in RULES:
            raise InputError(f"unknown rule (known: {', '.join(RULES)})", ("--without",), name)
    rules = [r for r in RULES if r not in set(args.without)]
    norm = normalization(model, args.normalize)
    result = heuristic_schedule(norm.model if norm else model, max_stages=args.max_stages,
                                rules=rules, budget=args.budget, seed=args.seed,
                                time_limit=args.time_limit)
    note = None
    if norm is not None:
        note = f"  costs normalized: 1 unit = {norm.scale} cycles (I tried in units)"
        raw = norm.denormalize(result.schedule) if result.schedule is not None else None
        if raw is not None and verify(model, raw, rules):
            note += "; the schedule fails in raw cycles, so none is reported"
            raw = None
        b = bounds(model, set(rules))
        result = attrs.evolve(result, model=model, schedule=raw, bounds=b, lower_bound=b.lower,
                              why=result.why or (None if raw else "raw-cycle check failed"))
    s = result.schedule
    buffers = _ring_depths(model, s, streaming) if s is not None else None
    doc = heuristic_report(result, streaming, buffers)
    if args.out:
        write_document(doc, args.out)
    if args.json:
        print(dumps(doc), end="")
    else:
        text = describe_heuristic(result, streaming, buffers or {})
        if note:
            first, _, rest = text.partition("\n")
            text = "\n".join([first, note, rest])
        print(text)
    return EXIT_OK if s is not None else EXIT_NO


def cmd_import(args) -> int:
    from warpweave.importers import import_model
    from warpweave.importers.meta_b200 import parse_groups

    model = import_model(
        args.file, args.source, loop=args.loop, rm=args.rm, reg_limit=args.reg_limit,
        groups=parse_groups(args.groups) if args.groups is not None else None,
        async_units=[u for u in args.async_units.split(",") if u]
        if args.async_units is not None else None)
    doc = model_to_dict(model)
    if args.out:
        write_document(doc, args.out)
        print(f"wrote {args.out}: model {model.name}, {len(model.ops)} ops, "
              f"{len(model.edges)} edges", file=sys.stderr)
    else:
        print(dumps(doc), end="")
    return EXIT_OK


def _bench_line(k: int, n: int, r: dict) -> str:
    """One progress line per finished benchmark case."""
    answer = f" I={r['I_units']} L={r['L_units']}" if r.get("I_units") is not None else ""
    seconds = f" {r['wall_seconds']:.2f} s" if "wall_seconds" in r else ""
    error = f": {r['error']}" if r.get("error") else ""
    return f"  [{k}/{n}] {r['suite']}/{r['case']}  {r['config']}: {r['status']}{answer}" \
        f"{seconds}{error}"


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
    from warpweave.pipeline import normalization
    if args.report:
        header, records = read_results(args.report)
    else:
        if args.timeout <= 0:
            raise InputError("must be > 0", ("--timeout",), args.timeout)
        configs, notes = matrix(_items(args.backends), _items(args.encodings),
                                _items(args.searches), args.all, not args.no_heuristic,
                                _items(args.configs))
        targets = args.targets or ["kernels"]
        cases = select(targets, Path(args.data) if args.data else None, args.limit)
        if cases:  # a bad --normalize is one input error here, not one per case
            normalization(cases[0].load(), args.normalize)
        settings = Settings(timeout=args.timeout, normalize=args.normalize,
                            max_stages=args.max_stages, seed=args.seed)
        header = run_header(targets, configs, settings, notes)
        for note in notes:
            print(f"warpweave bench: {note}", file=sys.stderr)
        print(f"warpweave bench: {len(cases)} cases x {len(configs)} configurations, "
              f"timeout {args.timeout:g} s", file=sys.stderr)
        writer = Writer(args.out)
        writer.write(header)
        records: list[dict] = []
        total = len(cases) * len(configs)

        def emit(record: dict) -> None:
            records.append(record)
            writer.write(record)
            print(_bench_line(len(records), total, record), file=sys.stderr, flush=True)

        try:
            run_matrix(cases, configs, settings, emit)
        finally:
            header.update(writer.close(), type="run")
    text = markdown(header, records)
    if args.markdown:
        Path(args.markdown).write_text(text)
    print(text, end="")
    bad = disagreements(records)
    for x in bad:
        print(f"warpweave bench: DISAGREEMENT (a bug): {x}", file=sys.stderr)
    return EXIT_NO if bad else EXIT_OK


def cmd_crosscheck(args) -> int:
    from warpweave.crosscheck import crosscheck, parse_list, reduce_disagreement, show_answer

    model = load_target(args.model, args.machine, args.params)
    families = [f for f in BACKENDS.load_all() if BACKENDS.get(f).unavailable() is None]
    backends = parse_list(args.backends, families, backend_specs(), "backends")
    for spec in backends:
        backend(spec)  # an unknown or unavailable backend is an input error before any solve
    encodings = parse_list(args.encodings, ENCODINGS.names(), ENCODINGS.names(), "encodings")
    for name in encodings:
        ENCODINGS.get(name)
    options = Options(without=tuple(args.without), max_stages=args.max_stages,
                      time_limit=args.time_limit, seed=args.seed,
                      streaming=not args.no_streaming, normalize=args.normalize)

    def progress(row) -> None:
        if sys.stderr.isatty():
            print(f"  {row.backend}/{row.encoding}: {row.status} ({row.seconds:.2f} s)",
                  file=sys.stderr)

    rep = crosscheck(model, backends, encodings, options, oracle=args.oracle,
                     oracle_budget=args.oracle_budget, out=args.out, progress=progress)
    print(f"{model.name}: {len(backends)} backend{'s' * (len(backends) != 1)} x "
          f"{len(encodings)} encoding{'s' * (len(encodings) != 1)}, at most "
          f"{rep.max_stages} stages")
    rows = [["backend", "encoding", "status", "I", "L", "seconds", "verified"]]
    for r in rep.rows:
        rows.append([r.backend, r.encoding, r.status, str(r.I or "-"), str(r.L or "-"),
                     f"{r.seconds:.2f}", r.verified if len(r.verified) < 60 else
                     r.verified[:57] + "..."])
    print(_table(rows))
    if args.oracle:
        found = rep.oracle
        print(f"  oracle: {show_answer(found)} ({rep.oracle_note})" if found else
              f"  oracle: {rep.oracle_note}")
        if found and rep.scale and found[1] is not None:
            print(f"  (the oracle's I and L are in normalized units of {rep.scale} cycles)")
    for line in rep.problems:
        print(f"  DISAGREEMENT: {line}")
    if not rep.problems:
        print("  all finished runs agree" + ("" if rep.exit_status == 0 else
                                            "; some did not finish (time limit)"))
    if rep.written:
        print(f"  wrote {len(rep.written)} file{'s' * (len(rep.written) != 1)} to "
              f"{rep.written[0].parent}: {', '.join(p.name for p in rep.written)}")
    if args.reduce and rep.problems:
        red = reduce_disagreement(model, backends, encodings, options, oracle=args.oracle,
                                  oracle_budget=args.oracle_budget, budget=args.reduce)
        path = rep.written[0].parent / "reduced.json"
        write_document(model_to_dict(red.model.replace(name=f"{model.name}-reduced")), path)
        print(f"  reduced from {len(model.ops)} ops / {len(model.edges)} edges to "
              f"{len(red.model.ops)} / {len(red.model.edges)} ({red.calls} cross-checks"
              f"{'; interrupted: the smallest model so far' if red.interrupted else ''}), "
              f"still disagreeing: {path}")
    return rep.exit_status


# ---------------------------------------------------------------------------------------------
# Backends


def backend_rows() -> list[dict]:
    """One row per backend variant: spec, availability (and why not), version, capabilities."""
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
            rows.append({"spec": b.spec, "available": True, "reason": None,
                         "version": b.version(), "capabilities": sorted(b.capabilities)})
    return rows


def cmd_backends(args) -> int:
    rows = backend_rows()
    choices = {}
    for family, cls in BACKENDS.load_all().items():
        if hasattr(cls, "choices") and cls.unavailable() is None:
            choices[family] = cls.choices()
    if args.json:
        _print_json({"backends": rows, "options": choices})
        return EXIT_OK
    table = [["spec", "available", "version", "capabilities"]]
    for r in rows:
        table.append([r["spec"], "yes" if r["available"] else f"no: {r['reason']}",
                      r["version"] or "-", " ".join(r["capabilities"])])
    print("backends:")
    print(_table(table))
    for family, c in choices.items():
        print(f"\n{family} options: {c['syntax']} (defaults: {', '.join(c['defaults'])})")
        if "solvers" in c:
            ok = [n for n, why in c["solvers"].items() if why is None]
            print(f"  solvers: {', '.join(ok)}")
            for n, why in c["solvers"].items():
                if why is not None:
                    print(f"  solver {n} unavailable: {why}")
            print(f"  cardinality encodings: {', '.join(c['card'])}")
            print(f"  PB encodings: {', '.join(c['pb'])}")
    return EXIT_OK


def cmd_export(args) -> int:
    from warpweave.backends.exports import export
    from warpweave.encodings.ir import Problem

    try:
        problem = Problem.read(args.ir)
    except InputError as exc:
        raise exc.with_file(args.ir) from None
    except (OSError, ValueError) as exc:   # unreadable, or not JSON
        raise InputError(f"not a readable IR file ({type(exc).__name__}: {exc})",
                         file=args.ir) from None
    card, _, pb = (args.encodings or "").partition("/")
    try:
        offset = export(problem, args.to, args.out, **{k: v for k, v in
                                                        (("card", card), ("pb", pb)) if v})
    except ValueError as exc:
        raise InputError(str(exc), value=args.encodings) from None
    summary = problem.summary()
    note = f", objective = file objective + {offset}" if offset else ""
    print(f"wrote {args.out} ({args.to}): {summary['bools']} Booleans, {summary['ints']} "
          f"integers, {sum(summary['constraints'].values())} constraints{note}")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# From schedule to program (warpweave.codegen)


def _schedule_for(args) -> tuple[Model, Schedule, list[StreamingOp]]:
    """The schedule the codegen commands work on: from --schedule, or solved with the solve
    options.  Returns the model it is for (streaming ops at zero latency if it was solved so),
    the schedule, and the streaming ops (how far each must run ahead, its real latency)."""
    model = load_target(args.model, args.machine, args.params)
    if not args.schedule:
        with Progress() as progress:
            run = run_solve(model, solve_options(args), progress=progress)
        if run.schedule is None or run.raw_violations:
            raise InputError(f"the search found no verified schedule ({run.outcome.status}); "
                             "give --schedule or other solve options", value=args.model)
        return run.raw, run.schedule, list(run.streaming)
    doc = read_document(args.schedule)
    changed: list[StreamingOp] = []
    if doc.get("streaming"):
        model, changed = apply_streaming(model)
    try:
        return model, schedule_from_dict(doc, model), changed
    except InputError as exc:
        raise exc.with_file(args.schedule) from None


def _valid_schedule(args) -> tuple[Model, Schedule, list[StreamingOp]] | None:
    """Model, schedule and streaming ops, or None after printing the violations (codegen needs
    a valid schedule)."""
    model, schedule, streaming = _schedule_for(args)
    violations = verify(model, schedule)
    if violations:
        print(f"invalid schedule ({len(violations)} violations); codegen needs a valid one:",
              file=sys.stderr)
        for v in violations:
            print(f"  {v}", file=sys.stderr)
        return None
    return model, schedule, streaming


def _lowered(args):
    """(model, schedule, warp program, streaming ops), or None when the schedule is invalid."""
    from warpweave.codegen.lower import lower
    got = _valid_schedule(args)
    if got is None:
        return None
    model, schedule, streaming = got
    ahead = {x.op: x.depth(schedule.I) for x in streaming}
    depths = _depths(model, getattr(args, "depth", None) or ())
    return model, schedule, lower(model, schedule, depths, run_ahead=ahead), streaming


def _depths(model: Model, pairs: Sequence[str]) -> dict[str, int]:
    """`--depth VALUE=N` pairs: ring depths to use instead of the plan's (an experiment)."""
    out = {}
    for pair in pairs:
        name, _, n = pair.partition("=")
        if not n.isdigit() or int(n) < 1:
            raise InputError("expected VALUE=N with N >= 1", ("--depth",), pair)
        if not model.has_op(name):
            raise InputError(f"unknown op {name!r}", ("--depth",), pair)
        out[name] = int(n)
    return out


def cmd_emit(args) -> int:
    from warpweave.codegen import cuda, text
    got = _lowered(args)
    if got is None:
        return EXIT_NO
    model, schedule, program, _ = got
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = model.name
    targets = {"pseudo", "ir", "cuda"} if args.target == "all" else {args.target}
    written = []
    if "pseudo" in targets:
        (out / f"{stem}.qtable.txt").write_text(text.q_table(model, schedule) + "\n")
        (out / f"{stem}.pseudo.txt").write_text(text.pseudocode(model, program))
        written += [f"{stem}.qtable.txt", f"{stem}.pseudo.txt"]
    if "ir" in targets:
        (out / f"{stem}.ir.txt").write_text(text.ir_text(program))
        (out / f"{stem}.ir.json").write_text(text.ir_json(program) + "\n")
        written += [f"{stem}.ir.txt", f"{stem}.ir.json"]
    status = EXIT_OK
    report = None
    if "cuda" in targets:
        src = cuda.emit_cuda(model, program, args.arch)
        cu = cuda.write_cuda(src, out, stem)
        written += [cu.name, src.hooks_name]
        if not args.no_compile:
            if cuda.nvcc_path() is None:
                report = "nvcc not found: not compiled"
            else:
                res = cuda.compile_cuda(cu, src.arch)
                if not res.ok:
                    print(res.output, file=sys.stderr)
                    status = EXIT_NO
                report = _ptxas_lines(res, src)
    print(f"{model.name}: I={schedule.I}, L={schedule.L}, {program.S} stages; wrote "
          f"{', '.join(written)} to {out}")
    for b in program.plan.buffers.values():
        print(f"  buffer {b.value}: {b.depth} slot{'s' * (b.depth != 1)} ({b.reason})")
    for name, ch in program.plan.channels.items():
        print(f"  channel {name}: {ch.group} -> {', '.join(ch.consumers) or '(own group)'}, "
              f"{ch.depth} slot{'s' * (ch.depth != 1)}, {ch.lowering}")
    for note in program.notes:
        print(f"  note: {note}")
    print(_steady_lines(program.plan.steady))
    if report:
        print(report)
    return status


def _steady_lines(peaks) -> str:
    """A line per pool whose steady-state peak exceeds its limit, or one line saying none does."""
    over = [f"  steady state: {p}" for p in peaks if p.exceeds]
    kinds = dict.fromkeys(p.kind for p in peaks)
    return "\n".join(over) or ("  steady state: within limits (" + "; ".join(
        f"{k} " + ", ".join(f"{p.pool} {p.peak}/{p.limit}" for p in peaks if p.kind == k)
        for k in kinds) + ")")


def _ptxas_lines(res, src) -> str:
    lines = [f"  nvcc -arch={src.arch}: {'ok' if res.ok else 'FAILED'}"]
    for k in res.kernels:
        lines.append(f"  ptxas {k.target} {k.kernel}: {k.registers} registers/thread, "
                     f"{k.spill_stores} B spill stores, {k.spill_loads} B spill loads, "
                     f"{k.stack_frame} B stack, {k.smem} B smem")
    lines.append(f"  setmaxnreg per warp group: {list(src.layout.hw_regs)} "
                 f"(entry {src.layout.entry_regs}, {src.layout.threads} threads)")
    lines += [f"  ptxas: {w}" for w in res.warnings]
    return "\n".join(lines)


def cmd_simulate(args) -> int:
    from warpweave.codegen.simulate import simulate
    got = _lowered(args)
    if got is None:
        return EXIT_NO
    model, schedule, program, streaming = got
    if args.iterations < program.min_iterations:
        raise InputError(f"must be >= {program.min_iterations} for this schedule",
                         ("--iterations",), args.iterations)
    if not 0 <= args.jitter < 100:
        raise InputError("must be in [0, 100)", ("--jitter",), args.jitter)
    real = {x.op: x.latency for x in streaming} if args.real_latency else {}
    res = simulate(model, schedule, program, args.iterations, args.jitter / 100, args.seed,
                   args.pace, real)
    if args.json:
        _print_json({"model": model.name, "I": schedule.I, "iterations": res.iterations,
                     "passed": res.passed, "verdict": res.verdict(), "ok": res.ok,
                     "deadlock": list(res.deadlock), "races": [str(r) for r in res.races],
                     "rate": str(res.rate) if res.rate is not None else None,
                     "target": str(res.target), "gap": res.gap(), "stalls": res.stalls,
                     "late": res.late,
                     "first_late": str(res.first_late) if res.first_late else None,
                     "real_latency": real, "makespan": res.makespan})
    else:
        lat = f"jitter {args.jitter:g}% (seed {args.seed})" if args.jitter else "fixed latencies"
        print(f"{model.name}: {res.iterations} iterations, {lat}, {args.pace} pacing, "
              f"{res.makespan} cycles")
        for op, cycles in real.items():
            print(f"  streaming {op}: real latency {cycles}, issued as early as it may")
        print(f"  deadlock: {'; '.join(res.deadlock) or 'none'}")
        print(f"  races: {len(res.races)}")
        for r in res.races[:10]:
            print(f"    {r}")
        if args.pace == "schedule":
            print(f"  ops issued after their planned cycle: {res.late}")
            if res.first_late:
                print(f"    first: {res.first_late}")
        rate = f"{res.rate} = {float(res.rate):.4f}" if res.rate is not None else "n/a"
        print(f"  steady state: {rate} iterations/cycle; 1/I = {res.target}")
        gap = res.gap()
        print(f"  {'gap: ' + gap if gap else 'reaches 1/I'}")
        for k, v in sorted(res.stalls.items(), key=lambda kv: -kv[1])[:6]:
            print(f"    stall {k}: {v} cycles")
        print(f"  {res.verdict()}")
    return EXIT_OK if res.passed else EXIT_NO


def cmd_draw(args) -> int:
    from warpweave.codegen.draw import draw_all
    got = _valid_schedule(args)
    if got is None:
        return EXIT_NO
    model, schedule, _ = got
    made = draw_all(model, schedule, args.out)
    for name, how in made.items():
        print(f"{Path(args.out) / name}: {how}")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------

COMMANDS: dict[str, Callable] = {}


def _target_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", metavar="TARGET", help="model file (.json or .toml) or kernel name")
    p.add_argument("params", nargs="*", metavar="KEY=VALUE", help="kernel parameters")
    p.add_argument("--machine", help="machine of a library kernel (default: its first)")


def _solve_arguments(p: argparse.ArgumentParser) -> None:
    """The options of the search (shared by solve and, instead of --schedule, by the codegen
    commands)."""
    p.add_argument("--backend", default="auto", help="solver backend: cpsat, cbc, highs, z3, "
                   "cvc5, yices, sat[:SOLVER[/CARD[/PB]]] (see `warpweave backends`; default: "
                   f"{MINIMIZE_BACKEND} for the minimize search, {SWEEP_BACKEND} for the sweep)")
    p.add_argument("--encoding", default=DEFAULT_ENCODING, help="encoding of time: integer "
                   "(default; start times, L and I as integers), compact (order-encoded start "
                   "times, per-cycle lifetimes) or paper (the Twill paper's Figures 4-6)")
    p.add_argument("--search", default="auto", choices=("auto", "minimize", "sweep"),
                   help="minimize: I is a variable, one problem per stage count (needs "
                   "--encoding integer); sweep: one problem per I and stage count, I upward "
                   "from the lower bound; auto (default): minimize when the encoding allows")
    p.add_argument("--max-stages", type=int, help="largest stage count S = ceil(L/I) searched "
                   "(default: derived from the graph, see `warpweave bounds`)")
    p.add_argument("--time-limit", type=float, help="seconds for the whole search")
    p.add_argument("--solve-limit", type=float, help="seconds for each solver call")
    p.add_argument("--paper-search", action="store_true", help="the Twill paper's Algorithm 1 "
                   "(phase-1 modulo schedule fixes the stage count), compared with the full "
                   "search")
    p.add_argument("--without", action="append", default=[], metavar="CONSTRAINT",
                   help="leave a constraint out (repeatable), e.g. --without concurrency")
    p.add_argument("--tie-break", action="append", default=[], metavar="WHAT",
                   help="among optimal (I, L): groups | cross_edges | register_peak "
                   "(repeatable, applied in order)")
    p.add_argument("--no-streaming", action="store_true", help="keep the latency of "
                   "variable-latency ops without incoming data edges (paper section 5.3)")
    p.add_argument("--normalize", default="auto", metavar="HOW", help="cost normalization: auto "
                   "(default: when the lower bound on I exceeds 128 cycles, round costs up to "
                   "units of about lower/64 cycles, chosen to round the bound least), off, "
                   "unit=K (round up to units of K cycles) or paper=U (the Twill paper's ILP "
                   "with bound U)")
    p.add_argument("--seed", type=int, default=0, help="seed of the solver (and of the "
                   "simulator's --jitter); default 0")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="warpweave",
        description="Optimal software pipelining with warp specialization for GPU tile loops.")
    parser.add_argument("--version", action="version", version=f"warpweave {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("verify", help="check a schedule against a model, rule by rule",
                       description="Check SCHEDULE against MODEL (DESIGN section 3) and list each "
                       "violated rule with its witness. Exit 0 valid, 1 violations, 2 bad input.")
    p.add_argument("model", help="model file (.json or .toml)")
    p.add_argument("schedule", help="schedule file (.json or .toml)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("bounds", help="lower bounds on I (ResMII, RecMII) and the search limits",
                       description="Print ResMII (reservation tables), RecMII (exact maximum "
                       "delay/distance over dependence cycles, with the critical cycle), the "
                       "lower bound on L, and the limits the search uses.")
    p.add_argument("model", help="model file (.json or .toml)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_bounds)

    p = sub.add_parser("show", help="a readable summary of a model",
                       description="Summarize MODEL: units, memories, warp groups, ops with their "
                       "reservations and resources, and edges.")
    p.add_argument("model", help="model file (.json or .toml)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "solve", help="find an optimal schedule and warp assignment, with a proof",
        description="Search I upward from max(ResMII, RecMII); at each I try every stage count "
        "S <= --max-stages, minimizing L; verify the answer (in raw cycles when costs were "
        "normalized). TARGET is a model file or a library kernel (`warpweave kernels`) with "
        "--machine and key=value parameters. Exit 0 optimal, 1 no schedule within the bounds, "
        "2 bad input, 3 a limit reached before the proof was complete (or a raw-cycle "
        "violation after normalization).")
    _target_arguments(p)
    _solve_arguments(p)
    p.add_argument("--json", action="store_true", help="print the schedule format (DESIGN 5) "
                   "with optimal, lower_bound, proof, stages, buffers, ...")
    p.add_argument("--out", help="also write the JSON report to this file")
    p.add_argument("--save-model", metavar="FILE", help="write the model solved (e.g. a built "
                   "kernel) to FILE, for `warpweave verify`")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser(
        "heuristic", help="a fast schedule by iterative modulo scheduling (no optimality proof)",
        description="Rau's iterative modulo scheduling with a greedy warp-group assignment, "
        "trying I upward from max(ResMII, RecMII) (in normalized units when costs are large); "
        "every schedule it prints is "
        "verified. A heuristic: it claims no optimality, and failing is no proof of "
        "infeasibility. Exit 0 schedule found, 1 none found, 2 bad input.")
    _target_arguments(p)
    p.add_argument("--max-stages", type=int, help="largest stage count S = ceil(L/I) "
                   "(default: as for solve, see `warpweave bounds`)")
    p.add_argument("--budget", type=int, default=6, help="scheduling steps per op for one "
                   "modulo-scheduling attempt (Rau's budget ratio, default 6)")
    p.add_argument("--without", action="append", default=[], metavar="RULE",
                   help="leave a rule out (repeatable), e.g. --without concurrency")
    p.add_argument("--no-streaming", action="store_true", help="keep the latency of "
                   "variable-latency ops without incoming data edges (paper section 5.3)")
    p.add_argument("--normalize", default="auto", metavar="HOW", help="cost normalization as "
                   "for solve: auto (default), off, unit=K or paper=U; the schedule is mapped "
                   "back to raw cycles and verified there")
    p.add_argument("--time-limit", type=float, help="seconds, after which the I being tried "
                   "is the last (the answer then depends on the machine's speed)")
    p.add_argument("--seed", type=int, default=0, help="seed of the randomized attempts "
                   "(default 0; the result is deterministic for a seed)")
    p.add_argument("--json", action="store_true", help="print the schedule format (DESIGN 5) "
                   "with optimal: false, lower_bound, stages, buffers and the attempts")
    p.add_argument("--out", help="also write the JSON report to this file")
    p.set_defaults(func=cmd_heuristic)

    p = sub.add_parser("emit", help="pipelined code from a schedule: pseudocode, IR, CUDA C++",
                       description="Lower a valid schedule to per-warp-group programs and print "
                       "them: the Q table and pseudocode (pseudo), the warp-program IR as text "
                       "and JSON (ir), a CUDA C++ kernel skeleton with hooks (cuda; compiled "
                       "with nvcc when present, reporting ptxas registers and spills).")
    _target_arguments(p)
    p.add_argument("--schedule", help="schedule file (.json or .toml); without it the target "
                   "is solved with the solve options below")
    _solve_arguments(p)
    p.add_argument("--target", choices=("pseudo", "ir", "cuda", "all"), default="all")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--arch", choices=("sm_90a", "sm_100a"),
                   help="CUDA target (default: sm_100a for Blackwell-like machine names, "
                   "else sm_90a)")
    p.add_argument("--no-compile", action="store_true", help="do not run nvcc")
    p.set_defaults(func=cmd_emit)

    p = sub.add_parser("simulate", help="run the warp programs in a discrete-event simulator",
                       description="Simulate the warp programs of a valid schedule: deadlock, "
                       "ring-slot races and wrong-iteration reads are reported, and the "
                       "steady-state rate is compared with 1/I. Exit 1 on a deadlock or race, "
                       "and, with fixed latencies and the schedule's pacing (the schedule "
                       "itself), when the rate misses 1/I or an op issues late (the first late "
                       "op and the wait that held it are named); else 0.")
    _target_arguments(p)
    p.add_argument("--schedule", help="schedule file (.json or .toml); without it the target "
                   "is solved with the solve options below")
    _solve_arguments(p)
    p.add_argument("--iterations", type=int, default=64, help="loop iterations (default 64)")
    p.add_argument("--jitter", type=float, default=0.0,
                   help="randomize variable-latency ops by up to +-PCT percent")
    p.add_argument("--pace", choices=("schedule", "greedy"), default="schedule",
                   help="issue ops at their scheduled cycle (default) or as soon as possible")
    p.add_argument("--real-latency", action="store_true",
                   help="run the streaming loads (solved at zero latency) at their real latency, "
                   "each issued as early as its stream, waits and ring slots allow")
    p.add_argument("--depth", action="append", default=[], metavar="VALUE=N",
                   help="give VALUE's ring N slots instead of the plan's (an experiment: what "
                   "a shallower or deeper ring does); repeatable")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("draw", help="pictures: Q timeline (SVG/PNG), dependence graph (DOT/SVG)",
                       description="Write timeline.svg (and timeline.png with matplotlib), "
                       "graph.dot and graph.svg (graphviz dot if on PATH, else built in).")
    _target_arguments(p)
    p.add_argument("--schedule", help="schedule file (.json or .toml); without it the target "
                   "is solved with the solve options below")
    _solve_arguments(p)
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=cmd_draw)

    p = sub.add_parser("import", help="convert an external dependence graph into a model file",
                       description="Convert FILE (Meta's raw ddg-0.1 dump, Meta's curated-ddg-0.2 "
                       "graph, or a HatScheT GraphML graph with its resource model) into the "
                       "warpweave model format; docs/importers.md gives the field mapping.")
    p.add_argument("file", help="the graph file")
    p.add_argument("--from", dest="source", required=True,
                   choices=["meta-ddg", "meta-curated", "hatschet"], help="the input format")
    p.add_argument("--loop", type=int, help="Meta formats: the loop_id to import (default: the "
                   "first inner loop)")
    p.add_argument("--groups", help="Meta formats: warp-group sizes over the 32 warps, e.g. "
                   "1,4x7,1x3 (the default); the first is the variable-latency group")
    p.add_argument("--reg-limit", type=int, help="Meta formats: registers per thread of every "
                   "group (default 255 = 8160 words per warp / 32)")
    p.add_argument("--async-units", help="Meta formats: units whose ops hold their group's issue "
                   "for one cycle only, e.g. TC,TMA (default: none, as in the paper)")
    p.add_argument("--rm", help="HatScheT: the resource-model XML (default: <graph>_RM.xml or "
                   "<graph>RM.xml beside the graph)")
    p.add_argument("--out", help="write the model here (.json or .toml) instead of printing it")
    p.set_defaults(func=cmd_import)
    p = sub.add_parser(
        "crosscheck", help="solve one model with every backend x encoding and compare",
        description="Run the optimal search (as `solve` does: streaming, normalization, raw "
        "re-verification) with every backend x encoding, print one row each (status, I, L, "
        "seconds, verified), and compare. On a disagreement or a failed verification, write the "
        "replayable IR of the first (I, S) question answered differently (one file per run), "
        "the model solved and the oracle's schedule there to --out. Exit 0 all agree, 1 a "
        "disagreement, 2 bad input, 3 some run hit --time-limit.")
    _target_arguments(p)
    p.add_argument("--backends", action="append", default=[], metavar="SPECS",
                   help="comma-separated backend specs (repeatable); `all` for every variant "
                   "of `warpweave backends` (default: each available family)")
    p.add_argument("--encodings", action="append", default=[], metavar="NAMES",
                   help="comma-separated encodings (default: all)")
    p.add_argument("--max-stages", type=int, help="stage bound of every search (default: "
                   "derived from the graph, the same for every run)")
    p.add_argument("--oracle", action="store_true", help="also enumerate every schedule with the "
                   "verifier (tiny models only) and compare with its answer")
    p.add_argument("--oracle-budget", type=int, default=200_000, metavar="N",
                   help="give the oracle up after N candidate schedules (default 200000)")
    p.add_argument("--out", help="where to write replay files on a disagreement (default "
                   "crosscheck-<model>/)")
    p.add_argument("--time-limit", type=float, help="seconds for each run's search")
    p.add_argument("--without", action="append", default=[], metavar="CONSTRAINT",
                   help="leave a constraint out of every run (repeatable)")
    p.add_argument("--normalize", default="auto", metavar="HOW", help="cost normalization, as "
                   "for solve: auto (default), off, unit=K, paper=U")
    p.add_argument("--no-streaming", action="store_true", help="as for solve")
    p.add_argument("--seed", type=int, default=0, help="seed of every solver (default 0)")
    p.add_argument("--reduce", type=int, nargs="?", const=100, default=0, metavar="N",
                   help="on a disagreement, also write --out/reduced.json: the model with every "
                   "edge, op, group and field dropped that the disagreement does not need (at "
                   "most N more cross-checks, default 100)")
    p.set_defaults(func=cmd_crosscheck)

    p = sub.add_parser("backends", help="list the solver backends, their variants and capabilities",
                       description="List every registered backend (and the concrete variants "
                       "worth testing: sat solvers x encodings, cpsat worker counts) with "
                       "availability (and why not), solver version and capabilities.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_backends)

    p = sub.add_parser("export", help="write an IR file as LP, MPS, SMT-LIB 2, CNF or WCNF",
                       description="Translate a saved IR problem (warpweave.ir/1 JSON, what "
                       "failing solves are saved as) to a standard format, to replay it with an "
                       "external solver.")
    p.add_argument("ir", help="IR file (.json)")
    p.add_argument("--to", required=True, choices=["lp", "mps", "smt2", "cnf", "wcnf"],
                   help="output format")
    p.add_argument("--out", required=True, help="output file")
    p.add_argument("--encodings", metavar="CARD/PB",
                   help="cnf/wcnf: cardinality and PB encodings (default totalizer/best)")
    p.set_defaults(func=cmd_export)
    p = sub.add_parser("kernels", help="list the kernel library: parameters and machines",
                       description="List every registered kernel builder with its machines and "
                       "parameters (key, type, default, meaning).")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_kernels)

    p = sub.add_parser("machines", help="list the machines: units, memories, groups, cost figures",
                       description="List every registered machine: functional units, memories, the "
                       "default warp-group inventory, and each cost figure with its source.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_machines)

    p = sub.add_parser("build", help="build a library kernel into a model",
                       description="Build KERNEL with the given key=value parameters; print its "
                       "summary, or write the model file with -o.")
    p.add_argument("kernel", help="kernel name (see `warpweave kernels`)")
    p.add_argument("params", nargs="*", metavar="KEY=VALUE", help="kernel parameters")
    p.add_argument("--machine", help="machine name (default: the kernel's first)")
    p.add_argument("-o", "--output", help="write the model to this file (.json or .toml)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("bench", help="benchmark backends, encodings and the heuristic on suites",
                       description="Run every case of the SUITEs (kernels, meta, hatschet, "
                       "random; or model files, or kernels as name[@machine]) under every "
                       "configuration, each in a worker process killed at the hard limit; "
                       "write JSON lines and print a markdown report with time ratios measured "
                       "in the same run, agreement across configurations and the heuristic's "
                       "gap. Exit 0, or 1 when configurations disagree (a bug).")
    p.add_argument("targets", nargs="*", metavar="SUITE", help="suites, model files or kernels "
                   "(default: kernels)")
    p.add_argument("--backends", action="append", default=[], metavar="SPEC,...",
                   help="backend specs (comma-separated or repeated; `heuristic` is one too); "
                   "default: a matrix of cpsat, highs, cbc, yices, sat and z3 configurations")
    p.add_argument("--encodings", action="append", default=[], metavar="NAME,...",
                   help="encodings crossed with --backends (default: integer)")
    p.add_argument("--searches", action="append", default=[], metavar="minimize,sweep",
                   help="search strategies crossed with both (default: as solve's --search "
                   "auto); minimize needs the integer encoding")
    p.add_argument("--all", action="store_true", help="every backend variant on every encoding "
                   "and search")
    p.add_argument("--configs", action="append", default=[], metavar="LABEL,...",
                   help="exactly these configurations, first the baseline, each as reports "
                   "label them: 'BACKEND/ENCODING SEARCH' (e.g. 'cpsat/integer minimize') or "
                   "heuristic")
    p.add_argument("--no-heuristic", action="store_true", help="leave the heuristic out")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per case: the search's "
                   "time limit; the worker is killed max(5, 10%%) later (default 120)")
    p.add_argument("--limit", type=int, help="at most N cases per suite, spread over its sizes")
    p.add_argument("--out", help="write the records here as JSON lines")
    p.add_argument("--markdown", metavar="FILE", help="also write the report here")
    p.add_argument("--report", metavar="FILE", help="run nothing: the report of a results file")
    p.add_argument("--data", metavar="DIR", help="the benchmarks directory (default: the one "
                   "beside the package)")
    p.add_argument("--normalize", default="auto", metavar="HOW", help="cost normalization, as "
                   "for solve (default auto)")
    p.add_argument("--max-stages", type=int, help="stage bound, as for solve")
    p.add_argument("--seed", type=int, default=0, help="solver and heuristic seed (default 0)")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # key=value kernel parameters may follow options (`build gemm --machine b200 k_steps=4`);
    # argparse leaves such late positionals over, so they are collected here.
    args, extra = parser.parse_known_args(argv)
    if extra:
        if hasattr(args, "params") and all("=" in x and not x.startswith("-") for x in extra):
            args.params = [*args.params, *extra]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_INPUT
    try:
        return args.func(args)
    except InputError as exc:
        print(f"warpweave: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except SearchBug as exc:
        print(f"warpweave: bug: {exc}", file=sys.stderr)
        return EXIT_BUG
    except KeyboardInterrupt:
        print("warpweave: interrupted", file=sys.stderr)
        return EXIT_LIMIT
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
