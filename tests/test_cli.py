"""The `warpweave` command: exit statuses, readable and JSON output, errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from warpweave.cli import main

from .conftest import EXAMPLES

MODEL = str(EXAMPLES / "fa-simplified.json")
GOOD = str(EXAMPLES / "fa-simplified.schedule.json")
BAD = str(EXAMPLES / "fa-simplified.bad-schedule.json")


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_verify_valid_and_invalid(capsys):
    code, out, _ = run(capsys, "verify", MODEL, GOOD)
    assert code == 0 and out.startswith("valid: fa-simplified, I=2, L=4")
    code, out, _ = run(capsys, "verify", MODEL, BAD)
    assert code == 1
    assert "capacity: unit tc slot 0: 2 > capacity 1 (S, O)" in out
    code, out, _ = run(capsys, "verify", MODEL, BAD, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["valid"] is False
    assert doc["violations"] == [{"rule": "capacity", "message": doc["violations"][0]["message"],
                                  "ops": ["S", "O"], "slot": 0, "resource": "tc", "amount": 2,
                                  "limit": 1}]


def test_bounds_and_show(capsys):
    code, out, _ = run(capsys, "bounds", MODEL, "--json")
    doc = json.loads(out)
    assert code == 0 and (doc["res_mii"], doc["rec_mii"], doc["lower_bound"]) == (2, 1, 2)
    assert doc["critical_cycle"] == ["O"]
    code, out, _ = run(capsys, "show", MODEL)
    assert code == 0 and "S -> P" in out and "sfu:1" in out


def test_bounds_and_show_take_a_library_kernel_as_solve_does(capsys, tmp_path):
    """A kernel with --machine and key=value parameters (anywhere on the line), the same as the
    model file `build` writes for it; a model file takes neither."""
    kernel = ["fa-bwd", "--machine", "h100", "tile_m=80", "tile_n=128"]
    code, out, _ = run(capsys, "bounds", *kernel, "--json")
    doc = json.loads(out)
    assert code == 0 and (doc["res_mii"], doc["res_unit"], doc["rec_mii"]) == (3200, "tc", 1588)
    saved = str(tmp_path / "fa-bwd-80.json")
    assert run(capsys, "build", *kernel, "-o", saved)[0] == 0
    assert json.loads(run(capsys, "bounds", saved, "--json")[1]) == doc
    code, out, _ = run(capsys, "show", "--machine", "b200", "gemm", "k_steps=2", "--json")
    assert code == 0 and json.loads(out) == json.loads(
        run(capsys, "build", "gemm", "--machine", "b200", "k_steps=2", "--json")[1])
    code, out, _ = run(capsys, "show", *kernel)
    assert code == 0 and out.startswith("model fa-bwd on machine h100:")
    code, out, err = run(capsys, "bounds", MODEL, "--machine", "h100")
    assert code == 2 and out == "" and "are for library kernels, not model files" in err
    code, out, err = run(capsys, "show", "fa-bwd", "tile_q=80")
    assert code == 2 and out == "" and err.startswith("warpweave: error: params.tile_q:")


def test_bad_input_exits_2_with_one_line(capsys, tmp_path):
    broken = tmp_path / "m.json"
    broken.write_text(json.dumps({"machine": {"warp_groups": [{"name": "g"}]},
                                  "ops": [{"name": "A", "uses": {"tcc": 1}}]}))
    code, out, err = run(capsys, "bounds", str(broken))
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0
    assert err.startswith(f"warpweave: error: {broken}: ops[0].uses.tcc")
    code, _, err = run(capsys, "verify", MODEL, str(tmp_path / "none.json"))
    assert code == 2 and "cannot read" in err


def test_console_script_version_and_help():
    exe = [sys.executable, "-m", "warpweave"]
    out = subprocess.run(exe + ["--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("warpweave ")
    for cmd in ("verify", "bounds", "show"):
        out = subprocess.run(exe + [cmd, "--help"], capture_output=True, text=True)
        assert out.returncode == 0 and "usage: warpweave " + cmd in out.stdout


@pytest.mark.parametrize("argv", [["verify", MODEL, "/nonexistent.json"], ["show", "/x.toml"]])
def test_no_traceback_on_bad_input(argv):
    out = subprocess.run([sys.executable, "-m", "warpweave", *argv], capture_output=True,
                         text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_algorithm_1_at_the_lower_bound_says_what_it_proved(capsys):
    """Algorithm 1's I at the lower bound is proven optimal; its L (one stage count) is not."""
    assert main(["solve", MODEL, "--paper-search"]) == 0
    out = capsys.readouterr().out
    assert "I = 2 (I proven optimal; L not proven minimal; lower bound 2" in out
    assert "note: the full search agrees: I=2, L=4 (optimal)" in out


def test_the_report_counts_only_the_questions_a_solver_answered(capsys):
    """Figure 1: the probe shows S=1 too short for the longest path without a solver; one
    solver call (S=2) finds the optimum."""
    assert main(["solve", MODEL]) == 0
    assert ", 1 solver call\n" in capsys.readouterr().out
