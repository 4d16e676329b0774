"""The loop, not only the paper's Q: models on which the two semantics give different optima.

Each model in `tests/models/loop/` (found by a random search with the brute-force oracle under
both semantics) has its optimal I under the loop and under the paper's Q_S in `expected.json`:
the search returns each, the oracle agrees, and the verifier rejects the Q_S-optimal schedule on
the loop with a witness that names the trip count.  Every backend x encoding agrees on them (the
cross-check, in both semantics).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from warpweave.core.formats import load_model
from warpweave.core.oracle import Oracle
from warpweave.core.registry import BACKENDS, ENCODINGS
from warpweave.core.verify import verify
from warpweave.crosscheck import crosscheck
from warpweave.pipeline import Options, run_solve

HERE = Path(__file__).parent / "models" / "loop"
EXPECTED = json.loads((HERE / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_semantics_has_its_optimum(name):
    model = load_model(HERE / f"{name}.json")
    runs = {sem: run_solve(model, Options(semantics=sem, isolate=False))
            for sem in ("loop", "paper-q")}
    for sem, run in runs.items():
        assert run.outcome.optimal and run.schedule.I == EXPECTED[name][sem], sem
        assert Oracle(model, semantics=sem).optimum(3, EXPECTED[name][sem]).I == \
            EXPECTED[name][sem]
    q_only = runs["paper-q"].schedule
    if EXPECTED[name]["loop"] > EXPECTED[name]["paper-q"]:
        bad = verify(model, q_only)
        assert bad and all(v.trip_count is not None for v in bad
                           if v.rule in ("register_limit", "memory"))


def test_the_cli_shows_the_difference(tmp_path):
    """`verify` rejects the paper-q optimum with a loop witness; `solve` finds a larger I, and
    `solve --semantics paper-q` the old one."""
    model = HERE / "accumulator-handoff.json"
    ww = [sys.executable, "-m", "warpweave"]
    old = subprocess.run([*ww, "solve", str(model), "--semantics", "paper-q", "--json"],
                         capture_output=True, text=True, check=True).stdout
    (tmp_path / "q.json").write_text(old)
    assert json.loads(old)["I"] == 3
    out = subprocess.run([*ww, "verify", str(model), str(tmp_path / "q.json")],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert "register_limit: group g0 at cycle" in out.stdout and "of Q_" in out.stdout
    same = subprocess.run([*ww, "verify", str(model), str(tmp_path / "q.json"),
                           "--semantics", "paper-q"], capture_output=True, text=True)
    assert same.returncode == 0 and "paper's Q" in same.stdout
    new = subprocess.run([*ww, "solve", str(model), "--json"], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(new)["I"] == 4 and json.loads(new)["optimal"]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "semantics"), [
    ("accumulator-handoff", "loop"), ("accumulator-handoff", "paper-q"),
    ("long-ops-capacity-3", "loop")])
def test_every_backend_and_encoding_agrees(name, semantics, tmp_path):
    """The loop-vs-Q model in both semantics, and issue 13's two 5-cycle ops on a unit of
    capacity 3 (I = 5: at I = 4 each meets its own next copy in slot 0), on every backend family
    x every encoding, with the oracle; the other models run in `tests/test_crosscheck.py`'s
    regression set."""
    model = load_model(HERE / f"{name}.json")
    families = [f for f in BACKENDS.names() if BACKENDS.get(f).unavailable() is None]
    report = crosscheck(model, families, ENCODINGS.names(), Options(semantics=semantics),
                        oracle=True, out=tmp_path)
    assert not report.problems and report.oracle[1] == EXPECTED[name][semantics]
    assert all(r.verified == "yes" and r.I == EXPECTED[name][semantics] for r in report.rows)
