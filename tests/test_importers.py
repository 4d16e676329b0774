"""The importers on the committed benchmark files: counts match the sources, fields map as
`docs/importers.md` says, bounds agree with what the sources record, bad input is an InputError."""

from __future__ import annotations

import csv
import json
import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpweave.cli import main
from warpweave.core.bounds import bounds
from warpweave.core.formats import load_model, model_to_dict
from warpweave.errors import InputError
from warpweave.importers import import_model
from warpweave.importers.hatschet import import_hatschet
from warpweave.importers.meta_b200 import parse_groups
from warpweave.importers.meta_curated import import_meta_curated
from warpweave.importers.meta_ddg import import_meta_ddg

from .conftest import ROOT

META = ROOT / "benchmarks" / "data" / "meta-tlx"
HATSCHET = ROOT / "benchmarks" / "data" / "hatschet"
RAW_FILES = sorted(META.glob("*-ddg*.json"))
GOLDEN = sorted(META.glob("golden-*.curated_ddg.json"))
INDEX = list(csv.DictReader((HATSCHET / "index.csv").open()))


def _loops(path):
    return json.loads(path.read_text())["loops"]


def _op_by_id(model, node_id):
    """The op imported from Meta node `node_id` (names end in `_<id>`)."""
    return next(op for op in model.ops if op.name.endswith(f"_{node_id}"))


# ---------------------------------------------------------------------------------------------
# Meta raw ddg-0.1


def test_every_raw_loop_matches_the_dump_and_tritons_own_bounds():
    """Counts match; our ResMII/RecMII equal the res_mii/rec_mii Triton recorded for the loop."""
    seen = 0
    for path in RAW_FILES:
        for loop in _loops(path):
            model = import_meta_ddg(path, loop=loop["loop_id"])
            supers = [n["latency"] for n in loop["ddg"]["nodes"] if n["is_super_node"]]
            assert len(model.ops) == len(loop["ddg"]["nodes"])
            assert len(model.edges) == len(loop["ddg"]["edges"]) + len(supers)
            b = bounds(model)
            assert b.res_mii == loop["res_mii"], path.name
            # The super node's self-edge makes its latency part of our RecMII (Triton: min_ii).
            assert b.rec_mii == max([loop["rec_mii"], *supers])
            assert b.lower == loop["min_ii"]
            seen += 1
    assert seen == 17


def test_raw_fields_map_as_documented():
    gemm = import_meta_ddg(META / "case1_simple_gemm-ddg.json")
    mma = gemm.op("tc_gen5_mma_4")  # latency 559, occupancy 256, min_warps 1
    assert (mma.cycles, len(mma.rrt), mma.total_use("TC"), mma.warps) == (559, 256, 256, 1)
    assert gemm.op("local_alloc_1").cycles == 1 and not gemm.op("local_alloc_1").rrt  # NONE, 0
    assert not any(op.variable_latency or op.regs or op.footprint for op in gemm.ops)
    carried = [e for e in gemm.edges if e.distance]
    assert [(e.src, e.dst, e.delay, e.distance, e.kind) for e in carried] == \
        [("tc_gen5_mma_4", "tc_gen5_mma_4", 256, 1, "data")]
    assert gemm.machine.variable_latency_group is None and not gemm.machine.memories
    # Occupancy beyond latency (559 / 1024): the op lasts as long as it holds the unit.
    part = _op_by_id(import_meta_ddg(META / "case10_persistent_gemm_data_partition-ddg.json"), 6)
    assert (part.cycles, len(part.rrt)) == (1024, 1024)
    # A zero-occupancy op on a unit still holds it one cycle, as Triton's ResMII counts it.
    path = META / "case3_FA-ddg.json"
    idle = [n["id"] for n in _loops(path)[0]["ddg"]["nodes"]
            if n["pipeline"] == "CUDA" and n["occupancy"] == 0]
    fa = import_meta_ddg(path)
    assert idle and all(_op_by_id(fa, i).rrt == ((("CUDA", 1),),) for i in idle)


def test_raw_default_loop_is_inner_and_super_node_is_opaque():
    path = META / "case2_persistent_gemm-ddg.json"
    inner, outer = import_meta_ddg(path), import_meta_ddg(path, loop=1)
    assert inner.name == "case2_persistent_gemm-loop0" and len(inner.ops) == 7
    node = next(n for n in _loops(path)[1]["ddg"]["nodes"] if n["is_super_node"])
    op = outer.op(f"for_{node['id']}")
    assert op.cycles == node["latency"] == 32 * node["inner_ii"]
    assert not op.rrt and op.warps == 1
    assert [(e.delay, e.distance, e.kind) for e in outer.edges if e.src == e.dst == op.name] == \
        [(op.cycles, 1, "order")]


def test_group_inventory_and_options():
    model = import_meta_ddg(META / "case1_simple_gemm-ddg.json", groups=parse_groups("4x8"),
                            reg_limit=128, async_units=["TC"])
    assert [g.name for g in model.machine.warp_groups][:2] == ["w0_3", "w4_7"]
    assert {(g.warps, g.reg_limit) for g in model.machine.warp_groups} == {(4, 128)}
    assert model.op("tc_gen5_mma_4").is_async and not model.op("descriptor_load_0").is_async
    default = import_meta_ddg(META / "case1_simple_gemm-ddg.json").machine.warp_groups
    assert [g.warps for g in default] == [1] + [4] * 7 + [1] * 3
    assert default[-1].name == "w31"


# ---------------------------------------------------------------------------------------------
# Meta curated-ddg-0.2


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name.split(".")[0])
def test_curated_counts_streaming_and_registers(path):
    loop = _loops(path)[0]
    model = import_meta_curated(path)
    nodes = {n["id"]: n for n in loop["ddg"]["nodes"]}
    assert (len(model.ops), len(model.edges)) == (len(nodes), len(loop["ddg"]["edges"]))
    for op in model.ops:
        n = nodes[int(op.name.rsplit("_", 1)[1])]
        # Their `streaming` = our derivation: variable latency and no incoming data edge.
        assert n["streaming"] == (op.variable_latency and not model.in_edges(op.name))
        # Per-thread registers: the tile's words over min_warps warps, rounded up.
        threads = 32 * n["min_warps"]
        assert op.regs * threads >= n["regs"] > (op.regs - 1) * threads
        assert op.spill_cost == n["spill_cost"] and op.warps == n["min_warps"]
        assert op.footprint_in("smem") == n["smem_footprint"]
        assert op.footprint_in("tmem") == n["tmem_footprint"]
        for unit, uses in n["rrt"].items():
            assert op.total_use(unit) == sum(uses) == n["occupancy"]
    assert all(e.kind == "data" for e in model.edges)
    assert [e.blocking for e in model.edges] == [e["blocking"] for e in loop["ddg"]["edges"]]


def test_curated_fields_spot_checks():
    fwd = import_meta_curated(META / "golden-fwd.curated_ddg.json")
    m = fwd.machine
    assert [u.name for u in m.units] == ["TC", "TMA", "TMEM", "SFU", "CUDA"]
    assert {x.name: x.capacity for x in m.memories} == {"smem": 232448, "tmem": 512}
    assert m.variable_latency_group == "w0" and m.group("w0").warps == 1
    load = fwd.op("descriptor_load_2")
    assert load.variable_latency and load.footprint_in("smem") == 16384 and load.cycles == 556
    tl = fwd.op("tmem_load_8")  # TMEM, latency 266, occupancy 128, 8192 words on 4 warps
    assert (tl.cycles, tl.total_use("TMEM"), tl.regs, tl.spill_cost) == (266, 128, 64, 30)
    assert fwd.op("tc_gen5_mma_7").footprint_in("tmem") == 64
    exp = fwd.op("exp2_13")  # rrt SFU [1, 0 x 7]: one busy row, 8 cycles
    assert (exp.cycles, exp.rrt) == (8, ((("SFU", 1),),))
    assert [e.blocking for e in fwd.edges if e.src == "tmem_store_27"] == [True]
    bwd = import_meta_curated(META / "golden-bwd.curated_ddg.json", reg_limit=128)
    assert bwd.op("load_7").regs == 2 and bwd.op("load_7").variable_latency  # 64 words, 1 warp
    assert {g.reg_limit for g in bwd.machine.warp_groups} == {128}


# ---------------------------------------------------------------------------------------------
# HatScheT


@pytest.mark.parametrize("row", INDEX, ids=lambda r: r["graph"])
def test_hatschet_counts_and_bounds_agree_with_index(row):
    """index.csv floors both bounds at 1; ours are 0 with no limited resource or no cycle."""
    model = import_hatschet(HATSCHET / row["graph"], HATSCHET / row["resource_model"])
    assert (len(model.ops), len(model.edges)) == (int(row["nodes"]), int(row["edges"]))
    b = bounds(model)
    assert max(1, b.res_mii) == int(row["res_mii"])
    assert max(1, b.rec_mii) == int(row["rec_mii"])
    assert (b.rec_mii == 0) == (b.critical is None)


def test_hatschet_subset_exercises_both_floors():
    floored = {"res": 0, "rec": 0}
    for row in INDEX:
        b = bounds(import_hatschet(HATSCHET / row["graph"]))
        floored["res"] += b.res_mii == 0
        floored["rec"] += b.rec_mii == 0
    assert floored["res"] >= 4 and floored["rec"] >= 4


def test_hatschet_fields_map_as_documented():
    iir = import_hatschet(HATSCHET / "cTest" / "iir_biqu.graphml")  # default RM: iir_biquRM.xml
    assert iir.op("Sum2").cycles == 5 and iir.op("Sum2").rrt == ((("AddAdd", 1),),)
    assert {u.name: u.capacity for u in iir.machine.units} == {"AddAdd": 1, "Product": 1}
    assert not iir.op("Constant").rrt  # an unlimited resource is no unit
    b = bounds(iir)
    assert b.rec_mii == 11 and (b.critical.delay, b.critical.distance) == (11, 1)
    assert [g.name for g in iir.machine.warp_groups] == ["g0"] and not iir.machine.memories
    # Edge delay = latency of the source's resource + the edge's own delay.
    adpcm = import_hatschet(HATSCHET / "ChStone" / "adpcm" / "graph20.graphml")
    assert adpcm.name == "adpcm-graph20"
    text = (HATSCHET / "ChStone" / "adpcm" / "graph20.graphml").read_text()
    assert sum(e.kind == "order" for e in adpcm.edges) == text.count(">Precedence<") > 0
    writes = [op for op in adpcm.ops if op.rrt]
    assert writes and all(op.rrt == ((("mem_write", 1),),) for op in writes)
    moovac = import_hatschet(HATSCHET / "cTest" / "MoovacExample.graphml")  # `latency` edges
    assert all(e.distance == 0 for e in moovac.edges)
    assert moovac.edges[0].delay == moovac.op(moovac.edges[0].src).cycles  # Adder 3 + 0


def test_hatschet_explicit_resource_model(tmp_path):
    graph = tmp_path / "g.graphml"
    shutil.copy(HATSCHET / "origami" / "fir_lms.graphml", graph)
    with pytest.raises(InputError, match="no resource model beside the graph"):
        import_hatschet(graph)
    model = import_hatschet(graph, HATSCHET / "origami" / "fir_lmsRM.xml")
    assert model.name == "g" and any(e.src == e.dst for e in model.edges)


# ---------------------------------------------------------------------------------------------
# Bad input: InputError naming file, key path and value


def _meta_mutant(tmp_path, name, mutate):
    doc = json.loads((META / name).read_text())
    mutate(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _nodes(doc):
    return doc["loops"][0]["ddg"]["nodes"]


META_CASES = [
    ("case1_simple_gemm-ddg.json", import_meta_ddg, lambda d: _nodes(d)[3].pop("latency"),
     r"loops\[0\]\.ddg\.nodes\[3\]\.latency: missing"),
    ("case1_simple_gemm-ddg.json", import_meta_ddg,
     lambda d: _nodes(d)[0].update(pipeline="XPU"),
     r'loops\[0\]\.ddg\.nodes\[0\]\.pipeline = "XPU": unknown pipeline'),
    ("case1_simple_gemm-ddg.json", import_meta_ddg,
     lambda d: d["loops"][0]["ddg"]["edges"][1].update(dst=99),
     r"loops\[0\]\.ddg\.edges\[1\]\.dst = 99: no node with this id"),
    ("case1_simple_gemm-ddg.json", import_meta_ddg,
     lambda d: d["loops"][0]["ddg"]["edges"][4].update(kind="data"),
     r'edges\[4\]\.kind = "data": kind .data. disagrees with distance 1'),
    ("case1_simple_gemm-ddg.json", import_meta_ddg, lambda d: _nodes(d)[2].update(latency=-5),
     r"nodes\[2\]\.latency = -5: must be >= 0"),
    ("golden-fwd.curated_ddg.json", import_meta_curated,
     lambda d: _nodes(d)[5].update(warp_group=3),
     r"nodes\[5\]\.warp_group = 3: unknown field"),
    ("golden-fwd.curated_ddg.json", import_meta_curated,
     lambda d: _nodes(d)[0]["rrt"].update(FOO=[1]),
     r'nodes\[0\]\.rrt\.FOO = "FOO": unknown unit'),
    ("golden-fwd.curated_ddg.json", import_meta_curated,
     lambda d: _nodes(d)[1].update(regs="many"),
     r'nodes\[1\]\.regs = "many": must be an integer'),
    ("golden-fwd.curated_ddg.json", import_meta_curated,
     lambda d: d.update(schema_version="curated-ddg-0.3"),
     r'schema_version = "curated-ddg-0.3": not a curated-ddg-0.2 file'),
]


@pytest.mark.parametrize("name, importer, mutate, expected", META_CASES)
def test_bad_meta_input(tmp_path, name, importer, mutate, expected):
    path = _meta_mutant(tmp_path, name, mutate)
    with pytest.raises(InputError) as info:
        importer(path)
    assert str(info.value).startswith(str(path) + ": ")
    assert re.search(expected, str(info.value)), str(info.value)


def test_bad_xml_and_resources(tmp_path):
    src = HATSCHET / "cTest" / "iir_biqu.graphml"
    rm = HATSCHET / "cTest" / "iir_biquRM.xml"
    graph = tmp_path / "g.graphml"
    graph.write_text(src.read_text().replace('resource">Product<', 'resource">Divider<', 1))
    with pytest.raises(InputError, match=r'node\[\d+\]\.uses_resource = "Divider": unknown '
                                         r"resource \(not in iir_biquRM.xml\)"):
        import_hatschet(graph, rm)
    graph.write_text(src.read_text()[:-40])
    with pytest.raises(InputError, match=r"g.graphml: malformed XML at line \d+ column \d+"):
        import_hatschet(graph, rm)
    graph.write_text(src.read_text().replace('source="2"', 'source="77"', 1))
    with pytest.raises(InputError, match=r'edge\[\d+\]\.source = "77": no node with this id'):
        import_hatschet(graph, rm)
    graph.write_text(src.read_text().replace('encoding="UTF-8"', 'encoding="x"', 1))
    with pytest.raises(InputError, match=r"g.graphml: unreadable XML: unknown encoding: x"):
        import_hatschet(graph, rm)
    bad_rm = tmp_path / "rm.xml"
    bad_rm.write_text(rm.read_text().replace('limit="1"', 'limit="lots"', 1))
    with pytest.raises(InputError, match=r'rm.xml: Resource\[0\]\.limit = "lots": must be an '
                                         r"integer"):
        import_hatschet(src, bad_rm)


def test_bad_options():
    path = META / "case1_simple_gemm-ddg.json"
    with pytest.raises(InputError, match=r"--loop = 3: no such loop \(loop ids: 0\)"):
        import_meta_ddg(path, loop=3)
    with pytest.raises(InputError, match=r"--groups.*33 warps: a B200 block has at most 32"):
        parse_groups("1,4x8")
    with pytest.raises(InputError, match=r'--async-units = "TMEM": unknown unit'):
        import_meta_ddg(path, async_units=["TMEM"])
    with pytest.raises(InputError, match=r'--rm = "x.xml": not an option of --from meta-ddg'):
        import_model(path, "meta-ddg", rm="x.xml")


# ---------------------------------------------------------------------------------------------
# The command


def test_cli_import_prints_or_writes_a_loadable_model(capsys, tmp_path):
    path = META / "golden-fwd.curated_ddg.json"
    assert main(["import", str(path), "--from", "meta-curated"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == model_to_dict(import_meta_curated(path))
    out = tmp_path / "fir.toml"
    graph = HATSCHET / "origami" / "fir_lms.graphml"
    assert main(["import", str(graph), "--from", "hatschet", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out  # on stdout, as build says it
    assert load_model(out) == import_hatschet(graph)
    args = ["import", str(META / "case2_persistent_gemm-ddg.json"), "--from", "meta-ddg",
            "--loop", "1", "--groups", "4x8", "--reg-limit", "200", "--async-units", "TMA"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["name"] == "case2_persistent_gemm-loop1"
    assert doc["machine"]["warp_groups"][0] == {"name": "w0_3", "warps": 4, "reg_limit": 200}


def test_cli_show_prints_reservation_runs(capsys, tmp_path):
    out = tmp_path / "fwd.json"
    assert main(["import", str(META / "golden-fwd.curated_ddg.json"), "--from", "meta-curated",
                 "--out", str(out)]) == 0
    assert main(["show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"descriptor_load_2 +556 +\+0\.\.95 TMA:1 ", shown)
    assert re.search(r"exp2_13 +8 +\+0 SFU:1 ", shown)


def test_cli_bad_input_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["import", str(bad), "--from", "meta-ddg"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "malformed JSON at line 1" in err and "Traceback" not in err
    bad.write_bytes(b'{"a": "\xff"}')
    assert main(["import", str(bad), "--from", "meta-curated"]) == 2
    assert capsys.readouterr().err.endswith("bad.json: not UTF-8 text (byte 7)\n")


# ---------------------------------------------------------------------------------------------
# Any damage to a file is an InputError, never another exception


JUNK = [None, "x", -1, 1.5, [], {}, True, 10**6]
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _paths(doc, prefix=()):
    """Every key path of a JSON document, containers included."""
    yield prefix
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) \
        else ()
    for key, value in items:
        yield from _paths(value, prefix + (key,))


def _damage(doc, path, junk):
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if junk == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = junk


@pytest.mark.parametrize("name, importer", [("case5_addmm_bias-ddg.json", import_meta_ddg),
                                            ("golden-fwd.curated_ddg.json", import_meta_curated)])
@FUZZ
@given(data=st.data())
def test_damaged_meta_files_give_input_errors(tmp_path, name, importer, data):
    doc = json.loads((META / name).read_text())
    paths = [p for p in _paths(doc) if p and not (p[0] == "ops" and len(p) > 2)]
    path = data.draw(st.sampled_from(paths))
    _damage(doc, path, data.draw(st.sampled_from(JUNK + ["delete"])))
    target = tmp_path / name
    target.write_text(json.dumps(doc))
    try:
        importer(target, loop=data.draw(st.sampled_from([None, 0, 1])))
    except InputError as exc:
        assert str(exc).startswith(str(target) + ": ")


@FUZZ
@given(data=st.data())
def test_damaged_hatschet_files_give_input_errors(tmp_path, data):
    graph, rm = HATSCHET / "origami" / "fir_lms.graphml", HATSCHET / "origami" / "fir_lmsRM.xml"
    which = data.draw(st.sampled_from([graph, rm]))
    text = which.read_text()
    spots = [m.span(1) for m in re.finditer(r'(?:="|>)([^"<>]*)(?:"|<)', text)]
    start, end = data.draw(st.sampled_from(spots))
    junk = data.draw(st.sampled_from(["", "-1", "x", "1.5", "<", "99999", "inf", '"']))
    (tmp_path / which.name).write_text(text[:start] + junk + text[end:])
    other = rm if which == graph else graph
    shutil.copy(other, tmp_path / other.name)
    try:
        import_hatschet(tmp_path / graph.name, tmp_path / rm.name)
    except InputError as exc:
        assert str(exc).startswith(str(tmp_path))
