"""Meta's raw `ddg-0.1` dumps (Triton's modulo scheduler, `TRITON_MODULO_DUMP_DDG`) as models.

One model per loop (the first inner loop unless `loop` names another `loop_id`).  A node's
pipeline is its unit (`NONE`: no unit), held for its first `max(1, occupancy)` cycles (as
Triton's own ResMII counts it) of `max(1, latency, occupancy)`; an edge keeps its own `latency`
as the delay and its `distance`.  A super node (an inner loop inside an outer loop) is an
opaque op of its latency with an order self-edge of distance 1, so it cannot overlap itself.
The dump carries no registers, footprints, spill costs, variable latency or blocking; the
curated format (`meta_curated`) adds them.  Field by field: `docs/importers.md`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from warpweave.core.model import Edge, Model, Op
from warpweave.errors import InputError
from warpweave.importers.fields import get_bool, get_str
from warpweave.importers.meta_b200 import DEFAULT_GROUPS, DEFAULT_REG_LIMIT
from warpweave.importers.meta_graph import MetaFormat, Node, RawEdge


def _op(node: Node, async_units: set[str]) -> Op:
    get_bool(node.data, "is_super_node", node.path)
    # As Triton's own ResMII counts it: an op on a unit holds it for max(1, occupancy) cycles.
    rows = [] if node.pipeline == "NONE" else [{node.pipeline: 1}] * max(1, node.occupancy)
    return Op(node.name, max(1, node.latency, len(rows)), rrt=rows, warps=node.min_warps,
              is_async=node.pipeline in async_units, source_id=node.id)


def _edge(e: RawEdge) -> Edge:
    kind = get_str(e.data, "kind", e.path)
    if kind not in ("data", "loop_carried"):
        raise InputError('must be "data" or "loop_carried"', e.path + ("kind",), kind)
    if (kind == "loop_carried") != (e.distance > 0):
        raise InputError(f"kind {kind!r} disagrees with distance {e.distance}",
                         e.path + ("kind",), kind)
    return Edge(e.src, e.dst, e.latency, e.distance)


def _super_node_edges(nodes: list[Node]) -> list[Edge]:
    """A super node is the whole inner loop: the next outer iteration's inner loop starts after
    it ends (Triton's min_ii of an outer loop is at least the super node's latency)."""
    return [Edge(n.name, n.name, n.latency, 1, "order") for n in nodes
            if n.data["is_super_node"]]


DDG = MetaFormat(
    schema="ddg-0.1", units=("TC", "TMA", "SFU", "CUDA"), memories={},
    node_keys=frozenset({"id", "op_ref", "op_kind", "pipeline", "latency", "self_latency",
                         "occupancy", "min_warps", "is_super_node", "inner_ii",
                         "prologue_latency"}),
    edge_keys=frozenset({"src", "dst", "kind", "distance", "latency"}),
    op=_op, edge=_edge, extra_edges=_super_node_edges)


def import_meta_ddg(path: str | Path | Mapping, loop: int | None = None,
                    groups: Iterable[int] = DEFAULT_GROUPS, reg_limit: int = DEFAULT_REG_LIMIT,
                    async_units: Iterable[str] = ()) -> Model:
    """The model of one loop of a raw ddg-0.1 file or its parsed document (InputError naming
    file, key and value)."""
    return DDG.load(path, loop, groups, reg_limit, async_units)
