"""The kernel library: every kernel builds and checks on every machine for a range of parameters,
graphs have the published shapes, the published strategies are valid schedules of the models (and
what breaks them is caught), and the CLI lists and builds kernels."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from warpweave.cli import main
from warpweave.core.bounds import bounds
from warpweave.core.formats import load_model, model_to_dict
from warpweave.core.registry import KERNELS
from warpweave.core.schedule import Schedule, straight_line
from warpweave.core.verify import verify
from warpweave.errors import InputError
from warpweave.kernels import build, kernel_spec, parse_params, published
from warpweave.kernels.fa4_fwd import emulated_columns
from warpweave.kernels.gemm import ring_reader
from warpweave.machines.inventory import check_inventory

from .conftest import EXAMPLES

PARAMS = {
    "fa-simplified": [{}],
    "fa3-fwd": [{}, {"subtiles": 2}, {"block_n": 64}, {"dtype": "fp8", "stages": 3},
                {"block_m": 128, "head_dim": 64}, {"block_m": 80}, {"inventory": "neutral"}],
    "fa4-fwd": [{}, {"block_n": 64}, {"stages": 2}, {"ex2_emu_freq": 8}, {"ex2_emu_freq": 0},
                {"dtype": "fp8"}, {"chunks": 4}, {"rescale": "never"},
                {"inventory": "neutral"}],
    "fa-bwd": [{}, {"subtiles": 2}, {"block_m": 64}, {"ps_stages": 2}, {"head_dim": 64},
               {"block_m": 80}, {"inventory": "neutral", "subtiles": 2}],
    "gemm": [{}, {"k_steps": 2}, {"stages": 3}, {"k_steps": 4, "stages": 6},
             {"dtype": "fp8", "block_k": 128}, {"subtiles": 2}, {"block_n": 80},
             {"inventory": "neutral"}],
}


def cases():
    for name in KERNELS.names():
        spec = kernel_spec(name)
        for machine in spec.machines or (None,):
            for params in PARAMS[name]:
                yield pytest.param(name, machine, params, id=f"{name}-{machine}-{params}")


def test_every_registered_kernel_has_parameter_cases():
    assert set(KERNELS.names()) == set(PARAMS)


@pytest.mark.parametrize("name, machine, params", list(cases()))
def test_kernel_builds_checks_and_has_sane_bounds(name, machine, params):
    model = build(name, machine, **params)       # check_model runs inside
    b = bounds(model)
    busiest = max(sum(op.total_use(u.name) for op in model.ops) for u in model.machine.units)
    assert b.res_mii == busiest                   # every unit has capacity 1
    assert b.lower >= b.res_mii >= 1
    assert b.min_length >= max(op.cycles for op in model.ops)
    assert b.i_upper >= b.lower


def test_fa_simplified_is_the_example_file():
    assert model_to_dict(build("fa-simplified")) == model_to_dict(
        load_model(EXAMPLES / "fa-simplified.json"))


def _shape(model):
    same = sum(1 for e in model.edges if e.distance == 0)
    carried = sum(1 for e in model.edges if e.distance and e.is_data)
    war = [e.distance for e in model.edges if e.kind == "order"]
    return len(model.ops), same, carried, war


def test_fa3_is_the_modular_eight_op_graph():
    # 8 ops; 13 edges: 9 same-iteration, 2 loop-carried, 2 write-after-read of the ring depth.
    assert _shape(build("fa3-fwd", stages=2)) == (8, 9, 2, [2, 2])
    assert _shape(build("fa3-fwd", stages=3)) == (8, 9, 2, [3, 3])


def test_fa4_is_the_modular_fourteen_op_graph_with_the_s_load_split_out():
    # Modular's 14 ops and 28 edges (18 same-iteration, 6 loop-carried, 4 write-after-read of
    # depth 4), with each tile's TMEM load of S its own op: +2 ops, +2 same-iteration edges each.
    assert _shape(build("fa4-fwd")) == (16, 22, 6, [4, 4, 4, 4])
    model = build("fa4-fwd")
    blocking = {(e.src, e.dst) for e in model.edges if e.blocking}
    assert {("qk0", "load_s0"), ("pv1", "rescale1"), ("load_k", "qk1")} <= blocking


def test_fa4_tmem_plan_allows_one_s_or_p_per_tile_beside_both_accumulators():
    model = build("fa4-fwd")
    cols = {op.name: op.footprint_in("tmem") for op in model.ops}
    assert cols["pv0"] + cols["pv1"] + cols["qk0"] + cols["qk1"] == 512
    assert cols["softmax0"] == cols["qk0"]      # P aliases S


@pytest.mark.parametrize("machine", ["h100", "b200"])
def test_fa_bwd_has_five_gemms_one_exponential_and_a_reduction(machine):
    model = build("fa-bwd", machine)
    gemms = [op.name for op in model.ops if op.total_use("tc")]
    assert sorted(gemms) == ["dk", "dp", "dq", "dv", "qk"]
    assert [op.name for op in model.ops if op.total_use("sfu")] == ["exp"]
    assert {(e.src, e.distance) for e in model.edges if e.src == e.dst} == {("dv", 1), ("dk", 1)}
    assert model.has_op("dq_store")


def test_fa_bwd_on_h100_accumulators_cannot_share_a_warpgroup():
    model = build("fa-bwd", "h100")
    limit = max(g.reg_limit for g in model.machine.warp_groups)
    assert model.op("dv").regs + model.op("dk").regs > limit


def test_subtiled_backward_splits_every_compute_op():
    model = build("fa-bwd", "b200", subtiles=2)
    assert {v for v in model.op_names if v.startswith("dq")} == {
        "dq0", "dq1", "dq_stage0", "dq_stage1", "dq_store0", "dq_store1"}


@given(st.integers(1, 8), st.integers(1, 12), st.integers(0, 7))
def test_gemm_ring_reader_is_the_step_stages_before(k_steps, stages, step):
    step %= k_steps
    reader, back = ring_reader(step, k_steps, stages)
    assert back * k_steps + step - reader == stages and 0 <= reader < k_steps


@pytest.mark.parametrize("name, params, needle", [
    ("fa3-fwd", {"subtiles": 3}, "one of 1, 2"),
    ("fa3-fwd", {"block_n": "wide"}, "must be an integer"),
    ("fa3-fwd", {"head_dim": 72}, "cannot be issued as MMAs"),
    ("fa-bwd", {"block_m": 20}, "cannot be issued as MMAs"),
    ("fa3-fwd", {"block_m": 256, "block_n": 256}, "registers per thread"),
    ("fa4-fwd", {"ex2_emu_freq": 3}, "must exceed"),
    ("fa4-fwd", {"block_m": 96}, "M = 64 or 128"),
    ("fa4-fwd", {"block_n": 512}, "registers per thread"),
    ("fa4-fwd", {"inventory": "fa4"}, "one of published, neutral"),
    ("gemm", {"nope": 1}, "no such parameter"),
    ("gemm", {"acc_stages": 3, "block_n": 256}, "exceed Tensor Memory"),
    ("gemm", {"subtiles": 2, "acc_stages": 2}, "exceed Tensor Memory"),
])
def test_bad_parameters_are_input_errors(name, params, needle):
    machine = "b200" if name not in ("fa3-fwd",) else None
    with pytest.raises(InputError, match=needle):
        build(name, machine, **params)


def test_fa4_emulates_exp2_where_its_source_does():
    # softmax.py apply_exp2_convert: fragments 1..2 of 4, pairs k with k % 16 >= 12
    assert emulated_columns(128, 16, 1) == 16          # FA4's default: 12.5%
    assert emulated_columns(128, 10, 1) == 24          # the 2-CTA setting (freq 10)
    assert emulated_columns(128, 0, 1) == 0
    assert emulated_columns(64, 16, 1) == 0            # only the first and last fragment


def test_fa4_row_sum_is_after_p_and_off_the_path_to_pv():
    model = build("fa4-fwd")
    into_pv = {e.src for e in model.in_edges("pv0")}
    assert "rowsum0" not in into_pv and "softmax0" in into_pv
    rowsum = model.op("rowsum0")
    carried = next(e for e in model.out_edges("rowsum0") if e.dst == "rowsum0")
    assert rowsum.cycles == 639 and carried.delay == 1691   # occupancy, then the result


def test_hand_offs_follow_where_the_value_lives():
    fa4 = build("fa4-fwd")
    edge = {(e.src, e.dst): e for e in fa4.edges}
    assert (edge["softmax0", "pv0"].handoff, edge["softmax0", "pv0"].handoff_local) == (92, 30)
    assert edge["rowmax0", "rescale0"].handoff == math.ceil(61 + 16.1)      # m, alpha: 1 KB
    assert edge["qk0", "load_s0"].handoff == 0          # the MMA's commit barrier
    gemm = build("gemm", "b200")
    chain = next(e for e in gemm.edges if (e.src, e.dst) == ("mma0", "mma1"))
    assert (chain.handoff, chain.handoff_local) == (92, 0)


def test_gemm_two_tiles_per_iteration_share_the_ring():
    model = build("gemm", "h100", subtiles=2, k_steps=2, stages=3)
    assert {"mma0_1", "mma1_1", "epi0", "epi1", "store1"} <= set(model.op_names)
    refill = {(e.src, e.dst, e.distance) for e in model.edges if e.kind == "order"
              and e.dst.startswith("load")}
    # global steps 0..3 (tile 0's two k-steps, then tile 1's) over a 3-slot ring
    assert ("mma1_0", "load0_1", 1) in refill and ("mma0_0", "load1_1", 0) in refill


def test_neutral_inventory_is_not_a_published_launch():
    for machine in ("h100", "b200"):
        m = build("gemm", machine, inventory="neutral").machine
        assert len({g.reg_limit for g in m.warp_groups if g.warps == 4}) == 1
        assert check_inventory(m.warp_groups) == 65536


def test_machine_and_kernel_errors():
    with pytest.raises(InputError, match="supports h100"):
        build("fa3-fwd", "b200")
    with pytest.raises(InputError, match="unknown kernel"):
        build("flash-attention-9")
    with pytest.raises(InputError, match="own machine"):
        build("fa-simplified", "h100")


def test_parse_params_types_values_and_rejects_bad_items():
    spec = kernel_spec("fa4-fwd")
    assert parse_params(spec, ["block_n=64", "dtype=fp8", "vl=w13"]) == {
        "block_n": 64, "dtype": "fp8", "vl": "w13"}
    for bad in (["block_n"], ["=3"], ["block_n=6.5"], ["color=red"]):
        with pytest.raises(InputError):
            parse_params(spec, bad)


# ---------------------------------------------------------------------------------------------
# Published strategies as schedules


def test_figure1_schedule_is_valid_and_pipelined(fa_model):
    s = published.figure1()
    assert verify(fa_model, s) == []
    q = straight_line(fa_model, s)
    # QK of the next iteration (S#1) issues at cycle 2, with the exp of this one (P#0).
    assert q.instance("S", 1).issue == q.instance("P", 0).issue == 2


def _realized(name, machine, params, strategy):
    model = build(name, machine, **params)
    schedule, why = published.realize(model, strategy(model))
    assert schedule is not None, why
    assert verify(model, schedule) == []
    return model, schedule


def test_fa3_pipeline_issues_next_qk_before_softmax_finishes_and_loads_on_producer():
    model, s = _realized("fa3-fwd", "h100", {}, published.fa3_pipeline)
    assert s.start["qk"] + s.I < s.start["softmax"] + model.op("softmax").cycles
    vl = model.machine.variable_latency_group
    assert s.group["load_k"] == s.group["load_v"] == vl
    assert all(s.group[v] != vl for v in model.op_names if not v.startswith("load"))


def test_fa3_subtiled_ping_pong_reaches_the_tensor_core_bound():
    model, s = _realized("fa3-fwd", "h100", {"subtiles": 2}, published.fa3_pipeline)
    assert s.I == bounds(model).res_mii == 2048
    assert s.group["softmax0"] != s.group["softmax1"]

    def window(v):
        a = s.start[v] % s.I
        return {(a + c) % s.I for c in range(model.op(v).cycles)}
    # tile 1's exponential runs under a GEMM of tile 0 (and the other way round)
    assert window("softmax1") & (window("qk0") | window("pv0"))
    assert window("softmax0") & (window("qk1") | window("pv1"))


def test_fa4_roles_are_a_valid_schedule():
    model, s = _realized("fa4-fwd", "b200", {}, published.fa4_roles)
    g = s.group
    assert g["load_k"] == model.machine.variable_latency_group
    assert len({g["qk0"], g["qk1"], g["pv0"], g["pv1"]}) == 1
    assert g["softmax0"] != g["softmax1"]
    assert g["rescale0"] == g["rescale1"] not in {g["softmax0"], g["softmax1"]}


def test_fa4_correction_on_the_softmax_warps_breaks_concurrency():
    """Twill paper 6.2.2: TMEM loads block, so the rescale cannot share the softmax warps - the
    same start times with rescale0 moved onto softmax 0's group are rejected."""
    model, s = _realized("fa4-fwd", "b200", {}, published.fa4_roles)
    moved = Schedule(s.model, s.I, s.L, s.start, {**s.group, "rescale0": s.group["softmax0"]})
    assert "concurrency" in {v.rule for v in verify(model, moved)}


@pytest.mark.parametrize("machine", ["h100", "b200"])
def test_published_backward_roles_are_valid(machine):
    _, s = _realized("fa-bwd", machine, {"subtiles": 2}, published.fa_bwd_roles)
    compute = {s.group["exp0"], s.group["exp1"]}
    assert len(compute) == 2
    if machine == "b200":     # FA4 bwd: a third group stages dQ for the reduction
        assert s.group["dq_stage0"] not in compute


@pytest.mark.parametrize("machine", ["h100", "b200"])
def test_published_gemm_is_valid_and_loads_on_the_producer(machine):
    model, s = _realized("gemm", machine, {}, published.gemm_producer_consumer)
    assert {s.group[v] for v in model.op_names if v.startswith("load")} == {
        model.machine.variable_latency_group}


def test_loads_off_the_variable_latency_group_are_rejected():
    model, s = _realized("fa3-fwd", "h100", {}, published.fa3_pipeline)
    wrong = Schedule(s.model, s.I, s.L, s.start, {**s.group, "load_k": s.group["qk"]})
    assert "variable_latency" in {v.rule for v in verify(model, wrong)}


# ---------------------------------------------------------------------------------------------
# CLI


def test_cli_lists_kernels_as_json(capsys):
    assert main(["kernels", "--json"]) == 0
    kernels = {k["name"]: k for k in json.loads(capsys.readouterr().out)}
    assert set(kernels) == set(KERNELS.names())
    assert kernels["fa-bwd"]["machines"] == ["h100", "b200"]
    assert kernels["fa4-fwd"]["params"]["stages"]["default"] == 4


def test_cli_lists_machines_with_sourced_figures(capsys):
    assert main(["machines", "--json"]) == 0
    machines = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert machines["b200"]["memories"]["tmem"]["capacity"] == 512
    assert all(f["source"] for m in machines.values() for f in m["figures"].values())


def test_cli_builds_a_kernel_into_a_model_file(tmp_path, capsys):
    out = tmp_path / "gemm.json"
    assert main(["build", "gemm", "--machine", "b200", "k_steps=2", "-o", str(out)]) == 0
    assert load_model(out) == build("gemm", "b200", k_steps=2)
    assert main(["build", "gemm", "k_steps=two"]) == 2
    assert "params.k_steps" in capsys.readouterr().err
