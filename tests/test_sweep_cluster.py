"""`warpweave sweep --cluster`: a real Dask cluster started here (`dask scheduler` and two
`dask worker` processes on 127.0.0.1), a sweep run on it by the command, and one worker killed
(SIGKILL) while it solves a point: the scheduler gives that point to the other worker, and the
store ends with every point answered once, none lost.  About 10 s on 2 cores; the test fails
(the `deadline` marker, tests/conftest.py) rather than stall a run if anything in it hangs."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

PY = sys.executable
# fa3-fwd points take a second or two each: long enough to kill a worker in the middle of one.
GRID = ["fa3-fwd", "--param", "tile_m=64,80", "--param", "tile_n=64,128"]


def wait_for(what, seconds: float = 60.0, every: float = 0.1):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = what()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two single-threaded workers (no nanny: a killed worker stays dead);
    yields (address, {worker name: process}); every process is stopped afterwards."""
    info = tmp_path / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": tmp_path}
    procs = [subprocess.Popen([PY, "-m", "distributed.cli.dask_scheduler", "--host",
                               "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(info)], **quiet)]
    try:
        wait_for(lambda: info.exists() and info.stat().st_size > 0)
        address = json.loads(info.read_text())["address"]
        workers = {}
        for name in ("wa", "wb"):
            workers[name] = subprocess.Popen(
                [PY, "-m", "distributed.cli.dask_worker", address, "--name", name,
                 "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"],
                **quiet)
            procs.append(workers[name])
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        # The workers are killed (they fork nothing: a cluster's points run in process), which
        # spares their graceful close, seconds long once the scheduler is gone.
        scheduler, *workers_started = procs
        for p in workers_started:
            p.kill()
        scheduler.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def rows(store: Path) -> list[tuple]:
    if not store.exists():
        return []
    with sqlite3.connect(store) as db:
        return db.execute("SELECT key, status, complete, solved_by FROM points").fetchall()


@pytest.mark.deadline(180)
def test_a_worker_killed_mid_sweep_loses_no_point(cluster, tmp_path):
    address, workers = cluster
    store = tmp_path / "s.db"
    sweep = subprocess.Popen([PY, "-m", "warpweave", "sweep", *GRID, "--cluster", address,
                              "--store", str(store), "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=tmp_path)
    try:
        with distributed.Client(address, timeout=30) as client:
            def busy_worker():
                """Once a point is answered: a worker solving another one (its name, the
                points' keys in the store)."""
                if not rows(store):
                    return None
                names = {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}
                return next(((names[a], {str(k).removeprefix("warpweave-point-") for k in keys})
                             for a, keys in client.processing().items() if keys), None)

            victim, held = wait_for(busy_worker, every=0.05)
            os.kill(workers[victim].pid, signal.SIGKILL)
            workers[victim].wait(10)
        out, err = sweep.communicate(timeout=120)
    finally:  # failed or timed out: the command is not left running
        if sweep.poll() is None:
            sweep.kill()
            sweep.communicate()
    assert sweep.returncode == 0, err
    doc = json.loads(out)
    answered = rows(store)
    assert len(answered) == len({k for k, *_ in answered}) == 4 == doc["points"]
    assert all(status == "optimal" and complete for _, status, complete, _ in answered)
    assert doc["solved"] == 4 and all(r["status"] == "optimal" for r in doc["ranking"])
    # The survivor answered the point the victim held when it was killed.
    survivor = workers["wb" if victim == "wa" else "wa"].pid
    by = {key: solved_by for key, *_, solved_by in answered}
    assert held and all(by[key].endswith(f":{survivor}") for key in held)
