"""The plugin, installed (`pip install -e examples/plugins/warpweave-cdna3`), seen through
warpweave's own doors: the registries and the command line list it, every backend family finds
the same optimum on its kernel, `verify` enforces its constraint, and `crosscheck` agrees."""

from __future__ import annotations

import pytest
from warpweave_cdna3.constraint import LdsCopyWave, lds_copies

import warpweave as ww
from warpweave.cli import main
from warpweave.core.registry import CONSTRAINTS, ENCODINGS, backend
from warpweave.core.schedule import Schedule
from warpweave.errors import InputError


@pytest.fixture(scope="module")
def gemm():
    return ww.kernel("cdna3-gemm", "mi300x")


@pytest.fixture(scope="module")
def solved(gemm):
    return ww.solve(gemm)


@pytest.mark.parametrize("command, entry", [("machines", "mi300x (gfx942)"),
                                            ("constraints", "lds_copy_wave"),
                                            ("kernels", "cdna3-gemm: ")])
def test_the_commands_list_the_plugin(capsys, command, entry):
    assert main([command]) == 0
    assert entry in capsys.readouterr().out


def test_the_machine_states_its_hardware(gemm):
    spec = ww.list_machines()["mi300x"]
    assert spec.registers.lanes == 64 and spec.registers.high == 512
    assert gemm.machine.arch == "gfx942" and gemm.machine.variable_latency_group is None
    assert {m.name: m.capacity for m in gemm.machine.memories} == {"lds": 65536}
    assert all(f.source in ("rocm-specs", "rocm-mi300", "llvm-amdgpu", "derived")
               for f in spec.figures)
    with pytest.raises(InputError, match=r"reg_limit = 300: group a: VGPR allocation"):
        ww.kernel("cdna3-gemm", "mi300x", groups="a:4:300,b:4:256")


@pytest.mark.parametrize("backend, encoding", [("highs", "integer"), ("z3", "integer"),
                                               ("sat", "compact")])
def test_every_family_finds_the_same_optimum(gemm, solved, backend, encoding):
    # I is the vector-memory path's ResMII: proven in raw cycles whatever the units solved in
    assert solved.claim["I_optimal"] and solved.I == 3948
    other = ww.solve(gemm, backend=backend, encoding=encoding)
    assert (other.I, other.claim["I_optimal"]) == (solved.I, True)


def test_the_rule_binds_and_verify_reports_it(gemm, solved):
    s = solved.schedule
    for c in lds_copies(gemm):
        assert s.group[c] == s.group[c.replace("copy", "mfma")]
    moved = Schedule(s.model, s.I, s.L, dict(s.start),
                     {**s.group, "copy0": "wg1" if s.group["copy0"] == "wg0" else "wg0"})
    violations = ww.verify(gemm, moved)
    assert [v.rule for v in violations if v.rule == LdsCopyWave.name] == [LdsCopyWave.name]
    assert LdsCopyWave().check(gemm, moved)[0].ops == ("copy0", "mfma0")
    assert LdsCopyWave().check(gemm, s) == []


def feasible_pinned(model, schedule, constraints) -> bool:
    """The problem the solver gets at the schedule's (I, S), holding `constraints` (objects),
    with its start times, groups and length pinned: satisfiable?  (docs/plugins.md, "Pin a
    schedule".)  Without symmetry breaking, which could exclude a schedule by its group names."""
    view = ENCODINGS.get("integer")(model, schedule.I, schedule.stages, constraints,
                                    symmetry=False)
    pins = view.pin(schedule)
    return False not in pins and backend("cpsat").solve(view.problem,
                                                         assumptions=pins).status.has_solution


def test_encode_binds_the_solver(gemm, solved):
    """On its own kernel the rule never changes the optimum (I is the copy path's ResMII and the
    optimum keeps each copy with its MFMA anyway), so nothing there shows that `encode` states
    it.  Pinned: the optimum satisfies every encoded rule; moving copy0 away from its MFMA
    breaks no other rule, and only `lds_copy_wave`'s clauses make that problem infeasible."""
    s = solved.schedule
    moved = Schedule(s.model, s.I, s.L, dict(s.start),
                     {**s.group, "copy0": "wg1" if s.group["copy0"] == "wg0" else "wg0"})
    every = [CONSTRAINTS.get(name)() for name in CONSTRAINTS.names()]
    others = [c for c in every if c.name != LdsCopyWave.name]
    assert len(others) == len(every) - 1
    assert feasible_pinned(gemm, s, every)
    assert feasible_pinned(gemm, moved, others)
    assert not feasible_pinned(gemm, moved, every)
    assert feasible_pinned(gemm, s, [LdsCopyWave()])
    assert not feasible_pinned(gemm, moved, [LdsCopyWave()])


def test_the_ping_pong_splits_the_tiles_over_the_wave_groups():
    r = ww.solve(ww.kernel("cdna3-gemm", "mi300x", tiles=2))
    groups = {t: {r.schedule.group[op.name] for op in r.model.ops if op.name[4:].startswith(t)}
              for t in ("0_", "1_")}
    assert r.claim["I_optimal"] and all(len(g) == 1 for g in groups.values())
    assert groups["0_"] != groups["1_"]


def test_crosscheck_agrees(capsys):
    assert main(["crosscheck", "cdna3-gemm", "--backends", "cpsat,highs,z3,cvc5",
                 "--encodings", "integer"]) == 0
    assert "all finished runs agree" in capsys.readouterr().out


def test_a_model_without_copies_is_untouched():
    fa = ww.kernel("fa-simplified")
    assert lds_copies(fa) == []
    assert LdsCopyWave().check(fa, ww.solve(fa, isolate=False).schedule) == []


def test_the_shared_machine_parameters_reach_the_plugin_kernel():
    """Every kernel on a registered machine takes the machine parameters, `inventory` included;
    mi300x states no neutral inventory, which is an input error naming it."""
    assert ww.kernel("cdna3-gemm", "mi300x", inventory="published").machine.name == "mi300x"
    with pytest.raises(InputError, match="no neutral inventory"):
        ww.kernel("cdna3-gemm", "mi300x", inventory="neutral")
