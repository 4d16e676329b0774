"""Registries: built-ins come through entry points; a plugin that fails to load is reported with
its reason and the rest keep working."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from warpweave.core.errors import InputError
from warpweave.core.registry import BACKENDS, CONSTRAINTS, ENCODINGS, KERNELS, MACHINES, Registry


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
