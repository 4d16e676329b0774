"""What Meta's two graph formats (raw `ddg-0.1`, curated `curated-ddg-0.2`) share.

Both hold `loops[]`, each with `ddg.nodes` (integer `id`, `op_kind`, `pipeline`, `latency`,
`occupancy`, `min_warps`) and `ddg.edges` (`src`, `dst` ids, `distance`, `latency`).  Op names
are `<op kind without dialect>_<id>` (`tc_gen5_mma_7`): readable, unique, and the id is kept so
that Meta's schedules (keyed by node id) can be mapped back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path as FilePath

import attrs

from warpweave.core.formats import read_document
from warpweave.core.model import Edge, Model, Op
from warpweave.core.validate import check_model
from warpweave.errors import InputError
from warpweave.importers.fields import (
    Path,
    as_obj,
    get_int,
    get_list,
    get_obj,
    get_str,
)
from warpweave.importers.meta_b200 import b200_machine


def node_name(node_id: int, op_kind: str) -> str:
    return f"{op_kind.rsplit('.', 1)[-1]}_{node_id}"


def node_id(op_name: str) -> int:
    """The Meta node id an imported op was named after (`tc_gen5_mma_7` -> 7)."""
    return int(op_name.rsplit("_", 1)[1])


def model_name(path: str | FilePath | None, doc: Mapping, loop_path: Path) -> str:
    """The file's stem without Meta's suffixes (for a parsed document: its kernel's name, else
    `meta`), plus `-loop<i>` when the file has several loops."""
    if path is None:
        kernel = doc.get("kernel")
        name = kernel.get("name") if isinstance(kernel, Mapping) else None
        stem = name if isinstance(name, str) and name else "meta"
    else:
        stem = FilePath(path).name
        for suffix in (".json", ".curated_ddg", "-ddg"):
            stem = stem.removesuffix(suffix)
    loop_id = doc["loops"][loop_path[1]].get("loop_id", loop_path[1])
    return stem + (f"-loop{loop_id}" if len(doc["loops"]) > 1 else "")


def check_keys(obj: Mapping, known: set[str], path: Path) -> None:
    """Unknown fields are errors: a field the importer does not map would be lost silently."""
    for key in obj:
        if key not in known:
            raise InputError(f"unknown field (this importer maps: {', '.join(sorted(known))})",
                             path + (key,), obj[key])


def check_units(units: Iterable[str], known: Iterable[str], option: str) -> set[str]:
    """A set of unit names given as an option, each one of `known`."""
    chosen, known = set(units), tuple(known)
    for unit in sorted(chosen):
        if unit not in known:
            raise InputError(f"unknown unit (units: {', '.join(known)})", (option,), unit)
    return chosen


def read_meta(source: str | FilePath | Mapping, schema: str) -> Mapping:
    """Parse a Meta graph file (or take a parsed document) and check its `schema_version`."""
    doc = source if isinstance(source, Mapping) else read_document(source)
    found = doc.get("schema_version")
    if found != schema:
        raise InputError(f"not a {schema} file", ("schema_version",), found)
    return doc


def pick_loop(doc: Mapping, loop: int | None) -> tuple[Path, Mapping]:
    """The loop with `loop_id == loop` (its index when it has no id); by default the first
    loop that is not an outer loop (`is_outer`, raw files only)."""
    loops = get_list(doc, "loops", ())
    if not loops:
        raise InputError("the file has no loop", ("loops",), [])
    entries = [(("loops", i), as_obj(x, ("loops", i))) for i, x in enumerate(loops)]
    if loop is None:
        inner = [(p, x) for p, x in entries if x.get("is_outer") is not True]
        return inner[0] if inner else entries[0]
    ids = [x.get("loop_id", p[1]) for p, x in entries]
    for (p, x), loop_id in zip(entries, ids, strict=True):
        if loop_id == loop:
            return p, x
    raise InputError(f"no such loop (loop ids: {', '.join(map(str, ids))})", ("--loop",), loop)


@attrs.frozen
class Node:
    """The fields both formats give a node, already checked; `path` locates it in the file."""

    path: Path
    id: int
    name: str
    pipeline: str
    latency: int
    occupancy: int
    min_warps: int
    data: Mapping


def read_nodes(loop_path: Path, loop: Mapping, pipelines: set[str]) -> list[Node]:
    """Every node of a loop; unknown pipelines and duplicate ids are errors."""
    ddg = get_obj(loop, "ddg", loop_path)
    base = loop_path + ("ddg", "nodes")
    out, seen = [], set()
    for i, raw in enumerate(get_list(ddg, "nodes", loop_path + ("ddg",))):
        p = base + (i,)
        n = as_obj(raw, p)
        node_id = get_int(n, "id", p)
        if node_id in seen:
            raise InputError("duplicate node id", p + ("id",), node_id)
        seen.add(node_id)
        pipeline = get_str(n, "pipeline", p)
        if pipeline not in pipelines:
            raise InputError(f"unknown pipeline (known: {', '.join(sorted(pipelines))})",
                             p + ("pipeline",), pipeline)
        out.append(Node(p, node_id, node_name(node_id, get_str(n, "op_kind", p)), pipeline,
                        get_int(n, "latency", p), get_int(n, "occupancy", p),
                        get_int(n, "min_warps", p, low=1), n))
    if not out:
        raise InputError("the loop has no node", base, [])
    return out


@attrs.frozen
class RawEdge:
    """The fields both formats give an edge, endpoints already resolved to op names."""

    path: Path
    src: str
    dst: str
    distance: int
    latency: int
    data: Mapping


def read_edges(loop_path: Path, loop: Mapping, names: Mapping[int, str]) -> list[RawEdge]:
    """Every edge of a loop; an endpoint that is no node id is an error."""
    base = loop_path + ("ddg", "edges")
    out = []
    for i, raw in enumerate(get_list(loop["ddg"], "edges", loop_path + ("ddg",))):
        p = base + (i,)
        e = as_obj(raw, p)
        ends = []
        for key in ("src", "dst"):
            node_id = get_int(e, key, p)
            if node_id not in names:
                raise InputError("no node with this id", p + (key,), node_id)
            ends.append(names[node_id])
        out.append(RawEdge(p, ends[0], ends[1], get_int(e, "distance", p),
                           get_int(e, "latency", p), e))
    return out


@attrs.frozen
class MetaFormat:
    """One of Meta's formats: its schema, units, memories, known fields and field mappings.

    `op` and `edge` turn a checked node or edge into ours; `extra_edges` adds edges the format
    implies (the raw format's super-node self-edges).
    """

    schema: str
    units: tuple[str, ...]
    memories: Mapping[str, int]
    node_keys: frozenset[str]
    edge_keys: frozenset[str]
    op: Callable[[Node, set[str]], Op]
    edge: Callable[[RawEdge], Edge]
    extra_edges: Callable[[list[Node]], list[Edge]] = lambda nodes: []

    def load(self, source: str | FilePath | Mapping, loop: int | None, groups: Iterable[int],
             reg_limit: int, async_units: Iterable[str]) -> Model:
        """The model of one loop of a file in this format, or of its parsed document (InputError
        naming file, key, value)."""
        path = None if isinstance(source, Mapping) else source
        try:
            doc = read_meta(source, self.schema)
            loop_path, loop_doc = pick_loop(doc, loop)
            nodes = read_nodes(loop_path, loop_doc, set(self.units) | {"NONE"})
            asyncs = check_units(async_units, self.units, "--async-units")
            for n in nodes:
                check_keys(n.data, self.node_keys, n.path)
            ops = [self.op(n, asyncs) for n in nodes]
            edges = []
            for e in read_edges(loop_path, loop_doc, {n.id: n.name for n in nodes}):
                check_keys(e.data, self.edge_keys, e.path)
                edges.append(self.edge(e))
            edges += self.extra_edges(nodes)
            machine = b200_machine(self.units, dict(self.memories), groups, reg_limit,
                                   variable_latency=any(op.variable_latency for op in ops))
            return check_model(Model(model_name(path, doc, loop_path), machine, ops, edges))
        except InputError as exc:
            raise (exc.with_file(str(path)) if path is not None else exc) from None
