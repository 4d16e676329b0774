"""The command line's conventions: the same defaults as the API, --json and -q on every command
that reports, `-` for standard input, `python -m warpweave`, a parser that imports nothing heavy,
the new commands (constraints, schema, export-schedule), escaped DOT names."""

from __future__ import annotations

import argparse
import inspect
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import warpweave as ww
from warpweave.cli import main
from warpweave.cli.commands import COMMANDS, search_options
from warpweave.cli.parser import build_parser

ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "examples" / "fa-simplified.json")
GOOD = str(ROOT / "examples" / "fa-simplified.schedule.json")
BAD = str(ROOT / "examples" / "fa-simplified.bad-schedule.json")


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_has_a_function_quiet_and_json_where_it_reports():
    subs = subparsers()
    assert set(subs) == set(COMMANDS)
    for name, p in subs.items():
        flags = {s for a in p._actions for s in a.option_strings}
        assert {"-q", "--quiet"} <= flags, name
        if name not in ("export-schedule", "schema"):   # these print a document already
            assert "--json" in flags, name


def test_the_api_has_the_cli_defaults():
    args = build_parser().parse_args(["solve", "fa-simplified"])
    given = search_options(args)
    signature = inspect.signature(ww.solve).parameters
    for key, value in given.items():
        default = signature[key].default
        assert (tuple(default) if isinstance(default, (list, tuple)) else default) == value, key
    h = build_parser().parse_args(["heuristic", "fa-simplified"])
    hs = inspect.signature(ww.heuristic).parameters
    assert (h.budget, h.seed, h.normalize) == (hs["budget"].default, hs["seed"].default,
                                               hs["normalize"].default)
    sim = build_parser().parse_args(["simulate", "fa-simplified"])
    ss = inspect.signature(ww.simulate).parameters
    assert (sim.iterations, sim.pace) == (ss["iterations"].default, ss["pace"].default)


def test_the_search_has_the_cli_defaults(fa_model):
    """`warpweave.search.search`, the function under the API, defaults to what `solve` does
    (it defaulted to the compact encoding and the sweep): auto resolved the same way."""
    from warpweave.search import choose, search

    args = build_parser().parse_args(["solve", "fa-simplified"])
    given = search_options(args)
    signature = inspect.signature(search).parameters
    for key, name in (("backend", "backend"), ("encoding", "encoding"), ("search", "strategy"),
                      ("seed", "seed"), ("semantics", "semantics")):
        assert signature[name].default == given[key], key
    assert choose("auto", "integer", "auto") == ("cpsat", "minimize")
    assert choose("auto", "compact", "auto") == ("sat:cadical195/totalizer/bdd", "sweep")
    assert choose("auto", "integer", "auto", paper=True)[1] == "sweep"
    out = search(fa_model, isolate=False)
    assert (out.backend, out.encoding, out.schedule.I, out.optimal) == \
        ("cpsat:workers=1", "integer", 2, True)
    assert {a.phase for a in out.attempts} & {"probe", "minimize"}
    assert search(fa_model, encoding="compact", isolate=False).backend.startswith("sat:")


def test_help_imports_nothing_heavy():
    code = ("import sys\nfrom warpweave.cli import main\ntry:\n    main(['solve', '--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('warpweave.', 'ortools', "
            "'attr', 'importlib.metadata'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()[-1]
    assert out == "['warpweave.cli', 'warpweave.cli.parser', 'warpweave.defaults']"


def test_python_dash_m_and_standard_input():
    run = [sys.executable, "-m", "warpweave"]
    doc = Path(MODEL).read_text()
    out = subprocess.run(run + ["bounds", "-"], input=doc, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("fa-simplified:")
    out = subprocess.run(run + ["verify", MODEL, "-"], input=Path(BAD).read_text(),
                         capture_output=True, text=True)
    assert out.returncode == 1 and "capacity: unit tc slot 0" in out.stdout
    out = subprocess.run(run + ["show", "-"], input="{", capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("warpweave: error: -: malformed JSON")


@pytest.mark.parametrize("args, where", [
    (["verify", "-", "-"], "SCHEDULE"),
    (["export-schedule", "-", "-", "--to", "llvm"], "SCHEDULE"),
    (["emit", "-", "--schedule", "-", "--target", "pseudo", "--out", "out"], "--schedule"),
    (["simulate", "-", "--schedule", "-"], "--schedule"),
])
def test_standard_input_is_one_argument(monkeypatch, capsys, tmp_path, args, where):
    """`-` for the model and the schedule would read the model and then find the input spent
    ("malformed JSON" once): one line saying so, before anything is read."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(MODEL).read_text()))
    assert main(args) == 2
    assert capsys.readouterr().err == (f'warpweave: error: {where} = "-": only one argument can '
                                       "be - (standard input), and the model is read from it\n")
    assert sys.stdin.read().startswith("{") and not (tmp_path / "out").exists()


def test_quiet_prints_nothing_and_json_still_prints(capsys):
    assert main(["verify", "-q", MODEL, BAD]) == 1
    assert capsys.readouterr().out == ""
    assert main(["verify", "-q", "--json", MODEL, GOOD]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True


def test_json_on_show_build_emit_draw_crosscheck(capsys, tmp_path):
    assert main(["show", MODEL, "--json"]) == 0
    assert ww.load_model(json.loads(capsys.readouterr().out)).name == "fa-simplified"
    assert main(["build", "gemm", "--machine", "b200", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["machine"]["arch"] == "sm_100a"
    assert main(["emit", MODEL, "--schedule", GOOD, "--target", "pseudo", "--out",
                 str(tmp_path), "--json"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert e["written"] == ["fa-simplified.qtable.txt", "fa-simplified.pseudo.txt"]
    assert main(["draw", MODEL, "--schedule", GOOD, "--out", str(tmp_path), "--json"]) == 0
    assert "timeline.svg" in json.loads(capsys.readouterr().out)["files"]
    assert main(["crosscheck", MODEL, "--backends", "cpsat", "--encodings", "integer",
                 "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["agree"] and c["rows"][0]["I"] == 2


def test_constraints_schema_and_export_schedule(capsys, tmp_path):
    assert main(["constraints"]) == 0
    text = capsys.readouterr().out
    assert "dependence (warpweave.core.constraints:Dependence)" in text
    assert main(["constraints", "--json"]) == 0
    names = [r["name"] for r in json.loads(capsys.readouterr().out)]
    assert {"dependence", "capacity", "concurrency"} <= set(names)
    assert main(["schema", "model"]) == 0
    assert json.loads(capsys.readouterr().out)["$id"] == "warpweave.model/1"
    assert main(["export-schedule", MODEL, GOOD, "--to", "triton"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tt.modulo_ii"] == 2 and [x["id"] for x in doc["ops"]] == ["S", "P", "O"]
    assert main(["export-schedule", MODEL, GOOD, "--to", "mlir"]) == 2
    assert 'warpweave: error: --to = "mlir": unknown exporter' in capsys.readouterr().err


def test_dot_names_are_escaped():
    from warpweave.codegen.draw import graph_dot
    m = ww.load_model(MODEL)
    s = ww.load_schedule(GOOD, m)
    text = graph_dot(m.replace(name='q"x\\y'), s)
    assert text.startswith('digraph "q\\"x\\\\y" {')
    assert '"S" [label="S\\n@g0 M=0"' in text


@pytest.mark.parametrize("argv", [["solve", "-"], ["emit", "-", "--out", "o"]])
def test_a_target_from_standard_input(monkeypatch, capsys, argv, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(MODEL).read_text()))
    assert main([*argv, "--backend", "cpsat"]) == 0
    assert capsys.readouterr().out.startswith(("fa-simplified: optimal", "fa-simplified: I=2"))


def test_heuristic_json_has_the_gap_solve_reports(capsys):
    """`heuristic --json` fills `gap` as `solve --method heuristic --json` does: (I - lower
    bound) / lower bound in raw cycles (gemm on b200: normalized, and above its bound today)."""
    target = ["gemm", "--machine", "b200", "--json"]
    assert main(["heuristic", *target]) == 0
    heuristic = json.loads(capsys.readouterr().out)
    assert main(["solve", *target, "--method", "heuristic"]) == 0
    solved = json.loads(capsys.readouterr().out)
    I, low = heuristic["I"], heuristic["lower_bound"]  # noqa: E741
    assert (I, low) == (solved["I"], solved["lower_bound"])
    assert heuristic["gap"] == solved["gap"] == round((I - low) / low, 4)
    assert ww.heuristic(ww.kernel("gemm", "b200")).gap == (I - low) / low
