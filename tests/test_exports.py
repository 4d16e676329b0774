"""Exported files solved by external binaries (Debian's cbc, cadical, z3) must agree with the
oracle and the in-process backends.  Without a binary these tests skip, unless
WARPWEAVE_REQUIRE_EXTERNAL=1 (CI), where they fail."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from warpweave.backends.cnf import CnfTranslation
from warpweave.backends.exports import FORMATS, export
from warpweave.cli import main
from warpweave.core.registry import backend
from warpweave.ir import Problem

from .irgen import oracle, problems

EXTERNAL = settings(max_examples=int(os.environ.get("WARPWEAVE_EXPORT_EXAMPLES", "25")),
                    deadline=None, suppress_health_check=[HealthCheck.too_slow])


def binary(name: str) -> str:
    """The system's solver binary.  Virtualenvs' bin/ directories are skipped (this one's and any
    other on PATH): python-mip's `cbcbox` installs a `cbc` there (a development build with a
    different output format)."""
    search = [d for d in os.environ.get("PATH", "").split(os.pathsep)
              if d and not os.path.exists(os.path.join(d, os.pardir, "pyvenv.cfg"))]
    path = shutil.which(name, path=os.pathsep.join(search))
    if path is None:
        message = (f"external solver {name!r} not on PATH outside the virtualenv "
                   "(Debian: coinor-cbc, cadical, z3)")
        if os.environ.get("WARPWEAVE_REQUIRE_EXTERNAL") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def solve_file(fmt: str, path: Path, p: Problem, offset: int | None):
    """(feasible, objective or None) of an exported file by the external solver."""
    if fmt in ("lp", "mps"):
        out = run(binary("cbc"), str(path), "solve").stdout
        if re.search(r"infeasible", out, re.IGNORECASE):
            return False, None
        assert "Optimal solution found" in out, out
        value = float(re.search(r"Objective value:\s*(\S+)", out).group(1))
        return True, (round(value) + offset if offset is not None else None)
    if fmt == "smt2":
        out = run(binary("z3"), str(path)).stdout.split("\n")
        if out[0] == "unsat":
            return False, None
        assert out[0] == "sat", out
        if p.objective is None:
            return True, None
        m = re.search(r"\(obj (\(- (\d+)\)|(\d+))\)", "\n".join(out[1:]))
        return True, -int(m.group(2)) if m.group(2) else int(m.group(3))
    if fmt == "cnf":
        res = run(binary("cadical"), "-q", str(path))
        if res.returncode == 20:
            return False, None
        assert res.returncode == 10, res.stdout + res.stderr
        model = [int(x) for line in res.stdout.splitlines() if line.startswith("v ")
                 for x in line[2:].split()]
        values = CnfTranslation(p).values(model)   # the same translation the file holds
        assert p.check(values) == []
        return True, p.objective_value(values)     # any solution: not an optimum
    res = run(binary("z3"), "-wcnf", "-model", str(path)).stdout.split()
    if res[0] == "unsat":
        return False, None
    assert res[0] == "sat", res
    cost = int(res[-1]) if res[-1].isdigit() else 0   # z3 prints no cost without soft clauses
    return True, (cost + offset if offset is not None else None)


@EXTERNAL
@given(problems())
def test_exports_solved_by_external_binaries_agree(p):
    feasible, best = oracle(p)
    in_process = backend("cbc").solve(p)
    assert in_process.status.has_solution == feasible
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in FORMATS:
            path = Path(tmp) / f"p.{fmt}"
            offset = export(p, fmt, path)
            got_feasible, got = solve_file(fmt, path, p, offset)
            assert got_feasible == feasible, fmt
            if feasible and p.objective is not None and fmt != "cnf":
                assert got == best == in_process.objective, fmt


def test_smt2_minimize_can_be_left_out(tmp_path):
    p = Problem()
    a = p.bool("a")
    p.minimize([(1, a)])
    export(p, "smt2", tmp_path / "p.smt2", smt2_minimize=False)
    text = (tmp_path / "p.smt2").read_text()
    assert "(minimize" not in text and "(check-sat)" in text


def test_cli_export_writes_every_format(tmp_path, capsys):
    p = Problem("cli")
    a, b = p.bool("a"), p.bool("b")
    x = p.int("x", 0, 3)
    p.add_clause([a, b])
    p.add_implies(a, [(1, x), (2, b)], ">=", 3)
    p.minimize([(1, x), (1, a), (3, b)])
    p.write(tmp_path / "ir.json")
    for fmt in FORMATS:
        out = tmp_path / f"out.{fmt}"
        assert main(["export", str(tmp_path / "ir.json"), "--to", fmt, "--out", str(out)]) == 0
        assert out.stat().st_size > 0
        assert f"wrote {out} ({fmt})" in capsys.readouterr().out
    assert main(["export", str(tmp_path / "ir.json"), "--to", "cnf", "--out",
                 str(tmp_path / "x.cnf"), "--encodings", "ladder/adder"]) == 0
    assert main(["export", str(tmp_path / "ir.json"), "--to", "cnf", "--out",
                 str(tmp_path / "x.cnf"), "--encodings", "nosuch"]) == 2
    (tmp_path / "bad.json").write_text("{}")
    assert main(["export", str(tmp_path / "bad.json"), "--to", "lp", "--out",
                 str(tmp_path / "x.lp")]) == 2
