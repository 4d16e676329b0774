"""Tie-breakers: among schedules with the optimal (I, L), minimize secondary objectives in order.

`groups` (warp groups used), `cross_edges` (data edges between groups), `register_peak` (the
largest register weight live in any group).  Each is a new objective on the same view, with I,
the stage count and L pinned to the optimum's; after each, its optimum is kept as a constraint,
so the order is lexicographic.  Each question starts from the best schedule so far (a warm
start: it is feasible there) and goes through the run's protocol like any other.
"""

from __future__ import annotations

from collections.abc import Sequence

from warpweave.search.attempt import SOLVING, Attempt
from warpweave.search.run import Run

TIE_BREAKERS = ("groups", "cross_edges", "register_peak")


def tie_break(run: Run, order: Sequence[str]) -> None:
    """Among schedules with `run.best`'s (I, L), minimize the tie-breakers `order`
    lexicographically; stops at the first question that returns no schedule."""
    best = run.best
    I, S = best.I, best.stages  # noqa: E741
    view = run.solver.view(I, S, run.cons, run.bounds.min_length)
    p = view.problem
    for lit in view.pin_length(best.L):
        p.add_clause([lit])
    for name in order:
        def state(name=name):
            p.minimize(objective_terms(view, name))
            view.hint(run.best)  # a warm start: the best so far is feasible here
            return view

        how = f"{run.solver.how} min {name}"
        answer = run.put(Attempt(I, S, (best.L, best.L), SOLVING, how, phase="tie-break"),
                         run.cons, state)
        if answer.schedule is None:
            break
        # The next tie-breakers keep this one at its optimum.
        p.add_linear(p.objective, "<=", answer.result.objective - p.objective_offset)


def objective_terms(view, name: str) -> list:
    """Terms to minimize for the tie-breaker `name`, with the auxiliary variables and
    constraints it needs added to `view`'s problem."""
    model, p = view.model, view.problem
    if name == "groups":
        terms = []
        for g in model.machine.warp_groups:
            used = p.bool(f"used[{g.name}]")
            for op in model.ops:
                p.add_clause([~view.on(op.name, g.name), used])
            terms.append((1, used))
        return terms
    if name == "cross_edges":
        terms = []
        for e in model.edges:
            if e.is_data and e.src != e.dst:
                same = view.same_group(e.src, e.dst)
                if same is not True:
                    cross = p.bool(f"cross[{e.src},{e.dst}]")
                    p.add_clause([same, cross])
                    terms.append((1, cross))
        return terms
    copies = max(len(values) for values in view.programs()) if view.programs() else 0
    peak = p.int("register_peak", 0, sum(op.regs for op in model.ops) * max(1, copies))
    weights = {op.name: op.regs for op in model.ops if op.regs}
    for g in model.machine.warp_groups:
        view.limit_live(weights, peak, group=g.name)
    return [(1, peak)]
