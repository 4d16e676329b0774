"""The `sat` backend: PySAT solvers over the CNF translation of `backends.cnf`.

Spec: `sat[:SOLVER[/CARD[/PB]]]`, each part optional (empty means the default), e.g. `sat`,
`sat:cadical195`, `sat:cadical195/totalizer`, `sat:glucose4/seqcounter/bdd`, `sat://adder`.
SOLVER is any name or alias of `pysat.solvers.SolverNames` (default `maplechrono`: it has both
assumptions and prompt interrupts); CARD a `pysat.card` encoding (`CARD_ENCODINGS`, default
`totalizer`); PB a `pysat.pb` encoding (`PB_ENCODINGS`, default `best`, pindakaas' own choice).

Optimization is bound tightening (bisection) with one fresh selector literal per bound: the bound's
encoding is guarded by the selector, the call assumes it, and afterwards the selector is fixed
false, so no bound survives into a later call.  Time limits use `solve_limited` with an interrupt
from a timer thread; solvers whose PySAT binding cannot be interrupted (CaDiCaL, Lingeling,
Kissat) check the limit only between optimization steps and do not declare `time_limit`, nor do
the Glucose family, which react to an interrupt only seconds later.
Solvers without assumptions (Kissat) are rebuilt for each step, with the assumptions as unit
clauses.  The problem's hints become the solver's preferred phases (not in Kissat).
"""

from __future__ import annotations

import functools

from warpweave.backends.base import (
    ASSUMPTIONS,
    OPTIMIZE,
    TIME_LIMIT,
    UNSAT_PROOF,
    WARM_START,
    Status,
)
from warpweave.backends.cnf import (
    CARD_ENCODINGS,
    DEFAULT_CARD,
    DEFAULT_PB,
    PB_ENCODINGS,
    CnfTranslation,
)
from warpweave.backends.driver import (
    Deadline,
    LoadedSession,
    Outcome,
    SessionBackend,
    bisect_objective,
    interrupt_at,
)
from warpweave.ir import Lit

# MapleLCMDistChronoBT (SAT competition 2018): assumptions, and it stops within ~0.02 s of an
# interrupt.
DEFAULT_SOLVER = "maplechrono"
# PySAT raises NotImplementedError on `interrupt` for these.
NO_INTERRUPT = frozenset({"cadical103", "cadical153", "cadical195", "cadical300", "lingeling",
                          "kissat404"})
# Interrupted like the others, but seconds late: up to 8 s past limits of 0-300 ms on random
# 3-SAT (glucose3, gluecard3), 3 s (glucose42), 1 s (glucose4); 4-8 s were seen for Glucose 4.1 /
# 4.2 on a pigeonhole instance.  So they do not declare `time_limit` either.
SLOW_INTERRUPT = frozenset({"glucose3", "glucose4", "glucose42", "gluecard3", "gluecard4"})
NO_ASSUMPTIONS = frozenset({"kissat404"})
# PySAT raises NotImplementedError on `set_phases` for these.
NO_PHASES = frozenset({"kissat404"})
# Solvers offered as variants: the others are older versions or near-copies of these.
MAIN_SOLVERS = ("maplechrono", "glucose42", "cadical195", "minisat22", "kissat404")


@functools.cache
def solver_names() -> dict[str, str]:
    """Every PySAT solver name and alias -> its canonical name."""
    from pysat.solvers import SolverNames

    out = {}
    for name, aliases in vars(SolverNames).items():
        if not name.startswith("_"):
            out.update({a: name for a in aliases})
            out[name] = name
    return out


@functools.cache
def solver_problems() -> dict[str, str | None]:
    """Every canonical PySAT solver name -> None if it can be created here, else why not."""
    from pysat.solvers import Solver

    out: dict[str, str | None] = {}
    for name in sorted(set(solver_names().values())):
        try:
            Solver(name=name).delete()
            out[name] = None
        except Exception as exc:  # noqa: BLE001 - PySAT raises bare errors for missing builds
            out[name] = f"{type(exc).__name__}: {exc}"
    return out


def parse_options(options: str | None) -> tuple[str, str, str]:
    """`SOLVER/CARD/PB` (parts optional) -> canonical (solver, card, pb); ValueError if bad."""
    parts = (options or "").split("/")
    if len(parts) > 3:
        raise ValueError(f"sat options are SOLVER/CARD/PB, got {options!r}")
    parts += [""] * (3 - len(parts))
    solver = parts[0] or DEFAULT_SOLVER
    names = solver_names()
    if solver not in names:
        known = ", ".join(sorted(set(names.values())))
        raise ValueError(f"unknown PySAT solver {solver!r} (known: {known})")
    card, pb = parts[1] or DEFAULT_CARD, parts[2] or DEFAULT_PB
    if card not in CARD_ENCODINGS:
        raise ValueError(f"unknown cardinality encoding {card!r} "
                         f"(known: {', '.join(CARD_ENCODINGS)})")
    if pb not in PB_ENCODINGS:
        raise ValueError(f"unknown PB encoding {pb!r} (known: {', '.join(PB_ENCODINGS)})")
    return names[solver], card, pb


class SatSession(LoadedSession):
    def load(self) -> None:
        self.cnf = CnfTranslation(self.problem, self.backend.card, self.backend.pb)
        self.incremental = self.backend.solver not in NO_ASSUMPTIONS
        self.solver = self._new_solver(self.cnf.clauses) if self.incremental else None

    def _new_solver(self, clauses):
        from pysat.solvers import Solver

        solver = Solver(name=self.backend.solver, bootstrap_with=clauses)
        if self.problem.hints and WARM_START in self.backend.capabilities:
            solver.set_phases(self.cnf.model_of(self.problem.hints))  # the hints as phases
        return solver

    def close(self) -> None:
        if self.solver is not None:
            self.solver.delete()
            self.solver = None

    def run(self, assumptions: list[Lit], deadline: Deadline) -> Outcome:
        lits = [self.cnf.lit(x) for x in assumptions]
        selectors: list[int] = []

        def step(bound: int | None, deadline: Deadline):
            extra: list[list[int]] = []
            assume = list(lits)
            if bound is not None:
                s = self.cnf.new_var()
                selectors.append(s)
                extra = self.cnf.objective_at_most(bound, s)
                assume.append(s)
            if deadline.expired():
                return deadline.gave_up(), None
            if self.incremental:
                self.solver.append_formula(extra)
                answer, model = self._solve(self.solver, assume, deadline)
            else:
                solver = self._new_solver(self.cnf.clauses + extra + [[x] for x in assume])
                try:
                    answer, model = self._solve(solver, [], deadline)
                finally:
                    solver.delete()
            if answer is None:
                return deadline.gave_up(), None
            return (Status.SAT, self.cnf.values(model)) if answer else (Status.UNSAT, None)

        try:
            return bisect_objective(self.problem, step, deadline)
        finally:
            if self.incremental:  # retire this call's bounds for good
                self.solver.append_formula([[-s] for s in selectors])

    def _solve(self, solver, assume: list[int], deadline: Deadline):
        """(True, model) / (False, None) / (None, None) when interrupted by the deadline."""
        if deadline.limit is None or not self.backend.interruptible:
            answer = solver.solve(assumptions=assume)
        else:
            try:
                with interrupt_at(deadline, solver.interrupt):
                    answer = solver.solve_limited(assumptions=assume, expect_interrupt=True)
            finally:
                solver.clear_interrupt()
        return answer, (solver.get_model() if answer else None)


class SatBackend(SessionBackend):
    """PySAT solvers with selectable cardinality and PB encodings."""

    family = "sat"
    extra = "sat"
    capabilities = frozenset({OPTIMIZE, ASSUMPTIONS, UNSAT_PROOF, TIME_LIMIT})
    session_class = SatSession
    requires = ("pysat.card", "pysat.solvers")
    takes_options = True

    def __init__(self, options: str | None = None, seed: int = 0):
        super().__init__(options, seed)
        self.solver, self.card, self.pb = parse_options(options)
        self.interruptible = self.solver not in NO_INTERRUPT
        caps = {OPTIMIZE, UNSAT_PROOF}
        if self.interruptible and self.solver not in SLOW_INTERRUPT:
            caps.add(TIME_LIMIT)
        if self.solver not in NO_ASSUMPTIONS:
            caps.add(ASSUMPTIONS)
        if self.solver not in NO_PHASES:
            caps.add(WARM_START)
        self.capabilities = frozenset(caps)

    @property
    def spec(self) -> str:
        return f"sat:{self.solver}/{self.card}/{self.pb}"


    @classmethod
    def variants(cls) -> list[str]:
        """Options worth testing: every main solver with the default encodings, every
        cardinality encoding and every PB encoding with the default solver."""
        out = [f"{s}/{DEFAULT_CARD}/{DEFAULT_PB}" for s in MAIN_SOLVERS]
        out += [f"{DEFAULT_SOLVER}/{c}/{DEFAULT_PB}" for c in CARD_ENCODINGS]
        out += [f"{DEFAULT_SOLVER}/{DEFAULT_CARD}/{p}" for p in PB_ENCODINGS]
        return list(dict.fromkeys(out))

    @classmethod
    def choices(cls) -> dict:
        """The option values: solvers (each None or why it cannot be created), encodings."""
        return {"syntax": "sat[:SOLVER[/CARD[/PB]]]", "defaults": [DEFAULT_SOLVER, DEFAULT_CARD,
                                                               DEFAULT_PB],
                "solvers": solver_problems(), "card": list(CARD_ENCODINGS),
                "pb": list(PB_ENCODINGS)}

    def version(self) -> str:
        import pysat

        return f"python-sat {pysat.__version__} ({self.solver}, card {self.card}, pb {self.pb})"
