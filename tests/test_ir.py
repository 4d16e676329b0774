"""The IR itself: constant folding, semantics of negated literals, the summary, JSON round trip,
and files that are not what `to_dict` writes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from warpweave.backends.normal import collect, pb_leq, span
from warpweave.errors import InputError
from warpweave.ir import Clause, Implies, Linear, Problem

from .irgen import assignments, oracle, problems


def test_negated_literal_in_a_linear_term_means_one_minus_x():
    p = Problem()
    a = p.bool("a")
    c = Linear(((2, ~a),), "==", 2)
    assert c.holds({a: False}) and not c.holds({a: True})
    assert collect(c.terms) == ({a: -2}, 2)


def test_constants_fold_and_a_false_constant_constraint_becomes_the_empty_clause():
    p = Problem()
    a = p.bool("a")
    p.add_clause([a, True])                 # trivially true: dropped
    p.add_linear([(3, True), (1, False)], "<=", 3)
    assert p.constraints == []
    p.add_linear([(3, True)], "<=", 2)
    assert p.constraints == [Clause(())] and p.unsat_reason
    q = Problem()
    b = q.bool("b")
    q.add_implies(b, [(1, True)], ">=", 2)   # b -> 1 >= 2: b must be false
    assert q.constraints == [Clause((~b,))]


def test_span_and_pb_normal_form():
    p = Problem()
    a, b = p.bool("a"), p.bool("b")
    x = p.int("x", -2, 3)
    assert span({a: 2, x: -1}, 1) == (1 - 3, 1 + 2 + 2)
    lits, weights, k = pb_leq([(3, a), (-2, b)], 1)
    assert lits == [a, ~b] and weights == [3, 2] and k == 3   # 3a - 2b <= 1 == 3a + 2~b <= 3


@settings(max_examples=150, deadline=None)
@given(problems())
def test_json_round_trip_keeps_the_meaning(p):
    q = Problem.from_dict(p.to_dict())
    assert q.to_dict() == p.to_dict()
    for a in assignments(p):
        b = {qv: a[pv] for pv, qv in zip(p.vars, q.vars, strict=True)}
        assert len(p.check(a)) == len(q.check(b))
        assert p.objective_value(a) == q.objective_value(b)
    assert oracle(p) == oracle(q)


def test_write_and_read_a_file(tmp_path):
    p = Problem("file")
    a = p.bool("a")
    x = p.int("x", 0, 4)
    p.add_implies(~a, [(2, x), (-1, a)], ">=", 3)
    p.minimize([(1, x), (5, ~a)])
    p.objective_offset = 7
    p.hint({a: True, x: 3})
    p.write(tmp_path / "p.json")
    q = Problem.read(tmp_path / "p.json")
    assert q.hints == {q.vars[0]: 1, q.vars[1]: 3}
    assert isinstance(q.constraints[0], Implies)
    assert q.summary() == p.summary()
    assert oracle(q) == oracle(p) == (True, 7 + 0)   # a true, x = 0


def test_summary_counts_variables_and_constraints_by_kind():
    p = Problem("kinds")
    a, b, c = p.bool("a"), p.bool("b"), p.bool("c")
    x = p.int("x", 0, 3)
    p.add_clause([a, ~b])
    p.add_linear([(2, a), (1, b)], "<=", 2)        # over Booleans only: PB
    p.add_linear([(1, x), (1, c)], ">=", 1)        # with an integer: Linear
    p.at_most_one([a, b, c])
    p.exactly_one([~a, c])
    p.add_implies(a, [(1, x)], "==", 2)
    assert p.summary() == {"name": "kinds", "bools": 3, "ints": 1, "objective": False,
                           "constraints": {"AtMostOne": 1, "Clause": 1, "ExactlyOne": 1,
                                           "Implies": 1, "Linear": 1, "PB": 1}}
    p.minimize([(1, x)])
    assert p.summary()["objective"] is True


GOOD = {"format": "warpweave.ir/1", "name": "g",
        "vars": [{"name": "a"}, {"name": "x", "lb": 0, "ub": 3}],
        "constraints": [{"implies": 1, "then": {"terms": [[1, 2]], "sense": "<=", "rhs": 2}}],
        "objective": {"terms": [[1, 2], [2, -1]], "offset": 0}}


def edited(path: str, value):
    """GOOD with the value at a dotted path (integers index lists) replaced."""
    import copy

    doc = copy.deepcopy(GOOD)
    *parents, last = [int(k) if k.isdigit() else k for k in path.split(".")]
    node = doc
    for k in parents:
        node = node[k]
    node[last] = value
    return doc


@pytest.mark.parametrize("path,value,where", [
    ("format", "warpweave.model/1", "format"),
    ("vars", {}, "vars"),
    ("vars.1.ub", -1, "vars[1].ub"),
    ("vars.1.lb", "0", "vars[1].lb"),
    ("constraints.0.then.sense", "<", "constraints[0].then.sense"),
    ("constraints.0.then.rhs", 2.5, "constraints[0].then.rhs"),
    ("constraints.0.then.terms", [[1, 3]], "constraints[0].then.terms[0][1]"),
    ("constraints.0.then.terms", [[1, 0]], "constraints[0].then.terms[0][1]"),
    ("constraints.0.then.terms", [[1, -2]], "constraints[0].then.terms[0][1]"),   # -integer
    ("constraints.0.implies", 2, "constraints[0].implies"),                      # an integer
    ("constraints.0", {"clause": [1], "linear": {}}, "constraints[0]"),
    ("constraints.0", {"clause": 1}, "constraints[0].clause"),
    ("objective.terms", [[1]], "objective.terms[0]"),
])
def test_a_file_that_is_not_an_ir_problem_is_an_input_error_naming_the_key(path, value, where):
    assert Problem.from_dict(GOOD).summary()["constraints"] == {"Implies": 1}
    with pytest.raises(InputError) as info:
        Problem.from_dict(edited(path, value))
    assert str(info.value).startswith(where + " = "), str(info.value)
