"""The compiler round trip: a Meta graph imported from a file or a parsed document, solved, and
exported keyed by Meta's DDG node ids (Triton's pipeliner attributes, LLVM's ModuloSchedule);
importers and exporters found through their entry points."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import warpweave as ww
from warpweave.core.schedule import Schedule
from warpweave.errors import InputError
from warpweave.exporters import EXPORTERS
from warpweave.importers import IMPORTERS

META = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "meta-tlx"
GEMM = META / "case1_simple_gemm-ddg.json"


def test_builtins_come_through_the_entry_points():
    assert {"meta-ddg", "meta-curated", "hatschet"} <= set(IMPORTERS.names())
    assert {"triton", "llvm"} <= set(EXPORTERS.names())


def test_an_importer_takes_a_document_as_well_as_a_file():
    doc = json.loads(GEMM.read_text())
    from_file, from_doc = ww.import_graph(GEMM, "meta-ddg"), ww.import_graph(doc, "meta-ddg")
    assert from_doc.ops == from_file.ops and from_doc.edges == from_file.edges
    assert from_doc.name == "gemm_kernel" and from_file.name == "case1_simple_gemm"
    assert [op.source_id for op in from_file.ops] == [n["id"] for n in
                                                      doc["loops"][0]["ddg"]["nodes"]]
    with pytest.raises(InputError, match=r"loops\[0\]\.ddg\.nodes\[0\]\.latency"):
        doc["loops"][0]["ddg"]["nodes"][0]["latency"] = "slow"
        ww.import_graph(doc, "meta-ddg")
    with pytest.raises(InputError, match="reads files, not parsed documents"):
        ww.import_graph({}, "hatschet")
    with pytest.raises(InputError, match=r"--from = \"dot\": unknown importer"):
        ww.import_graph(GEMM, "dot")


def test_round_trip_keyed_by_meta_node_ids():
    model = ww.import_graph(GEMM, "meta-ddg")
    result = ww.solve(model, isolate=False)
    s = result.schedule
    assert result.claim["I_optimal"] and ww.verify(model, s) == []
    doc = result.to_dict()
    assert doc["stage"] == {v: t // s.I for v, t in s.start.items()}
    assert doc["cycle"] == {v: t % s.I for v, t in s.start.items()}

    tri = ww.export_schedule(model, s, to="triton")
    ids = {op.source_id: op.name for op in model.ops}
    assert tri["tt.modulo_ii"] == s.I and {x["id"] for x in tri["ops"]} == set(ids)
    for x in tri["ops"]:
        t = s.start[ids[x["id"]]]
        assert (x["loop.stage"], x["tt.modulo_cycle"]) == (t // s.I, t % s.I)
    clusters = [x["loop.cluster"] for x in tri["ops"]]
    assert clusters == sorted(clusters) and clusters[0] == 0   # listed in body order
    # Rebuild the schedule from the export alone: the same start times, so it verifies.
    back = {ids[x["id"]]: x["loop.stage"] * s.I + x["tt.modulo_cycle"] for x in tri["ops"]}
    assert back == dict(s.start)

    llvm = ww.export_schedule(model, s, to="llvm")
    assert llvm["II"] == s.I and llvm["num_stages"] == tri["num_stages"]
    cycles = [x["cycle"] for x in llvm["instructions"]]
    assert cycles == sorted(cycles)
    rebuilt = Schedule(model.name, s.I, s.L, {ids[x["id"]]: x["cycle"]
                                              for x in llvm["instructions"]}, dict(s.group))
    assert ww.verify(model, rebuilt) == []


def test_a_model_without_source_ids_is_keyed_by_op_name():
    model = Path(__file__).resolve().parents[1] / "examples" / "fa-simplified.json"
    sched = model.with_name("fa-simplified.schedule.json")
    tri = ww.export_schedule(model, sched, to="triton")
    assert [x["id"] for x in tri["ops"]] == ["S", "P", "O"]
    assert tri["partitions"] == [{"ttg.partition": 0, "group": "g0", "num_warps": 4}]
    with pytest.raises(InputError, match="not an option of the llvm exporter"):
        ww.export_schedule(model, sched, to="llvm", flavour="x")


def test_the_round_trip_in_docs_importers_runs_as_shown(monkeypatch):
    import doctest
    root = META.parents[2]
    monkeypatch.chdir(root)
    result = doctest.testfile(str(root / "docs" / "importers.md"), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 9 and result.failed == 0
