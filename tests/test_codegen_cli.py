"""The emit, simulate and draw commands."""

from __future__ import annotations

import json

from warpweave.cli import main

from .conftest import EXAMPLES

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


def test_streaming_schedule_gets_run_ahead_slots(tmp_path, capsys):
    doc = json.loads((EXAMPLES / "hopper-gemm.schedule.json").read_text())
    doc["streaming"] = True  # as `solve` writes it: the load runs ahead at zero latency
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    model = str(EXAMPLES / "hopper-gemm.json")
    assert main(["emit", model, "--schedule", str(path), "--target", "ir", "--out",
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # 2 slots for the anti-dependence, plus ceil(latency 2 / I 3) = 1 to run ahead
    assert "buffer load: 3 slots" in out and "run ahead" in out
    assert main(["simulate", model, "--schedule", str(path), "--jitter", "50"]) == 0


def test_simulate_real_latency(tmp_path, capsys):
    """--real-latency runs the streaming load at the latency it had (2 cycles) before the solve
    zeroed it, issued as early as its waits allow; the toy gemm keeps 1/I."""
    doc = json.loads((EXAMPLES / "hopper-gemm.schedule.json").read_text())
    doc["streaming"] = True
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    model = str(EXAMPLES / "hopper-gemm.json")
    assert main(["simulate", model, "--schedule", str(path), "--real-latency", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["real_latency"] == {"load": 2} and got["ok"] and got["rate"] == got["target"]
    assert main(["simulate", model, "--schedule", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["real_latency"] == {}


def test_emit_reports_a_steady_state_over_the_register_limit(tmp_path, capsys):
    """fa-bwd on H100: valid (Q's peak fits), but the loop holds dk of iteration j-1 with qk and
    dp of iteration j on wg1."""
    assert main(["emit", "fa-bwd", "--machine", "h100", "--target", "ir", "--out",
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "steady state: registers wg1 256 > 240 at slot 0 (qk x1, dp x1, dk x1)" in out
    doc = json.loads((tmp_path / "fa-bwd.ir.json").read_text())
    over = [p for p in doc["steady_state"] if p["peak"] > p["limit"]]
    assert [(p["pool"], p["peak"]) for p in over] == [("wg1", 256)]
    assert main(["emit", MODEL, "--schedule", GOOD, "--target", "ir", "--out",
                 str(tmp_path)]) == 0
    assert "steady state: within limits (registers g0 " in capsys.readouterr().out


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
    assert "not checked: greedy pacing issues each op" in capsys.readouterr().out
    assert main(["simulate", model, "--schedule", sched, "--json", "--depth", "load=0"]) == 2
    assert '--depth = "load=0"' in capsys.readouterr().err


def test_simulate_async_readers(capsys):
    """Issue 20's first model: each reader waits for its own edge's delay, so 1/6 is reached."""
    assert main(["simulate", str(EXAMPLES / "async-readers.json"), "--schedule",
                 str(EXAMPLES / "async-readers.schedule.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] and doc["rate"] == "1/6" and doc["late"] == 0
