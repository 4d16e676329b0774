"""`warpweave sweep` / `ww.sweep`: the grid solved on local worker processes, ranked by
predicted throughput, kept in the SQLite store (a re-run solves nothing, an overlapping grid
only what is new, an interrupted sweep resumes), and bad input as one line.  The Dask cluster is
in test_sweep_cluster.py."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import warpweave as ww
from warpweave.cli import main
from warpweave.cli.render import describe_sweep
from warpweave.core.formats import model_to_dict
from warpweave.kernels import kernel_spec
from warpweave.sweeps.plot import front
from warpweave.sweeps.point import ruled_out_up_to
from warpweave.sweeps.store import point_key, reusable

GEMM = {"k_steps": [1, 2], "tile_n": [64, 128]}


def stored(store) -> dict[str, tuple]:
    with sqlite3.connect(store) as db:
        return {k: rest for k, *rest in db.execute("SELECT key, status, complete, I FROM points")}


def test_a_rerun_reuses_every_point_and_an_overlapping_grid_solves_only_what_is_new(tmp_path):
    store = tmp_path / "s.db"
    seen = []
    first = ww.sweep("gemm", "h100", GEMM, store=store, workers=1,
                     progress=lambda done, total, row: seen.append((done, total)))
    assert (first.solved, first.reused, first.interrupted) == (4, 0, False)
    assert seen == [(k, 4) for k in range(1, 5)]
    assert all(r.status == "optimal" and r.record["complete"] for r in first.rows)
    rates = [r.throughput.per_cycle for r in first.rows]
    assert rates == sorted(rates, reverse=True)  # ranked, best first
    spec = kernel_spec("gemm")
    for r in first.rows:  # the figure: the kernel's stated work over the verified I
        assert r.throughput.flops == spec.flops("h100", dict(r.point.params))
        assert r.throughput.per_cycle == r.throughput.flops / r.record["I"]
    assert len(stored(store)) == 4

    again = ww.sweep("gemm", "h100", GEMM, store=store, workers=1)
    assert (again.solved, again.reused, again.where) == (0, 4, "nowhere")
    assert [(r.label, r.record["I"]) for r in again.rows] == \
        [(r.label, r.record["I"]) for r in first.rows]

    wider = ww.sweep("gemm", "h100", {"k_steps": [2, 3], "tile_n": [64, 128]}, store=store,
                     workers=1)
    assert (wider.solved, wider.reused) == (2, 2)
    assert len(stored(store)) == 6

    # The Pareto front, drawn without matplotlib: every point with a schedule, labelled (without
    # the machine, the sweep's only one).
    svg = tmp_path / "front.svg"
    assert ww.sweep_plot(wider, svg) == "written directly"
    text = svg.read_text()
    assert text.startswith("<svg")
    assert all(f">{r.label.removeprefix('h100 ')}</text>" in text for r in wider.rows)


def test_a_point_its_builder_rejects_is_reported_not_solved(tmp_path):
    result = ww.sweep("fa-bwd", "h100", {"head_dim": [512]}, store=tmp_path / "s.db")
    (row,) = result.rows
    assert row.status == "rejected" and "the tile is too large" in row.record["reason"]
    assert (result.solved, result.rejected) == (0, 1)
    assert not (tmp_path / "s.db").exists()  # nothing could be built: no store is made


def test_a_grid_of_which_no_point_can_be_built_is_bad_input(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["sweep", "fa-bwd", "--param", "tile_m=1024,2048", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert [line.split(": params = ")[0] for line in lines] == [
        "warpweave: error: h100 tile_m=1024", "warpweave: error: h100 tile_m=2048"]
    assert all("use a smaller tile" in line for line in lines)
    assert os.listdir(tmp_path) == []


def test_rejected_points_are_counted_and_the_rest_answered(tmp_path, capsys, monkeypatch):
    """A rejected point is answered (it cannot be built, on any run): exit 0 when the others
    are answered in full, and the first line says how many were rejected."""
    monkeypatch.chdir(tmp_path)
    argv = ["sweep", "gemm", "--param", "k_steps=1", "--param", "tile_n=64,512", "--workers", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("gemm: 2 points on h100; 1 solved on 1 local worker process, "
                            "1 rejected (cannot be built) (")
    assert 'h100 k_steps=1 tile_n=512: rejected - params = {"block_m": 128, "block_n": 512' in out
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["points"], doc["solved"], doc["reused"], doc["rejected"]) == (2, 0, 1, 1)


def test_a_point_proven_infeasible_says_which_I_were_ruled_out_not_a_lower_bound(tmp_path):
    """In raw cycles the record's lower bound of an infeasible point is the search's upper limit
    on I plus one (16940): no I has a schedule, so the listing states the I ruled out - up to
    the limit `bounds` gives, beyond which a larger I cannot help.  About 5 s."""
    params = {"tile_m": [128], "tile_n": [128]}
    result = ww.sweep("fa-bwd", "h100", params, store=tmp_path / "s.db", workers=1,
                      normalize="off", time_limit=120)
    (row,) = result.rows
    assert (row.status, row.record["lower_bound"]) == ("infeasible", 16940)
    assert ww.bounds(ww.kernel("fa-bwd", "h100", tile_m=128, tile_n=128)).i_upper == 16939
    text = describe_sweep(result)
    assert text.splitlines()[1:] == [
        "  h100 tile_m=128 tile_n=128: infeasible - no schedule with at most 4 stages at any I: "
        "every I up to 16939 ruled out (a larger I cannot help)"]


@pytest.mark.parametrize("report, upto", [
    ({"proof": [{"rules_out": {"I": [5120, 5120], "S": [1, 1]}},
                {"I": 5120, "status": "unknown"},
                {"rules_out": {"I": [5120, 16939], "S": [4, 4]}}]}, 16939),
    # a proof in normalized units says nothing of raw cycles: no figure
    ({"scale": {"cycles_per_unit": 64, "proof": []}}, None),
    (None, None),
])
def test_the_I_ruled_out_come_from_a_proof_in_raw_cycles_only(report, upto):
    assert ruled_out_up_to({"status": "infeasible", "report": report}) == upto


def test_the_sweeps_help_says_the_time_limit_is_per_point(capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--time-limit TIME_LIMIT seconds for each point: the limit of its solve" in text
    assert "for the whole search" not in text


def test_the_key_is_the_model_and_the_solver_configuration_not_the_limits():
    doc = model_to_dict(ww.kernel("gemm", "h100"))
    options = {"backend": "auto", "seed": 0, "time_limit": 10.0}
    key = point_key(doc, options)
    assert key == point_key(doc, {**options, "time_limit": 99.0, "solve_limit": 1.0})
    assert key != point_key(doc, {**options, "seed": 1})
    assert key != point_key(model_to_dict(ww.kernel("gemm", "h100", k_steps=2)), options)


@pytest.mark.parametrize("record, asked, reuse", [
    ({"status": "optimal", "complete": True, "limits": {"time_limit": 1.0}}, 600.0, True),
    ({"status": "infeasible", "complete": True}, None, True),
    # stopped at its limit: reused when asked for no more time, solved again with more
    ({"status": "feasible", "complete": False, "limits": {"time_limit": 10.0}}, 5.0, True),
    ({"status": "feasible", "complete": False, "limits": {"time_limit": 10.0}}, 20.0, False),
    ({"status": "unknown", "complete": False, "limits": {"time_limit": 10.0}}, None, False),
    ({"status": "error", "complete": False, "limits": {"time_limit": 10.0}}, 5.0, False),
])
def test_which_stored_answers_are_reused(record, asked, reuse):
    assert reusable(record, {"time_limit": asked}) is reuse


def test_the_pareto_front_keeps_the_points_no_other_beats():
    # (resource, throughput): less resource and more throughput are better
    points = [(10, 5.0), (20, 4.0), (20, 9.0), (30, 9.0), (5, 1.0), (40, 12.0)]
    assert front(points) == [4, 0, 2, 5]


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=12))
def test_every_point_off_the_front_is_beaten_by_one_on_it(points):
    on = front(points)

    def beats(a, b):  # a at least as good in both, better in one
        return a[0] <= b[0] and a[1] >= b[1] and a != b

    assert not any(beats(p, points[i]) for i in on for p in points)
    assert all(any(beats(points[i], p) or points[i] == p for i in on) for p in points)


@pytest.mark.parametrize("argv, names", [
    (["--param", "tile_m=64,abc"], "params.block_m"),
    (["--param", "tile_q=64"], "has no such parameter"),
    (["--param", "tile_m"], "key=value"),
    (["--param", "tile_m=64,,80"], "an empty value"),
    (["--param", "tile_m=64", "--param", "block_m=80"], "given twice"),
    (["--machine", "h100,a100"], "a100"),
    (["--workers", "0"], "--workers"),
    (["--workers", "2", "--cluster", "tcp://127.0.0.1:1"], "--workers"),
    (["--plot", "front.pdf"], "--plot"),
    (["--store", "."], "--store"),
    (["--backend", "nosuch"], "nosuch"),
    (["--without", "nosuch"], "unknown constraint"),
    (["--normalize", "unit=0"], "--normalize"),
    (["--time-limit", "0"], "--time-limit"),
])
def test_bad_input_is_one_line_before_any_solve(tmp_path, capsys, monkeypatch, argv, names):
    monkeypatch.chdir(tmp_path)
    code = main(["sweep", "fa-bwd", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("warpweave: error:") and names in err
    assert sorted(os.listdir(tmp_path)) == []  # nothing solved, no store made


@pytest.mark.slow
def test_ctrl_c_keeps_what_was_answered_and_the_same_command_resumes(tmp_path):
    """A real SIGINT to the command's process group (what Ctrl-C sends), once the first point
    is in the store; then the same command solves only the rest.  About 15 s."""
    store = tmp_path / "s.db"
    argv = [sys.executable, "-m", "warpweave", "sweep", "fa3-fwd", "--param", "tile_m=64,80",
            "--param", "tile_n=64,128", "--store", str(store), "--workers", "1"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not (store.exists() and stored(store)) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, err
    answered = stored(store)
    assert 1 <= len(answered) < 4 and "interrupted" in out and "resumes" in out

    again = subprocess.run([*argv, "--json"], capture_output=True, text=True, cwd=tmp_path,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert (doc["reused"], doc["solved"]) == (len(answered), 4 - len(answered))
    assert {r["key"] for r in doc["ranking"] if r["reused"]} == set(answered)
    assert len(stored(store)) == 4


# The command, with two Ctrl-Cs sent from inside it: one to its process group (the driver, the
# workers and their solver children) once the first answer is stored, and one more to the
# driver while it stops the workers (as `timeout -s INT` sends: to the command, then to its
# group).  Sent at these moments, not after a delay: the test does not depend on timing.
CTRL_C_TWICE = """
import os, signal
from multiprocessing.process import BaseProcess
from warpweave.sweeps.store import Store

put, terminate = Store.put, BaseProcess.terminate
sent = []

def put_then_ctrl_c(self, *args, **kwargs):
    put(self, *args, **kwargs)
    if not sent:
        sent.append("group")
        os.killpg(0, signal.SIGINT)

def terminate_then_ctrl_c(self):
    terminate(self)
    if sent == ["group"]:
        sent.append("driver")
        os.kill(os.getpid(), signal.SIGINT)

Store.put, BaseProcess.terminate = put_then_ctrl_c, terminate_then_ctrl_c
from warpweave.__main__ import run
run()
"""


def alive_in_group(pgid: int, seconds: float) -> list[str]:
    """The processes of group `pgid` still running (not zombies) once `seconds` have passed or
    none is left: "pid command" each."""
    end = time.monotonic() + seconds
    while True:
        alive = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:  # gone meanwhile
                continue
            head, _, rest = text.rpartition(")")
            state, _ppid, pgrp = rest.split()[:3]
            if int(pgrp) == pgid and state != "Z":
                alive.append(f"{stat.parent.name} {head.partition('(')[2]}")
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_with_two_workers_stops_them_and_the_command_exits(tmp_path):
    """Two local workers, both solving a point when Ctrl-C comes, and a second Ctrl-C while the
    driver stops them: the command prints what was answered, exits 3 within the test's limit,
    and leaves no process behind.  (Before: a worker stopped mid-point turned SIGTERM into a
    SystemExit that concurrent.futures' worker catches, lived on idle, and the second Ctrl-C cut
    the pool's stop short: the command hung after its report, waiting for the worker.)"""
    store = tmp_path / "s.db"
    argv = [sys.executable, "-c", CTRL_C_TWICE, "sweep", "fa3-fwd", "--param", "tile_m=64,80",
            "--param", "tile_n=64,128", "--store", str(store), "--workers", "2"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=tmp_path)
    try:
        out, err = proc.communicate(timeout=60)
        left = alive_in_group(proc.pid, 5.0)
    finally:  # a hang fails the test: whatever is left of the command is killed
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == 3, err
    assert left == []
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert len(stored(store)) == 1  # stopped at the first answer
    assert "interrupted: 1 of 4 points answered" in out and "resumes" in out


@pytest.mark.deadline(0.5)
@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="SIGALRM is caught on the main thread only")
def test_a_deadline_fails_a_test_that_waits_past_it():
    """The `deadline` marker (tests/conftest.py) that keeps the cluster test from stalling a
    run: a wait past it is cut short by the test's failure."""
    start = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match="deadline of 0.5 s passed"):
        time.sleep(30)
    assert time.monotonic() - start < 5


def test_the_command_and_the_api_have_the_same_defaults():
    import inspect

    from warpweave.cli.commands import search_options
    from warpweave.cli.parser import build_parser
    args = build_parser().parse_args(["sweep", "fa-bwd"])
    signature = inspect.signature(ww.sweep).parameters
    given = {**search_options(args), "store": args.store, "workers": args.workers,
             "cluster": args.cluster}
    for key, value in given.items():
        default = signature[key].default
        assert (tuple(default) if isinstance(default, list | tuple) else default) == value, key


def test_a_point_stopped_at_its_time_limit_is_recorded_with_its_reason_and_bounds(tmp_path):
    store = tmp_path / "s.db"
    params = {"tile_m": [80], "tile_n": [128]}  # about 10 s to its answer: 1 s stops it
    result = ww.sweep("fa-bwd", "h100", params, store=store, workers=1, time_limit=1.0)
    (row,) = result.rows
    r = row.record
    assert r["status"] in ("feasible", "unknown") and not r["complete"]
    assert "time limit of 1 s reached" in r["reason"] and r["lower_bound"] == 3200
    assert r["limits"]["time_limit"] == 1.0
    assert tuple(stored(store)[row.key][:2]) == (r["status"], 0)
    # the same limit would stop it again: reused; a larger one solves it again
    assert ww.sweep("fa-bwd", "h100", params, store=store, time_limit=1.0).reused == 1
    assert not reusable(r, {"time_limit": 2.0})


def test_points_that_build_the_same_model_are_solved_once(tmp_path):
    # gemm's groups hold at most 240 registers: a cap of 240 or 255 changes nothing
    result = ww.sweep("gemm", "h100", {"k_steps": [1], "max_regs": [0, 240, 255]},
                      store=tmp_path / "s.db", workers=1)
    assert result.solved == 1 and len({r.key for r in result.rows}) == 1
    assert [r.record["I"] for r in result.rows] == [result.rows[0].record["I"]] * 3


def test_warp_inventories_are_separated_by_semicolons():
    from warpweave.sweeps.grid import parse_axes
    spec = kernel_spec("fa3-fwd")
    assert parse_axes(spec, ["groups=w0:1:24,wg1:4:240;w0:1:56,wg1:4:232", "tile_n=64,128"]) \
        == {"groups": ["w0:1:24,wg1:4:240", "w0:1:56,wg1:4:232"], "tile_n": ["64", "128"]}
