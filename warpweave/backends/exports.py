"""Exports of an IR problem to standard files, from the same translations the backends solve.

- `lp`, `mps`: python-mip's writer on the model the `cbc` backend builds (big-M implications).
  Columns are named `x<index>` after the IR variable order.
- `smt2`: SMT-LIB 2 (QF_LIA) printed here from the translation the SMT backends use; variables
  are `b<index>` / `x<index>`.  With an objective it defines `obj` and adds `(minimize obj)`, an
  extension that z3 and OptiMathSAT read (`smt2_minimize=False` leaves it out for other solvers),
  then `(check-sat)` and `(get-value (obj))`.
- `cnf`: DIMACS CNF of the `sat` backend's translation (IR Booleans are variables 1..n).
- `wcnf`: the same hard clauses plus the objective as soft unit clauses, in the legacy
  `p wcnf` format (what z3 `-wcnf` reads); the objective is the cost plus the offset written in a
  comment.

`export` returns the constant to add to the file's objective value to get the IR objective
(None without an objective).
"""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from pathlib import Path

from warpweave.backends.cnf import DEFAULT_CARD, DEFAULT_PB, CnfTranslation
from warpweave.backends.normal import collect
from warpweave.backends.smt import SmtTerms, SmtTranslation
from warpweave.ir import Problem

FORMATS = ("lp", "mps", "smt2", "cnf", "wcnf")


def export(problem: Problem, fmt: str, path: str | Path, *, card: str = DEFAULT_CARD,
           pb: str = DEFAULT_PB, smt2_minimize: bool = True) -> int | None:
    """Write `problem` to `path` in format `fmt` (one of FORMATS); return the objective offset."""
    path = Path(path)
    if fmt in ("lp", "mps"):
        return write_mip(problem, fmt, path)
    if fmt == "smt2":
        path.write_text(smt2_text(problem, smt2_minimize))
        return 0 if problem.objective is not None else None
    if fmt in ("cnf", "wcnf"):
        return write_dimacs(problem, fmt, path, card, pb)
    raise ValueError(f"unknown export format {fmt!r} (known: {', '.join(FORMATS)})")


def write_mip(problem: Problem, fmt: str, path: Path) -> int | None:
    from warpweave.backends.milp import build_model

    model, _ = build_model(problem, "CBC")
    # python-mip picks the format from the file name's extension, so write to a temporary
    # `.lp` / `.mps` name and move it where asked; CBC writes MPS as `<name>.mps.gz`.
    with tempfile.TemporaryDirectory() as tmp:
        model.write(os.path.join(tmp, f"model.{fmt}"))
        (written,) = os.listdir(tmp)
        if written.endswith(".gz"):
            with gzip.open(os.path.join(tmp, written), "rb") as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.move(os.path.join(tmp, written), path)
    if problem.objective is None:
        return None
    return collect(problem.objective)[1] + problem.objective_offset


def write_dimacs(problem: Problem, fmt: str, path: Path, card: str, pb: str) -> int | None:
    from pysat.formula import CNF, WCNF

    tr = CnfTranslation(problem, card, pb)
    n = len(problem.bools)
    comments = [f"c warpweave {problem.name}: {n} Booleans (variables 1..{n}), "
                + f"{len(problem.ints)} order-encoded integers, card {card}, pb {pb}"]
    if fmt == "cnf":
        CNF(from_clauses=tr.clauses).to_file(str(path), comments=comments)
        return None
    w = WCNF()
    w.nv = tr.nv
    w.extend(tr.clauses)
    offset = None
    if tr.objective is not None:
        wlits, offset = tr.objective
        for weight, lit in wlits:
            w.append([-lit], weight=weight)
        comments.append(f"c objective = cost + {offset}")
    w.to_file(str(path), comments=comments, format="legacy")
    return offset


class Smt2Terms(SmtTerms):
    """SMT-LIB 2 text for each term; declarations are collected in `decls`."""

    def __init__(self):
        self.decls: list[str] = []

    def bool_var(self, name):
        self.decls.append(f"(declare-fun {name} () Bool)")
        return name

    def int_var(self, name):
        self.decls.append(f"(declare-fun {name} () Int)")
        return name

    def num(self, k): return str(k) if k >= 0 else f"(- {-k})"
    def true(self): return "true"
    def false(self): return "false"
    def not_(self, t): return f"(not {t})"
    def or_(self, ts): return f"(or {' '.join(ts)})"
    def and_(self, ts): return f"(and {' '.join(ts)})"
    def implies(self, a, b): return f"(=> {a} {b})"
    def ite(self, c, a, b): return f"(ite {c} {a} {b})"
    def add(self, ts): return f"(+ {' '.join(ts)})"
    def mul(self, k, t): return f"(* {self.num(k)} {t})"

    def cmp(self, t, sense, k):
        return f"({'=' if sense == '==' else sense} {t} {self.num(k)})"


def smt2_text(problem: Problem, minimize: bool = True) -> str:
    """The SMT-LIB 2 script of `problem` (see the module docstring)."""
    ops = Smt2Terms()
    tr = SmtTranslation(problem, ops)
    lines = [f"; warpweave {problem.name}", "(set-logic QF_LIA)", *ops.decls]
    lines += [f"(assert {a})" for a in tr.assertions]
    if tr.objective is not None:
        lines.append(f"(define-fun obj () Int (+ {tr.objective} {ops.num(tr.objective_constant)}))")
        if minimize:
            lines.append("(minimize obj)")
    lines.append("(check-sat)")
    if tr.objective is not None:
        lines.append("(get-value (obj))")
    return "\n".join(lines) + "\n"
