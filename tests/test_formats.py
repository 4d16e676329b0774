"""Loading and writing model and schedule files; every bad input names file, key path and value."""

from __future__ import annotations

import copy
import json

import pytest

from warpweave.core.formats import (
    dumps,
    load_model,
    load_schedule,
    model_from_dict,
    model_to_dict,
    schedule_from_dict,
    schedule_to_dict,
)
from warpweave.core.schedule import Schedule
from warpweave.errors import InputError

BASE = {
    "format": "warpweave.model/1",
    "name": "m",
    "machine": {
        "name": "toy",
        "units": {"tc": 1, "sfu": 2, "off": 0},
        "memories": {"smem": 100},
        "warp_groups": [{"name": "g0", "warps": 4, "reg_limit": 200},
                        {"name": "g1", "warps": 1, "reg_limit": 40}],
        "variable_latency_group": "g1",
    },
    "ops": [
        {"name": "A", "cycles": 2, "uses": {"tc": 1}, "regs": 8, "footprint": {"smem": 30}},
        {"name": "B", "cycles": 3, "rrt": [{"sfu": 1}, {}, {"sfu": 2}], "spill_cost": 2},
        {"name": "C", "variable_latency": True, "async": True, "warps": 1},
    ],
    "edges": [
        {"src": "A", "dst": "B"},
        {"src": "B", "dst": "A", "distance": 2, "delay": 5, "kind": "order"},
        {"src": "C", "dst": "A", "blocking": True},
    ],
}


def bad(mutate) -> str:
    doc = copy.deepcopy(BASE)
    mutate(doc)
    with pytest.raises(InputError) as info:
        model_from_dict(doc)
    return str(info.value)


def test_round_trip_json_and_toml(tmp_path):
    model = model_from_dict(BASE)
    assert model.op("B").rrt == ((("sfu", 1),), (), (("sfu", 2),))
    assert model.op("A").rrt == ((("tc", 1),), (("tc", 1),))
    assert model.edges[0].delay == 2  # default: cycles of the source
    for suffix in ("json", "toml"):
        path = tmp_path / f"m.{suffix}"
        path.write_text(dumps(model_to_dict(model), toml=suffix == "toml"))
        assert load_model(path) == model


def test_defaults_follow_design_section_5():
    model = model_from_dict({"machine": BASE["machine"], "ops": [{"name": "X"}],
                             "edges": [{"src": "X", "dst": "X", "distance": 1}]}, "file-stem")
    x = model.op("X")
    assert (model.name, x.cycles, x.rrt, x.regs, x.spill_cost, x.warps, x.is_async) == \
        ("file-stem", 1, (), 0, 0, 0, False)
    e = model.edges[0]
    assert (e.delay, e.kind, e.blocking) == (1, "data", False)


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["ops"][0].update(color="red"), 'ops[0].color = "red": unknown key'),
    (lambda d: d["ops"][0]["uses"].update(tcc=1), 'ops[0].uses.tcc = "tcc": unknown unit'),
    (lambda d: d["ops"][1]["rrt"][2].update(xx=1), 'ops[1].rrt[2].xx = "xx": unknown unit'),
    (lambda d: d["ops"][0]["footprint"].update(hbm=1),
     'ops[0].footprint.hbm = "hbm": unknown memory'),
    (lambda d: d["edges"].append({"src": "A", "dst": "Z"}),
     'edges[3].dst = "Z": edge to a missing op'),
    (lambda d: d["ops"].append({"name": "A"}), "ops[3].name = \"A\": duplicate name 'A'"),
    (lambda d: d["machine"]["warp_groups"].append({"name": "g0"}),
     "machine.warp_groups[2].name = \"g0\": duplicate name"),
    (lambda d: d["ops"][0].update(cycles=-1), "ops[0].cycles = -1: must be >= 1"),
    (lambda d: d["ops"][0].update(regs=2.5), "ops[0].regs = 2.5: must be an integer"),
    (lambda d: d["ops"][0].update(regs=True), "ops[0].regs = true: must be an integer"),
    (lambda d: d["edges"][0].update(distance=-2), "edges[0].distance = -2: must be >= 0"),
    (lambda d: d["edges"][0].update(kind="anti"),
     'edges[0].kind = "anti": must be "data" or "order"'),
    (lambda d: d["ops"][0]["uses"].update(off=1),
     "ops[0].uses.off = 1: uses 1 of unit 'off' at once, which has capacity 0"),
    (lambda d: d["machine"].update(variable_latency_group="g9"),
     'machine.variable_latency_group = "g9": unknown warp group'),
    (lambda d: d["machine"]["units"].update(tc=-1), "machine.units.tc = -1: must be >= 0"),
    (lambda d: d["ops"][1].update(cycles=2),
     "ops[1].rrt = 3: 3 reservation rows for an op of 2 cycles"),
    (lambda d: d["ops"][2].update(warps=8), "ops[2].warps = 8: no warp group has that many warps"),
    (lambda d: d.update(format="other/2"), 'format = "other/2": unsupported format'),
    (lambda d: d.pop("machine"), "machine: missing"),
    (lambda d: d["ops"][0].pop("name"), "ops[0].name: missing"),
    (lambda d: d["edges"].append({"src": "A", "dst": "A", "delay": 1}),
     "edges: dependence cycle with distance 0 and delay 1 admits no schedule: A -> A"),
])
def test_bad_model_input_names_key_path_and_value(mutate, expected):
    assert expected in bad(mutate)


def test_zero_distance_cycle_is_printed():
    msg = bad(lambda d: d["edges"].append({"src": "B", "dst": "A", "delay": 0}))
    assert "delay 2 admits no schedule: A -> B -> A" in msg


def test_variable_latency_op_needs_a_group():
    msg = bad(lambda d: d["machine"].update(variable_latency_group=None))
    assert "ops[2].variable_latency = true: a variable-latency op needs" in msg


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"ops": [1, }')
    with pytest.raises(InputError, match=r"broken\.json: malformed JSON at line 1"):
        load_model(path)
    path.write_text(json.dumps({**BASE, "ops": [{"name": "A", "uses": {"tcc": 1}}]}))
    with pytest.raises(InputError) as info:
        load_model(path)
    assert str(info.value).startswith(f"{path}: ops[0].uses.tcc")
    with pytest.raises(InputError, match="cannot read"):
        load_model(tmp_path / "missing.json")
    (tmp_path / "bad.toml").write_text("ops = [")
    with pytest.raises(InputError, match="malformed TOML"):
        load_model(tmp_path / "bad.toml")


def test_schedule_round_trip_and_errors(tmp_path):
    model = model_from_dict(BASE)
    s = Schedule("m", 4, 9, {"A": 0, "B": 2, "C": 1}, {"A": "g0", "B": "g0", "C": "g1"})
    doc = schedule_to_dict(s, optimal=True, lower_bound=3)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    assert load_schedule(path, model) == s
    for change, expected in [
        ({"start": {"A": 0, "B": 2}}, "start.C: missing"),
        ({"start": {"A": 0, "B": 2, "C": 1, "Q": 3}}, 'start.Q = "Q": unknown op'),
        ({"group": {"A": "g0", "B": "g7", "C": "g1"}}, 'group.B = "g7": unknown warp group'),
        ({"I": 0}, "I = 0: must be >= 1"),
        ({"model": "other"}, "the schedule is for model 'other'"),
        ({"extra": 1}, "extra = 1: unknown key"),
    ]:
        with pytest.raises(InputError, match=expected):
            schedule_from_dict({**doc, **change}, model)


def test_schedule_length_defaults_to_tight():
    model = model_from_dict(BASE)
    s = schedule_from_dict({"I": 4, "start": {"A": 0, "B": 2, "C": 1},
                            "group": {"A": "g0", "B": "g0", "C": "g1"}}, model)
    assert s.L == 5  # B ends at 2 + 3
