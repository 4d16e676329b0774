"""Regenerate the tables of docs/reproduction.md: solve the kernel library and Meta's golden
graphs, ask the shape questions, and print Markdown with the measured timings.

Usage (from the repository root):
  python benchmarks/reproduce.py [--only TEXT ...] [--configs default,cpsat,...]
                                 [--time-limit 1800] [--skip-questions] [--json FILE]

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
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from warpweave.core.bounds import bounds  # noqa: E402
from warpweave.core.schedule import Schedule  # noqa: E402
from warpweave.core.search import constraint_set, decide  # noqa: E402
from warpweave.core.verify import verify  # noqa: E402
from warpweave.kernels import roles as R  # noqa: E402
from warpweave.pipeline import SWEEP_BACKEND, Options, Run, load_target, run_solve  # noqa: E402

MODELS = ROOT / "benchmarks" / "models"
META = ROOT / "benchmarks" / "data" / "meta-tlx"
FA4_FULL = "groups=wg0:4:240,wg1:4:240,w8:1:24,w9:1:24", "vl=w9"


@attrs.frozen
class Case:
    """One solve target: a library kernel (machine, params) or a model file."""

    label: str
    target: str
    machine: str | None = None
    params: tuple[str, ...] = ()
    normalize: str = "auto"
    extra: Callable | None = None     # model -> extra constraints (a shape imposed)

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
    Case("fa4-fwd b200", "fa4-fwd", "b200"),
    Case("fa4-fwd b200, FA4 roles imposed", "fa4-fwd", "b200", extra=lambda m: [fa4_roles()]),
    Case("fa-bwd h100", "fa-bwd", "h100"),
    Case("fa-bwd h100, no cross-iteration overlap", "fa-bwd", "h100",
         extra=lambda m: [R.Sequential(compute_ops(m))]),
    Case("fa-bwd h100 subtiles=2", "fa-bwd", "h100", ("subtiles=2",)),
    Case("fa-bwd h100 subtiles=2 (unit=32)", "fa-bwd", "h100", ("subtiles=2",), "unit=32"),
    Case("fa-bwd b200", "fa-bwd", "b200"),
    Case("fa-bwd b200 subtiles=2 (FA4 budget)", "fa-bwd", "b200", ("subtiles=2",)),
    Case("fa-bwd b200 subtiles=2 max_regs=128", "fa-bwd", "b200", ("subtiles=2", "max_regs=128")),
    Case("fa-bwd b200 subtiles=2 (two 240-reg groups)", "fa-bwd", "b200", ("subtiles=2",
                                                                          *FA4_FULL)),
    Case("gemm h100", "gemm", "h100"),
    Case("gemm h100 (unit=32)", "gemm", "h100", (), "unit=32"),
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
    extra = case.extra(model) if case.extra else ()
    opts = Options(normalize=case.normalize, time_limit=time_limit, **CONFIGS[config])
    wall, cpu = time.perf_counter(), cpu_seconds()
    run = run_solve(model, opts, extra=extra)
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
                   roles={g: list(v) for g, v in R.roles(s).items()},
                   steady_state=steady_state(run.raw, s))
    row["run"] = run
    return row


def steady_state(model, s: Schedule, copies: int = 3) -> list[str]:
    """Violations once Q has `copies` more copies (L padded by whole intervals): the liveness
    rules see values that outlive their iteration meet the previous iteration's copies."""
    padded = Schedule(s.model, s.I, s.L + copies * s.I, s.start, s.group)
    return [str(v) for v in verify(model, padded)]


# ---------------------------------------------------------------------------------------------
# Shape questions at the optimal I (see tests/test_golden.py for the same questions as tests)


def _fa3_questions() -> list[tuple]:
    tile = ("qk", "rowmax", "softmax", "cast", "rescale", "pv")
    roles = R.Roles(same=[(f"{a}{t}", f"{b}{t}") for t in "01" for a, b in pairwise(tile)],
                    apart=[("qk0", "qk1")])
    no_pp = R.Disjoint([(f"softmax{t}", "sfu", f"{g}{1 - int(t)}", "tc")
                        for t in "01" for g in ("qk", "pv")])
    return [("FA3 ping-pong roles (tile t on consumer t)", [roles]),
            ("no exponential under the other tile's GEMMs", [no_pp]),
            ("FA3 roles and no ping-pong overlap", [roles, no_pp])]


def fa4_roles(mma_warp: bool = True) -> R.Roles:
    """FA4's roles as relations: the MMAs together (on a group of their own), the softmax
    (rowmax, softmax, rowsum) of each tile together, the two tiles apart, both corrections on a
    third group."""
    tile = [(f"{a}{t}", f"{b}{t}") for t in "01"
            for a, b in (("rowmax", "softmax"), ("softmax", "rowsum"))]
    same = [*tile, ("rescale0", "rescale1")]
    apart = [("softmax0", "softmax1"), ("rescale0", "softmax0"), ("rescale0", "softmax1")]
    if mma_warp:
        same += [("qk0", "qk1"), ("qk0", "pv0"), ("qk0", "pv1")]
        apart += [("qk0", "softmax0"), ("qk0", "softmax1"), ("qk0", "rescale0")]
    return R.Roles(same=same, apart=apart)


def _fa4_questions() -> list[tuple]:
    return [("FA4 roles (MMA warp issues all four MMAs)", [fa4_roles()]),
            ("FA4 roles (MMA warp), TMEM capacity dropped", [fa4_roles()], ("memory",)),
            ("FA4 roles (MMA warp), cross-warp hand-off cost dropped", [fa4_roles()],
             ("cross_warp_spill",)),
            ("FA4 roles, PV issued by the softmax warps", [fa4_roles(mma_warp=False)]),
            ("both softmaxes on one group", [R.Roles(same=[("softmax0", "softmax1")])]),
            ("tile 0's correction on its softmax group",
             [R.Roles(same=[("rescale0", "softmax0")])])]


def _bwd_b200_questions() -> list[tuple]:
    pairs = [(a, b) for a in ("exp0", "exp1") for b in ("exp0", "exp1")]
    two = [(f"two groups: dq_stage0 with {a}, dq_stage1 with {b}",
            [R.Roles(same=[("dq_stage0", a), ("dq_stage1", b)], apart=[("exp0", "exp1")])])
           for a, b in pairs]
    three = R.Roles(same=[("dq_stage0", "dq_stage1")],
                    apart=[("exp0", "exp1"), ("exp0", "dq_stage0"), ("exp1", "dq_stage0")])
    return [*two, ("three groups: both dq_stage apart from both exps", [three])]


def _bwd_h100_questions(ops: Sequence[str]) -> list[tuple]:
    x = "" if "dv" in ops else "0"
    return [("no cross-iteration overlap (Sequential)", [R.Sequential(ops)]),
            ("cross-iteration overlap (Overlapping)", [R.Overlapping(ops)]),
            (f"dv{x} and dk{x} accumulators on one group", [R.Roles(same=[(f"dv{x}", f"dk{x}")])])]


def compute_ops(model) -> list[str]:
    return [op.name for op in model.ops if not op.variable_latency]


QUESTIONS = {
    "fa3-fwd h100 subtiles=2": _fa3_questions,
    "fa4-fwd b200": _fa4_questions,
    "fa-bwd b200 subtiles=2 (FA4 budget)": _bwd_b200_questions,
    "fa-bwd b200 subtiles=2 (two 240-reg groups)": lambda: _bwd_b200_questions()[:4],
}


def ask(run: Run, extra: Sequence, without: Sequence[str] = ()) -> dict:
    """decide at the run's optimal I (solver units) with `extra` constraints."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    status, s = decide(run.model, run.outcome.schedule.I, backend=SWEEP_BACKEND,
                       constraints=[*constraint_set(without=without), *extra],
                       max_stages=run.outcome.max_stages)
    out = {"status": status, "wall": round(time.perf_counter() - wall, 1),
           "cpu": round(cpu_seconds() - cpu, 1)}
    if s is not None:
        out["roles"] = {g: list(v) for g, v in R.roles(s).items()}
    return out


# ---------------------------------------------------------------------------------------------
# Markdown


def _roles_text(roles: dict) -> str:
    return "; ".join(f"{g}: {', '.join(ops)}" for g, ops in roles.items())


def print_results(rows: list[dict]) -> None:
    print("| case | lower bound (cycles) | unit | I (units) | I (cycles) | L (cycles) | S "
          "| groups / warps | status (units) | raw cycles | wall s | CPU s | calls "
          "| Q + 3 copies |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["config"] != "default":
            continue
        ss = "valid" if not r.get("steady_state") else f"{len(r['steady_state'])} violations"
        raw = "valid" if not r["raw_violations"] else f"{r['raw_violations']} violations"
        print(f"| {r['case']} | {r['raw_lower']} | {r['scale']} | {r.get('I_units', '-')} "
              f"| {r.get('I', '-')} | {r.get('L', '-')} | {r.get('S', '-')} "
              f"| {r.get('groups', '-')} / {r.get('warps', '-')} | {r['status']} | {raw} "
              f"| {r['wall']} | {r['cpu']} | {r['calls']} | {ss} |")
    print()
    for r in rows:
        if r["config"] == "default" and "roles" in r:
            print(f"- **{r['case']}**: {_roles_text(r['roles'])}")
            for v in r["steady_state"][:2]:
                print(f"  - with more copies in Q: {v}")
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


def print_questions(answers: list[dict]) -> None:
    print("| case | at the optimal I (units) | question | answer | wall / CPU s |")
    print("|---|---|---|---|---|")
    for a in answers:
        print(f"| {a['case']} | {a['I_units']} | {a['question']} | {a['status']} "
              f"| {a['wall']} / {a['cpu']} |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=[], help="cases whose label contains one of "
                    "these texts")
    ap.add_argument("--configs", default="default", help="comma-separated: "
                    + ", ".join(CONFIGS))
    ap.add_argument("--time-limit", type=float, default=1800.0,
                    help="seconds per solve (default 1800)")
    ap.add_argument("--skip-questions", action="store_true")
    ap.add_argument("--json", help="also write every result to this file")
    args = ap.parse_args()
    configs = args.configs.split(",")
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown config {c!r} (known: {', '.join(CONFIGS)})")
    cases = [c for c in KERNELS + META_CASES
             if not args.only or any(t in c.label for t in args.only)]
    print(f"Machine: {machine_line()}\n", flush=True)
    rows, answers = [], []
    for case in cases:
        for config in configs:
            if config != "default" and (case.normalize != "auto" or case.extra):
                continue   # backend comparisons on the plain cases only
            row = solve(case, config, args.time_limit)
            rows.append(row)
            print(f"<!-- {case.label} [{config}]: {row['status']} I={row.get('I')} "
                  f"{row['wall']} s wall, {row['cpu']} s CPU -->", flush=True)
            if config == "default" and not args.skip_questions and row["optimal"]:
                answers += _questions(case, row["run"])
    print_results(rows)
    print_timings(rows, configs)
    if answers:
        print_questions(answers)
    if args.json:
        for r in rows:
            r.pop("run", None)
        Path(args.json).write_text(json.dumps({"machine": machine_line(), "rows": rows,
                                               "questions": answers}, indent=1))


def _questions(case: Case, run: Run) -> list[dict]:
    make = QUESTIONS.get(case.label)
    if case.target == "fa-bwd" and case.machine == "h100":
        make = lambda: _bwd_h100_questions(compute_ops(run.raw))  # noqa: E731
    out = []
    for question, extra, *without in (make() if make else []):
        a = {"case": case.label, "I_units": run.outcome.schedule.I, "question": question,
             **ask(run, extra, *without)}
        print(f"<!-- {case.label}: {question}: {a['status']} ({a['wall']} s) -->", flush=True)
        out.append(a)
    return out


if __name__ == "__main__":
    main()
