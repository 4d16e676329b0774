"""Random small IR problems (hypothesis) and a brute-force oracle: the ground truth that every
backend is compared with."""

from __future__ import annotations

import itertools
import random

from hypothesis import strategies as st

from warpweave.ir import BoolVar, Problem

SENSES = ("<=", ">=", "==")


@st.composite
def problems(draw, max_bools: int = 5, max_ints: int = 2, max_constraints: int = 6,
             objective: bool | None = None) -> Problem:
    """A problem over a few Booleans and small-domain integers with every kind of constraint;
    `objective` None draws whether it has one."""
    p = Problem("random")
    bools = [p.bool(f"b{i}") for i in range(draw(st.integers(1, max_bools)))]
    ints = []
    for i in range(draw(st.integers(0, max_ints))):
        lb = draw(st.integers(-2, 1))
        ints.append(p.int(f"x{i}", lb, lb + draw(st.integers(0, 3))))
    lit = st.builds(lambda v, pos: v if pos else ~v, st.sampled_from(bools), st.booleans())
    coef = st.sampled_from([-3, -2, -1, 1, 2, 3])
    lit_term = st.tuples(coef, lit)
    any_term = st.tuples(coef, st.sampled_from(bools + ints)) | lit_term if ints else lit_term
    kinds = ["clause", "pb", "linear", "amo", "eo", "implies_pb", "implies_linear"]
    if len(bools) >= 3:
        kinds.append("card")
    for _ in range(draw(st.integers(0, max_constraints))):
        kind = draw(st.sampled_from(kinds))
        if kind == "clause":
            p.add_clause(draw(st.lists(lit, min_size=1, max_size=3)))
        elif kind in ("pb", "linear"):
            terms = draw(st.lists(lit_term if kind == "pb" else any_term, min_size=1, max_size=4))
            p.add_linear(terms, draw(st.sampled_from(SENSES)), draw(st.integers(-4, 6)))
        elif kind == "card":
            # Equal weights on distinct variables and a bound of 2 or more: what the CNF
            # translation gives to pysat.card with k >= 2 (random PB terms almost never are).
            lits = draw(st.lists(lit, min_size=3, max_size=len(bools),
                                 unique_by=lambda x: x.var.index))
            w = draw(st.sampled_from([-2, -1, 1, 2]))
            k = draw(st.integers(2, len(lits) - 1))
            p.add_linear([(w, x) for x in lits], draw(st.sampled_from(SENSES)), w * k)
        elif kind in ("amo", "eo"):
            lits = draw(st.lists(lit, min_size=2, max_size=4))
            (p.at_most_one if kind == "amo" else p.exactly_one)(lits)
        else:
            terms = draw(st.lists(lit_term if kind == "implies_pb" else any_term, min_size=1,
                                  max_size=4))
            p.add_implies(draw(lit), terms, draw(st.sampled_from(SENSES)),
                          draw(st.integers(-4, 6)))
    if objective if objective is not None else draw(st.booleans()):
        p.minimize(draw(st.lists(any_term, min_size=1, max_size=4)))
    return p


def assignments(p: Problem):
    """Every assignment of the problem's variables."""
    domains = [(False, True) if isinstance(v, BoolVar) else range(v.lb, v.ub + 1)
               for v in p.vars]
    for combo in itertools.product(*domains):
        yield dict(zip(p.vars, combo, strict=True))


def oracle(p: Problem, assumptions=()) -> tuple[bool, int | None]:
    """(feasible, optimum or None) by enumeration, under assumption literals."""
    best, feasible = None, False
    for a in assignments(p):
        if any(bool(a[x.var]) != x.positive for x in assumptions):
            continue
        if p.check(a):
            continue
        feasible = True
        obj = p.objective_value(a)
        if obj is not None and (best is None or obj < best):
            best = obj
    return feasible, best


def random_3sat(n: int, ratio: float = 4.26, seed: int = 1, objective: bool = False) -> Problem:
    """A random 3-SAT instance at the threshold: hard for every solver from a few hundred
    variables on (used for time-limit tests)."""
    rng = random.Random(seed)
    p = Problem(f"3sat-{n}")
    v = [p.bool(f"v{i}") for i in range(n)]
    for _ in range(int(ratio * n)):
        p.add_clause([v[i] if rng.random() < 0.5 else ~v[i] for i in rng.sample(range(n), 3)])
    if objective:
        p.minimize([(1, x) for x in v])
    return p
