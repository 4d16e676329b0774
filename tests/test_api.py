"""The Python API (`warpweave.api`, exported by `import warpweave`): objects, paths and parsed
documents alike; the same answers and defaults as the command line; notebook display."""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path

import pytest

import warpweave as ww
from warpweave import api
from warpweave.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MODEL = EXAMPLES / "fa-simplified.json"
GOOD = EXAMPLES / "fa-simplified.schedule.json"
BAD = EXAMPLES / "fa-simplified.bad-schedule.json"


def test_the_package_exports_the_api():
    assert sorted(api.__all__) == sorted(n for n in ww.__all__ if n != "__version__")
    for name in api.__all__:
        assert getattr(ww, name) is getattr(api, name)
    with pytest.raises(AttributeError):
        ww.no_such_function  # noqa: B018


def test_import_warpweave_does_not_import_the_solvers():
    out = subprocess.run([sys.executable, "-c", "import sys, warpweave; print(sorted(m for m in "
                          "sys.modules if m.split('.')[0] in ('ortools', 'warpweave')))"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['warpweave']"


def test_solve_a_dict_a_path_and_a_model_alike():
    doc = json.loads(MODEL.read_text())
    answers = [ww.solve(src, isolate=False) for src in (doc, MODEL, ww.load_model(MODEL))]
    assert {(r.I, r.L, r.optimal, r.status) for r in answers} == {(2, 4, True, "optimal")}
    r = answers[0]
    assert r.exit_status == 0 and r.lower_bound == 2 and r.proof
    d = r.to_dict()
    assert d["format"] == "warpweave.schedule/1" and d["I"] == 2 and d["buffers"]
    assert json.loads(r.to_json()) == json.loads(json.dumps(d))
    assert ww.verify(doc, d) == []


def test_verify_names_the_violation():
    [v] = ww.verify(MODEL, BAD)
    assert v.rule == "capacity"
    assert ww.verify(MODEL, GOOD) == []
    assert ww.verify(MODEL, json.loads(GOOD.read_text())) == []


def test_bad_input_is_one_input_error_naming_the_key():
    with pytest.raises(InputError, match=r"ops\[0\]\.cycles = 0"):
        ww.load_model({"machine": {"warp_groups": [{"name": "g"}]},
                       "ops": [{"name": "a", "cycles": 0}]})
    with pytest.raises(InputError, match="unknown kernel"):
        ww.kernel("no-such-kernel")


def test_result_displays_the_q_table_and_the_timeline():
    r = ww.solve(MODEL, isolate=False)
    page = r._repr_html_()
    assert "<svg" in page and "<pre>" in page and "fa-simplified" in page
    assert ww.view(MODEL, GOOD)._repr_html_().count("<svg") == 1


def test_the_notebook_q_table_is_folded_to_the_issues():
    """Q has a row per cycle (fa3-fwd: 6,880, a 558 KB page); the notebook shows only the
    cycles where an op issues, each run of the others as one row that counts them."""
    from warpweave.core.schedule import straight_line
    r = ww.solve(ww.kernel("fa3-fwd", "h100"), isolate=False)
    q = straight_line(r.model, r.schedule)
    full, folded = r.view().q_table(), r.view().q_table(fold=True)
    assert len(full.splitlines()) == q.T + 1
    shown, covered = set(), 0
    for row in folded.splitlines()[1:]:
        first = row.split()[0]
        if "-" in first:
            a, b = map(int, first.split("-"))
            assert row.endswith(f"{b - a + 1} cycles without an issue")
            covered += b - a + 1
        elif row.endswith("without an issue"):
            covered += 1
        else:
            shown.add(int(first))
            covered += 1
    assert shown == {x.issue for x in q.instances} and covered == q.T
    page = r._repr_html_()
    assert html.escape(folded) in page and len(page) < 40_000 < len(full)


def test_heuristic_and_codegen_pipeline(tmp_path):
    h = ww.heuristic(MODEL)
    assert h.schedule is not None and h.to_dict()["optimal"] is False
    low = ww.lower(MODEL, GOOD)
    assert low.program.S == 2
    made = ww.emit(MODEL, GOOD, out=tmp_path, target="pseudo")
    assert made.written == ("fa-simplified.qtable.txt", "fa-simplified.pseudo.txt")
    assert (tmp_path / "fa-simplified.pseudo.txt").read_text().startswith("// fa-simplified")
    with pytest.raises(api.InvalidSchedule) as info:
        ww.lower(MODEL, BAD)
    assert info.value.violations[0].rule == "capacity"
    assert ww.simulate(MODEL, GOOD).result.passed


def test_a_missing_backend_names_the_extra_that_installs_it():
    from warpweave.backends.driver import SessionBackend

    class Missing(SessionBackend):
        family = "missing"
        extra = "missing-extra"
        requires = ("no_such_solver",)

    class TooOld(SessionBackend):
        family = "old"
        extra = "smt"
        requires = ("json:NoSuchAttribute",)

    assert Missing.unavailable().endswith("pip install 'warpweave[missing-extra]'")
    assert "has no NoSuchAttribute (too old); pip install 'warpweave[smt]'" in \
        TooOld.unavailable()


def test_the_readme_session_runs_as_shown(monkeypatch):
    import doctest
    monkeypatch.chdir(EXAMPLES.parent)
    result = doctest.testfile(str(EXAMPLES.parent / "README.md"), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0


def test_no_api_name_is_a_submodule():
    """`import warpweave.X` sets the package's attribute X: an API function of that name
    would be shadowed by the module."""
    import pkgutil
    modules = {m.name for m in pkgutil.iter_modules(ww.__path__)}
    assert not modules & set(api.__all__)
