"""Answer every published role (`warpweave.kernels.questions`): forced, allowed or excluded at
the optimal I - what `warpweave reproduce` runs.

For each case (a kernel, machine, parameters and inventory) the default pipeline finds the
optimal I (in its normalized units; `pipeline.run_solve`), with the tie-breakers fewest groups,
then fewest cross-group data edges, so that the one schedule shown is a canonical one.  Then, for
each question, two decisions at that I (`warpweave.search.decide`, every stage count up to the
search's bound):

- the shape imposed: infeasible -> **excluded** (no optimal schedule has it);
- the shape forbidden: infeasible -> **forced** (every optimal schedule has it);
- both feasible -> **allowed** (some optimal schedules have it, some do not).

An excluded shape is explained by deletion: which registered constraints, dropped one at a
time, make it feasible, and - when none alone does - a minimal set of constraints that together
exclude it (the deletion filter: drop each constraint whose removal keeps the shape infeasible).
`explain_forced` does the same for the negation of a forced shape.  `reach` also finds the
smallest I at which an excluded shape is feasible (a search with the shape imposed).

Every schedule a decision returns is verified by `decide` (each constraint's `check`, the
shape's too); the answers are about the model, not the solver's pick.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence

import attrs

from warpweave import defaults
from warpweave.core.constraints import Constraint, constraint_set
from warpweave.core.model import Model
from warpweave.kernels.questions import TOPICS, Case, Question, Topic
from warpweave.kernels.roles import Require, Shape, roles
from warpweave.pipeline import Options, Run, load_target, run_solve
from warpweave.search import decide

FORCED, ALLOWED, EXCLUDED, UNKNOWN = "forced", "allowed", "excluded", "unknown"
TIE_BREAKERS = ("groups", "cross_edges")


@attrs.frozen
class Settings:
    """How the questions are decided."""

    backend: str = defaults.REPRODUCE_BACKEND
    encoding: str = defaults.REPRODUCE_ENCODING
    solve_limit: float | None = defaults.REPRODUCE_SOLVE_LIMIT   # per decision
    time_limit: float | None = defaults.REPRODUCE_TIME_LIMIT     # per optimal-I search
    explain_forced: bool = False
    reach: bool = True
    isolate: bool = True


@attrs.frozen
class Answer:
    """One question on one case."""

    question: str
    claim: str
    source: str
    shape: str
    verdict: str
    seconds: float
    given: str = ""
    example: dict | None = None          # roles of a schedule with the shape (forced, allowed)
    counterexample: dict | None = None   # roles of one without it (allowed, excluded)
    removals: tuple[str, ...] = ()       # single constraints whose removal changes the verdict
    core: tuple[str, ...] = ()           # a minimal set of constraints that decides it
    reached_at: int | None = None        # excluded: smallest I (units) with the shape

    def to_dict(self) -> dict:
        return attrs.asdict(self, filter=lambda a, v: v not in (None, (), ""))


@attrs.frozen
class CaseResult:
    case: Case
    status: str
    I: int | None                   # noqa: E741 - raw cycles
    I_units: int | None
    scale: int
    lower_bound: int                # raw cycles: the raw model's max(ResMII, RecMII) in units
    roles: dict
    seconds: float                  # the whole case: the solve, then every question
    answers: tuple[Answer, ...]
    solve_seconds: float = 0.0      # the solve alone

    def to_dict(self) -> dict:
        return {"case": self.case.label, "kernel": self.case.kernel,
                "machine": self.case.machine, "params": list(self.case.target()[2]),
                "inventory": self.case.inventory, "status": self.status, "I": self.I,
                "I_units": self.I_units, "cycles_per_unit": self.scale,
                "lower_bound": self.lower_bound, "roles": self.roles,
                "seconds": round(self.seconds, 1), "solve_seconds": round(self.solve_seconds, 1),
                "answers": [a.to_dict() for a in self.answers]}


class Asker:
    """Decisions at one run's optimal I, in its solver units."""

    def __init__(self, run: Run, settings: Settings):
        self.run, self.settings = run, settings
        self.I = run.outcome.schedule.I   # noqa: E741
        self.names = [c.name for c in constraint_set()]

    def decide(self, extra: Sequence[Constraint], without: Sequence[str] = (),
               I: int | None = None) -> tuple[str, dict | None]:  # noqa: E741
        s = self.settings
        status, schedule = decide(self.run.model, I or self.I, backend=s.backend,
                                  encoding=s.encoding,
                                  constraints=[*constraint_set(without=without), *extra],
                                  max_stages=self.run.outcome.max_stages,
                                  solve_limit=s.solve_limit, isolate=s.isolate)
        return status, (None if schedule is None else
                        {g: list(ops) for g, ops in roles(schedule).items()})

    def explain(self, extra: Sequence[Constraint]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(single constraints whose removal makes `extra` feasible, a minimal set of
        constraints that with `extra` is infeasible - only looked for when no single one is)."""
        singles = tuple(n for n in self.names if self.decide(extra, [n])[0] == "feasible")
        if singles:
            return singles, ()
        kept = list(self.names)
        for n in list(kept):
            rest = [x for x in kept if x != n]
            if self.decide(extra, [x for x in self.names if x not in rest])[0] == "infeasible":
                kept = rest
        return (), tuple(kept)

    def reach(self, extra: Sequence[Constraint]) -> int | None:
        """The smallest I (units) at which `extra` is feasible, up to the search's bound."""
        run = self.run
        for I in range(self.I + 1, run.outcome.bounds.i_upper + 1):  # noqa: E741
            if self.decide(extra, I=I)[0] == "feasible":
                return I
        return None


def ask(asker: Asker, q: Question, model: Model) -> Answer:
    """Impose and forbid the question's shape at the optimal I (with its `given`, if any)."""
    tick = time.perf_counter()
    shape: Shape = q.shape(model)
    given = [Require(q.given(model))] if q.given else []
    on, example = asker.decide([*given, Require(shape)])
    off, counter = asker.decide([*given, Require(shape, False)])
    verdict = UNKNOWN
    if on == "infeasible":
        verdict = EXCLUDED
    elif on == "feasible":
        verdict = FORCED if off == "infeasible" else ALLOWED if off == "feasible" else UNKNOWN
    removals: tuple[str, ...] = ()
    core: tuple[str, ...] = ()
    reached = None
    if verdict == EXCLUDED:
        removals, core = asker.explain([*given, Require(shape)])
        if asker.settings.reach:
            reached = asker.reach([*given, Require(shape)])
    elif verdict == FORCED and asker.settings.explain_forced:
        removals, core = asker.explain([*given, Require(shape, False)])
    return Answer(q.key, q.claim, q.source, shape.describe(), verdict,
                  time.perf_counter() - tick, q.given(model).describe() if q.given else "",
                  example, counter, removals, core, reached)


def answer_case(case: Case, questions: Sequence[Question], settings: Settings,
                progress: Callable[[str], None] = lambda _: None) -> CaseResult:
    """The optimal I of `case`, then every question at it."""
    tick = time.perf_counter()
    model = load_target(*case.target())
    # The model's optimum (no plan round), in units: each decision in raw cycles takes minutes
    # (FA4's MMA warp at the raw optimum 3530: 847 s against 70 s at 95 units of 38 cycles).
    run = run_solve(model, Options(tie_breakers=TIE_BREAKERS, time_limit=settings.time_limit,
                                   isolate=settings.isolate, plan=False, normalize="units"))
    o, s = run.outcome, run.schedule
    scale = run.normalized.scale if run.normalized else 1
    solved = time.perf_counter() - tick
    progress(f"{case.label}: {o.status}, I = {s.I if s else None} ({solved:.0f} s)")
    answers = []
    if s is not None and o.optimal:
        asker = Asker(run, settings)
        for q in questions:
            a = ask(asker, q, run.raw)
            progress(f"  {q.key}: {a.verdict} ({a.seconds:.0f} s)")
            answers.append(a)
    return CaseResult(case, o.status, s.I if s else None, o.schedule.I if s else None, scale,
                      run.lower_bound, {g: list(v) for g, v in roles(s).items()} if s
                      else {}, time.perf_counter() - tick, tuple(answers), solved)


def reproduce(topics: Sequence[Topic] = TOPICS, only: Sequence[str] = (),
              settings: Settings = Settings(),
              progress: Callable[[str], None] = lambda _: None,
              done: Callable[[dict, dict], None] = lambda case, report: None) -> dict:
    """Every case of every topic (those whose key or case label contains one of `only`);
    `done(case, report so far)` hears of each case as it is answered."""
    report: dict = {"machine": machine_line(), "settings": attrs.asdict(settings), "cases": []}
    for topic in topics:
        for case in topic.cases:
            if only and not any(t in topic.key or t in case.label for t in only):
                continue
            r = answer_case(case, topic.questions, settings, progress)
            report["cases"].append({"topic": topic.key, "title": topic.title, **r.to_dict()})
            done(report["cases"][-1], report)
    return report


def machine_line() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                       cpu)
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average {os.getloadavg()[0]:.1f}")


# ---------------------------------------------------------------------------------------------
# Markdown


def _roles_text(r: dict | None) -> str:
    return "; ".join(f"{g}: {', '.join(ops)}" for g, ops in (r or {}).items())


def markdown(report: dict) -> str:
    """The report as Markdown: per case its optimum, then one row per question."""
    return "\n".join([f"Machine: {report['machine']}", "",
                      *(markdown_case(c) for c in report["cases"])])


def markdown_case(c: dict) -> str:
    """One case: its optimum, then one row per question."""
    out = [f"#### {c['case']}", "",
           f"`warpweave solve {c['kernel']} --machine {c['machine']}"
           + "".join(f" {p}" for p in c["params"]) + " --normalize units`: "
           f"{c['status']}{' in units' * (c['cycles_per_unit'] > 1)}, I = {c['I']} cycles "
           f"({c['I_units']} units of {c['cycles_per_unit']}), raw lower bound "
           f"{c['lower_bound']}; solved in {c.get('solve_seconds', '-')} s, {c['seconds']} s "
           "with the questions.  One "
           f"optimum (fewest groups, then fewest cross-group edges): {_roles_text(c['roles'])}.",
           "", "| question | answer at the optimal I | why / witness | seconds |",
           "|---|---|---|---|"]
    for a in c["answers"]:
        out.append(f"| {a['question']}{' (given ' + a['given'] + ')' if a.get('given') else ''} "
                   f"| **{a['verdict']}** | {_why(a)} | {a['seconds']:.0f} |")
    out.append("")
    return "\n".join(out)


def _why(a: dict) -> str:
    """What explains a verdict: the deletion test, or a schedule that has the shape."""
    named = a.get("removals") or a.get("core")
    how = ("feasible without any one of: " if a.get("removals") else
           "excluded by these together: ") + ", ".join(named) if named else ""
    if a["verdict"] == EXCLUDED:
        if not named:
            how = "impossible at this I whatever the constraints"
        if a.get("reached_at"):
            how += f"; feasible from I = {a['reached_at']} units"
        return how
    if a["verdict"] == FORCED:
        return ("its negation is " + how) if named else ""
    if a["verdict"] == ALLOWED:
        return "with: " + _roles_text(a.get("example"))
    return ""


def main(only: Sequence[str] = (), json_path: str | None = None, settings: Settings = Settings(),
         quiet: bool = False) -> dict:
    """Run, print each case's Markdown to stdout as it is answered (progress to stderr), and
    keep the JSON file up to date."""
    import sys

    def progress(line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr, flush=True)

    print(f"Machine: {machine_line()}\n", flush=True)

    def done(case: dict, report: dict) -> None:
        print(markdown_case(case), flush=True)
        if json_path:
            with open(json_path, "w") as f:
                json.dump(report, f, indent=1)

    report = reproduce(TOPICS, only, settings, progress, done)
    return report
