"""Meta's recorded solutions (`prepared-<case>_prep1.json`) read as warpweave schedules.

Their solver works in normalized units: the `.pool.json` beside each solution lists, per entry,
the raw cost and its normalized value C' (`scaled`) for every node (its unit occupancy), every
non-zero edge latency (keyed by the edge's index in the curated file; absent edges are 0,
including the out-edges of streaming loads, which they zero) and every non-zero spill cost.
`normalized_model` applies that mapping to a model imported from the curated graph, so their
schedule can be checked in their own units.  `recorded_schedule` reads `ii`, `length`, `cycles`
(start times) and `warp_sets`.  Our groups are disjoint, their warp sets may overlap: each distinct
set becomes its own group, which is exact for their co-location reading ("same warp" only when the
sets are equal) but does not sum registers or issue slots over partially shared physical warps.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

import attrs

from warpweave.core.formats import read_document
from warpweave.core.model import Machine, Model, WarpGroup
from warpweave.core.schedule import Schedule
from warpweave.core.validate import check_model
from warpweave.errors import InputError
from warpweave.importers.fields import (
    as_int,
    as_list,
    as_obj,
    get_int,
    get_list,
    get_obj,
    get_str,
)
from warpweave.importers.meta_b200 import REG_WORDS_PER_WARP, THREADS_PER_WARP
from warpweave.importers.meta_curated import import_meta_curated
from warpweave.importers.meta_graph import node_id

SOLUTION_SCHEMA = "prepared-joint-solution-v1"


@attrs.frozen
class Pool:
    """Normalized costs: by node id (occupancy), by curated edge index, by node id (spill)."""

    node: Mapping[int, int]
    edge: Mapping[int, int]
    spill: Mapping[int, int]


def read_pool(path: str | Path) -> Pool:
    """The `scaled` value of every entry of a `.pool.json` file."""
    try:
        doc = read_document(path)
        tables: dict[str, dict[int, int]] = {"node": {}, "edge": {}, "spill": {}}
        for i, raw in enumerate(get_list(doc, "pool", ())):
            p = ("pool", i)
            entry = as_obj(raw, p)
            kind = get_str(entry, "kind", p)
            if kind not in tables:
                raise InputError("must be node, edge or spill", p + ("kind",), kind)
            key = get_int(entry, "key", p)
            if key in tables[kind]:
                raise InputError(f"duplicate {kind} entry", p + ("key",), key)
            tables[kind][key] = get_int(entry, "scaled", p)
        return Pool(**tables)
    except InputError as exc:
        raise exc.with_file(str(path)) from None


def normalized_model(model: Model, pool: Pool) -> Model:
    """`model` (imported from the curated graph the pool was built on) in Meta's units.

    An op holds its unit for C'(node) cycles and lasts max(1, C'(node)) (their length clamp);
    an edge's delay is C'(edge index) or 0; a spill cost is C'(spill) or 0, and so is the
    hand-off of each edge leaving the node (their spill is per source node).
    """
    ops = []
    for i, op in enumerate(model.ops):
        nid = node_id(op.name)
        if nid not in pool.node:
            raise InputError("the pool has no entry for this node", ("ops", i, "name"), op.name)
        cost = pool.node[nid]
        units = sorted({unit for _, unit, _ in op.usage()})
        rows = [{u: 1 for u in units}] * cost if units else []
        ops.append(attrs.evolve(op, cycles=max(1, cost), rrt=rows,
                                spill_cost=pool.spill.get(nid, 0)))
    edges = [attrs.evolve(e, delay=pool.edge.get(i, 0),
                          handoff=pool.spill.get(node_id(e.src), 0) if e.is_data else 0)
             for i, e in enumerate(model.edges)]
    return check_model(model.replace(name=model.name + "-meta-units", ops=ops, edges=edges))


def _warp_sets(doc: Mapping, names: Mapping[int, str]) -> dict[str, tuple[int, ...]]:
    sets = get_obj(doc, "warp_sets", ())
    out = {}
    for key, warps in sets.items():
        p = ("warp_sets", key)
        nid = as_int(key, p)
        if nid not in names:
            raise InputError("no op for this node id", p, key)
        out[names[nid]] = tuple(sorted(as_int(w, p + (j,)) for j, w in
                                       enumerate(as_list(warps, p))))
    return out


def set_name(warps: tuple[int, ...]) -> str:
    return "w" + "_".join(map(str, warps))


def recorded_schedule(path: str | Path, model: Model,
                      curated: str | Path | None = None) -> tuple[Model, Schedule]:
    """Meta's solution as a schedule on `model` with one group per distinct warp set.

    The register limit per thread is their per-warp word budget (`reg_budget`, else 8160) / 32.
    If `curated` is given, its sha256 must be the one the solution records.
    """
    try:
        doc = read_document(path)
        if doc.get("schema_version") != SOLUTION_SCHEMA:
            raise InputError(f"not a {SOLUTION_SCHEMA} file", ("schema_version",),
                             doc.get("schema_version"))
        prov = get_obj(doc, "provenance", ())
        if curated is not None:
            recorded = get_str(get_obj(prov, "preparation", ("provenance",)), "curated_ddg_sha256",
                               ("provenance", "preparation"))
            actual = hashlib.sha256(Path(curated).read_bytes()).hexdigest()
            if actual != recorded:
                raise InputError(f"solved on another curated graph (sha256 {actual[:12]}...)",
                                 ("provenance", "preparation", "curated_ddg_sha256"), recorded)
        budget = get_obj(prov, "experiment_inputs", ("provenance",)).get("reg_budget")
        words = REG_WORDS_PER_WARP if budget is None else as_int(
            budget, ("provenance", "experiment_inputs", "reg_budget"), 1)
        names = {node_id(op.name): op.name for op in model.ops}
        start = {}
        for key, value in get_obj(doc, "cycles", ()).items():
            nid = as_int(key, ("cycles", key))
            if nid not in names:
                raise InputError("no op for this node id", ("cycles", key), key)
            start[names[nid]] = as_int(value, ("cycles", key))
        group_of = _warp_sets(doc, names)
        for op in model.op_names:
            if op not in start or op not in group_of:
                key = "cycles" if op not in start else "warp_sets"
                raise InputError("no entry for an op of the model", (key, str(node_id(op))), op)
        sets = sorted(set(group_of.values()))
        vl = sorted({group_of[op.name] for op in model.ops if op.variable_latency})
        if len(vl) > 1:
            raise InputError("variable-latency ops on several warp sets", ("warp_sets",),
                             [list(s) for s in vl])
        machine = Machine(model.machine.name + "-recorded", model.machine.units,
                          model.machine.memories,
                          [WarpGroup(set_name(s), len(s), words // THREADS_PER_WARP)
                           for s in sets],
                          set_name(vl[0]) if vl else None)
        recorded_model = check_model(model.replace(machine=machine))
        schedule = Schedule(model.name, get_int(doc, "ii", (), 1), get_int(doc, "length", (), 1),
                            start, {op: set_name(s) for op, s in group_of.items()})
        return recorded_model, schedule
    except InputError as exc:
        raise exc.with_file(str(path)) from None


@attrs.frozen
class RecordedCase:
    """One recorded case: the curated graph in raw cycles, their pool, the graph in their units
    on one group per warp set, and their schedule."""

    raw: Model
    pool: Pool
    model: Model
    schedule: Schedule


def recorded_case(curated: str | Path, solution: str | Path, pool: str | Path,
                  reg_limit: int, name: str | None = None) -> RecordedCase:
    """Import `curated` (renamed `name`), normalize it with `pool`, read `solution` against it."""
    raw = import_meta_curated(curated, reg_limit=reg_limit)
    raw = raw.replace(name=name) if name else raw
    costs = read_pool(pool)
    model, schedule = recorded_schedule(solution, normalized_model(raw, costs), curated)
    return RecordedCase(raw, costs, model, schedule)


def recorded_results(path: str | Path) -> dict:
    """The headline figures of a solution: II*, L*, copies, warps used, warp sets, wall time, U."""
    try:
        doc = read_document(path)
        stats = get_obj(doc, "stats", ())
        return {"ii": get_int(doc, "ii", ()), "length": get_int(doc, "length", ()),
                "copies": get_int(doc, "copies", ()),
                "warps_used": get_int(stats, "warps_used", ("stats",)),
                "distinct_warp_sets": get_int(stats, "num_warp_sets", ("stats",)),
                "wall_seconds": need_number(doc, "wall_s"),
                "normalization_u": get_int(stats, "normalization_u", ("stats",)),
                "status": get_str(doc, "status", ())}
    except InputError as exc:
        raise exc.with_file(str(path)) from None


def need_number(doc: Mapping, key: str) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError("must be a number", (key,), value)
    return value
