"""Where a sweep's points are solved: a pool of local worker processes (the default) or an
existing Dask cluster (`--cluster ADDRESS`).

Both take `Task`s and yield `(key, record)` as points finish, in the order they finish; neither
touches the results store (the driver records what they yield).  A point whose worker is lost
is not lost with it: the local pool reports it as failed (the next run tries it again); Dask's
scheduler gives it to another worker (up to its `allowed-failures`, after which the point is
recorded as failed with the reason).

Why Dask (`distributed`) and not Ray: pure-Python wheels (about 37 MB installed with what they
pull in, measured here; Ray's core is a compiled C++ runtime shipped per platform), a scheduler and
workers that are plain commands (`dask scheduler`, `dask worker ADDRESS`) on any machine with the
package, and a scheduler that re-runs a lost worker's tasks on the others by itself.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator, Sequence

from warpweave import limits
from warpweave.errors import InputError
from warpweave.sweeps.point import Task, failed, solve_point

CONNECT_SECONDS = 10.0  # to reach a cluster's scheduler
STOP_SECONDS = 2.0  # for the local workers to exit on SIGTERM before they are killed


def local_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _worker_init() -> None:
    # Ctrl-C is the driver's: it stops the workers with SIGTERM (`_stop`).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit)


def _exit(signum: int, frame: object) -> None:
    """A worker told to stop kills its solver child (`backends.isolate` forks one per solver
    call) and leaves at once.  Not by raising SystemExit: concurrent.futures' worker catches
    BaseException around a task, sends it back as the task's exception and waits for the next
    task - a worker stopped mid-point lived on, idle, and the driver's exit waited for it."""
    children = multiprocessing.active_children()
    for child in children:
        child.kill()
    for child in children:
        child.join(1)
    os._exit(128 + signum)


class LocalPool:
    """`workers` local processes (spawned: the driver's threads are not forked), each solving
    one point at a time."""

    def __init__(self, workers: int | None = None):
        self.workers = workers or local_workers()
        self.where = "local worker processes"

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[str, dict]]:
        n = max(1, min(self.workers, len(tasks)))  # no more processes than points
        self.where = f"{n} local worker process{'es' * (n != 1)}"
        pool = cf.ProcessPoolExecutor(max_workers=n,
                                      mp_context=multiprocessing.get_context("spawn"),
                                      initializer=_worker_init)
        try:
            futures = {pool.submit(solve_point, t): t.key for t in tasks}
            for future in cf.as_completed(futures):
                try:
                    record = future.result()
                except cf.process.BrokenProcessPool as exc:
                    record = failed(f"the worker process died ({exc})")
                yield futures[future], record
        finally:
            # However the run ends (every point answered, Ctrl-C, the driver closing it), no
            # worker outlives it: an idle worker left behind holds the command's exit, which
            # waits for its children.  A second Ctrl-C meanwhile is held until they are gone.
            with limits.deferred_interrupts():
                _stop(pool)
                pool.shutdown(wait=True, cancel_futures=True)


def _stop(pool: cf.ProcessPoolExecutor) -> None:
    """Stop every worker of `pool` now (concurrent.futures has no public call for it before
    Python 3.14): SIGTERM (a worker kills its solver child and exits), then SIGKILL for one
    still alive STOP_SECONDS later."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for p in processes:
        p.terminate()
    end = time.monotonic() + STOP_SECONDS
    for p in processes:
        p.join(max(0.0, end - time.monotonic()))
    for p in processes:
        if p.is_alive():
            p.kill()
            p.join()


class DaskCluster:
    """The workers of a running Dask scheduler at `address` (`tcp://host:8786`)."""

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError:
            raise InputError("needs Dask's distributed (pip install 'warpweave[cluster]')",
                             ("--cluster",), address) from None
        try:
            self.client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise InputError(f"no Dask scheduler reached ({exc})", ("--cluster",),
                             address) from None
        workers = len(self.client.scheduler_info().get("workers", {}))
        self.where = f"the Dask cluster at {address} ({workers} worker{'s' * (workers != 1)})"

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[str, dict]]:
        from distributed import as_completed
        futures = {self.client.submit(solve_point, t, key=f"warpweave-point-{t.key}",
                                      pure=False): t.key for t in tasks}
        finished = False
        try:
            for future in as_completed(list(futures), loop=self.client.loop):
                try:
                    record = future.result()
                except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker: a record, not a crash
                    record = failed(f"{type(exc).__name__}: {exc}")
                yield futures[future], record
            finished = True
        finally:
            if not finished:
                self.client.cancel(list(futures), force=True)
            self.client.close()


def check_executor(cluster: str | None, workers: int | None) -> None:
    """InputError for a pool size with a cluster, or a size below 1 (before any work)."""
    if cluster is not None and workers is not None:
        raise InputError("sets the local pool's size; a cluster has its own workers",
                         ("--workers",), workers)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise InputError("must be an integer >= 1", ("--workers",), workers)


def executor(cluster: str | None, workers: int | None) -> LocalPool | DaskCluster:
    """The local pool, or the cluster at `cluster`."""
    check_executor(cluster, workers)
    return DaskCluster(cluster) if cluster else LocalPool(workers)
