"""Registries: built-ins come through entry points; a plugin that fails to load is reported with
its reason and the rest keep working."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from warpweave.core.registry import BACKENDS, CONSTRAINTS, ENCODINGS, KERNELS, MACHINES, Registry
from warpweave.errors import InputError


def test_builtins_are_registered_through_entry_points():
    assert {"dependence", "capacity", "concurrency", "memory"} <= set(CONSTRAINTS.names())
    assert {"compact", "paper", "integer"} <= set(ENCODINGS.names())
    assert {"cbc", "highs", "z3", "cvc5", "yices", "sat", "cpsat"} <= set(BACKENDS.names())
    assert {"h100", "b200"} <= set(MACHINES.names())
    assert {"fa-simplified", "fa3-fwd", "fa4-fwd", "fa-bwd", "gemm"} <= set(KERNELS.names())


def test_a_broken_plugin_is_reported_and_the_rest_load():
    reg = Registry("warpweave.test-only", "thing")
    reg._points = {
        "good": EntryPoint("good", "warpweave.core.constraints:Dependence", "warpweave.test-only"),
        "broken": EntryPoint("broken", "warpweave.no_such_module:X", "warpweave.test-only"),
    }
    loaded = reg.load_all()
    assert list(loaded) == ["good"]
    assert "ModuleNotFoundError" in reg.failures["broken"]
    with pytest.raises(InputError, match="thing plugin failed to load: warpweave.no_such_module"):
        reg.get("broken")
    with pytest.raises(InputError, match=r"unknown thing \(known: broken, good\)"):
        reg.get("missing")


BROKEN = 'raise RuntimeError("the rule needs a newer warpweave")\n'


def test_a_constraint_that_fails_to_load_fails_closed(install_plugin, capsys, tmp_path):
    """docs/plugins.md: a machine that does not load is left out with a warning; a constraint
    that does not load cannot be checked, so every command that solves or checks a schedule
    exits 2 naming it, and `--without NAME` is the way out for the searches."""
    from warpweave.cli import main

    from .conftest import EXAMPLES
    install_plugin("ww_badrule", BROKEN, {"warpweave.constraints": {"badrule": "ww_badrule:Rule"},
                                          "warpweave.machines": {"mi999": "ww_badrule:Machine"}})
    model = str(EXAMPLES / "fa-simplified.json")
    schedule = str(EXAMPLES / "fa-simplified.schedule.json")
    line = ('warpweave: error: "badrule": constraint plugin failed to load: ww_badrule:Rule: '
            'RuntimeError: the rule needs a newer warpweave')
    for args in (["solve", model], ["heuristic", model], ["verify", model, schedule],
                 ["emit", model, "--schedule", schedule, "--target", "pseudo", "--out",
                  str(tmp_path / "out")],
                 ["simulate", model, "--without", "badrule"]):  # it checks every rule
        assert main(args) == 2, args
        assert capsys.readouterr().err.splitlines() == [line], args
    for command in ("solve", "heuristic"):
        assert main([command, model, "--without", "badrule"]) == 0
        assert capsys.readouterr().err == ""
    assert main(["crosscheck", model, "--backends", "cpsat", "--without", "badrule"]) == 0
    capsys.readouterr()
    assert main(["machines"]) == 0
    out, err = capsys.readouterr()
    assert "h100" in out and "mi999" not in out
    assert err == ("warpweave: warning: machine mi999 not loaded: ww_badrule:Machine: "
                   "RuntimeError: the rule needs a newer warpweave\n")


PLUGIN = '''
"""A constraint shipped by another package: O issues at least 5 cycles after S."""
from warpweave.core.constraints import Constraint
from warpweave.core.verify import Violation


class Spread(Constraint):
    name = "spread"

    def check(self, model, schedule, semantics="loop"):
        gap = schedule.start["O"] - schedule.start["S"]
        return [] if gap >= 5 else [Violation("spread", f"O only {gap} after S", ("S", "O"))]

    def encode(self, view):
        view.require_gap("S", "O", 5)
'''


@pytest.fixture
def installed_plugin(install_plugin):
    """A distribution whose entry point adds the constraint `spread`."""
    install_plugin("ww_spread_plugin", PLUGIN,
                   {"warpweave.constraints": {"spread": "ww_spread_plugin:Spread"}})


@pytest.mark.parametrize("encoding", ["compact", "paper", "integer"])
@pytest.mark.parametrize("backend", ["cbc", "highs", "z3", "cvc5", "yices", "sat", "cpsat"])
def test_a_plugin_constraint_works_on_every_backend_and_encoding(installed_plugin, fa_model,
                                                                 backend, encoding):
    from warpweave.core.constraints import constraint_set
    from warpweave.core.verify import verify
    from warpweave.search import search

    assert "spread" in CONSTRAINTS.names()
    cons = constraint_set()
    out = search(fa_model, backend=backend, encoding=encoding, constraints=cons, isolate=False)
    s = out.schedule
    assert out.optimal and (s.I, s.L) == (2, 6), (s.I, s.L)  # without it: I=2, L=4
    assert s.start["O"] - s.start["S"] >= 5 and verify(fa_model, s) == []
    assert "spread" in out.constraints
    without = search(fa_model, backend=backend, encoding=encoding,
                     constraints=constraint_set(without=["spread"]), isolate=False)
    assert (without.schedule.I, without.schedule.L) == (2, 4)
