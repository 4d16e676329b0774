"""The emit, simulate and draw commands."""

from __future__ import annotations

import json
import os
from pathlib import Path

from warpweave.cli import main
from warpweave.codegen.buffers import plan
from warpweave.core.formats import load_model
from warpweave.pipeline import Options, run_solve

from .conftest import EXAMPLES

MODELS = Path(__file__).parent / "models"

MODEL = str(EXAMPLES / "fa-simplified.json")
GOOD = str(EXAMPLES / "fa-simplified.schedule.json")
BAD = str(EXAMPLES / "fa-simplified.bad-schedule.json")


def test_emit_pseudo_and_ir(tmp_path, capsys):
    assert main(["emit", MODEL, "--schedule", GOOD, "--target", "pseudo", "--out",
                 str(tmp_path)]) == 0
    assert (tmp_path / "fa-simplified.pseudo.txt").read_text().count("S[0] = S()") == 1
    assert main(["emit", MODEL, "--schedule", GOOD, "--target", "ir", "--out",
                 str(tmp_path)]) == 0
    assert json.loads((tmp_path / "fa-simplified.ir.json").read_text())["I"] == 2
    assert "buffer S: 1 slot" in capsys.readouterr().out


def test_emit_cuda_without_compiling(tmp_path):
    assert main(["emit", MODEL, "--schedule", GOOD, "--target", "cuda", "--no-compile",
                 "--out", str(tmp_path)]) == 0
    assert "ww_fa_simplified_kernel" in (tmp_path / "fa-simplified.cu").read_text()
    assert (tmp_path / "fa_simplified_hooks.cuh").exists()


def test_simulate(capsys):
    assert main(["simulate", MODEL, "--schedule", GOOD, "--iterations", "32"]) == 0
    out = capsys.readouterr().out
    assert "reaches 1/I" in out and "deadlock: none" in out
    assert main(["simulate", MODEL, "--schedule", GOOD, "--json", "--jitter", "20"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and doc["target"] == "1/2"


def test_draw(tmp_path):
    assert main(["draw", MODEL, "--schedule", GOOD, "--out", str(tmp_path)]) == 0
    assert (tmp_path / "timeline.svg").exists() and (tmp_path / "graph.dot").exists()


def test_invalid_or_missing_schedule(tmp_path, capsys):
    assert main(["simulate", MODEL, "--schedule", BAD]) == 1
    assert "capacity" in capsys.readouterr().err
    assert main(["simulate", MODEL, "--schedule", GOOD, "--iterations", "0"]) == 2
    assert "--iterations = 0" in capsys.readouterr().err


def test_without_a_schedule_the_target_is_solved(tmp_path, capsys):
    assert main(["emit", MODEL, "--target", "pseudo", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("fa-simplified: I=2, L=4")
    assert main(["simulate", "fa3-fwd", "--machine", "h100", "subtiles=2"]) == 0
    assert "deadlock: none" in capsys.readouterr().out


def test_the_shallow_streaming_model(tmp_path, capsys):
    """Issue 20's second model: a load read 10 cycles after it issues, through a 2-deep ring
    (an order edge at distance 2) in 2 units of shared memory.  Solved as given, I = 6; the
    program keeps 2 slots and reaches 1/6 with no op late.  The zero-latency relaxation (the
    paper's letter) answers I = 1, labelled, and its schedule is refused on the model as given."""
    model, sched = str(EXAMPLES / "shallow-stream.json"), str(tmp_path / "s.json")
    assert main(["solve", model, "--max-stages", "2", "--out", sched]) == 0
    assert "I = 6 (proven optimal" in capsys.readouterr().out
    assert main(["emit", model, "--schedule", sched, "--target", "ir", "--out",
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "buffer load: 2 slots" in out and "memory: smem 2 <= 2 allocated" in out
    assert main(["simulate", model, "--schedule", sched, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] and doc["rate"] == "1/6" and doc["late"] == 0
    paper = str(tmp_path / "paper.json")
    assert main(["solve", model, "--max-stages", "2", "--streaming", "paper", "--out",
                 paper]) == 3
    out = capsys.readouterr().out
    assert out.startswith("shallow-stream: optimal for the streaming relaxation")
    assert "NOT valid for the model as given" in out
    doc = json.loads((tmp_path / "paper.json").read_text())
    assert doc["I"] == 1 and doc["optimal"] is False and doc["streaming"]["mode"] == "paper"
    # for the model as given: invalid, its own lower bound (RecMII 6), no gap to report
    assert doc["status"] == "invalid" and doc["lower_bound"] == 6 and doc["gap"] is None
    assert doc["violations"][0]["rule"] == "dependence"
    assert main(["verify", model, paper]) == 1  # the file's `streaming` key relaxes nothing
    assert "checked on the model as given" in capsys.readouterr().out
    assert main(["emit", model, "--schedule", paper, "--out", str(tmp_path)]) == 1
    assert main(["solve", model, "--max-stages", "2", "--streaming", "bound", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["I"] == 6 and doc["optimal"] and doc["streaming"]["I"] == 1


def test_emit_fails_when_the_plan_exceeds_a_limit(tmp_path, capsys):
    """The Hopper-like GEMM with shared memory cut to one tile: rule 5 counts one tile (the MMA
    reads it from its issue, and the model gives no hold), the plan keeps each of its two slots
    until the MMA completes.  emit writes the files, names the figures and exits 1; a plan that
    fits says so and exits 0, as examples/static-layout.json's does with a layout repeating
    every two iterations (its three values overlap pairwise but are never all live)."""
    doc = json.loads((EXAMPLES / "hopper-gemm.json").read_text())
    doc["machine"]["memories"]["smem"] = 32768
    small = tmp_path / "hopper-gemm.json"
    small.write_text(json.dumps(doc))
    assert main(["emit", str(small), "--schedule", str(EXAMPLES / "hopper-gemm.schedule.json"),
                 "--target", "ir", "--out", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "  memory: smem 65536 > 32768 allocated (loop peak 32768)" in out
    assert ("FAILED: the plan exceeds a limit (memory smem: plan allocates 65536 > 32768 "
            "(loop peak 32768))") in err
    ir = json.loads((tmp_path / "hopper-gemm.ir.json").read_text())
    assert [(m["memory"], m["allocated"], m["peak"]) for m in ir["memory"]] == \
        [("smem", 65536, 32768)]
    assert main(["emit", str(EXAMPLES / "static-layout.json"), "--schedule",
                 str(EXAMPLES / "static-layout.schedule.json"), "--target", "ir", "--out",
                 str(tmp_path)]) == 0
    assert "  memory: smem 4 <= 4 allocated (loop peak 4)" in capsys.readouterr().out
    assert main(["emit", str(EXAMPLES / "hopper-gemm.json"), "--schedule",
                 str(EXAMPLES / "hopper-gemm.schedule.json"), "--target", "ir", "--out",
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "steady state: within limits (registers producer 0/40, consumer 64/232)" in out
    assert "memory: smem 65536 <= 232448 allocated (loop peak 32768)" in out


def test_solve_answers_a_schedule_whose_plan_fits(tmp_path, capsys):
    """What `emit` allocates must fit what was proven (DESIGN section 6).  Rule 5 bounds what is
    live at once; the plan lays rings out at fixed places.  tests/models/plan/fragmented.json
    (found by a random search): the optimum I = 5, L = 10 has a live peak of 5 = smem, but its
    rings need 6 at fixed places; `solve` searches again with smem 4 and answers I = 5, L = 11,
    whose plan fits - I still optimal, L not proven.  The Hopper-like GEMM with one tile of
    shared memory and no hold on its MMA's read: the plan keeps each tile until the MMA is
    done, so `solve` searches again with that hold stated."""
    model = str(MODELS / "plan" / "fragmented.json")
    out = tmp_path / "s.json"
    assert main(["solve", model, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("fragmented: feasible, a plan that fits")
    assert "plan: the optimum (I = 5, L = 10) has no plan within smem 6 > 5; searched again " \
           "with smem 4" in text
    doc = json.loads(out.read_text())
    assert (doc["I"], doc["L"], doc["optimal"], doc["I_optimal"]) == (5, 11, False, True)
    assert doc["status"] == "feasible" and doc["plan_refits"][0]["next_capacities"] == {"smem": 4}
    assert main(["emit", model, "--schedule", str(out), "--target", "ir", "--out",
                 str(tmp_path)]) == 0
    assert "memory: smem 4 <= 5 allocated" in capsys.readouterr().out
    # without the check, the model's optimum, which emit refuses
    run = run_solve(load_model(model), Options(plan=False, isolate=False))
    assert (run.schedule.I, run.schedule.L) == (5, 10) and run.plan_fits is None
    assert [u.allocated for u in plan(run.raw, run.schedule).memory] == [6]

    gemm = json.loads((EXAMPLES / "hopper-gemm.json").read_text())
    gemm["machine"]["memories"]["smem"] = 32768
    small = tmp_path / "hopper-gemm.json"
    small.write_text(json.dumps(gemm))
    run = run_solve(load_model(str(small)), Options(isolate=False))
    assert run.plan_fits and run.refits[0].holds and not run.refits[0].capacities
    assert plan(run.raw, run.schedule).over_limits() == []


def test_simulate_is_a_check_that_can_fail(capsys):
    """Exit 1 when, with fixed latencies and the schedule's pacing, the rate misses 1/I: here a
    load ring planted one slot short (--depth); the first late op and its wait are named."""
    model, sched = str(EXAMPLES / "hopper-gemm.json"), str(EXAMPLES / "hopper-gemm.schedule.json")
    assert main(["simulate", model, "--schedule", sched]) == 0
    assert "ok: the program realizes the schedule" in capsys.readouterr().out
    assert main(["simulate", model, "--schedule", sched, "--depth", "load=1"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: rate 1/4 misses 1/I = 1/3" in out
    assert "first: load#1 issued at cycle 4, planned 3: its stream waited at WaitEmpty load#1" \
        in out
    # Greedy pacing and jitter are not the schedule: checked for deadlock and races only, and
    # the line says why.
    assert main(["simulate", model, "--schedule", sched, "--depth", "load=1", "--pace",
                 "greedy"]) == 0
    assert "not checked (1/4, below 1/I = 1/3): greedy pacing issues each op" in \
        capsys.readouterr().out
    assert main(["simulate", model, "--schedule", sched, "--json", "--depth", "load=0"]) == 2
    assert '--depth = "load=0"' in capsys.readouterr().err


def test_simulate_async_readers(capsys):
    """Issue 20's first model: each reader waits for its own edge's delay, so 1/6 is reached."""
    assert main(["simulate", str(EXAMPLES / "async-readers.json"), "--schedule",
                 str(EXAMPLES / "async-readers.schedule.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] and doc["rate"] == "1/6" and doc["late"] == 0


def test_emit_exits_1_when_nvcc_fails(tmp_path, capsys, monkeypatch):
    """A compiler failure is a negative answer with nvcc's output (README, `emit --help`); the
    files stay written for inspection."""
    fake = tmp_path / "bin" / "nvcc"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "fake nvcc: error: the compiler broke" >&2\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    assert main(["emit", MODEL, "--schedule", GOOD, "--target", "cuda", "--out",
                 str(tmp_path / "out")]) == 1
    out, err = capsys.readouterr()
    assert "  nvcc -arch=sm_90a: FAILED" in out.splitlines()
    assert err == "fake nvcc: error: the compiler broke\n\n"
    assert (tmp_path / "out" / "fa-simplified.cu").exists()
