"""Every pysat.card and pysat.pb encoding, as the CNF translation uses it, is exact.

Random small problems rarely give an encoder a cardinality bound of 2 or more, or weights that
differ, so these properties state such constraints on purpose: `sum w*lit sense rhs`, plain or
guarded (`g -> ...`), over 3 to 7 distinct literals.  For every assignment of the problem's
variables, the clauses with that assignment assumed must be satisfiable exactly when the
constraint holds (the encoders' auxiliary variables are existentially projected away).  Each
example also checks that the encoder was called, with the chosen encoding and the translation's
one `IDPool` as `vpool=`, and that no clause uses a variable that pool did not hand out.
"""

from __future__ import annotations

import contextlib
import itertools
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpweave.backends.cnf import (
    AMO_ONLY,
    CARD_ENCODINGS,
    CARD_FALLBACK,
    PB_ENCODINGS,
    CnfTranslation,
)
from warpweave.ir import Implies, Linear, Problem

ENCODER = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SENSES = ("<=", ">=", "==")


@st.composite
def weighted_constraint(draw, equal_weights: bool):
    """A problem with one constraint over Booleans `x0..` (and the guard `g`).

    Cardinality: equal weights and a bound `k` with `2 <= k <= n - 2` on either side
    (pysat.card states `k = n - 1` as one clause, and bound 1 is what at-most-one already
    gives every encoder).  PB: weights that differ and a bound strictly between the largest
    weight and the sum.  Neither is decided without an encoder."""
    n = draw(st.integers(4 if equal_weights else 3, 7))
    p = Problem("encoder")
    xs = [p.bool(f"x{i}") for i in range(n)]
    g = p.bool("g")
    lits = [x if draw(st.booleans()) else ~x for x in xs]
    if equal_weights:
        weights = [draw(st.integers(1, 3))] * n
        rhs = weights[0] * draw(st.integers(2, n - 2))
    else:
        weights = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n)
                       .filter(lambda ws: len(set(ws)) > 1))
        rhs = draw(st.integers(max(weights), sum(weights) - 1))
    sense = draw(st.sampled_from(SENSES))
    if sense == ">=":      # the same bound seen from the other side
        rhs = sum(weights) - rhs
    c = Linear(tuple(zip(weights, lits, strict=True)), sense, rhs)
    p.constraints = [Implies(g, c) if draw(st.booleans()) else c]
    return p


@contextlib.contextmanager
def encoder_calls(cls):
    """The keyword arguments of every `cls.atmost` call (CardEnc or PBEnc) in the block."""
    calls = []
    original = cls.atmost

    def spy(**kwargs):
        calls.append(kwargs)
        return original(**kwargs)

    with mock.patch.object(cls, "atmost", spy):
        yield calls


def translate(p: Problem, cls, code: int, **options) -> CnfTranslation:
    """`CnfTranslation(p, **options)`, checking that it called `cls.atmost` with the encoding
    `code` and its own pool."""
    with encoder_calls(cls) as calls:
        tr = CnfTranslation(p, **options)
    assert calls, "no encoder was called"
    for kwargs in calls:
        assert kwargs["vpool"] is tr.pool
        assert kwargs["encoding"] == code
    return tr


def assert_exact(p: Problem, tr: CnfTranslation) -> None:
    from pysat.solvers import Solver

    used = {abs(x) for clause in tr.clauses for x in clause}
    assert used <= set(range(1, tr.nv + 1)), "a clause uses a variable outside the pool"
    (c,) = p.constraints
    with Solver(name="minisat22", bootstrap_with=tr.clauses) as s:
        for combo in itertools.product((False, True), repeat=len(p.bools)):
            values = dict(zip(p.bools, combo, strict=True))
            assert s.solve(assumptions=tr.model_of(values)) == c.holds(values), (c, values)


@pytest.mark.parametrize("card", CARD_ENCODINGS)
@ENCODER
@given(weighted_constraint(equal_weights=True))
def test_every_cardinality_encoding_is_exact(card, p):
    from pysat import card as pysat_card

    used = CARD_FALLBACK if card in AMO_ONLY else card   # pysat.card has them for k = 1 only
    code = getattr(pysat_card.EncType, used)
    assert_exact(p, translate(p, pysat_card.CardEnc, code, card=card))


@pytest.mark.parametrize("pb", PB_ENCODINGS)
@ENCODER
@given(weighted_constraint(equal_weights=False))
def test_every_pb_encoding_is_exact(pb, p):
    from pysat import pb as pysat_pb

    assert_exact(p, translate(p, pysat_pb.PBEnc, getattr(pysat_pb.EncType, pb), pb=pb))
