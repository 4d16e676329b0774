"""Shared fixtures (paths to the examples, a small model), the hypothesis profiles and the session
summary of the cross-checking properties.

`@pytest.mark.deadline(seconds)`: a test that must fail, not stall the run, if it hangs (see
`_deadline`).

Profiles: `ci` (the default) and `thorough`, chosen by `pytest --thorough` or
`HYPOTHESIS_PROFILE=thorough`; both are defined in `tests/crosscheck_support.py`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import settings

from .crosscheck_support import PROFILES, merge, statistics, summary_lines

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# Two 3-cycle ops and a loop-carried edge: the longest path (3) lets stage count 3 reach the
# lower bound I=1, but the edge (delay 3 over distance 1) does not: S=3 gives I=2, L=5, and only
# S=5 gives I=1 (L=5).  The default search's first schedule (S=1: I=3, L=3) is not the optimum.
LATE = {"name": "late", "machine": {"units": {}, "warp_groups": [{"name": "g0"}]},
        "ops": [{"name": "a", "cycles": 3, "rrt": [{}, {}, {}]}, {"name": "b", "cycles": 3}],
        "edges": [{"src": "a", "dst": "b", "distance": 1}]}

for _name, _values in PROFILES.items():
    settings.register_profile(_name, **_values)


def pytest_addoption(parser):
    parser.addoption("--thorough", action="store_true",
                     help="run the property tests under the `thorough` hypothesis profile "
                     "(20x the examples of `ci`)")


def pytest_configure(config):
    # Before the test modules are imported: `crosscheck_support.scaled` reads the profile then.
    chosen = "thorough" if config.getoption("--thorough") else (
        config.getoption("--hypothesis-profile") or os.environ.get("HYPOTHESIS_PROFILE") or "ci")
    settings.load_profile(chosen)


def pytest_sessionfinish(session):
    # A pytest-xdist worker: its statistics go to the controller with the worker's output.
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["crosscheck_statistics"] = json.dumps(statistics())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    # The controller (pytest-xdist): a worker's statistics join the session summary.
    stats = getattr(node, "workeroutput", {}).get("crosscheck_statistics")
    if stats:
        merge(json.loads(stats))


def pytest_terminal_summary(terminalreporter):
    lines = summary_lines()
    if lines:
        terminalreporter.section(
            f"cross-check properties: generated examples (profile "
            f"{settings.get_current_profile_name()})")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def _registries_restored():
    """What a test adds with `REGISTRY.add` (a planted encoding, a hung backend) is gone after it:
    `crosscheck` and `backends` list every registered name, so a leftover would change later
    tests' answers."""
    from warpweave.core import registry
    kept = [(r, dict(r._extra)) for r in vars(registry).values()
            if isinstance(r, registry.Registry)]
    yield
    for r, extra in kept:
        r._extra.clear()
        r._extra.update(extra)


@pytest.fixture
def fa_model():
    from warpweave.core.formats import load_model
    return load_model(EXAMPLES / "fa-simplified.json")


@pytest.fixture
def install_plugin(tmp_path, monkeypatch):
    """Installs a plugin distribution as `pip install` would leave it: a module `name` with
    `source` and a dist-info whose entry points (group -> {entry: "module:object"}) the
    registries read, on sys.path and on PYTHONPATH for the commands a test runs."""
    from warpweave.core import registry

    def install(name: str, source: str, points: dict[str, dict[str, str]]):
        (tmp_path / f"{name}.py").write_text(source)
        info = tmp_path / f"{name}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text("".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items())
            for group, entries in points.items()))
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
        for r in vars(registry).values():
            if isinstance(r, registry.Registry):  # read the entry points again
                monkeypatch.setattr(r, "_points", None)
                monkeypatch.setattr(r, "_loaded", {})
                monkeypatch.setattr(r, "failures", {})  # a broken plugin's, for this test only
        return tmp_path
    return install


@pytest.fixture(autouse=True)
def _deadline(request):
    """`@pytest.mark.deadline(seconds)`: the test fails once it has run `seconds` (its fixtures'
    setup and teardown included: autouse, it is set up first and torn down last) - SIGALRM
    raises in the test's thread wherever it waits (a pipe, a lock, a sleep).  For tests whose
    every wait is not bounded by a timeout of its own (a cluster's client calls).  Nothing is
    armed without the marker, or where SIGALRM cannot be caught (off the main thread)."""
    marker = request.node.get_closest_marker("deadline")
    if (marker is None or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    seconds = marker.args[0]

    def expired(signum, frame):
        pytest.fail(f"the test's deadline of {seconds:g} s passed")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
