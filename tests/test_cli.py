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


def test_solve_says_its_roles_are_the_solvers_pick_unless_a_tie_break_chose(capsys):
    """Without --tie-break the roles of an optimum on several warp groups are one optimum among
    possibly many: the report and the JSON say so; with the tie-breakers, or on one group, they
    do not."""
    note = ("one optimum among possibly many (the solver's pick); --tie-break groups "
            "--tie-break cross_edges gives a canonical one")
    code, out, _ = run(capsys, "solve", "gemm", "--machine", "b200")
    assert code == 0 and f"  note: {note}" in out.splitlines()
    code, out, _ = run(capsys, "solve", "gemm", "--machine", "b200", "--json")
    doc = json.loads(out)
    assert code == 0 and len(set(doc["group"].values())) > 1 and note in doc["notes"]
    code, out, _ = run(capsys, "solve", "gemm", "--machine", "b200", "--json", "--tie-break",
                       "groups", "--tie-break", "cross_edges")
    doc = json.loads(out)
    assert code == 0 and len(set(doc["group"].values())) > 1 and note not in doc["notes"]
    code, out, _ = run(capsys, "solve", MODEL, "--json")
    doc = json.loads(out)
    assert code == 0 and len(set(doc["group"].values())) == 1 and note not in doc["notes"]


def test_auto_normalization_says_when_it_took_a_finer_unit(tmp_path, capsys):
    """A 1,000-op chain of 1-7-cycle ops (the robustness battery's): auto's resolution would
    round every op up to one 15-cycle unit (gap 275% to the raw lower bound); it takes 8-cycle
    units, within twice the bound, and the answer says why."""
    n = 1000
    path = tmp_path / "chain.json"
    path.write_text(json.dumps({"name": "chain", "machine": {
        "units": {"tc": 1, "sfu": 1, "alu": 2}, "warp_groups": [{"name": "g0", "warps": 4}]},
        "ops": [{"name": f"op{i}", "cycles": 1 + i % 7, "uses": {("tc", "sfu", "alu")[i % 3]: 1}}
                for i in range(n)],
        "edges": [{"src": f"op{i}", "dst": f"op{i + 1}"} for i in range(n - 1)]}))
    assert main(["solve", str(path), "--method", "heuristic", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["scale"]["cycles_per_unit"] == 8 and answer["lower_bound"] == 1337
    assert answer["gap"] <= 1.0
    assert any(note.startswith("costs normalized in 8-cycle units, finer than the 15-20-cycle "
                               "units of the resolution asked for") for note in answer["notes"])



def test_the_headline_says_optimal_in_units_only_at_the_raw_lower_bound(tmp_path, capsys):
    """Proven optimal in units of K cycles: the headline says "optimal in units" when I is the
    raw lower bound (a smaller raw I cannot exist), else "feasible" with the raw gap."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"name": "m", "machine": {
        "units": {"tc": 1, "sfu": 1}, "warp_groups": [{"name": "g0", "warps": 4}]},
        "ops": [{"name": "A", "cycles": 100000, "uses": {"tc": 1}},
                {"name": "B", "uses": {"sfu": 1}}],
        "edges": [{"src": "A", "dst": "B"}, {"src": "B", "dst": "B", "distance": 1}]}))
    assert main(["solve", str(path), "--time-limit", "20", "--normalize", "units"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "m: feasible (proven optimal in units of 1205 cycles; raw gap 0.0%)"
    assert out[2].startswith("  I = 100015 cycles = 83 units of 1205 cycles")
    assert main(["solve", "fa3-fwd", "--machine", "h100", "--normalize", "units"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "fa3-fwd: optimal in units of 16 cycles"
    assert "I proven optimal: the raw lower bound" in out[2]
    # by default the exact search is in raw cycles: optimal, unqualified
    assert main(["solve", str(path), "--time-limit", "20"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "m: optimal" and out[1].startswith("  I = 100000 (proven optimal")
