"""The machinery of the cross-checking properties: the strategy's coverage of every model feature,
and counterexample files."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpweave.core.formats import load_model, model_from_dict

from .crosscheck_support import keep_counterexample
from .strategies import FEATURES, features, tiny_model_docs


def test_features_of_a_document():
    doc = {"machine": {"units": {"u0": 2, "u1": 1}, "memories": {"smem": 3},
                       "warp_groups": [{"name": "g0", "warps": 4, "reg_limit": 3},
                                       {"name": "g1", "warps": 1, "reg_limit": 3}],
                       "variable_latency_group": "g1"},
           "ops": [{"name": "a", "cycles": 3, "rrt": [{"u0": 2}, {}, {"u0": 1}], "regs": 2,
                    "footprint": {"smem": 2}, "async": True},
                   {"name": "b", "uses": {"u1": 1}, "regs": 1, "footprint": {"smem": 1},
                    "variable_latency": True, "warps": 1, "spill_cost": 1}],
           "edges": [{"src": "a", "dst": "b", "kind": "order", "delay": 0},
                     {"src": "b", "dst": "a", "distance": 3, "blocking": True}]}
    assert features(doc) == {
        "2 ops", "2 units", "a unit of capacity 2", "multi-row reservation table",
        "a unit in several rows", "two of a unit in one row", "an idle row", "distance 3",
        "an explicit delay", "an order edge", "a blocking edge", "a variable-latency op",
        "2 warp groups", "groups differ in warps", "an op needing warps", "regs",
        "footprints", "a spill cost", "an async op"}  # 3 regs and 3 smem fit: not tight
    doc["machine"]["memories"]["smem"] = 2
    doc["machine"]["warp_groups"][1]["reg_limit"] = 2
    assert {"tight memory", "tight registers", "groups differ in reg_limit"} <= features(doc)
    model_from_dict(doc)  # a valid model


def test_tiny_models_cover_every_feature():
    """A fixed sample of 400 models from the strategy the properties draw from has each
    feature at least 5 times."""
    seen: Counter = Counter()

    @settings(max_examples=400, derandomize=True, database=None)
    @given(tiny_model_docs())
    def sample(doc):
        found = features(doc)
        assert found <= set(FEATURES), found - set(FEATURES)
        seen.update(found)

    sample()
    rare = {f: seen[f] for f in FEATURES if seen[f] < 5}
    assert not rare, f"features (almost) never generated: {rare}"


def test_distinct_failures_keep_distinct_files(tmp_path, monkeypatch):
    """The last failure of each place overwrites its file; a failure raised elsewhere gets its
    own file."""
    monkeypatch.setenv("WARPWEAVE_REGRESSIONS", str(tmp_path))

    def model(n: int):
        return model_from_dict({"machine": {"warp_groups": [{"name": "g"}]},
                                "ops": [{"name": f"v{k}"} for k in range(n)]})

    def fail_here(n):
        with keep_counterexample("test_unit", "case", model(n)):
            raise AssertionError("first place")

    def fail_there(n):
        with keep_counterexample("test_unit", "case", model(n)):
            raise AssertionError("second place")

    @settings(max_examples=1, database=None)
    @given(st.just(None))
    def run(_):  # note() needs a hypothesis test
        for fail, n in ((fail_here, 3), (fail_there, 2), (fail_here, 1)):
            with pytest.raises(AssertionError):
                fail(n)

    run()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "failed-unit-case-failure2.json", "failed-unit-case.json"]
    assert len(load_model(tmp_path / "failed-unit-case.json").ops) == 1
    doc = json.loads((tmp_path / "failed-unit-case-failure2.json").read_text())
    assert [op["name"] for op in doc["ops"]] == ["v0", "v1"]
