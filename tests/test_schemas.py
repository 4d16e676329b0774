"""The JSON Schemas shipped in the package (`warpweave/schemas/`) against every file the project
ships or writes: examples, benchmark models, regression models, built kernels, imported graphs,
solve and heuristic reports, IR problems.  The loaders stay the judges of bad input (one line
naming the file, key path and value); the schemas must reject what they reject."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import warpweave as ww
from warpweave.core.formats import (
    _EDGE_KEYS,
    _GROUP_KEYS,
    _MACHINE_KEYS,
    _MODEL_KEYS,
    _OP_KEYS,
    _SCHEDULE_KEYS,
    SCHEDULE_EXTRA_KEYS,
    model_from_dict,
    model_to_dict,
)
from warpweave.errors import InputError
from warpweave.schemas import SCHEMAS, schema

ROOT = Path(__file__).resolve().parents[1]
VALIDATORS = {name: Draft202012Validator(schema(name)) for name in SCHEMAS}


def valid(name: str, doc: dict) -> None:
    errors = sorted(VALIDATORS[name].iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:3]]


def test_the_schemas_are_valid_draft_2020_12():
    for name in SCHEMAS:
        Draft202012Validator.check_schema(schema(name))
        assert schema(name)["$id"] == f"warpweave.{name}/1"


def test_the_schemas_name_exactly_the_keys_the_loaders_read():
    m = schema("model")
    assert set(m["properties"]) == _MODEL_KEYS
    assert set(m["$defs"]["op"]["properties"]) == _OP_KEYS
    assert set(m["$defs"]["edge"]["properties"]) == _EDGE_KEYS
    assert set(m["$defs"]["machine"]["properties"]) == _MACHINE_KEYS
    assert set(m["$defs"]["machine"]["properties"]["warp_groups"]["items"]["properties"]) == \
        _GROUP_KEYS
    assert set(schema("schedule")["properties"]) == _SCHEDULE_KEYS | SCHEDULE_EXTRA_KEYS


def _files(*patterns: str) -> list[Path]:
    return sorted(p for pat in patterns for p in ROOT.glob(pat))


SHIPPED = [p for p in _files("examples/*.json", "benchmarks/models/*.json",
                             "tests/regressions/*.json") if "results" not in p.name]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_model_and_schedule_validates(path):
    doc = json.loads(path.read_text())
    valid("schedule" if "start" in doc or "I" in doc else "model", doc)


def test_every_built_kernel_validates():
    for name, spec in ww.list_kernels().items():
        for machine in spec.machines or (None,):
            valid("model", model_to_dict(ww.kernel(name, machine)))


def test_imported_graphs_validate():
    data = ROOT / "benchmarks" / "data"
    for path, fmt in ((data / "meta-tlx" / "case3_FA-ddg.json", "meta-ddg"),
                      (data / "meta-tlx" / "golden-fwd.curated_ddg.json", "meta-curated"),
                      (next((data / "hatschet").rglob("*.graphml")), "hatschet")):
        doc = model_to_dict(ww.import_graph(path, fmt))
        valid("model", doc)
        assert all("id" in op for op in doc["ops"])


def test_solve_and_heuristic_reports_and_the_ir_validate(tmp_path):
    model = ROOT / "examples" / "fa-simplified.json"
    r = ww.solve(model, isolate=False)
    valid("schedule", r.to_dict())
    valid("schedule", ww.heuristic(model).to_dict())
    none = ww.solve(model, isolate=False, max_stages=1, without=("completion",), time_limit=1e-6)
    valid("schedule", none.to_dict())

    from warpweave.core.constraints import constraint_set
    from warpweave.core.registry import ENCODINGS
    from warpweave.ir import Problem
    m = ww.load_model(model)
    for enc in ENCODINGS.names():
        view = ENCODINGS.get(enc)(m, 2, 2, constraint_set(), min_length=3)
        view.problem.write(tmp_path / f"{enc}.ir.json")
        doc = json.loads((tmp_path / f"{enc}.ir.json").read_text())
        valid("ir", doc)
        assert Problem.from_dict(doc).to_dict() == doc


BAD_MODELS = [
    ("ops[0].cycles = 0", lambda d: d["ops"][0].update(cycles=0)),
    ("ops[0].colour", lambda d: d["ops"][0].update(colour="red")),
    ("ops[0].rrt", lambda d: d["ops"][0].update(rrt=[{"tc": 1}])),
    ("edges[0].kind", lambda d: d["edges"][0].update(kind="control")),
    ("edges[0].distance = -1", lambda d: d["edges"][0].update(distance=-1)),
    ("machine.warp_groups[0].warps = 0", lambda d: d["machine"]["warp_groups"][0].update(warps=0)),
    ("ops[0].id = true", lambda d: d["ops"][0].update(id=True)),
    ("machine: missing", lambda d: d.pop("machine")),
]


@pytest.mark.parametrize("where, spoil", BAD_MODELS, ids=[b[0] for b in BAD_MODELS])
def test_bad_models_are_rejected_by_both_and_the_loader_names_the_key(where, spoil):
    doc = json.loads((ROOT / "examples" / "fa-simplified.json").read_text())
    doc["ops"][0]["uses"] = {"tc": 1}
    spoil(doc)
    assert not VALIDATORS["model"].is_valid(doc)
    with pytest.raises(InputError) as info:
        model_from_dict(doc)
    assert str(info.value).startswith(where.split(" =")[0].split(":")[0])
