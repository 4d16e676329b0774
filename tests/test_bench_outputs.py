"""`warpweave bench --csv` and `--plot` of a results file: the rows are the records, the SVG has
one series per configuration and draws a run killed at the limit hollow on the timeout line, a
bad --plot or --csv is one line before any work.  The records are synthetic, in the shape
runner.py writes them: two cases (3 and 800 ops), two repeats, one run killed."""

from __future__ import annotations

import csv
import json
import sys
import xml.etree.ElementTree as ET

import pytest

from warpweave.bench.csvfile import COLUMNS
from warpweave.cli import main

SVG = "{http://www.w3.org/2000/svg}"
EXACT, HEURISTIC = "cpsat/integer minimize", "heuristic"
HEADER = {"type": "run", "targets": ["synthetic"], "configs": [EXACT, HEURISTIC],
          "baseline": EXACT, "timeout": 10.0, "grace": 5.0, "normalize": "auto",
          "max_stages": None, "cpus": 2, "load_before": [0.5, 0.5, 0.5], "platform": "Linux",
          "processor": "", "python": "3.11.7", "warpweave": "0.1.0",
          "started": "2026-01-01T00:00:00", "notes": []}
END = {"type": "end", "load_after": [0.6, 0.6, 0.6], "finished": "2026-01-01T00:01:00"}


def _start(case: str, ops: int, config: str, repeat: int) -> dict:
    """runner.case_fields and the worker's `started` payload."""
    exact = config == EXACT
    return {"type": "case", "suite": "random", "case": case, "config": config,
            "backend": "cpsat" if exact else "heuristic", "encoding": "integer" if exact else None,
            "search": "minimize" if exact else None, "normalize": None, "reference": {},
            "ops": ops, "edges": ops + 1, "repeat": repeat}


def solved(case: str, ops: int, repeat: int, wall: float) -> dict:
    """An optimum proven by the exact configuration (runner._solve's fields)."""
    return {**_start(case, ops, EXACT, repeat), "I": 4, "L": 9, "I_units": 2, "L_units": 5,
            "stages": 3, "scale": 2, "raw_valid": True, "raw_violations": [],
            "status": "optimal", "optimal": True, "lower_bound": 2, "max_stages": 4,
            "wall_seconds": wall, "encode_seconds": 0.01, "build_seconds": 0.02,
            "solve_seconds": wall / 2, "calls": 2, "claim": {"optimal": True},
            "notes": [], "method": "exact", "gap": 0.0, "raw_lower_bound": 4,
            "first_schedule_seconds": round(wall / 3, 4), "best_I_seconds": round(wall / 2, 4)}


def heuristic(case: str, ops: int, repeat: int, wall: float) -> dict:
    """The heuristic's schedule (runner._heuristic's fields)."""
    return {**_start(case, ops, HEURISTIC, repeat), "I": 6, "L": 9, "I_units": 3,
            "L_units": 5, "stages": 2, "scale": 2, "raw_valid": True, "raw_violations": [],
            "status": "feasible", "optimal": False, "lower_bound": 2, "max_stages": 4,
            "wall_seconds": wall, "calls": 1, "notes": [], "method": "heuristic", "gap": 0.5,
            "raw_lower_bound": 4}


def killed(case: str, ops: int, repeat: int) -> dict:
    """A worker killed at the hard limit (runner._killed's fields)."""
    return {**_start(case, ops, EXACT, repeat), "status": "timeout", "optimal": False,
            "wall_seconds": 15.2, "calls": 1,
            "notes": ["killed after 15.2 s: the search's limit of 10.0 s was not honoured "
                      "within 5 s", "last call answered: I=7 S=2 infeasible (9.1 s)"]}


RECORDS = [solved("small", 3, 0, 0.3), heuristic("small", 3, 0, 0.01),
           killed("large", 800, 0), heuristic("large", 800, 0, 2.5),
           solved("small", 3, 1, 0.1), heuristic("small", 3, 1, 0.02),
           killed("large", 800, 1), heuristic("large", 800, 1, 3.5)]


@pytest.fixture
def results(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [HEADER, *RECORDS, END]))
    return path


def test_the_csv_has_one_row_per_record_with_its_values(results, tmp_path):
    out = tmp_path / "r.csv"
    assert main(["bench", "--report", str(results), "--csv", str(out)]) == 0
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(COLUMNS)
    assert len(rows) == len(RECORDS)
    for row, r in zip(rows, RECORDS, strict=True):
        for column in COLUMNS[:-1]:  # a missing field is an empty cell
            assert row[column] == ("" if r.get(column) is None else str(r[column])), column
    first, large = rows[0], rows[2]
    assert (first["case"], first["ops"], first["config"], first["repeat"], first["status"],
            first["optimal"], first["I"], first["L"], first["lower_bound"], first["scale"],
            first["wall_seconds"], first["first_schedule_seconds"], first["best_I_seconds"],
            first["build_seconds"]) == \
        ("small", "3", EXACT, "0", "optimal", "True", "4", "9", "2", "2", "0.3", "0.1", "0.15",
         "0.02")
    assert (large["status"], large["I"], large["wall_seconds"]) == ("timeout", "", "15.2")
    assert large["notes"].startswith("killed after 15.2 s") and "; last call" in large["notes"]
    assert [row["repeat"] for row in rows] == ["0"] * 4 + ["1"] * 4


def test_the_svg_has_a_series_per_configuration_and_the_killed_run_at_the_timeout(results,
                                                                                  tmp_path):
    out = tmp_path / "r.svg"
    assert main(["bench", "--report", str(results), "--plot", str(out)]) == 0
    root = ET.parse(out).getroot()  # well-formed XML
    groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "series"]
    assert [(g.get("data-panel"), g.get("data-config")) for g in groups] == \
        [("case", EXACT), ("case", HEURISTIC), ("size", EXACT), ("size", HEURISTIC)]
    lines = [x for x in root.iter(f"{SVG}line") if x.get("class") == "timeout"]
    assert len(lines) == 2 and all(x.get("stroke-dasharray") for x in lines)
    for group, line in zip(groups[::2], lines, strict=True):  # the exact configuration's
        marks = list(group)
        assert [m.get("class") for m in marks] == ["done", "limit"]   # small, then large
        done, limit = marks
        assert limit.get("fill") == "white" and done.get("fill") != "white"
        assert limit.get("cy") == line.get("y1")   # drawn at the timeout, not at 15.2 s
        # the median of the repeats: of 0.1 and 0.3, the lower middle one
        assert "small, 3 ops, cpsat/integer minimize: 0.1 s" in done.find(f"{SVG}title").text
    for group in groups[1::2]:   # the heuristic found a schedule every time
        assert [m.get("class") for m in group] == ["done", "done"]
    text = ET.tostring(root, encoding="unicode")
    assert "(b) graph size (ops, log scale)" in text   # 3 to 800 ops
    assert "the median of 2 repeats" in text and "timeout 10 s" in text


def test_a_png_without_matplotlib_is_one_line_naming_plot(results, tmp_path, capsys,
                                                            monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib fails
    assert main(["bench", "--report", str(results), "--plot", str(tmp_path / "r.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--plot" in err and "matplotlib" in err
    assert not (tmp_path / "r.png").exists()


def test_a_png_through_matplotlib(results, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.png"
    assert main(["bench", "--report", str(results), "--plot", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("option, name", [
    ("--plot", "r.pdf"),                  # the format is read from the suffix
    ("--plot", "missing/r.svg"),          # no such directory
    ("--plot", "."),                      # a directory
    ("--csv", "missing/r.csv"),
])
def test_a_bad_output_path_is_one_line_before_any_work(tmp_path, capsys, monkeypatch, option,
                                                       name):
    monkeypatch.chdir(tmp_path)
    code = main(["bench", "fa-simplified", "--no-heuristic", option, name])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("warpweave: error:") and option in err
    assert "cases x" not in err   # nothing was run
    assert sorted(p.name for p in tmp_path.iterdir()) == []
