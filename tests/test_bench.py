"""`warpweave bench`: records and report of a tiny run, the hard timeout, disagreement flags,
suites and configuration matrices.  No timing assertions: only what the records say."""

from __future__ import annotations

import json
import os
import time
import types

import pytest

from warpweave.bench import Config, Settings, disagreements, markdown, matrix, read_results
from warpweave.bench import configs as bench_configs
from warpweave.bench.configs import parse_label
from warpweave.bench.runner import _worker, run_case
from warpweave.bench.suites import SUBTILED, Case, sample, select, single_case
from warpweave.bench.summary import collapse, config_rows, heuristic_rows
from warpweave.cli import main
from warpweave.core.registry import KERNELS
from warpweave.errors import InputError
from warpweave.kernels import kernel_spec
from warpweave.pipeline import DEFAULT_ENCODING, MINIMIZE_BACKEND
from warpweave.search import SOLVING

TINY = ["sat", "cpsat"]   # two configurations: the sweep on the compact encoding
LABELS = ["sat/compact sweep", "cpsat/compact sweep"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One real run: fa-simplified under two configurations, without the heuristic."""
    d = tmp_path_factory.mktemp("bench")
    out, md = d / "results.jsonl", d / "report.md"
    code = main(["bench", "fa-simplified", "--backends", ",".join(TINY), "--encodings",
                 "compact", "--no-heuristic", "--timeout", "60", "--out", str(out),
                 "--markdown", str(md)])
    header, records = read_results(out)
    return code, header, records, md.read_text(), out


def test_tiny_run_records(tiny):
    code, header, records, _, _ = tiny
    assert code == 0
    assert header["configs"] == LABELS
    assert header["baseline"] == LABELS[0] and "load_after" in header
    assert [r["config"] for r in records] == header["configs"]
    for r in records:
        assert (r["suite"], r["case"], r["ops"], r["edges"]) == ("kernels", "fa-simplified", 3, 3)
        # Figure 1 of the Twill paper: I = 2 (two tensor-core ops), L = 4; no normalization
        assert (r["status"], r["optimal"], r["I"], r["L"], r["I_units"], r["L_units"],
                r["scale"]) == ("optimal", True, 2, 4, 2, 4, 1)
        assert r["lower_bound"] == 2 and r["raw_valid"]
        assert r["calls"] >= 1
        parts = r["encode_seconds"] + r["build_seconds"] + r["solve_seconds"]
        assert 0 < parts <= r["wall_seconds"] + 1e-3   # the parts lie within the wall time


def test_tiny_run_table(tiny):
    _, header, records, text, _ = tiny
    assert text == markdown(header, records)   # the file is the printed report
    assert "No disagreement" in text and "DISAGREEMENT" not in text
    row = next(line for line in text.splitlines() if line.startswith("| kernels/fa-simplified"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:4] == ["kernels/fa-simplified", "3", "1", "2"]
    assert [c.split(" ")[:2] for c in cells[4:6]] == [["2/4", "✓"]] * 2
    rows = config_rows(records, header["configs"], header["baseline"])
    assert [(r["config"], r["optimal"], r["ratio_cases"]) for r in rows] == \
        [(LABELS[0], 1, 1), (LABELS[1], 1, 1)]
    assert rows[0]["ratio"] == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------
# Stand-ins for the worker (module level: the spawned process imports them from here)


def hang(case, config, settings, conn):
    """Starts, answers one solver call, then never returns (a solver that ignores its limit)."""
    conn.send(("started", {"ops": 3, "edges": 3}))
    conn.send(("attempt", {"I": 2, "S": 1, "status": "infeasible", "seconds": 0.01}))
    time.sleep(600)


def crash(case, config, settings, conn):
    conn.send(("started", {"ops": 3, "edges": 3}))
    os._exit(3)


def test_timeout_kills_the_worker():
    case = single_case("fa-simplified")
    r = run_case(case, Config("sat", "compact"), Settings(timeout=0.5, kill_after=0.5), work=hang)
    assert r["status"] == "timeout" and r["optimal"] is False
    assert r["calls"] == 1 and r["wall_seconds"] >= 1.0
    assert r["notes"][0].startswith("killed after")
    assert "last call answered: I=2 S=1 infeasible" in r["notes"][1]


def test_the_worker_streams_the_calls_answered_not_the_announcements():
    """A killed worker's record counts the streamed calls: a call only started is not one."""
    sent = []
    _worker(single_case("fa-simplified"), Config("sat", "compact", "sweep"), Settings(),
            types.SimpleNamespace(send=sent.append, close=lambda: None))
    streamed = [payload for kind, payload in sent if kind == "attempt"]
    assert sent[-1][0] == "done" and len(streamed) == sent[-1][1]["calls"] > 1
    assert all(a["status"] != SOLVING for a in streamed)


def test_a_crashed_worker_is_an_error():
    r = run_case(single_case("fa-simplified"), Config("sat", "compact"), Settings(), work=crash)
    assert (r["status"], r["error"]) == ("error", "worker died (exit code 3)")


def test_timeout_is_recorded_in_the_report(tiny):
    _, header, records, _, _ = tiny
    killed = dict(records[1], status="timeout", wall_seconds=65.0, calls=1, notes=["killed"])
    for key in ("I", "L", "I_units", "L_units", "build_seconds"):
        killed.pop(key)
    text = markdown(header, [records[0], killed])
    assert "| killed 65.0 |" in text
    rows = config_rows([records[0], killed], header["configs"], header["baseline"])
    assert (rows[1]["timeout"], rows[1]["ratio"], rows[1]["build_share"]) == (1, None, None)


# ---------------------------------------------------------------------------------------------
# Disagreements


def test_injected_disagreements_are_flagged(tiny, tmp_path, capsys):
    _, header, records, _, _ = tiny
    base = records[0]
    wrong_optimum = dict(records[1], I_units=3, L_units=6)
    below_bound = dict(base, config="heuristic", backend="heuristic", encoding=None,
                       status="feasible", optimal=False, I_units=1, L_units=2, stages=2)
    shorter = dict(records[1], status="feasible", optimal=False, L_units=3)
    found_infeasible = [dict(base, status="infeasible", optimal=False, I_units=None),
                        dict(records[1])]
    assert disagreements(records) == []
    assert disagreements([base, wrong_optimum]) == [
        f"kernels/fa-simplified: proven optima differ: {LABELS[0]} I=2 L=4, "
        f"{LABELS[1]} I=3 L=6"]
    assert disagreements([base, below_bound]) == [
        f"kernels/fa-simplified: heuristic found I=1 but {LABELS[0]} proved no I < 2"]
    assert disagreements([base, shorter]) == [
        f"kernels/fa-simplified: {LABELS[1]} found L=3 at I=2 but {LABELS[0]} proved L >= 4"]
    assert disagreements(found_infeasible) == [
        f"kernels/fa-simplified: {LABELS[1]} found I=2 but {LABELS[0]} proved no schedule "
        "exists"]
    # through the command: the report of a results file with one injected, exit status 1
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [header, base, wrong_optimum]) + "\n")
    assert main(["bench", "--report", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "**DISAGREEMENT (a bug)**: kernels/fa-simplified: proven optima differ" in out
    assert "DISAGREEMENT (a bug): kernels/fa-simplified" in err


def test_report_of_a_results_file_is_the_run_report(tiny, capsys):
    _, header, records, text, out = tiny
    assert main(["bench", "--report", str(out)]) == 0
    assert capsys.readouterr().out == text


# ---------------------------------------------------------------------------------------------
# The heuristic column


def test_heuristic_left_out_with_a_note_when_absent(monkeypatch):
    monkeypatch.setattr(bench_configs, "heuristic_available", lambda: False)
    configs, notes = matrix(["cpsat"])
    assert [c.label for c in configs] == ["cpsat/integer minimize"]
    assert notes == ["left out the heuristic: warpweave.core.heuristic is not installed"]


@pytest.mark.skipif(not bench_configs.heuristic_available(),
                    reason="the heuristic scheduler is not merged yet")
def test_heuristic_column(tiny):
    _, header, records, _, _ = tiny
    r = run_case(single_case("fa-simplified"), Config("heuristic"), Settings(timeout=60))
    assert r["status"] == "feasible" and r["optimal"] is False and r["raw_valid"]
    assert r["I_units"] >= 2
    rows = heuristic_rows([*records, r])
    assert rows[0]["optimal_I"] == 2 and rows[0]["ratio"] == r["I"] / 2
    assert disagreements([*records, r]) == []


def test_the_heuristic_is_compared_in_raw_cycles():
    """The exact search in raw cycles, the heuristic and a search in units of 16: the ratio is
    taken on raw cycles against the raw proof (1024 / 1024, not 64 units / 1024 cycles), and a
    proof in units (1040) never stands for the optimum where a raw one exists."""
    def record(config, I, scale, status):  # noqa: E741
        return {"suite": "kernels", "case": "k", "config": config, "status": status, "I": I,
                "I_units": I // scale, "scale": scale, "wall_seconds": 1.0}
    rows = heuristic_rows([record("cpsat/integer minimize normalize=units", 1040, 16, "optimal"),
                           record("cpsat/integer minimize", 1024, 1, "optimal"),
                           record("heuristic", 1024, 16, "feasible")])
    assert rows == [{"suite": "kernels", "case": "k", "optimal_I": 1024, "heuristic_I": 1024,
                     "heuristic_seconds": 1.0, "ratio": 1.0}]


# ---------------------------------------------------------------------------------------------
# Suites and matrices


def test_kernel_suite_covers_every_kernel_and_machine():
    cases = select(["kernels"])
    expected = [(n, m, ()) for n in KERNELS.names() for m in kernel_spec(n).machines or (None,)]
    expected += [(n, m, (p,)) for n, p in SUBTILED for m in kernel_spec(n).machines]
    assert [(c.target, c.machine, c.params) for c in cases] == expected
    assert "fa-bwd@b200 subtiles=2" in [c.name for c in cases]
    assert cases[-1].load().name  # builds


def test_data_suites():
    meta = select(["meta"])
    assert {c.name for c in meta} >= {"fwd", "fwd_subtiled", "bwd", "bwd_lr4096"}
    fwd = next(c for c in meta if c.name == "fwd")
    assert fwd.reference["meta_wall_seconds"] == 0.3 and len(fwd.load().ops) == 29
    hat = select(["hatschet"])
    assert len(hat) == 44
    sizes = [len(c.load().ops) for c in (hat[0], hat[-1])]
    assert sizes[0] <= sizes[1]
    assert set(hat[0].reference) == {"index_res_mii", "index_rec_mii"}
    few = select(["hatschet"], limit=5)
    assert len(few) == 5 and few[0] == hat[0] and few[-1] == hat[-1]
    rnd = select(["random"], limit=3)
    assert [len(c.load().ops) for c in rnd] == sorted(len(c.load().ops) for c in rnd)


def test_sample_spreads_evenly():
    cases = [Case("s", str(k), "file", "x") for k in range(10)]
    assert [c.name for c in sample(cases, 4)] == ["0", "3", "6", "9"]
    assert sample(cases, None) == cases and sample(cases, 20) == cases
    with pytest.raises(InputError):
        sample(cases, 0)


def test_default_matrix_and_inputs():
    configs, _ = matrix(heuristic=False)
    assert configs[0] == Config(MINIMIZE_BACKEND, DEFAULT_ENCODING, "minimize")  # solve's default
    assert [c.label for c in configs[1:]] == ["yices/paper sweep normalize=units",  # the peers
                                              "z3/paper sweep normalize=units"]
    configs, _ = matrix(["cpsat"], normalizations=["off", "auto"], peers=True, heuristic=False)
    assert [c.label for c in configs] == [
        "cpsat/integer minimize normalize=off", "cpsat/integer minimize normalize=auto",
        "yices/paper sweep normalize=units", "z3/paper sweep normalize=units"]
    assert parse_label(configs[0].label) == configs[0]
    configs, _ = matrix(["cpsat", "heuristic"], ["compact", "integer"], heuristic=False)
    solvers = [c.label for c in configs if not c.heuristic]
    assert solvers == ["cpsat/compact sweep", "cpsat/integer minimize"]
    configs, notes = matrix(["z3"], ["compact", "integer"], ["minimize", "sweep"],
                            heuristic=False)
    assert [c.label for c in configs] == ["z3/compact sweep", "z3/integer minimize",
                                          "z3/integer sweep"]
    assert notes == ["left out the minimize search on compact: it needs an encoding that takes "
                     "I as a variable"]
    configs, _ = matrix(labels=["sat:cadical195/totalizer/bdd/compact sweep",
                                "cpsat/integer", "heuristic"], heuristic=False)
    assert [c.label for c in configs if not c.heuristic] == \
        ["sat:cadical195/totalizer/bdd/compact sweep", "cpsat/integer minimize"]
    for bad in ("cpsat", "cpsat/compact minimize", "cpsat/integer bisect"):
        with pytest.raises(InputError, match="--configs"):
            matrix(labels=[bad])
    with pytest.raises(InputError, match="unknown encoding"):
        matrix(["cpsat"], ["nonsense"])
    with pytest.raises(InputError):
        matrix(["sat:nosuchsolver"])


@pytest.mark.parametrize("argv, message", [
    (["nonsense"], "neither a suite"),
    (["fa3-fwd@b200"], "kernel fa3-fwd supports h100"),
    (["fa-simplified", "--timeout", "0"], "--timeout = 0.0: must be > 0"),
    (["fa-simplified", "--normalize", "bogus"], "expected auto, units, off"),
    (["fa-simplified", "--encodings", "nope"], "unknown encoding"),
    (["fa-simplified", "--searches", "bisect"], "--searches = \"bisect\": must be minimize"),
])
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(["bench", *argv, "--no-heuristic"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# Reference sections (records of the tiny run, re-labelled as other suites' cases)


def test_meta_hatschet_and_scaling_sections(tiny):
    _, header, records, _, _ = tiny
    meta = [dict(r, suite="meta", reference={"meta_ii": 3, "meta_length": 4,
                                             "meta_wall_seconds": 0.5,
                                             "meta_normalization_u": 150}) for r in records]
    text = markdown(header, meta)
    row = next(x for x in text.splitlines() if x.startswith("| meta/fa-simplified | 3/4"))
    assert "| 3/4 (U=150) | 0.50 | 2/4 x 1 = 2 cycles |" in row
    assert row.endswith(f"| {records[0]['wall_seconds'] / 0.5:.2f} |")
    for res, rec, expected in ((2, 1, "equal to the index's max(1, ResMII, RecMII): 1."),
                               (1, 1, "- above the bound: fa-simplified: I = 2 > 1")):
        hat = [dict(r, suite="hatschet", reference={"index_res_mii": res,
                                                    "index_rec_mii": rec}) for r in records]
        text = markdown(header, hat)
        assert "Proven (optimal or infeasible) by some configuration: 1 of 1" in text
        assert expected in text
        assert f"- {records[0]['config']}: proved 1 of 1 in " in text  # the totals
    rnd = [dict(r, suite="random", case=f"{r['case']} {kind}")
           for r in records for kind in ("joint", "modulo-only")]
    text = markdown(header, rnd)
    assert "| 3 | joint | 1/1, " in text and "| 3 | modulo-only | 1/1, " in text
    assert f"- {records[0]['config']}, modulo-only: every case of up to 3 ops proven" in text
    unproven = [dict(r, status="unknown") if "joint" in r["case"] else r for r in rnd]
    assert f"- {records[0]['config']}, joint: every case of up to - ops proven" in \
        markdown(header, unproven)
    ddg = [dict(r, suite="meta-ddg", raw_lower_bound=2, best_I_seconds=0.01) for r in records]
    text = markdown(header, ddg)
    assert "Proven by some configuration: 1 of 1 loops; proven I equal to the raw lower " \
           "bound max(ResMII, RecMII): 1." in text
    assert "(I at 0.01)" in text


def test_repeats_collapse_to_the_median_and_timeouts_count_at_the_limit(tiny):
    """Three repeats of each configuration: the median run is reported with the range; a
    configuration that never decides counts at the run's timeout in the median ratio; a
    normalized answer (another scale) is compared with a raw proof in raw cycles."""
    _, header, records, _, _ = tiny
    base, other = records
    runs = [dict(base, wall_seconds=t, repeat=k) for k, t in enumerate((0.3, 0.1, 0.2))]
    slow = [dict(other, status="unknown", I_units=None, wall_seconds=60.0, repeat=k)
            for k in range(3)]
    merged = collapse(runs + slow)
    assert merged[0]["wall_seconds"] == 0.2 and merged[0]["wall_runs"] == [0.1, 0.2, 0.3]
    rows = config_rows(merged, header["configs"], base["config"], limit=60.0)
    assert rows[1]["median_ratio"] == 60.0 / 0.2 and rows[1]["capped"] == 1
    text = markdown(dict(header, timeout=60.0), runs + slow)
    assert "0.20 (0.10-0.30)" in text and "| 300.0 (1, 1 at limit) |" in text
    units = dict(other, scale=2, I_units=1, L_units=2, lower_bound=1, I=base["I"] - 1,
                 L=base["L"])
    assert disagreements([base, units]) == [
        f"kernels/fa-simplified: {other['config']} found I={base['I'] - 1} cycles but "
        f"{base['config']} proved I={base['I']} cycles optimal"]
    assert disagreements([base, dict(units, I=base["I"])]) == []  # scales apart in units


def test_the_full_hatschet_set_and_metas_raw_loops_are_suites(tmp_path, monkeypatch):
    """`hatschet-all`: the 323 graphs unpacked once from the archive into the cache (the same
    directory a second time); `meta-ddg`: every loop of Meta's raw DDGs, modulo-only."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cases = select(["hatschet-all"])
    assert len(cases) == 323 and len({c.name for c in cases}) == 323
    assert select(["hatschet-all"])[0].target == cases[0].target
    assert cases[0].target.startswith(str(tmp_path))
    assert len(cases[-1].load().ops) == 118
    loops = select(["meta-ddg"])
    assert len(loops) == 17 and all(c.without and "memory" in c.without for c in loops)
    outer = next(c for c in loops if c.name.startswith("case2_persistent_gemm-loop1"))
    assert len(outer.load().ops) == 16
