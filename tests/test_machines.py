"""Machines: registry, the setmaxnreg inventory rule, the cost model against its sources, and cost
normalization (the section 5.2 ILP, solved with the cbc backend) with raw re-verification.
"""

from __future__ import annotations

import json
import math
import re

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpweave.cli import main
from warpweave.core.formats import model_from_dict
from warpweave.core.model import Edge, Machine, Memory, Model, Op, Unit, WarpGroup
from warpweave.core.registry import MACHINES
from warpweave.core.schedule import Schedule
from warpweave.core.verify import verify
from warpweave.errors import InputError
from warpweave.kernels import build, kernel_spec, published
from warpweave.kernels.attention import tile_params
from warpweave.machines import machine_spec
from warpweave.machines.costs import FORMULAS
from warpweave.machines.figures import SOURCES
from warpweave.machines.gpu import NEUTRAL_VL
from warpweave.machines.inventory import check_inventory, parse_groups
from warpweave.machines.normalize import (
    by_unit,
    normalization_problem,
    normalize,
    registry_solver,
)

from .conftest import ROOT

CBC = registry_solver("cbc")


# ---------------------------------------------------------------------------------------------
# Registry and machines


@pytest.mark.parametrize("name", ["h100", "b200"])
def test_registered_machine_builds_with_no_arguments(name):
    machine = MACHINES.get(name)()
    assert isinstance(machine, Machine)
    assert machine.memory("smem").capacity == 232448
    assert {"tc", "tma", "sfu", "alu"} <= {u.name for u in machine.units}
    assert machine.variable_latency_group in {g.name for g in machine.warp_groups}


def test_b200_has_tensor_memory_and_h100_not():
    b200, h100 = MACHINES.get("b200")(), MACHINES.get("h100")()
    assert b200.memory("tmem").capacity == 512 and "tmem" in {u.name for u in b200.units}
    assert "tmem" not in {m.name for m in h100.memories}


def test_model_file_may_name_a_registered_machine():
    doc = {"machine": "h100", "ops": [{"name": "a", "uses": {"tc": 1}}]}
    assert model_from_dict(doc).machine == MACHINES.get("h100")()


def test_default_inventories_follow_the_published_launches():
    # FA3: 24 + 240 + 240 per thread over three warpgroups; FA4: 192 + 192 + 80 + 48.
    assert check_inventory(MACHINES.get("h100").groups) == 128 * (24 + 240 + 240)
    assert check_inventory(MACHINES.get("b200").groups) == 65536


@pytest.mark.parametrize("groups, needle", [
    ("a:4:240,b:4:240,c:4:40", "group c"),                    # 64K exceeded at c
    ("a:4:256,b:4:256,c:1:24", "group c"),                 # exactly full, then c
    ("a:1:48,b:1:56", "shares a warpgroup with a"),           # setmaxnreg is per warpgroup
    ("a:4:250", "multiple of 8"),
    ("a:4:16", "multiple of 8"),
    ("a:6:24", "1-4 warps, or a multiple of 4"),
    (",".join(f"g{i}:4:24" for i in range(9)), "more than 32"),
])
def test_inventory_that_breaks_the_rules_is_an_input_error_naming_the_group(groups, needle):
    with pytest.raises(InputError, match=needle):
        MACHINES.get("h100")(groups=groups)


def test_small_groups_pack_into_one_warpgroup_and_big_ones_start_a_new_one():
    # w0 (1 warp) opens warpgroup 0, wg1 skips to warpgroup 1: three warpgroups in all.
    groups = parse_groups("w0:1:24,wg1:4:240,w1:1:24")
    assert check_inventory(groups) == 128 * (24 + 240 + 24)


@pytest.mark.parametrize("text", ["a:4", "a:x:24", ":4:24"])
def test_bad_group_text_is_an_input_error(text):
    with pytest.raises(InputError):
        parse_groups(text)


def test_max_regs_caps_every_group_and_smem_reservation_shrinks_shared_memory():
    m = MACHINES.get("b200")(max_regs=100, smem_reserved=1000)
    assert all(g.reg_limit <= 96 for g in m.warp_groups)
    assert m.memory("smem").capacity == 232448 - 1000
    with pytest.raises(InputError, match="not a group"):
        MACHINES.get("b200")(variable_latency_group="nope")
    with pytest.raises(InputError, match="reserves more"):
        MACHINES.get("b200")(smem_reserved=10 ** 6)


DOC = ROOT / "docs" / "machines.md"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _documented_figures() -> dict[str, dict[str, list[str]]]:
    """docs/machines.md's figure tables: machine -> name -> the row's cells after the name
    (value, unit, source, place, estimate, note)."""
    out: dict[str, dict[str, list[str]]] = {}
    machine = None
    for line in DOC.read_text().splitlines():
        if line.startswith("#### "):
            machine = line[5:].strip()
        if machine and re.match(r"\| `\w+` \|", line):
            name, *rest = _cells(line)
            out.setdefault(machine, {})[name.strip("`")] = rest
    return out


def _table(heading: str) -> list[list[str]]:
    """The rows (cells, header and rule left out) of the first table under `heading`."""
    lines = DOC.read_text().splitlines()
    rows: list[list[str]] = []
    for line in lines[lines.index(heading) + 1:]:
        if line.startswith("|"):
            rows.append(_cells(line))
        elif rows:
            break
    return rows[2:]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def test_every_figure_in_docs_is_the_one_the_code_uses():
    documented = _documented_figures()
    for name in ("h100", "b200"):
        figures = {f.name: f for f in machine_spec(name).figures}
        assert set(documented[name]) == set(figures), name
        for fname, cells in documented[name].items():
            f = figures[fname]
            assert cells == [_number(f.value), f.unit, f.source, f.place,
                             "yes" if f.estimate else "", f.note], (name, fname)
            assert f.source in SOURCES
            assert f.place or f.source == "derived" or f.estimate or f.note, (name, fname)


def test_fa4_parameter_table_gives_the_kernels_defaults_and_launch():
    rows = _table("### Kernel parameters taken from FA4's source")
    spec = kernel_spec("fa4-fwd")
    params = {p.name: p for p in spec.params}
    documented = {r[0].strip("`"): r[1].strip("`") for r in rows if r[0].startswith("`")}
    # Every parameter of FA4's own (the tile parameters are the attention kernels' shared ones).
    assert set(documented) == set(params) - {p.name for p in tile_params(128, 128, 4)}
    for name, default in documented.items():
        assert default == str(params[name].default), name
    # The launch: the 4-warp groups' limits, then the single warps' (one warpgroup, one limit).
    groups = machine_spec("b200").groups
    limits = [g.reg_limit for g in groups if g.warps == 4] + \
        sorted({g.reg_limit for g in groups if g.warps < 4})
    assert next(r[1] for r in rows if r[0] == "launch") == " / ".join(map(str, limits))


def _inventory(cell: str) -> tuple[list[tuple[str, int, int]], str]:
    """"`a`, `b` 4 warps / 240, `w1`-`w3` 1 warp / 32 (`w3` variable latency)" ->
    ([(name, warps, registers), ...], the variable-latency group)."""
    groups = []
    for names, warps, regs in re.findall(r"((?:`\w+`(?:, |-))*`\w+`) (\d+)(?: warps?)? / (\d+)",
                                         cell):
        listed = re.findall(r"`(\w+)`", names)
        if "`-`" in names:
            (prefix, lo), (_, hi) = (re.fullmatch(r"(\D+)(\d+)", n).groups() for n in listed)
            listed = [f"{prefix}{i}" for i in range(int(lo), int(hi) + 1)]
        groups += [(n, int(warps), int(regs)) for n in listed]
    return groups, re.search(r"\(`(\w+)` variable latency\)", cell)[1]


def _registers(cell: str) -> int:
    """"128 x (24 + 240 + 240) = 64512": the stated total, checked against its sum."""
    expression, total = cell.split(" = ")
    assert re.fullmatch(r"[\d ()+x]+", expression)
    assert eval(expression.replace(" x ", " * ")) == int(total), cell
    return int(total)


def test_inventory_table_gives_each_machines_published_and_neutral_groups():
    rows = _table("## What a machine is")
    assert rows and [r[0] for r in rows if "inventory" in r[0] or "registers" in r[0]] == [
        "published inventory (default)", "registers at those limits",
        "neutral inventory (`inventory=neutral`)", "registers at those limits"]
    rows = [r for r in rows if "inventory" in r[0] or "registers" in r[0]]
    for column, name in ((1, "h100"), (2, "b200")):
        spec = machine_spec(name)
        cell = [r[column] if r[column] != "the same" else r[1] for r in rows]
        published = _inventory(cell[0])
        assert published == ([(g.name, g.warps, g.reg_limit) for g in spec.groups],
                             spec.variable_latency_group), name
        assert _registers(cell[1]) == check_inventory(spec.groups), name
        assert _inventory(cell[2]) == ([(g.name, g.warps, g.reg_limit) for g in spec.neutral],
                                       NEUTRAL_VL), name
        assert _registers(cell[3]) == check_inventory(spec.neutral), name


def test_machines_json_lists_every_cost_with_its_figures_sources_and_places(capsys):
    assert main(["machines", "--json"]) == 0
    b200 = next(m for m in json.loads(capsys.readouterr().out) if m["name"] == "b200")
    assert set(b200["costs"]) == set(FORMULAS)
    mma = b200["costs"]["gemm"]["figures"]["mma_latency_k64"]
    assert (mma["value"], mma["source"]) == (559, "meta-nvlat") and "NVLatencyModel" in \
        mma["place"]
    assert all(f["source"] for c in b200["costs"].values() for f in c["figures"].values())


# ---------------------------------------------------------------------------------------------
# The cost model against its sources


def test_gemm_occupancy_from_tensor_core_rate():
    h, b = machine_spec("h100").costs, machine_spec("b200").costs
    # "a 128x128x128 GEMM on Hopper - roughly 1000 cycles" (Twill paper 5.2): 2 * 128^3 / 4096.
    assert h.gemm(128, 128, 128).busy == 1024
    assert b.gemm(128, 64, 128).busy == 256          # Meta's measured occupancy
    assert b.gemm(128, 128, 128, "fp8").busy == 256


def test_b200_gemm_latency_follows_k_as_meta_measured():
    b = machine_spec("b200").costs
    assert b.gemm(128, 128, 128).latency == b.gemm(64, 128, 128).latency == 900
    assert b.gemm(128, 128, 64).latency == b.gemm(128, 256, 64).latency == 559
    assert b.gemm(128, 64, 256).latency == 900     # K >= 128: NVLatencyModel::getMMALatency


def _ddg_mmas():
    """Every tcgen05 MMA of Meta's shipped dependence graphs: ((M, N, K), latency, occupancy)."""
    for path in sorted((ROOT / "benchmarks" / "data" / "meta-tlx").glob("case*-ddg.json")):
        doc = json.loads(path.read_text())
        ops = doc["ops"]
        for loop in doc["loops"]:
            for n in loop["ddg"]["nodes"]:
                if n["op_kind"] != "ttng.tc_gen5_mma":
                    continue
                shapes = []
                for operand in ops[n["op_ref"]]["operands"][:2]:
                    types = ops[operand["op"]]["result_types"]
                    t = types[operand.get("result", 0)]
                    shapes.append([int(x) for x in re.search(r"<(\d+)x(\d+)x", t).groups()])
                (m, k), (_, nn) = shapes
                yield path.name, (m, nn, k), n["latency"], n["occupancy"]


def test_every_mma_of_metas_graphs_gets_its_measured_latency_and_occupancy():
    b = machine_spec("b200").costs
    seen = 0
    for name, (m, n, k), latency, occupancy in _ddg_mmas():
        phase = b.gemm(m, n, k, "fp16")
        if phase.busy <= latency:      # the graphs cap occupancy at the latency
            assert (phase.latency, phase.busy) == (latency, occupancy), (name, m, n, k)
            seen += 1
    assert seen >= 10


@pytest.mark.parametrize("kb, measured", [(16, 530), (32, 663), (64, 925)])
def test_tma_load_line_is_within_one_percent_of_each_measurement(kb, measured):
    got = machine_spec("b200").costs.tma_load(kb * 1024).latency
    assert abs(got - measured) <= 0.01 * measured


def test_exponential_reduction_and_tmem_figures():
    b = machine_spec("b200").costs
    assert b.exp(128 * 128).busy == 1024                 # 16 MUFU ops per clock per SM
    assert b.tmem_load(128 * 128).latency == 532         # measured 128x128
    assert b.tmem_load(128 * 64).busy == 128             # Meta's curated graphs: 266 / 128
    assert b.tmem_store(128 * 128).latency == 96
    rowsum = b.row_sum(128 * 64)                          # case3_FA_fp16-ddg.json node 19
    assert (rowsum.latency, rowsum.busy) in ((845, 320), (846, 320))
    assert rowsum.holds == rowsum.busy < rowsum.latency
    assert b.row_max(128 * 128).latency == 461


def test_hand_off_costs_by_payload():
    b = machine_spec("b200").costs
    assert b.handoff("registers", 1024) == (math.ceil(61 + 16.1), 0)
    assert b.handoff("tmem") == b.handoff("smem") == (92, 30)
    assert b.handoff("accumulator") == (92, 0) and b.handoff("async") == (0, 0)
    with pytest.raises(ValueError, match="unknown payload"):
        b.handoff("l2")


def test_errors_name_the_bad_input():
    h = machine_spec("h100").costs
    with pytest.raises(InputError, match="no Tensor Memory"):
        h.tmem_load(1024)
    with pytest.raises(InputError, match="unknown dtype"):
        h.gemm(64, 64, 64, "int4")


@given(st.integers(1, 8), st.integers(1, 8), st.integers(1, 8), st.sampled_from(["h100", "b200"]))
def test_gemm_busy_is_linear_in_each_dimension(m, n, k, name):
    cost = machine_spec(name).costs
    one = cost.gemm(64 * m, 64 * n, 64 * k)
    two = cost.gemm(64 * m, 64 * n, 128 * k)
    assert two.busy == 2 * one.busy and two.latency >= one.latency >= one.busy


# ---------------------------------------------------------------------------------------------
# Cost normalization


def test_normalization_ilp_solution_satisfies_its_constraints():
    costs = [32, 64, 235, 512, 576, 663]
    problem, scaled, F = normalization_problem(costs, 60)
    values = CBC(problem)
    assert problem.check(values) == []
    worst = max(abs(costs[i] * values[scaled[j]] - costs[j] * values[scaled[i]])
                for i in range(len(costs)) for j in range(len(costs)))
    assert values[F] == worst
    assert 1 <= sum(values[x] for x in scaled) <= 60


def _scaled(model: Model, factor: int) -> Model:
    ops = [attrs.evolve(op, cycles=op.cycles * factor,
                        rrt=[row for row in op.rrt for _ in range(factor)]) for op in model.ops]
    edges = [attrs.evolve(e, delay=e.delay * factor) for e in model.edges]
    return attrs.evolve(model, ops=ops, edges=edges)


def test_scaled_figure1_normalizes_back_and_its_schedule_verifies_in_raw_units(fa_model):
    raw = _scaled(fa_model, 1000)
    n = normalize(raw, 3, CBC)
    assert n.mapping == {1000: 1} and n.scale == 1000 and n.conservative
    assert verify(n.model, published.figure1()) == []
    back = n.denormalize(published.figure1())
    assert (back.I, dict(back.start)) == (2000, {"S": 0, "P": 2000, "O": 3000})
    assert verify(raw, back) == []


@pytest.mark.parametrize("U", [40, 300])
def test_published_fa3_schedule_in_normalized_units_verifies_raw(U):
    raw = build("fa3-fwd", "h100", subtiles=2)
    n = normalize(raw, U, CBC)
    schedule, why = published.realize(n.model, published.fa3_pipeline(n.model))
    assert schedule is not None, why
    back = n.denormalize(schedule)
    assert n.conservative
    assert verify(raw, back) == []
    assert back.I == n.scale * schedule.I


def test_rounding_that_hides_a_conflict_is_caught_by_raw_verification():
    machine = Machine("m", [Unit("tc", 1), Unit("sfu", 1)], [Memory("smem", 1)],
                      [WarpGroup("g0", 4, 255), WarpGroup("g1", 4, 255)])
    raw = Model("hide", machine, [Op.using("A", 1000, {"tc": 1}, spill_cost=10),
                                  Op.using("B", 1000, {"sfu": 1})],
                [Edge("A", "B", 1000)])
    n = normalize(raw, 4, CBC)
    assert n.mapping[10] == 0
    assert any("cost 10 normalizes to 0" in w for w in n.warnings)
    assert not n.conservative
    # B on another group right after A: valid in normalized units (the spill rounded away) ...
    s = Schedule.tight(n.model, 4, {"A": 0, "B": n.model.op("A").cycles}, {"A": "g0", "B": "g1"})
    assert verify(n.model, s) == []
    # ... and the raw re-verification reports the hidden spill.
    violations = verify(raw, n.denormalize(s))
    assert [v.rule for v in violations] == ["cross_warp_spill"]


@st.composite
def random_models(draw):
    """Small chains and loops of ops on two units with raw costs of varied magnitude."""
    n = draw(st.integers(2, 5))
    machine = Machine("m", [Unit("tc", 1), Unit("sfu", 1)], [Memory("smem", 1)],
                      [WarpGroup("g0", 4, 255)])
    ops = [Op.using(f"o{i}", draw(st.integers(1, 2000)), {draw(st.sampled_from(["tc", "sfu"])): 1})
           for i in range(n)]
    edges = [Edge(f"o{i}", f"o{i + 1}", ops[i].cycles) for i in range(n - 1)]
    if draw(st.booleans()):
        edges.append(Edge(f"o{n - 1}", "o0", draw(st.integers(0, 3000)), 1))
    return Model("random", machine, ops, edges)


@settings(max_examples=25, deadline=None)
@given(random_models(), st.integers(5, 80))
def test_conservative_normalization_maps_valid_schedules_to_valid_raw_ones(raw, U):
    n = normalize(raw, U, CBC)
    strategy = published.Strategy("one group", "test", {"g0": [(v, 0) for v in raw.op_names]})
    schedule, _ = published.realize(n.model, strategy, limit=4)
    if schedule is None:
        return
    violations = verify(raw, n.denormalize(schedule))
    if n.conservative:
        assert violations == []


LIBRARY_KERNELS = [("fa3-fwd", "h100", {}), ("fa3-fwd", "h100", {"subtiles": 2}),
                   ("fa4-fwd", "b200", {}),
                   *((k, m, p) for k in ("fa-bwd", "gemm") for m in ("h100", "b200")
                     for p in ({}, {"subtiles": 2}))]


@pytest.mark.parametrize("kernel, machine, params", LIBRARY_KERNELS)
def test_no_library_kernel_loses_a_cost_at_u_300(kernel, machine, params):
    """docs/machines.md: Meta saw many small costs normalized to 0 at U = 300; the library's
    kernels lose none there and have no unsafe cost."""
    n = normalize(build(kernel, machine, **params), 300, CBC)
    assert (n.warnings, n.unsafe) == ((), ())
    assert min(n.mapping.values()) >= 1


def test_registry_solver_uses_a_registered_backend(fa_model):
    n = normalize(_scaled(fa_model, 7), 3, registry_solver("highs"))
    assert n.mapping == {7: 1}
    with pytest.raises(InputError, match="unknown backend"):
        registry_solver("no-such-backend")(normalization_problem([1, 2], 3)[0])


@settings(max_examples=25, deadline=None)
@given(random_models(), st.integers(1, 300))
def test_unit_normalization_is_always_conservative(raw, unit):
    n = by_unit(raw, unit)
    assert n.conservative and not n.warnings
    strategy = published.Strategy("one group", "test", {"g0": [(v, 0) for v in raw.op_names]})
    schedule, _ = published.realize(n.model, strategy, limit=4)
    if schedule is not None:
        assert verify(raw, n.denormalize(schedule)) == []


def short_ops_chain(n: int) -> Model:
    """n ops of 1-7 cycles in a chain on three units (the robustness battery's big models):
    any unit above a few cycles rounds most of them up to one whole unit."""
    return model_from_dict({"name": f"chain{n}", "machine": {
        "units": {"tc": 1, "sfu": 1, "alu": 2}, "warp_groups": [{"name": "g0", "warps": 4}]},
        "ops": [{"name": f"op{i}", "cycles": 1 + i % 7, "uses": {("tc", "sfu", "alu")[i % 3]: 1}}
                for i in range(n)],
        "edges": [{"src": f"op{i}", "dst": f"op{i + 1}"} for i in range(n - 1)]})


@pytest.mark.parametrize("m", [build("fa4-fwd", "b200"), build("fa-bwd", "h100", subtiles=2),
                               build("gemm", "h100"), short_ops_chain(200)],
                         ids=["fa4-fwd", "fa-bwd-subtiled", "gemm", "chain200"])
def test_the_quick_resmii_of_a_rounded_model_is_its_resmii(m):
    """`auto` rules out units by the ResMII of the rounded model, computed from the ops'
    reservation patterns without rounding the model: it must be exactly the rounded model's."""
    from warpweave.core.bounds import bounds
    from warpweave.machines.normalize import _rounded, _rounded_res_mii
    quick = _rounded_res_mii(m)
    for u in (1, 2, 3, 5, 7, 16, 33, 38, 64, 100):
        assert quick(u) == bounds(_rounded(m, u)[1]).res_mii, u


def test_auto_takes_no_unit_that_more_than_doubles_the_lower_bound():
    """Ops of 1-7 cycles: the resolution's 15-20-cycle units make each one unit and the
    bound 3.7x the raw one (a 1,000-op chain answered 275% above it); `auto` takes the largest
    finer unit within MAX_INFLATION, says why, and keeps raw cycles when none is."""
    from warpweave.core.bounds import bounds
    from warpweave.machines.normalize import MAX_INFLATION, choose_unit
    m = short_ops_chain(1000)
    lower = bounds(m).lower
    band = range(3 * (lower // 64) // 4, lower // 64 + 1)
    assert min(u * bounds(by_unit(m, u).model).lower for u in band) > 3.5 * lower
    unit, why = choose_unit(m, lower)
    rounded = unit * bounds(by_unit(m, unit).model).lower
    assert unit == 8 and rounded <= MAX_INFLATION * lower < (unit + 1) * bounds(
        by_unit(m, unit + 1).model).lower
    assert why == (f"costs normalized in 8-cycle units, finer than the 15-20-cycle units of the "
                   f"resolution asked for, which would raise the lower bound on I from {lower} "
                   f"cycles to more than 2x (ops shorter than a unit round up to a whole one); "
                   f"in 8-cycle units the bound is {rounded} cycles (2.00x)")
    unit, why = choose_unit(m, lower, max_inflation=1.0)
    assert unit == 1 and why.startswith("costs not normalized: 15-20-cycle units would raise")
    assert why.endswith("; kept in raw cycles")


def test_every_library_kernel_keeps_the_unit_of_its_resolution():
    """The cap on inflation changes no kernel's unit: each rounds its bound by at most 3%."""
    from warpweave.core.bounds import bounds
    from warpweave.core.registry import KERNELS
    from warpweave.machines.normalize import choose_unit
    seen = 0
    for name in KERNELS.names():
        for machine in ("h100", "b200"):
            try:
                m = build(name, machine)
            except InputError:  # not built for that machine
                continue
            lower = bounds(m).lower
            if lower > 128:
                unit, why = choose_unit(m, lower)
                assert why is None and unit * bounds(by_unit(m, unit).model).lower \
                    <= 1.03 * lower, (name, machine)
                seen += 1
    assert seen >= 6


def test_auto_unit_keeps_the_resolution_and_rounds_the_bound_least():
    """`auto` normalization: at most lower // 64 cycles per unit, and no unit in its band gives
    a smaller rounded lower bound (fa-bwd's 256-cycle GEMMs: 32-cycle units keep the tensor-core
    bound 2560 exact where 40-cycle units would make it 2800)."""
    from warpweave.core.bounds import bounds
    from warpweave.core.streaming import apply_streaming
    from warpweave.kernels import build
    from warpweave.machines.normalize import auto_unit, by_unit
    model, _ = apply_streaming(build("fa-bwd", "h100", subtiles=2))
    lower = bounds(model).lower
    unit = auto_unit(model, lower)

    def rounded(u):
        return u * bounds(by_unit(model, u).model).lower
    assert unit <= lower // 64
    assert rounded(unit) == lower == 2560
    assert all(rounded(u) >= rounded(unit) for u in range(3 * (lower // 64) // 4, lower // 64))
