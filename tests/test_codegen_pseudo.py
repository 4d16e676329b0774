"""Pseudocode, Q table and IR printers; fa-simplified must have the paper's Figure 1f shape."""

from __future__ import annotations

import json

from warpweave.codegen.lower import lower
from warpweave.codegen.text import ir_json, ir_text, pseudocode, q_table
from warpweave.core.formats import load_schedule

from .conftest import EXAMPLES


def _sections(text: str) -> dict[str, list[str]]:
    """Lines of one group's code by section (prologue, steady, epilogue)."""
    out: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("// Prologue"):
            cur = "prologue"
        elif s.startswith("// Steady"):
            cur = "steady"
        elif s.startswith("// Epilogue"):
            cur = "epilogue"
        elif cur and s and not s.startswith("for "):
            out.setdefault(cur, []).append(s)
    return out


def test_fa_simplified_has_figure_1f_structure(fa_model):
    s = load_schedule(EXAMPLES / "fa-simplified.schedule.json", fa_model)
    text = pseudocode(fa_model, lower(fa_model, s))
    parts = _sections(text)
    # One QK GEMM (S) hoisted into the prologue, nothing else there.
    assert parts["prologue"] == ["S[0] = S()"]
    # The loop issues S for the next iteration while P and O finish the previous one.
    assert sorted(parts["steady"]) == ["O[i-1] = O(P[i-1], O[i-2])", "P[i-1] = P(S[i-1])",
                                       "S[i] = S()"]
    assert "for i in 1 .. n-1:" in text
    # The epilogue drains the last iteration: P and O of n-1, no S.
    assert parts["epilogue"] == ["P[n-1] = P(S[n-1])", "O[n-1] = O(P[n-1], O[n-2])"]


def test_q_table_marks_phases(fa_model):
    s = load_schedule(EXAMPLES / "fa-simplified.schedule.json", fa_model)
    rows = [line.split() for line in q_table(fa_model, s).splitlines()[1:]]
    # Figure 1e: S0 at 0; S1 and P0 at 2 (the steady state); O0 at 3; P1 at 4; O1 at 5.
    assert rows[0][:2] == ["0", "S0"] and rows[0][-1] == "prologue"
    assert rows[2][:3] == ["2", "S1", "P0"] and rows[2][-1] == "steady"
    assert rows[3][:2] == ["3", "O0"] and rows[3][-1] == "steady"
    assert rows[5][:2] == ["5", "O1"] and rows[5][-1] == "epilogue"


def test_ir_text_and_json(fa_model):
    s = load_schedule(EXAMPLES / "fa-simplified.schedule.json", fa_model)
    p = lower(fa_model, s)
    text = ir_text(p)
    assert "issue O@k-1 reads P@k-1 O@k-2" in text
    doc = json.loads(ir_json(p))
    assert doc["format"] == "warpweave.warp-program/1"
    kinds = [x["kind"] for x in doc["groups"][0]["body"]]
    assert kinds.count("Issue") == 3
    assert doc["buffers"]["S"]["depth"] == 1
