"""The solver-neutral IR: Boolean and bounded integer variables, clauses, linear / pseudo-Boolean
constraints, at-most-one / exactly-one, half-reified implications, and a linear objective.

No solver is imported here.  Variables have identity by object and names for display.  A literal
is a `BoolVar` or its negation `~x` (a `Not`); in linear terms a negated literal `~x` stands for
`1 - x`.  Python `True` / `False` may be used as constant literals: `add_clause` and friends fold
them away, so encodings can state boundary cases without special code.

A problem can be evaluated on an assignment (`check`), summarized, and written to / read from a
JSON file so that any solve can be replayed.

The vocabulary every part shares - `core` (constraints state themselves in it), `machines`
(normalization's ILP), the encodings and the backends - so none reaches into another for it:
`terms` (variables and literals), `statements` (what can be said of them), `problem` (a problem
and its file format).
"""

from warpweave.ir.problem import CHECK_EVERY, FORMAT, Problem
from warpweave.ir.statements import (
    SENSES,
    AtMostOne,
    Clause,
    Constraint,
    ExactlyOne,
    Implies,
    Linear,
    Sense,
)
from warpweave.ir.terms import (
    BoolVar,
    IntVar,
    Lit,
    LitOrConst,
    Not,
    Term,
    Var,
    lit_value,
    term_value,
)

__all__ = ["CHECK_EVERY", "FORMAT", "SENSES", "AtMostOne", "BoolVar", "Clause", "Constraint",
           "ExactlyOne", "Implies", "IntVar", "Linear", "Lit", "LitOrConst", "Not", "Problem",
           "Sense", "Term", "Var", "lit_value", "term_value"]
