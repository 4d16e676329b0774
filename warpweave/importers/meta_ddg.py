"""Meta's raw `ddg-0.1` dumps (Triton's modulo scheduler, `TRITON_MODULO_DUMP_DDG`) as models.

One model per loop (the first inner loop unless `loop` names another `loop_id`).  A node's
pipeline is its unit (`NONE`: no unit), held for its first `max(1, occupancy)` cycles (as
Triton's own ResMII counts it) of `max(1, latency, occupancy)`; an edge keeps its own `latency`
as the delay and its `distance`.
The dump carries no registers, footprints, spill costs, variable latency or blocking; the
curated format (`meta_curated`) adds them.  Field by field: `docs/importers.md`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from warpweave.core.errors import InputError
from warpweave.core.model import Edge, Model, Op
from warpweave.core.validate import check_model
from warpweave.importers.fields import get_bool, get_str
from warpweave.importers.meta_b200 import DEFAULT_GROUPS, DEFAULT_REG_LIMIT, b200_machine
from warpweave.importers.meta_graph import (
    Node,
    check_keys,
    check_units,
    model_name,
    pick_loop,
    read_edges,
    read_meta,
    read_nodes,
)

SCHEMA = "ddg-0.1"
UNITS = ("TC", "TMA", "SFU", "CUDA")
NODE_KEYS = {"id", "op_ref", "op_kind", "pipeline", "latency", "self_latency", "occupancy",
             "min_warps", "is_super_node", "inner_ii", "prologue_latency"}
EDGE_KEYS = {"src", "dst", "kind", "distance", "latency"}


def _op(node: Node, async_units: set[str]) -> Op:
    check_keys(node.data, NODE_KEYS, node.path)
    get_bool(node.data, "is_super_node", node.path)  # a super node is an ordinary opaque op
    # As Triton's own ResMII counts it: an op on a unit holds it for max(1, occupancy) cycles.
    rows = [] if node.pipeline == "NONE" else [{node.pipeline: 1}] * max(1, node.occupancy)
    return Op(node.name, max(1, node.latency, len(rows)), rrt=rows, warps=node.min_warps,
              is_async=node.pipeline in async_units)


def import_meta_ddg(path: str | Path, loop: int | None = None,
                    groups: Iterable[int] = DEFAULT_GROUPS, reg_limit: int = DEFAULT_REG_LIMIT,
                    async_units: Iterable[str] = ()) -> Model:
    """The model of one loop of a raw ddg-0.1 file (InputError naming file, key and value)."""
    try:
        doc = read_meta(path, SCHEMA)
        loop_path, loop_doc = pick_loop(doc, loop)
        nodes = read_nodes(loop_path, loop_doc, set(UNITS) | {"NONE"})
        asyncs = check_units(async_units, UNITS, "--async-units")
        ops = [_op(n, asyncs) for n in nodes]
        edges = []
        for p, e, src, dst, distance, latency in read_edges(loop_path, loop_doc,
                                                            {n.id: n.name for n in nodes}):
            check_keys(e, EDGE_KEYS, p)
            kind = get_str(e, "kind", p)
            if kind not in ("data", "loop_carried"):
                raise InputError('must be "data" or "loop_carried"', p + ("kind",), kind)
            if (kind == "loop_carried") != (distance > 0):
                raise InputError(f"kind {kind!r} disagrees with distance {distance}",
                                 p + ("kind",), kind)
            edges.append(Edge(src, dst, latency, distance))
        machine = b200_machine(UNITS, {}, groups, reg_limit, variable_latency=False)
        return check_model(Model(model_name(path, doc, loop_path), machine, ops, edges))
    except InputError as exc:
        raise exc.with_file(str(path)) from None
