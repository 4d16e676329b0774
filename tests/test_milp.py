"""The MIP translation of implications: big-M rows that mean exactly `lit -> constraint`, each
with the smallest M the variable bounds allow, and no row for a side the bounds already
entail; and no answer passed on that breaks a row."""

from __future__ import annotations

from hypothesis import given, settings

from warpweave.backends.milp import big_m_rows
from warpweave.core.formats import load_model
from warpweave.ir import Implies, Linear, Problem, lit_value, term_value
from warpweave.search import search

from .conftest import ROOT
from .irgen import assignments, problems


def row_value(terms, values) -> int:
    return sum(term_value(t, values) for t in terms)


def row_holds(row, values) -> bool:
    terms, sense, rhs = row
    return Linear(tuple(terms), sense, rhs).holds(values)


def test_big_m_is_the_span_of_the_expression_past_the_bound():
    p = Problem()
    g = p.bool("g")
    x, y = p.int("x", 0, 4), p.int("y", -1, 2)
    terms = ((2, x), (3, y))                      # 2x + 3y ranges over [-3, 14]
    assert big_m_rows(Implies(g, Linear(terms, "<=", 5))) == [([*terms, (9, g)], "<=", 14)]
    assert big_m_rows(Implies(~g, Linear(terms, ">=", 1))) == [([*terms, (-4, ~g)], ">=", -3)]
    assert big_m_rows(Implies(g, Linear(terms, "==", 0))) == [
        ([*terms, (14, g)], "<=", 14), ([*terms, (-3, g)], ">=", -3)]
    assert big_m_rows(Implies(g, Linear(terms, "<=", 14))) == []     # always holds
    assert big_m_rows(Implies(g, Linear(terms, ">=", -3))) == []


@settings(max_examples=200, deadline=None)
@given(problems(max_constraints=8))
def test_big_m_rows_mean_the_implication_with_the_tightest_m(p):
    for c in (c for c in p.constraints if isinstance(c, Implies)):
        rows = big_m_rows(c)
        off = []                                   # assignments with the guard false
        for values in assignments(p):
            assert all(row_holds(r, values) for r in rows) == c.holds(values), (c, values)
            if not lit_value(c.lit, values):
                off.append(values)
        if any(getattr(x, "var", x) is c.lit.var for _, x in c.then.terms):
            continue                               # the guard's own variable bounds the sum
        for terms, sense, rhs in rows:
            # With the guard false the row must allow the expression's whole range, and an M
            # one smaller would cut off the assignment at the end of that range.
            extreme = (max if sense == "<=" else min)(row_value(terms, v) for v in off)
            assert extreme == rhs, (c, terms, sense, rhs)


def test_an_answer_that_breaks_a_row_is_not_passed_on():
    """CBC's preprocessing returned, for this model's integer encoding at I = 8, a point that
    breaks a half-reified gap (found by the cross-check): the session solves again without
    preprocessing, and the search proves the oracle's optimum."""
    model = load_model(ROOT / "tests" / "regressions" / "cbc-preprocessing.json")
    out = search(model, backend="cbc", encoding="integer", max_stages=3)
    assert (out.status, out.schedule.I) == ("optimal", 9)
