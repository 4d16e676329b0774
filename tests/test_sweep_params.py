"""The kernel parameters a sweep varies: tile aliases (tile_m / tile_n), the useful work each
kernel states, and impossible points rejected with one clear line before any solve."""

from __future__ import annotations

import pytest

from warpweave.errors import InputError
from warpweave.kernels import build, kernel_spec, parse_params
from warpweave.machines import machine_spec

WORK = [("fa-bwd", "h100", {}), ("fa-bwd", "h100", {"tile_m": 80}), ("fa-bwd", "b200", {}),
        ("fa-bwd", "h100", {"subtiles": 2}), ("fa3-fwd", "h100", {"subtiles": 2}),
        ("fa4-fwd", "b200", {"block_n": 64}), ("gemm", "h100", {"k_steps": 3}),
        ("gemm", "b200", {"tile_n": 128, "dtype": "fp16"})]


@pytest.mark.parametrize("name, machine, params", WORK)
def test_stated_work_is_the_tensor_core_work_of_the_model(name, machine, params):
    """A kernel's FLOPs per iteration equal the cycles its model holds the tensor core times the
    machine's 16-bit rate: the formula and the builder describe the same GEMMs (the cost model
    charges 2mnk / rate cycles per MMA, rounded up; these tiles divide exactly)."""
    spec = kernel_spec(name)
    model = spec.build(machine, **params)
    busy = sum(n for op in model.ops for _, unit, n in op.usage() if unit == "tc")
    rate = machine_spec(machine).costs.f["tc_flops_16bit"]
    assert spec.flops(machine, params) == busy * rate


def test_a_kernel_without_work_states_none():
    assert kernel_spec("fa-simplified").flops(None, {}) is None


def test_tile_aliases_build_the_same_model():
    assert build("fa-bwd", "h100", tile_m=80, tile_n=64) == \
        build("fa-bwd", "h100", block_m=80, block_n=64)
    assert parse_params(kernel_spec("gemm"), ["tile_k=32", "tile_m=64"]) == \
        {"block_k": 32, "block_m": 64}


@pytest.mark.parametrize("items, message", [
    (["tile_m=80", "block_m=64"], "given twice (as tile_m and block_m)"),
    (["tile_m=80", "tile_m=64"], "given twice"),
    (["tile_q=80"], "has no such parameter"),
])
def test_bad_parameters_are_one_line(items, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build("fa-bwd", "h100", **parse_params(kernel_spec("fa-bwd"), items))


def test_non_power_of_two_tiles_build():
    model = build("fa-bwd", "h100", tile_m=80)
    assert model.op("qk").regs == 80   # S: 80 x 128 fp32 over a warpgroup's 128 threads


@pytest.mark.parametrize("params, message", [
    ({"tile_n": 512}, "smem_reserved = 262144: reserves more than the 232448 bytes of shared "
                      "memory a block may use on h100"),
    ({"max_regs": 300}, "a register budget over the 256 registers a thread can have"),
    ({"groups": "w0:1:24,wg1:4:256,wg2:4:256"}, "68608 registers .* more than the "
                                                "65536-register file"),
])
def test_impossible_points_are_rejected_when_built(params, message):
    with pytest.raises(InputError, match=message):
        build("fa-bwd", "h100", **params)


MMA_RULE = ("cannot be issued as MMAs: needs M or N a multiple of 64, the other of 8, and K a "
            "multiple of 16 for bf16")


@pytest.mark.parametrize("name, machine, params, line", [
    # fa-bwd's dV / dK GEMMs are block_n x head_dim x block_m: a 72-row Q tile is their K
    ("fa-bwd", "h100", {"tile_m": 72}, "params.block_m = 72: the 128x128x72 GEMM " + MMA_RULE
     + " (block_n=128, head_dim=128, block_m=72)"),
    ("fa-bwd", "h100", {"head_dim": 72}, "params.head_dim = 72: the 64x128x72 GEMM " + MMA_RULE
     + " (block_m=64, block_n=128, head_dim=72)"),
    # subtiles=2: the GEMMs' N is half the K/V tile; the error gives the value as set
    ("fa-bwd", "b200", {"block_n": 136, "subtiles": 2}, "params.block_n = 136: the 128x68x128 "
     "GEMM " + MMA_RULE + " (block_m=128, block_n/2=68, head_dim=128)"),
    ("fa3-fwd", "h100", {"head_dim": 72}, "params.head_dim = 72: the 64x128x72 GEMM " + MMA_RULE
     + " (block_m=64, block_n=128, head_dim=72)"),
    ("gemm", "h100", {"tile_n": 100}, "params.block_n = 100: the 128x100x64 GEMM " + MMA_RULE
     + " (block_m=128, block_n=100, block_k=64)"),
])
def test_a_gemm_that_cannot_be_issued_names_the_parameter_and_its_value(name, machine, params,
                                                                        line):
    with pytest.raises(InputError) as info:
        build(name, machine, **params)
    assert str(info.value) == line


@pytest.mark.parametrize("name, machine, params, line", [
    ("fa-bwd", "h100", {"tile_m": 1024}, 'params = {"block_m": 1024, "block_n": 128, "head_dim": '
     '128}: fa-bwd: load_q needs 266240 of smem, more than its capacity 166912: use a smaller '
     'tile'),
    ("fa3-fwd", "h100", {"tile_m": 256, "tile_n": 256}, 'params = {"block_m": 256, "block_n": '
     '256, "head_dim": 128}: fa3-fwd: qk holds 512 registers per thread, more than any group of '
     'the inventory (240): use a smaller tile or a larger register budget'),
    ("gemm", "h100", {"tile_m": 512, "tile_n": 256}, 'params = {"block_m": 512, "block_n": 256, '
     '"block_k": 64}: gemm: mma0 holds 1024 registers per thread, more than any group of the '
     'inventory (240): use a smaller tile or a larger register budget'),
])
def test_a_tile_too_large_for_the_machine_names_the_tile_parameters(name, machine, params, line):
    """The error is on the kernel's tile parameters and their values (not on an op's name)."""
    with pytest.raises(InputError) as info:
        build(name, machine, **params)
    assert str(info.value) == line


def test_an_inventory_without_a_group_of_an_ops_warps_is_an_input_error():
    # qk (a wgmma) runs on 4 warps; every group here has 1 (was a ValueError from max([]))
    with pytest.raises(InputError, match="no warp group has that many warps"):
        build("fa3-fwd", "h100", groups="w0:1:200,w1:1:200")
