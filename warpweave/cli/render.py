"""The command line's renderers: the readable text of each result the API returns.

Every function takes objects (a model, a `api.Result`, a verdict, ...) and returns text; none
solves, reads files or prints.  `--json` output is the objects' own dictionaries, not made here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from warpweave.core.model import Model
from warpweave.core.schedule import Schedule

NOT_ASKED = "not asked to compile"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def table(rows: Sequence[Sequence[str]], indent: str = "  ") -> str:
    """Left-aligned columns, two spaces apart."""
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "\n".join(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


def json_text(doc: Any) -> str:
    return json.dumps(doc, indent=2) + "\n"


# ---------------------------------------------------------------------------------------------
# Models and schedules


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
    out.append(table(rows))
    if model.edges:
        rows = [["edge", "delay", "distance", "kind"]]
        for e in model.edges:
            rows.append([f"{e.src} -> {e.dst}", str(e.delay), str(e.distance),
                         e.kind + (" blocking" if e.blocking else "")])
        out.append(table(rows))
    return "\n".join(out)


def describe_bounds(model: Model, b) -> str:
    crit = b.critical
    rows = [["ResMII", str(b.res_mii), f"unit {b.res_unit}" if b.res_unit else "no unit used"],
            ["RecMII", str(b.rec_mii),
             f"cycle {crit.describe()}: delay {crit.delay} / distance {crit.distance}"
             if crit else "no dependence cycle"],
            ["I >=", str(b.lower), "lower bound max(1, ResMII, RecMII)"],
            ["L >=", str(b.min_length), "longest distance-0 path"],
            ["I <=", str(b.i_upper), "beyond this a larger I cannot help"],
            ["stages <=", str(b.default_max_stages()), "default search bound"]]
    return f"{model.name}:\n{table(rows)}"


def bounds_dict(model: Model, b) -> dict:
    crit = b.critical
    return {"model": model.name, "res_mii": b.res_mii, "res_unit": b.res_unit,
            "rec_mii": b.rec_mii, "rec_ratio": [crit.delay, crit.distance] if crit else None,
            "critical_cycle": [e.src for e in crit.edges] if crit else None,
            "lower_bound": b.lower, "min_length": b.min_length, "i_upper": b.i_upper,
            "default_max_stages": b.default_max_stages()}


def describe_verdict(v) -> str:
    """`valid: ...` or `invalid: N violations ...` with one line per violation."""
    s, m = v.schedule, v.model
    if v.violations:
        return "\n".join([f"invalid: {plural(len(v.violations), 'violation')} ({m.name}, "
                          f"I={s.I}, L={s.L})"] + [f"  {x}" for x in v.violations]
                         + ([f"  note: {v.note}"] if v.note else []))
    where = "the loop, every trip count" if v.semantics == "loop" else \
        f"the paper's Q of T={v.T} cycles"
    return f"valid: {m.name}, I={s.I}, L={s.L} ({plural(v.stages, 'stage')}; on {where})"


def schedule_lines(m: Model, s: Schedule | None, depths: Mapping[str, int]) -> list[str]:
    """The table of start times, stages, groups and buffers."""
    lines = []
    if s is not None:
        rows = [["op", "start", "stage", "group", "cycles", "buffer"]]
        for op in m.ops:
            rows.append([op.name, str(s.start[op.name]), str(s.stage(op.name)),
                         s.group[op.name], str(op.cycles), str(depths.get(op.name, "-"))])
        lines.append(table(rows))
    return lines


def relaxation_lines(run) -> list[str]:
    """What the streaming relaxation assumed and how its answer was used."""
    r = run.relaxation
    if r is None:
        return []
    unit = f" units of {run.normalized.scale} cycles" if run.normalized else ""
    o = r.outcome
    ops = ", ".join(f"{x.op} latency {x.latency} -> 0" for x in r.ops)
    found = f"I = {o.schedule.I}{unit}" if o.schedule else "no schedule"
    lines = [f"  streaming relaxation ({r.mode}): {ops}; it found {found} "
             f"({o.status}; no I < {o.lower_bound})"]
    if r.mode == "bound":
        lines.append("  the answer is for the model as given, searched from that bound (the "
                     "relaxation has every schedule the model as given has)")
    elif run.raw_violations:
        lines.append("  the answer is the relaxation's: NOT valid for the model as given "
                     f"({len(run.raw_violations)} violation(s) below), so not optimal for it")
    elif run.schedule is not None:
        lines.append("  the relaxation's answer is valid for the model as given, so optimal "
                     "there too")
    return lines


# ---------------------------------------------------------------------------------------------
# Solve and heuristic


def describe_result(result) -> str:
    """The readable report of a solve (`api.Result`): "optimal" unqualified only when proven in
    raw cycles (`pipeline.Run.claim`)."""
    run = result.run
    o, s, m = run.outcome, run.schedule, run.raw
    b = o.bounds
    n = run.normalized
    claim = run.claim()
    unit = f" units of {n.scale} cycles" if n else ""
    why = f"ResMII {b.res_mii}" + (f" on {b.res_unit}" if b.res_unit else "") + \
        f", RecMII {b.rec_mii}"
    status = o.status
    if o.optimal and not claim["optimal"] and claim["proven_in"]:
        status = f"optimal in {claim['proven_in']}"
        if run.gap and not claim["I_optimal"]:  # a smaller I may exist in raw cycles
            status = f"feasible (proven optimal in {claim['proven_in']}; raw gap " \
                f"{100 * run.gap:.1f}%)"
    if run.refits and s is not None:
        status = "feasible, a plan that fits" if run.plan_fits else "feasible, no plan fits"
    semantics = "" if run.semantics == "loop" else \
        " (semantics paper-q: limits checked on the paper's Q only, not on the loop)"
    paper = run.relaxation is not None and run.relaxation.mode == "paper"
    of = " for the streaming relaxation" if paper and run.raw_violations else ""
    lines = [f"{m.name}: {status}{of}{semantics}"]
    if n:
        lines.append(f"  costs normalized: 1 unit = {n.scale} cycles ({'; '.join(n.warnings)})"
                     if n.warnings else f"  costs normalized: 1 unit = {n.scale} cycles")
    if s is not None:
        if run.refits and claim["I_optimal"]:
            proof = ("I proven optimal, L not: the model's optimum at this I has no plan that "
                     "fits (below)")
        elif run.refits:
            proof = (f"not proven optimal: the model's optimum has no plan that fits (below); "
                     f"no I < {run.lower_bound} cycles is valid")
        elif claim["optimal"]:
            proof = "proven optimal"
        elif claim["I_optimal"] and claim["proven_in"]:
            proof = "I proven optimal: the raw lower bound; L minimal in units only"
        elif claim["proven_in"]:
            proof = f"proven optimal in{unit}, not in raw cycles"
        elif o.optimal:
            proof = "proven optimal" + (" in units" if n else "") + of
        elif o.lower_bound >= o.schedule.I:
            proof = "I proven optimal" + (" in units" if n else "") + "; L not proven minimal"
        else:
            proof = f"not proven optimal: no I < {o.lower_bound}{unit} is feasible"
        if n:
            lines.append(f"  I = {s.I} cycles = {o.schedule.I}{unit} ({proof}; lower bound "
                         f"{b.lower}{unit}: {why}; raw lower bound {run.raw_lower_bound} "
                         "cycles)")
        else:
            lines.append(f"  I = {s.I} ({proof}; lower bound {b.lower}: {why})")
        lines.append(f"  L = {s.L}, {plural(s.stages, 'stage')}")
        if claim["proven_in"] and claim["stage_bound_needed"]:
            lines.append(f"  the proof covers stage counts up to {claim['stage_bound']} "
                         "(--max-stages) for the I above the lower bound")
    elif o.status == "infeasible":
        lines.append(f"  no schedule with I <= {b.i_upper}{unit} (beyond which a larger I cannot "
                     f"help) and at most {o.max_stages} stages")
    else:
        lines.append(f"  no schedule found; no I < {o.lower_bound}{unit} is feasible")
    if run.gap is not None:
        lines.append(f"  gap to the lower bound: {100 * run.gap:.1f}%")
    if run.method == "exact":
        calls = sum(a.how.startswith(o.backend) for a in o.attempts)  # not the longest-path
        lines.append(f"  backend {o.backend}, encoding {o.encoding}, {o.seconds:.2f} s, "
                     f"{plural(calls, 'solver call')}")
    else:
        lines.append(f"  method {run.method} ({o.backend}), {o.seconds:.2f} s")
    for note in o.notes + ((run.comparison,) if run.comparison else ()):
        lines.append(f"  note: {note}")
    lines.extend(f"  plan: {r}" for r in run.refits)
    if run.plan_fits is False:
        lines.append("  plan: the answer's plan does not fit either (no rounds or time left): "
                     "`emit` names what it exceeds")
    lines.extend(relaxation_lines(run))
    hid = "the streaming relaxation" if run.relaxation else "normalization"
    if run.relaxation and run.normalized:
        hid += " or normalization"
    for v in run.raw_violations:
        lines.append(f"  VIOLATION ON THE MODEL AS GIVEN, raw cycles ({hid} hid it): {v}")
    lines.extend(schedule_lines(m, s, result.buffers or {}))
    proof = proof_line(o, unit)
    if run.refits:  # the last search's, on the model made to account for the plan
        proof = proof.replace("  proof", "  proof of the last search (plan rounds above)", 1)
    lines.append(proof)
    return "\n".join(lines)


def proof_line(o, unit: str) -> str:
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


def describe_heuristic(run) -> str:
    """The readable report of a heuristic run (`api.HeuristicRun`): no optimality claim, only
    max(ResMII, RecMII)."""
    result = run.result
    b, s, m, low = result.bounds, result.schedule, result.model, result.lower_bound
    lines = [f"{m.name}: {'feasible' if s else 'no schedule found'} (heuristic: iterative "
             f"modulo scheduling with greedy warp assignment; no optimality claim)"]
    if run.note:
        lines.append(f"  {run.note}")
    terms = ([f"ResMII {b.res_mii}" + (f" on {b.res_unit}" if b.res_unit else "")]
             if "capacity" in result.rules else []) + \
        ([f"RecMII {b.rec_mii}"] if "dependence" in result.rules else [])
    why = f"max({', '.join(terms)})" if terms else "no bound without capacity and dependence"
    if s is not None:
        gap = "equals the lower bound: no smaller I exists" if s.I == low else \
            "not proven minimal"
        lines.append(f"  I = {s.I} ({gap}; lower bound {low} = {why})")
        lines.append(f"  L = {s.L} (not minimized), {plural(s.stages, 'stage')} "
                     f"(at most {result.max_stages})")
    else:
        lines.append(f"  {result.why}")
        lines.append(f"  lower bound {low} = {why}; a heuristic failure proves nothing")
    tried, n = result.tried, len(result.trials)
    span = f"I = {tried[0]}..{tried[-1]}" if len(tried) > 1 else \
        (f"I = {tried[0]}" if tried else "nothing")
    lines.append(f"  tried {span}: {plural(n, 'attempt')}, {result.steps} scheduling "
                 f"steps, {result.seconds:.3f} s")
    lines.append(f"  verified against: {', '.join(result.rules)}")
    lines.extend(schedule_lines(m, s, run.buffers or {}))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Registries


def describe_kernels(kernels: Mapping[str, Any]) -> str:
    out = []
    for name, k in kernels.items():
        out.append(f"{name}: {k.description}")
        out.append(f"  machines: {', '.join(k.machines) or 'its own toy machine'}")
        if k.follows:
            out.append(f"  follows:  {k.follows}")
        rows = [[" or ".join((p.name, *p.aliases)), p.type.__name__, str(p.default), p.help]
                for p in k.all_params]
        if rows:
            out.append(table(rows, indent="    "))
    return "\n".join(out)


def describe_machines(machines: Mapping[str, Any]) -> str:
    out = []
    for name, m in machines.items():
        d = m.to_dict()
        out.append(f"{name} ({d['arch']}): {d['description']}")
        out.append("  units:    " + ", ".join(f"{u} x{x['capacity']}"
                                              for u, x in d["units"].items()))
        out.append("  memories: " + ", ".join(f"{k} {x['capacity']} {x['unit']}"
                                              for k, x in d["memories"].items()))
        out.append("  groups:   " + ", ".join(
            f"{g['name']} ({plural(g['warps'], 'warp')}, {g['reg_limit']} regs"
            + (", variable latency" if g["name"] == d["variable_latency_group"] else "") + ")"
            for g in d["warp_groups"]) + f" = {d['registers_used']} registers")
        rows = [[f, str(round(x["value"], 4)), x["unit"],
                 x["source"] + (" (estimate)" if x["estimate"] else "")]
                for f, x in d["figures"].items()]
        out.append("  figures:")
        out.append(table(rows, indent="    "))
    return "\n".join(out)


def constraint_rows(constraints: Mapping[str, Any], points: Mapping[str, str]) -> list[dict]:
    """One row per registered constraint: name, where it comes from, what it says, its flags."""
    return [{"name": name, "from": points.get(name, "registered in this process"),
             "summary": " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split()),
             "group_symmetric": cls.group_symmetric, "q_free": cls.q_free}
            for name, cls in constraints.items()]


def describe_constraints(rows: Iterable[dict]) -> str:
    out = []
    for r in rows:
        out.append(f"{r['name']} ({r['from']})")
        out.append(f"  {r['summary']}")
    return "\n".join(out)


def describe_backends(rows: Sequence[dict], choices: Mapping[str, dict]) -> str:
    t = [["spec", "available", "version", "capabilities"]]
    for r in rows:
        t.append([r["spec"], "yes" if r["available"] else f"no: {r['reason']}",
                  r["version"] or "-", " ".join(r["capabilities"])])
    out = ["backends:", table(t)]
    for family, c in choices.items():
        out.append(f"\n{family} options: {c['syntax']} (defaults: {', '.join(c['defaults'])})")
        if "solvers" in c:
            ok = [n for n, why in c["solvers"].items() if why is None]
            out.append(f"  solvers: {', '.join(ok)}")
            for n, why in c["solvers"].items():
                if why is not None:
                    out.append(f"  solver {n} unavailable: {why}")
            out.append(f"  cardinality encodings: {', '.join(c['card'])}")
            out.append(f"  PB encodings: {', '.join(c['pb'])}")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Cross-check


def describe_crosscheck(model: Model, backends: Sequence[str], encodings: Sequence[str], rep,
                        oracle: bool) -> str:
    from warpweave.crosscheck import show_answer
    out = [f"{model.name}: {plural(len(backends), 'backend')} x "
           f"{plural(len(encodings), 'encoding')}, at most {rep.max_stages} stages"]
    rows = [["backend", "encoding", "status", "I", "L", "seconds", "verified"]]
    for r in rep.rows:
        rows.append([r.backend, r.encoding, r.status, str(r.I or "-"), str(r.L or "-"),
                     f"{r.seconds:.2f}", r.verified if len(r.verified) < 60 else
                     r.verified[:57] + "..."])
    out.append(table(rows))
    if oracle:
        found = rep.oracle
        out.append(f"  oracle: {show_answer(found)} ({rep.oracle_note})" if found else
                   f"  oracle: {rep.oracle_note}")
        if found and rep.scale and found[1] is not None:
            out.append(f"  (the oracle's I and L are in normalized units of {rep.scale} cycles)")
    out += [f"  DISAGREEMENT: {line}" for line in rep.problems]
    if not rep.problems:
        out.append("  all finished runs agree" + ("" if rep.exit_status == 0 else
                                                 "; some did not finish (time limit)"))
    if rep.written:
        out.append(f"  wrote {plural(len(rep.written), 'file')} to {rep.written[0].parent}: "
                   f"{', '.join(p.name for p in rep.written)}")
    return "\n".join(out)


def crosscheck_dict(model: Model, rep) -> dict:
    return {"model": model.name, "max_stages": rep.max_stages,
            "rows": [{"backend": r.backend, "encoding": r.encoding, "status": r.status,
                      "I": r.I, "L": r.L, "seconds": round(r.seconds, 3),
                      "verified": r.verified} for r in rep.rows],
            "oracle": list(rep.oracle) if rep.oracle else None,
            "disagreements": list(rep.problems), "written": [str(p) for p in rep.written],
            "agree": not rep.problems}


# ---------------------------------------------------------------------------------------------
# Codegen


def describe_emitted(e) -> str:
    """What `emit` wrote, the buffers and channels it allocated, the loop's register peaks and
    each memory's allocation against the limits, and the compiler's report."""
    program, s = e.lowered.program, e.lowered.schedule
    out = [f"{e.lowered.model.name}: I={s.I}, L={s.L}, {program.S} stages; wrote "
           f"{', '.join(e.written)} to {e.out}"]
    for b in program.plan.buffers.values():
        out.append(f"  buffer {b.value}: {plural(b.depth, 'slot')} ({b.reason})")
    for name, ch in program.plan.channels.items():
        out.append(f"  channel {name}: {ch.group} -> {', '.join(ch.consumers) or '(own group)'}, "
                   f"{plural(ch.depth, 'slot')}, {ch.lowering}")
    out += [f"  note: {note}" for note in program.notes]
    out += [f"  renamed: {r}" for r in e.renamed]
    out.append(steady_lines(program.plan))
    if e.compile is None and e.compiled and e.compiled != NOT_ASKED:
        out.append(e.compiled)
    if e.compile is not None:
        out.append(ptxas_lines(e.compile, e.cuda))
    return "\n".join(out)


def emitted_dict(e) -> dict:
    program, s = e.lowered.program, e.lowered.schedule
    d = {"model": e.lowered.model.name, "I": s.I, "L": s.L, "stages": program.S,
         "out": str(e.out), "written": list(e.written),
         "buffers": {b.value: b.depth for b in program.plan.buffers.values()},
         "channels": {n: {"group": ch.group, "consumers": list(ch.consumers), "depth": ch.depth,
                          "lowering": ch.lowering} for n, ch in program.plan.channels.items()},
         "steady_state": [str(p) for p in program.plan.steady if p.exceeds],
         "memory": [{"memory": m.memory, "allocated": m.allocated, "capacity": m.capacity,
                     "peak": m.peak} for m in program.plan.memory],
         "over_limits": e.over_limits(),
         "notes": list(program.notes), "renamed": list(e.renamed)}
    if e.cuda is not None:
        d["arch"] = e.cuda.arch
    if e.compile is not None:
        d["compiled"] = e.compile.ok
        d["ptxas"] = [{"kernel": k.kernel, "registers": k.registers,
                       "spill_stores": k.spill_stores, "spill_loads": k.spill_loads}
                      for k in e.compile.kernels]
    elif e.compiled:
        d["compiled"] = e.compiled
    return d


def steady_lines(plan) -> str:
    """The loop's register peaks (a line per group over its limit, else one line) and what the
    plan allocates in each memory against its capacity (the loop's peak live footprint beside)."""
    regs = [p for p in plan.steady if p.kind == "registers"]
    over = [f"  steady state: {p}" for p in regs if p.exceeds]
    lines = over or ["  steady state: within limits (registers " + ", ".join(
        f"{p.pool} {p.peak}/{p.limit}" for p in regs) + ")"]
    if plan.memory:
        lines.append("  memory: " + "; ".join(
            f"{m.memory} {m.allocated} {'>' if m.exceeds else '<='} {m.capacity} allocated "
            f"(loop peak {m.peak})" for m in plan.memory))
    return "\n".join(lines)


def ptxas_lines(res, src) -> str:
    lines = [f"  nvcc -arch={src.arch}: {'ok' if res.ok else 'FAILED'}"]
    for k in res.kernels:
        lines.append(f"  ptxas {k.target} {k.kernel}: {k.registers} registers/thread, "
                     f"{k.spill_stores} B spill stores, {k.spill_loads} B spill loads, "
                     f"{k.stack_frame} B stack, {k.smem} B smem")
    lines.append(f"  setmaxnreg per warp group: {list(src.layout.hw_regs)} "
                 f"(entry {src.layout.entry_regs}, {src.layout.threads} threads)")
    lines += [f"  ptxas: {w}" for w in res.warnings]
    return "\n".join(lines)


def simulation_dict(res, model: Model, s: Schedule) -> dict:
    return {"model": model.name, "I": s.I, "iterations": res.iterations,
            "passed": res.passed, "verdict": res.verdict(), "ok": res.ok,
            "deadlock": list(res.deadlock), "races": [str(r) for r in res.races],
            "rate": str(res.rate) if res.rate is not None else None,
            "target": str(res.target), "gap": res.gap(), "stalls": res.stalls,
            "late": res.late, "first_late": str(res.first_late) if res.first_late else None,
            "makespan": res.makespan}


def describe_simulation(res, model: Model, jitter: float, seed: int, pace: str) -> str:
    lat = f"jitter {jitter:g}% (seed {seed})" if jitter else "fixed latencies"
    out = [f"{model.name}: {res.iterations} iterations, {lat}, {pace} pacing, "
           f"{res.makespan} cycles"]
    out.append(f"  deadlock: {'; '.join(res.deadlock) or 'none'}")
    out.append(f"  races: {len(res.races)}")
    out += [f"    {r}" for r in res.races[:10]]
    if pace == "schedule":
        out.append(f"  ops issued after their planned cycle: {res.late}")
        if res.first_late:
            out.append(f"    first: {res.first_late}")
    rate = f"{res.rate} = {float(res.rate):.4f}" if res.rate is not None else "n/a"
    out.append(f"  steady state: {rate} iterations/cycle; 1/I = {res.target}")
    gap = res.gap()
    out.append(f"  {'gap: ' + gap if gap else 'reaches 1/I'}")
    out += [f"    stall {k}: {v} cycles"
            for k, v in sorted(res.stalls.items(), key=lambda kv: -kv[1])[:6]]
    out.append(f"  {res.verdict()}")
    return "\n".join(out)


def bench_line(k: int, n: int, r: dict) -> str:
    """One progress line per finished benchmark case."""
    answer = f" I={r['I_units']} L={r['L_units']}" if r.get("I_units") is not None else ""
    seconds = f" {r['wall_seconds']:.2f} s" if "wall_seconds" in r else ""
    error = f": {r['error']}" if r.get("error") else ""
    return f"  [{k}/{n}] {r['suite']}/{r['case']}  {r['config']}: {r['status']}{answer}" \
        f"{seconds}{error}"


# ---------------------------------------------------------------------------------------------
# Sweeps


def _answer(r: Mapping[str, Any]) -> str:
    """What a point's record says of its I: proven (in raw cycles), proven in units only, or a
    schedule without a proof; else the status."""
    if r.get("I") is None:
        return r["status"]
    if r.get("I_optimal"):
        return "I optimal"
    if r.get("proven_in"):
        return f"I optimal in {r['proven_in']}"
    return f"{r['status']} (not proven)"


def sweep_progress(done: int, total: int, row) -> str:
    """One point answered (or reused from the store), as the progress line on a terminal."""
    r = row.record
    how = "from the store" if row.reused else (f"{r['seconds']:.1f} s" if r.get("seconds")
                                               is not None else "not solved")
    interval = f", I = {r['I']}" if r.get("I") is not None else ""
    return f"  [{done}/{total}] {row.label}: {_answer(r)}{interval} ({how})"


def describe_sweep(sweep) -> str:
    """The ranking: one row per point with a schedule, best predicted throughput first (ties:
    fewer registers, then less shared memory), then the points without one and why."""
    from warpweave.sweeps.point import ruled_out_up_to
    machines = sorted({r.point.machine or "its own machine" for r in sweep.rows})
    done = [f"{sweep.solved} solved on {sweep.where}"] if sweep.solved else []
    done += [f"{sweep.reused} reused from {sweep.store}"] if sweep.reused else []
    done += [f"{sweep.rejected} rejected (cannot be built)"] if sweep.rejected else []
    out = [f"{sweep.kernel}: {plural(len(sweep.rows), 'point')} on {', '.join(machines)}; "
           f"{', '.join(done) or 'none solved'} ({sweep.seconds:.1f} s)"]
    ranked = [r for r in sweep.rows if r.throughput]
    if ranked:
        work = any(r.throughput.flops for r in ranked)
        unit = "FLOP/cyc" if work else "iter/cyc"
        rows = [["rank", "point", "answer", "I", "bound", unit, "peak", "TFLOPS", "regs",
                 "smem"]]
        for k, r in enumerate(ranked, 1):
            t, rec = r.throughput, r.record
            rows.append([str(k), r.label, _answer(rec), str(t.I),
                         str(t.lower_bound), f"{t.per_cycle:.4g}" if work else
                         f"{t.per_cycle:.3g}",
                         "-" if t.share is None else f"{100 * t.share:.1f}%",
                         "-" if t.tflops is None else f"{t.tflops:.0f}",
                         str(rec.get("regs_peak", "-")), str(rec.get("smem_peak", "-"))])
        out.append(table(rows))
        out.append("  FLOP/cyc: the kernel's useful FLOPs per iteration / I, per SM (ties: fewer "
                   "regs, then less smem);\n  bound: the lower bound on I; peak: the share of the "
                   "tensor core's rate;\n  TFLOPS: every SM at that rate at the boost clock; regs, "
                   "smem: held at the loop's peak, per CTA" if work else
                   "  iter/cyc: iterations per cycle, 1 / I (the kernel states no work)")
    for r in sweep.rows:
        if not r.throughput:
            rec = r.record
            # proven infeasible in raw cycles: the record's lower bound is the search's upper
            # limit on I plus one - no I has a schedule, so no lower bound is stated
            upto = ruled_out_up_to(rec) if rec["status"] == "infeasible" else None
            why = rec.get("reason") or (
                f"no schedule with at most {rec.get('stage_bound')} stages at any I"
                + (f", costs in units of {rec['cycles_per_unit']} cycles"
                   if rec.get("cycles_per_unit") else "")
                + (f": every I up to {upto} ruled out (a larger I cannot help)"
                   if upto is not None else "")
                if rec["status"] == "infeasible" else
                "not answered (interrupted)" if rec["status"] == "pending" else "")
            bound = f", lower bound {rec['lower_bound']}" \
                if rec.get("lower_bound") and upto is None else ""
            out.append(f"  {r.label}: {rec['status']}{bound}"
                       + (f" - {why}" if why else ""))
    if sweep.interrupted:
        done = sum(1 for r in sweep.rows if r.status != "pending")
        out.append(f"interrupted: {done} of {len(sweep.rows)} points answered and kept in "
                   f"{sweep.store}; the same command resumes")
    return "\n".join(out)
