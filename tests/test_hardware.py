"""Hardware facts live on the machine: its arch and its register rule, stated once and read by
the inventory check, the importers and codegen."""

from __future__ import annotations

import json

import attrs
import pytest

import warpweave as ww
from warpweave.cli import main
from warpweave.codegen.cuda import arch_for, layout, register_rule
from warpweave.codegen.lower import lower
from warpweave.core.formats import schedule_to_dict
from warpweave.core.registry import MACHINES
from warpweave.errors import InputError
from warpweave.importers.meta_b200 import check_reg_limit
from warpweave.machines import hardware
from warpweave.machines.gpu import MachineSpec
from warpweave.machines.inventory import SETMAXNREG


def test_the_rule_agrees_with_the_sourced_figures():
    for name, spec in MACHINES.load_all().items():
        if isinstance(spec, MachineSpec) and "registers_per_sm" in spec.figures:
            assert spec.registers.file == spec.figures["registers_per_sm"], name
            assert spec.registers.max_warps == spec.figures["max_warps_per_block"], name
            assert spec.registers.fixed == (spec.figures["max_regs_per_thread"],), name


def test_codegen_reads_the_arch_and_rule_from_the_machine():
    fa3, gemm = ww.kernel("fa3-fwd", "h100"), ww.kernel("gemm", "b200")
    assert (fa3.machine.arch, arch_for(fa3)) == ("sm_90a", "sm_90a")
    assert arch_for(gemm) == "sm_100a" and hardware(gemm.machine).name == "b200"
    # A model file's machine: its own arch key, else that of the registered machine of the
    # same name, else sm_90a; never a guess from the name.
    toy = ww.load_model({"machine": {"name": "blackwell-ish", "warp_groups": [{"name": "g"}]},
                         "ops": [{"name": "a"}]})
    assert hardware(toy.machine) is None and arch_for(toy) == "sm_90a"
    assert register_rule(toy) is SETMAXNREG
    named = toy.replace(machine=attrs.evolve(toy.machine, name="b200"))
    assert arch_for(named) == "sm_100a"
    assert arch_for(toy.replace(machine=attrs.evolve(toy.machine, arch="sm_100a"))) == "sm_100a"
    with pytest.raises(InputError, match=r'machine\.arch = "gfx942": not a CUDA target'):
        arch_for(toy.replace(machine=attrs.evolve(toy.machine, arch="gfx942")))


def test_one_register_rule_for_inventories_and_the_importer():
    assert check_reg_limit(255) == 255 and check_reg_limit(128) == 128
    with pytest.raises(InputError, match=r"--reg-limit = 100: setmaxnreg takes a multiple of 8 "
                                         r"in \[24, 256\] \(or 255\)"):
        check_reg_limit(100)
    with pytest.raises(InputError, match=r"reg_limit = 100: group a: setmaxnreg"):
        ww.kernel("gemm", "h100", groups="a:4:100,b:1:24")


# A model file's machine follows the same rule: the limit a schedule is proven with is one the
# code can have (issue 16).  `fa_doc` is examples/fa-simplified.json on other machines.
def fa_doc(machine: dict, *groups: tuple[str, int, int]) -> dict:
    return {"name": "fa", "machine": {"units": {"tc": 1, "sfu": 1}, **machine, "warp_groups": [
        {"name": n, "warps": w, "reg_limit": r} for n, w, r in groups]},
        "ops": [{"name": "S", "uses": {"tc": 1}}, {"name": "P", "uses": {"sfu": 1}},
                {"name": "O", "uses": {"tc": 1}}],
        "edges": [{"src": "S", "dst": "P"}, {"src": "P", "dst": "O"},
                  {"src": "O", "dst": "O", "distance": 1}]}


@pytest.mark.parametrize("machine", [{"name": "h100"}, {"name": "toy", "arch": "sm_90a"},
                                     {"name": "b200"}, {"name": "toy", "arch": "sm_100a"}])
def test_a_model_file_limit_follows_the_machines_rule(tmp_path, capsys, machine):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(fa_doc(machine, ("g0", 4, 100))))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"warpweave: error: {path}: machine.warp_groups[0].reg_limit = 100: group g0 (the "
        "register rule of "), err
    assert err[0].endswith("setmaxnreg takes a multiple of 8 in [24, 256] (or 255)")
    for allowed in (104, 255, 24):
        ww.load_model(fa_doc(machine, ("g0", 4, allowed)))
    with pytest.raises(InputError, match=r"warp_groups\[1\]\.reg_limit = 1000: group g1"):
        ww.load_model(fa_doc(machine, ("g0", 4, 240), ("g1", 4, 1000)))


def test_a_machine_of_its_own_has_no_rule_to_break():
    for limit in (0, 3, 100, 1000):
        m = ww.load_model(fa_doc({"name": "toy"}, ("g0", 4, limit)))
        assert register_rule(m) is SETMAXNREG and m.machine.warp_groups[0].reg_limit == limit


def fa_layout(*groups: tuple[str, int, int]):
    m = ww.load_model(fa_doc({"name": "toy"}, *groups))
    names = [g[0] for g in groups]
    s = ww.solve(m, normalize="off").schedule
    s = attrs.evolve(s, group={v: names[i % len(names)] for i, v in enumerate("SPO")})
    assert ww.verify(m, s) == []
    return m, s, layout(m, lower(m, s))


def test_codegen_rounds_a_toy_limit_up_never_down():
    """On a machine without a rule, a limit setmaxnreg cannot set is rounded up to the next one
    it can, while the settings fit the register file (100 once became 96: fewer registers than
    the schedule was proven with)."""
    _, _, lay = fa_layout(("g0", 4, 100))
    assert lay.hw_regs == (104,) and lay.short == ()
    assert "setmaxnreg 104 for a register limit of 100" in " ".join(lay.notes)
    _, _, lay = fa_layout(("a", 4, 100), ("b", 4, 50))
    assert lay.hw_regs == (104, 56) and lay.short == ()
    _, _, lay = fa_layout(("a", 4, 255), ("b", 4, 255))   # 255: all a thread can address
    assert lay.hw_regs == (256, 256) and lay.short == ()   # = the 64K file exactly
    _, _, lay = fa_layout(("g0", 4, 3))
    assert lay.hw_regs == (24,) and lay.short == ()


def test_codegen_refuses_fewer_registers_than_proven():
    _, _, lay = fa_layout(("g0", 4, 1000))
    assert lay.short == ("warp group 0: register limit 1000 > 256, the most setmaxnreg sets",)
    _, _, lay = fa_layout(("a", 4, 255), ("b", 4, 255), ("c", 4, 255))
    assert lay.short == ("setmaxnreg [256, 256, 256] x 128 threads = 98304 registers > the "
                         "65536-register file",)
    assert sum(lay.hw_regs) * 128 <= 65536   # the printed kernel still launches


@pytest.mark.parametrize("groups, figures", [
    ((("g0", 4, 1000),), "warp group 0: register limit 1000 > 256, the most setmaxnreg sets"),
    ((("a", 4, 255), ("b", 4, 255), ("c", 4, 255)),
     "setmaxnreg [256, 256, 256] x 128 threads = 98304 registers > the 65536-register file"),
])
def test_emit_fails_with_the_figures(tmp_path, capsys, groups, figures):
    m, s, _ = fa_layout(*groups)
    (tmp_path / "m.json").write_text(json.dumps(fa_doc({"name": "toy"}, *groups)))
    (tmp_path / "s.json").write_text(json.dumps(schedule_to_dict(s)))
    args = ["emit", str(tmp_path / "m.json"), "--schedule", str(tmp_path / "s.json"),
            "--target", "cuda", "--no-compile"]
    assert main([*args, "--out", str(tmp_path / "o")]) == 1
    assert (f"FAILED: the plan exceeds a limit ({figures}); the files are written for "
            "inspection") in capsys.readouterr().err
    assert (tmp_path / "o" / "fa.cu").exists()
    assert main([*args, "--json", "--out", str(tmp_path / "o2")]) == 1
    assert json.loads(capsys.readouterr().out)["over_limits"] == [figures]
    e = ww.emit(m, s, out=tmp_path / "o3", target="cuda", compile=False)
    assert e.over_limits() == [figures]
