"""The `warpweave` command.  Exit status: 0 success, 1 a negative answer (violations, no schedule),
2 bad input, 3 a limit reached without an answer, 130 interrupted."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from warpweave import __version__
from warpweave.core.bounds import bounds
from warpweave.core.errors import InputError
from warpweave.core.formats import load_model, load_schedule, model_to_dict, write_document
from warpweave.core.model import Model
from warpweave.core.registry import KERNELS, MACHINES
from warpweave.core.schedule import straight_line
from warpweave.core.verify import verify

EXIT_OK, EXIT_NO, EXIT_INPUT, EXIT_LIMIT = 0, 1, 2, 3


def _print_json(doc) -> None:
    print(json.dumps(doc, indent=2))


def _table(rows: list[list[str]], indent: str = "  ") -> str:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "\n".join(indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                     for r in rows)


# ---------------------------------------------------------------------------------------------


def cmd_verify(args) -> int:
    model = load_model(args.model)
    schedule = load_schedule(args.schedule, model)
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


def _row_runs(op) -> str:
    """A reservation table as runs of equal rows: `+0..255 tma:1; +532..659 alu:1`."""
    runs: list[list] = []
    for c, row in enumerate(op.rrt):
        if runs and runs[-1][2] == row and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c, row])
    return "; ".join(f"+{a}{f'..{b}' if b > a else ''} " + ",".join(f"{u}:{n}" for u, n in row)
                     for a, b, row in runs if row)


def describe_model(model: Model) -> str:
    """A readable summary: machine, ops with their resources, edges."""
    m = model.machine
    out = [(f"model {model.name} on machine {m.name}: {len(model.ops)} ops, "
            f"{len(model.edges)} edges")]
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
            uses = _row_runs(op)
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
        rows = [[f, str(round(x["value"], 4)), x["unit"], x["source"] + (" (estimate)"
                                                                           if x["estimate"] else "")]
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


# ---------------------------------------------------------------------------------------------

COMMANDS: dict[str, Callable] = {}


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
    except KeyboardInterrupt:
        print("warpweave: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
