"""Meta's recorded solutions read as warpweave schedules, and what our verifier says about them.

Findings pinned here (docs/importers.md discusses them): in their own normalized units every rule
of DESIGN section 3 holds except `concurrency`, and every concurrency witness is an op whose
normalized cost is 0 - they give such an op a zero-width window, our model gives every op at
least one cycle.  Mapped back to raw cycles by a uniform scale, the dependences that still fail are
exactly edges their normalization priced at 0.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from warpweave.core.formats import load_model, load_schedule
from warpweave.core.registry import CONSTRAINTS
from warpweave.core.schedule import Schedule
from warpweave.core.verify import verify
from warpweave.errors import InputError
from warpweave.importers.meta_curated import import_meta_curated
from warpweave.importers.meta_graph import node_id
from warpweave.importers.meta_prepared import (
    normalized_model,
    read_pool,
    recorded_case,
    recorded_schedule,
)

from .conftest import ROOT

META = ROOT / "benchmarks" / "data" / "meta-tlx"
MODELS = ROOT / "benchmarks" / "models"


def _generator():
    spec = importlib.util.spec_from_file_location("make_meta_models",
                                                  ROOT / "benchmarks" / "make_meta_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()
CASES = GENERATOR.CASES  # recorded case -> (golden graph, registers per thread)


def recorded(case):
    graph, regs = CASES[case]
    rec = recorded_case(META / f"golden-{graph}.curated_ddg.json",
                        META / f"prepared-{case}_prep1.json",
                        META / f"prepared-{case}_prep1.pool.json", regs)
    return rec.raw, rec.pool, rec.model, rec.schedule


@pytest.mark.parametrize("case", CASES)
def test_recorded_schedule_reads_their_fields(case):
    raw, pool, model, schedule = recorded(case)
    doc = json.loads((META / f"prepared-{case}_prep1.json").read_text())
    assert (schedule.I, schedule.L, schedule.stages) == (doc["ii"], doc["length"], doc["copies"])
    assert {node_id(op): t for op, t in schedule.start.items()} == \
        {int(k): v for k, v in doc["cycles"].items()}
    sets = {tuple(sorted(w)) for w in doc["warp_sets"].values()}
    assert len(model.machine.warp_groups) == len(sets) == doc["stats"]["num_warp_sets"]
    for op, group in schedule.group.items():
        assert model.machine.group(group).warps == len(doc["warp_sets"][str(node_id(op))])
    assert model.machine.group(model.machine.variable_latency_group).warps == 1  # their warp 0
    assert {g.reg_limit for g in model.machine.warp_groups} == {CASES[case][1]}


def test_normalized_model_uses_their_pool():
    raw, pool, model, _ = recorded("fwd_subtiled")
    edges = json.loads((META / "golden-fwd_subtiled.curated_ddg.json").read_text())
    edges = edges["loops"][0]["ddg"]["edges"]
    for i, (e, norm) in enumerate(zip(edges, model.edges, strict=True)):
        assert norm.delay == pool.edge.get(i, 0)
        assert e["src"] in (2, 3) or e["latency"] == 0 or i in pool.edge  # zeroed: streaming
    mma = model.op("tc_gen5_mma_7")
    assert (mma.cycles, mma.total_use("TC")) == (max(1, pool.node[7]), pool.node[7])
    assert model.op("local_alloc_4").cycles == 1 and pool.node[4] == 0


@pytest.mark.parametrize("case", CASES)
def test_our_verifier_on_their_schedules_in_their_units(case):
    """Only concurrency fails, and only because a zero-cost op occupies its group for a cycle."""
    _, pool, model, schedule = recorded(case)
    violations = verify(model, schedule)
    assert violations
    assert {v.rule for v in violations} == {"concurrency"}
    for v in violations:
        waiting, occupying = v.ops
        assert pool.node[node_id(occupying)] == 0
        assert model.op(occupying).cycles == 1
        assert schedule.group[waiting] == schedule.group[occupying]
    others = [r for r in CONSTRAINTS.names() if r != "concurrency"]
    assert verify(model, schedule, others) == []


@pytest.mark.parametrize("case", ["fwd_subtiled", "bwd"])
def test_in_raw_units_only_zero_priced_edges_fail(case):
    """Scaled by k = the largest raw/C' over positive edge entries, a dependence can only fail
    where their normalization priced a positive raw latency at 0 (streaming or floored)."""
    raw, pool, model, s = recorded(case)
    ratios = [raw.edges[i].delay / c for i, c in pool.edge.items() if c]
    k = int(-(-max(ratios) // 1))
    start = {op: t * k for op, t in s.start.items()}
    length = max(start[op.name] + op.cycles for op in raw.ops)
    scaled = Schedule(raw.name, s.I * k, length, start, s.group)
    failing = verify(raw.replace(machine=model.machine), scaled, ["dependence"])
    assert failing
    index = {(e.src, e.dst, e.distance): i for i, e in enumerate(raw.edges)}
    for v in failing:
        e = next(e for e in raw.edges if (e.src, e.dst) == v.ops)
        assert pool.edge.get(index[(e.src, e.dst, e.distance)], 0) == 0 and e.delay > 0


def test_solution_for_another_graph_is_refused():
    raw = import_meta_curated(META / "golden-fwd.curated_ddg.json")
    with pytest.raises(InputError, match=r"curated_ddg_sha256 = .*solved on another curated"):
        recorded_schedule(META / "prepared-bwd_prep1.json", raw,
                          META / "golden-fwd.curated_ddg.json")
    with pytest.raises(InputError, match=r'prepared-bwd_prep1.json: cycles.0 = "0": no op for'):
        recorded_schedule(META / "prepared-bwd_prep1.json", raw)
    sub = import_meta_curated(META / "golden-fwd_subtiled.curated_ddg.json")
    with pytest.raises(InputError, match=r"pool has no entry for this node"):
        normalized_model(sub, read_pool(META / "prepared-fwd_prep1.pool.json"))


def test_committed_models_are_what_the_generator_writes():
    expected = GENERATOR.models()
    assert sorted(expected) == sorted(p.name for p in MODELS.glob("meta-*.json"))
    for name, text in expected.items():
        assert (MODELS / name).read_text() == text, name


@pytest.mark.parametrize("case", CASES)
def test_committed_files_load_and_verify_through_the_file_formats(case):
    golden = load_model(MODELS / f"meta-golden-{case}.json")
    assert golden.name == f"golden-{case}"
    model = load_model(MODELS / f"meta-prepared-{case}.model.json")
    schedule = load_schedule(MODELS / f"meta-prepared-{case}.schedule.json", model)
    assert {v.rule for v in verify(model, schedule)} == {"concurrency"}
    results = json.loads((MODELS / "meta-recorded-results.json").read_text())["cases"][case]
    assert (results["ii"], results["length"]) == (schedule.I, schedule.L)
