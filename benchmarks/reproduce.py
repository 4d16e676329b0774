"""Regenerate the solve tables of docs/reproduction.md: solve the kernel library and Meta's
golden graphs and print Markdown with the measured timings.  The published roles are asked by
`warpweave reproduce` (warpweave/reproduce.py), not here.

Usage (from the repository root):
  python benchmarks/reproduce.py [--only TEXT ...] [--configs default,cpsat,...]
                                 [--time-limit 1800] [--json FILE]

Every solve goes through `warpweave.pipeline.run_solve` (streaming, normalization, search, raw
re-verification), one after the other; each solver call runs in a child process (the search's
isolation).  Seconds are wall time (`perf_counter`) and CPU time of this process and its
finished children (`cpu_seconds`); on a shared machine the wall time grows with the load, which
is printed with the machine.  A run that hits the time
limit is reported with the status and bound it reached.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from warpweave.core.bounds import bounds  # noqa: E402
from warpweave.core.verify import verify  # noqa: E402
from warpweave.kernels import published  # noqa: E402
from warpweave.kernels.roles import roles  # noqa: E402
from warpweave.pipeline import Options, load_target, run_solve  # noqa: E402

MODELS = ROOT / "benchmarks" / "models"
META = ROOT / "benchmarks" / "data" / "meta-tlx"
FA4_FULL = "groups=wg0:4:240,wg1:4:240,w8:1:24,w9:1:24", "vl=w9"
NEUTRAL = "inventory=neutral"


@attrs.frozen
class Case:
    """One solve target: a library kernel (machine, params) or a model file."""

    label: str
    target: str
    machine: str | None = None
    params: tuple[str, ...] = ()
    normalize: str = "auto"

    def model(self):
        return load_target(self.target, self.machine, self.params)


def _meta(case: str, normalize: str = "auto") -> Case:
    suffix = "" if normalize == "auto" else f" ({normalize})"
    return Case(f"meta golden-{case}{suffix}", str(MODELS / f"meta-golden-{case}.json"),
                normalize=normalize)


KERNELS = [
    Case("fa-simplified", "fa-simplified"),
    Case("fa3-fwd h100", "fa3-fwd", "h100"),
    Case("fa3-fwd h100, one consumer", "fa3-fwd", "h100", ("groups=w0:1:24,wg1:4:240",)),
    Case("fa3-fwd h100 subtiles=2", "fa3-fwd", "h100", ("subtiles=2",)),
    Case("fa3-fwd h100 subtiles=2 (neutral)", "fa3-fwd", "h100", ("subtiles=2", NEUTRAL)),
    Case("fa4-fwd b200", "fa4-fwd", "b200"),
    Case("fa4-fwd b200 (neutral)", "fa4-fwd", "b200", (NEUTRAL,)),
    Case("fa4-fwd b200 rescale=never", "fa4-fwd", "b200", ("rescale=never",)),
    Case("fa4-fwd b200 ex2_emu_freq=0", "fa4-fwd", "b200", ("ex2_emu_freq=0",)),
    Case("fa4-fwd b200 chunks=4", "fa4-fwd", "b200", ("chunks=4",)),
    Case("fa-bwd h100", "fa-bwd", "h100"),
    Case("fa-bwd h100 subtiles=2", "fa-bwd", "h100", ("subtiles=2",)),
    Case("fa-bwd b200", "fa-bwd", "b200"),
    Case("fa-bwd b200 subtiles=2 (FA4 budget)", "fa-bwd", "b200", ("subtiles=2",)),
    Case("fa-bwd b200 subtiles=2 (two 240-reg groups)", "fa-bwd", "b200", ("subtiles=2",
                                                                          *FA4_FULL)),
    Case("gemm h100", "gemm", "h100"),
    Case("gemm h100 subtiles=2", "gemm", "h100", ("subtiles=2",)),
    Case("gemm b200", "gemm", "b200"),
]
META_CASES = [_meta(c, n) for c in ("fwd", "fwd_subtiled", "bwd", "bwd_lr4096")
              for n in ("auto", "paper=300")]
CONFIGS = {
    "default": dict(),
    "cpsat": dict(backend="cpsat"),
    "cpsat-integer": dict(backend="cpsat", encoding="integer"),
    "highs": dict(backend="highs"),
    "kissat": dict(backend="sat:kissat404/totalizer/bdd"),
}


def machine_line() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text()
                .splitlines() if line.startswith("model name")), platform.processor())
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average {os.getloadavg()[0]:.1f}")


# ---------------------------------------------------------------------------------------------
# Solving


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the isolated solver calls)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def solve(case: Case, config: str, time_limit: float) -> dict:
    """One run_solve, summarized: I, L and stages (solver units and raw cycles), roles, times."""
    model = case.model()
    # the model's optimum: no plan round (solve's answer after one is docs/codegen.md's)
    opts = Options(normalize=case.normalize, time_limit=time_limit, plan=False,
                   **CONFIGS[config])
    wall, cpu = time.perf_counter(), cpu_seconds()
    run = run_solve(model, opts)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    o, s = run.outcome, run.schedule
    row = {"case": case.label, "config": config, "status": o.status, "optimal": o.optimal,
           "wall": round(wall, 1), "cpu": round(cpu, 1), "calls": len(o.attempts),
           "scale": run.normalized.scale if run.normalized else 1,
           "lower_units": o.lower_bound, "raw_lower": bounds(run.raw).lower,
           "raw_violations": len(run.raw_violations)}
    if s is not None:
        used = sorted(set(s.group.values()))
        warps = {g.name: g.warps for g in run.raw.machine.warp_groups}
        row.update(I_units=o.schedule.I, L_units=o.schedule.L, I=s.I, L=s.L, S=s.stages,
                   groups=len(used), warps=sum(warps[g] for g in used),
                   roles={g: list(v) for g, v in roles(s).items()})
    return row


# ---------------------------------------------------------------------------------------------
# Markdown


def _roles_text(roles: dict) -> str:
    return "; ".join(f"{g}: {', '.join(ops)}" for g, ops in roles.items())


def print_results(rows: list[dict]) -> None:
    """The solve table; the unit columns only when some case was solved in units (a raw-cycle
    search, the default, proves I and L in cycles: its unit is 1)."""
    rows = [r for r in rows if r["config"] == "default"]
    units = any(r["scale"] != 1 for r in rows)
    unit_head = "unit | I (units) | " if units else ""
    print(f"| case | lower bound (cycles) | {unit_head}I (cycles) | L (cycles) | S "
          f"| groups / warps | status{' (units)' if units else ''} | raw cycles | wall s | CPU s "
          "| calls |")
    print("|---" * (13 if units else 11) + "|")
    for r in rows:
        raw = "valid" if not r["raw_violations"] else f"{r['raw_violations']} violations"
        unit_cells = f"{r['scale']} | {r.get('I_units', '-')} | " if units else ""
        print(f"| {r['case']} | {r['raw_lower']} | {unit_cells}"
              f"{r.get('I', '-')} | {r.get('L', '-')} | {r.get('S', '-')} "
              f"| {r.get('groups', '-')} / {r.get('warps', '-')} | {r['status']} | {raw} "
              f"| {r['wall']} | {r['cpu']} | {r['calls']} |")
    print()
    for r in rows:
        if "roles" in r:
            print(f"- **{r['case']}** (the solver's pick): {_roles_text(r['roles'])}")
    print()


def print_timings(rows: list[dict], configs: Sequence[str]) -> None:
    if len(configs) < 2:
        return
    print("| case | " + " | ".join(configs) + " |")
    print("|---|" + "---|" * len(configs))
    by = {(r["case"], r["config"]): r for r in rows}
    for case in dict.fromkeys(r["case"] for r in rows):
        cells = []
        for c in configs:
            r = by.get((case, c))
            if r is None:
                cells.append("-")
            else:
                what = f"I={r['I']}" if "I" in r else "none"
                flag = "" if r["optimal"] else f" ({r['status']}, bound {r['lower_units']})"
                cells.append(f"{r['wall']} / {r['cpu']} s, {what}{flag}")
        print(f"| {case} | " + " | ".join(cells) + " |")
    print()


STRATEGIES = [
    ("fa-simplified", None, (), "Twill Figure 1d", None),
    ("fa3-fwd", "h100", (), "FA3 pipeline, one consumer", "fa3_pipeline"),
    ("fa3-fwd", "h100", ("subtiles=2",), "FA3 ping-pong, two consumers", "fa3_pipeline"),
    ("fa4-fwd", "b200", (), "FA4 roles", "fa4_roles"),
    ("fa-bwd", "h100", ("subtiles=2",), "FA3 bwd, consumer per half", "fa_bwd_roles"),
    ("fa-bwd", "b200", ("subtiles=2",), "FA4 bwd, three groups", "fa_bwd_roles"),
    ("gemm", "h100", (), "producer / consumer", "gemm_producer_consumer"),
    ("gemm", "b200", (), "producer / MMA warp / epilogue", "gemm_producer_consumer"),
]


def print_strategies() -> None:
    """The published strategies realized greedily on our models, verified, with the tensor
    core's share of I."""
    print("| kernel | machine | lower bound (ResMII / RecMII) | published strategy | I | stages "
          "| tensor core busy |")
    print("|---|---|---|---|---|---|---|")
    for kernel, machine, params, what, name in STRATEGIES:
        model = load_target(kernel, machine, params)
        b = bounds(model)
        if name is None:
            s = published.figure1()
        else:
            s, why = published.realize(model, getattr(published, name)(model))
            if s is None:
                print(f"| {kernel} {' '.join(params)} | {machine} | {b.lower} | {what} | none "
                      f"({why[0] if why else '-'}) | - | - |")
                continue
        assert verify(model, s) == []
        tc = sum(op.total_use("tc") for op in model.ops)
        print(f"| {kernel} {' '.join(params)} | {machine or 'toy'} | {b.lower} ({b.res_mii} / "
              f"{b.rec_mii}) | {what} | {s.I} | {s.stages} | {100 * tc // s.I}% |")


def _reservations(op) -> str:
    """An op's reservation table as runs: `+a..b unit:n` (or `unit:n` when it holds it all)."""
    runs: list[list] = []
    for c, row in enumerate(op.rrt):
        key = ",".join(f"{u}:{n}" for u, n in row)
        if runs and runs[-1][2] == key and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c, key])
    runs = [r for r in runs if r[2]]
    if len(runs) == 1 and runs[0][:2] == [0, op.cycles - 1]:
        return runs[0][2]
    return "; ".join(f"+{a}..{b} {k}" for a, b, k in runs) or "-"


def print_kernel_tables(kernel: str, machine: str | None, params: Sequence[str] = ()) -> None:
    """docs/kernels.md's tables for one kernel: its ops, the hand-offs of its data edges, its
    bounds and the busy cycles of each unit per iteration."""
    model = load_target(kernel, machine, params)
    ready = {op.name: op.cycles for op in model.ops}
    for e in model.edges:
        if e.is_data:
            ready[e.src] = max(ready[e.src], e.delay)
    print("| op | holds its group | result ready | reservations | regs | footprint | notes |")
    print("|---|---|---|---|---|---|---|")
    for op in model.ops:
        notes = ", ".join(x for x, on in (("variable latency", op.variable_latency),
                                          ("async", op.is_async)) if on)
        notes = ", ".join(filter(None, (notes, f"{op.warps} warp{'s' * (op.warps != 1)}"
                                        if op.warps else "")))
        fp = ", ".join(f"{m} {a}" for m, a in op.footprint) or "-"
        print(f"| {op.name} | {op.cycles} | {ready[op.name]} "
              f"| {_reservations(op)} | {op.regs or '-'} | {fp} | {notes} |")
    print()
    paid = [e for e in model.edges if e.is_data and (e.handoff or e.handoff_local)]
    print("Hand-offs (across groups / within one): " + "; ".join(
        f"{e.src} -> {e.dst}{' (d' + str(e.distance) + ')' if e.distance else ''} "
        f"{e.handoff}/{e.handoff_local}" for e in paid) + ".")
    b = bounds(model)
    busy = {u.name: sum(op.total_use(u.name) for op in model.ops) for u in model.machine.units}
    print(f"\nBounds: ResMII {b.res_mii}, RecMII {b.rec_mii}, L >= {b.min_length}.  Per "
          "iteration: " + ", ".join(f"{u} {n}" for u, n in sorted(busy.items(),
                                                                  key=lambda x: -x[1]) if n)
          + " busy cycles.\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=[], help="cases whose label contains one of "
                    "these texts")
    ap.add_argument("--configs", default="default", help="comma-separated: "
                    + ", ".join(CONFIGS))
    ap.add_argument("--time-limit", type=float, default=1800.0,
                    help="seconds per solve (default 1800)")
    ap.add_argument("--json", help="also write every result to this file")
    ap.add_argument("--strategies", action="store_true", help="only the published strategies "
                    "written as schedules (kernels.published.realize)")
    ap.add_argument("--kernel-tables", nargs="+", metavar="KERNEL [MACHINE [K=V ...]]",
                    help="only docs/kernels.md's tables of one kernel")
    args = ap.parse_args()
    if args.kernel_tables:
        kernel, *rest = args.kernel_tables
        print_kernel_tables(kernel, rest[0] if rest else None, rest[1:])
        return
    if args.strategies:
        print_strategies()
        return
    configs = args.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown config {c!r} (known: {', '.join(CONFIGS)})")
    cases = [c for c in KERNELS + META_CASES
             if not args.only or any(t in c.label for t in args.only)]
    print(f"Machine: {machine_line()}\n", flush=True)
    rows = []
    for case in cases:
        for config in configs:
            if config != "default" and case.normalize != "auto":
                continue   # backend comparisons on the plain cases only
            row = solve(case, config, args.time_limit)
            rows.append(row)
            print(f"<!-- {case.label} [{config}]: {row['status']} I={row.get('I')} "
                  f"{row['wall']} s wall, {row['cpu']} s CPU -->", flush=True)
    print_results(rows)
    print_timings(rows, configs)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine_line(), "rows": rows},
                                              indent=1))


if __name__ == "__main__":
    main()
