"""Meta's curated `curated-ddg-0.2` graphs (their Twill reproduction's solver input) as models.

Beyond the raw dump (`meta_ddg`) a curated node carries an explicit reservation table `rrt`
(`{unit: [use per cycle]}`), `regs` (32-bit words for the whole tile value), `spill_cost`
(cycles), `smem_footprint` (bytes), `tmem_footprint` (columns), `variable_latency` and
`streaming`; an edge carries `blocking`.  Registers become per-thread counts spread over the op's
`min_warps` warps; the 32 physical warps become the group inventory of `meta_b200`.  Every curated
edge is a data edge, as in their liveness (Figure 5 quantified over all curated edges).
Field by field, and what has no equivalent: `docs/importers.md`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from warpweave.core.model import Edge, Model, Op
from warpweave.errors import InputError
from warpweave.importers.fields import as_int, as_list, get_bool, get_int, get_obj
from warpweave.importers.meta_b200 import (
    DEFAULT_GROUPS,
    DEFAULT_REG_LIMIT,
    SMEM_BYTES,
    TMEM_COLUMNS,
    regs_per_thread,
)
from warpweave.importers.meta_graph import MetaFormat, Node, RawEdge

UNITS = ("TC", "TMA", "TMEM", "SFU", "CUDA")


def reservation_rows(node: Node) -> list[dict[str, int]]:
    """`{unit: [use at cycle 0, ...]}` as rows, trailing idle rows dropped."""
    table = get_obj(node.data, "rrt", node.path)
    rows: list[dict[str, int]] = []
    for unit, uses in table.items():
        p = node.path + ("rrt", unit)
        if unit not in UNITS:
            raise InputError(f"unknown unit (units: {', '.join(UNITS)})", p, unit)
        for c, use in enumerate(as_list(uses, p)):
            count = as_int(use, p + (c,))
            if count:
                rows += [{} for _ in range(c + 1 - len(rows))]
                rows[c][unit] = count
    return rows


def _op(node: Node, async_units: set[str]) -> Op:
    n, p = node.data, node.path
    get_bool(n, "streaming", p)  # derived in our model: variable latency, no incoming data edge
    rows = reservation_rows(node)
    footprint = {"smem": get_int(n, "smem_footprint", p), "tmem": get_int(n, "tmem_footprint", p)}
    return Op(node.name, max(1, node.latency, len(rows)), rrt=rows,
              variable_latency=get_bool(n, "variable_latency", p),
              regs=regs_per_thread(get_int(n, "regs", p), node.min_warps), footprint=footprint,
              spill_cost=get_int(n, "spill_cost", p), warps=node.min_warps,
              is_async=node.pipeline in async_units, source_id=node.id)


def _edge(e: RawEdge) -> Edge:
    return Edge(e.src, e.dst, e.latency, e.distance, blocking=get_bool(e.data, "blocking", e.path))


CURATED = MetaFormat(
    schema="curated-ddg-0.2", units=UNITS, memories={"smem": SMEM_BYTES, "tmem": TMEM_COLUMNS},
    node_keys=frozenset({"id", "op_ref", "op_kind", "pipeline", "latency", "occupancy", "rrt",
                         "min_warps", "regs", "spill_cost", "smem_footprint", "tmem_footprint",
                         "variable_latency", "streaming"}),
    edge_keys=frozenset({"src", "dst", "distance", "latency", "blocking"}),
    op=_op, edge=_edge)


def import_meta_curated(path: str | Path | Mapping, loop: int | None = None,
                        groups: Iterable[int] = DEFAULT_GROUPS,
                        reg_limit: int = DEFAULT_REG_LIMIT,
                        async_units: Iterable[str] = ()) -> Model:
    """The model of one loop of a curated-ddg-0.2 file or its parsed document (InputError
    naming file, key and value)."""
    return CURATED.load(path, loop, groups, reg_limit, async_units)
