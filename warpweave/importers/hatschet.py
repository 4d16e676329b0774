"""HatScheT modulo-scheduling benchmarks: a GraphML dependence graph plus a resource-model XML.

A vertex uses one resource (`uses_resource`); the resource gives its `latency`, its
`blockingTime` (cycles it holds an instance) and its `limit` (instances; `-1` or `inf`:
unlimited).  HatScheT's edge constraint is `t(src) + latency(res(src)) + delay <= t(dst) +
distance * II`, so our edge delay is `latency(res(src)) + delay`.  A limited resource becomes a
unit of capacity `limit`, held for the op's first `blockingTime` cycles; an unlimited resource
becomes no unit (it can never conflict).  One warp group, no memories.  The files have no
`<key>` declarations, so they are read as plain XML.  Details: `docs/importers.md`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import attrs

from warpweave.core.model import Edge, Machine, Model, Op, Unit, WarpGroup
from warpweave.core.validate import check_model
from warpweave.errors import InputError
from warpweave.importers.fields import as_int

UNLIMITED = ("-1", "inf")


@attrs.frozen
class Resource:
    """A resource of the RM file; `limit` None means unlimited."""

    name: str
    limit: int | None
    latency: int
    blocking: int


def default_resource_model(graph: str | Path) -> Path:
    """`<stem>_RM.xml` beside the graph (CHStone, MachSuite), else `<stem>RM.xml` (origami)."""
    g = Path(graph)
    candidates = [g.with_name(g.stem + "_RM.xml"), g.with_name(g.stem + "RM.xml")]
    for c in candidates:
        if c.exists():
            return c
    raise InputError(f"no resource model beside the graph (tried {candidates[0].name}, "
                     f"{candidates[1].name}); give one with --rm", file=str(graph))


def _parse(path: Path) -> ET.Element:
    try:
        return ET.parse(path).getroot()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except ET.ParseError as exc:
        line, col = exc.position
        raise InputError(f"malformed XML at line {line} column {col}", file=str(path)) from None
    except (LookupError, ValueError) as exc:  # e.g. an unknown encoding in the XML declaration
        raise InputError(f"unreadable XML: {exc}", file=str(path)) from None


def _tag(el: ET.Element) -> str:
    return el.tag.rsplit("}", 1)[-1]


def _elements(root: ET.Element, tag: str) -> list[ET.Element]:
    return [el for el in root.iter() if _tag(el) == tag]


def _attr(el: ET.Element, key: str, path: tuple) -> str:
    value = el.get(key)
    if value is None:
        raise InputError("missing", path + (key,))
    return value.strip()


def read_resources(path: str | Path) -> dict[str, Resource]:
    """The `<Resource>` elements of a resource-model file, by name."""
    path = Path(path)
    try:
        root = _parse(path)
        if _tag(root) != "ModelInformation":
            raise InputError("not a HatScheT resource model (root element)", (), _tag(root))
        out: dict[str, Resource] = {}
        for i, el in enumerate(_elements(root, "Resource")):
            p = ("Resource", i)
            name = _attr(el, "name", p).replace(" ", "")
            if name in out:
                raise InputError("duplicate resource", p + ("name",), name)
            limit_text = _attr(el, "limit", p)
            limit = None if limit_text in UNLIMITED else as_int(limit_text, p + ("limit",))
            out[name] = Resource(name, limit, as_int(_attr(el, "latency", p), p + ("latency",)),
                                 as_int(_attr(el, "blockingTime", p), p + ("blockingTime",)))
        return out
    except InputError as exc:
        raise exc.with_file(str(path)) from None


def _data(el: ET.Element) -> dict[str, str]:
    """A GraphML element's `<data key=...>` children; HatScheT strips every space."""
    return {d.get("key", ""): (d.text or "").replace(" ", "").strip()
            for d in el if _tag(d) == "data"}


def _field(data: dict[str, str], key: str, path: tuple) -> str:
    if key not in data:
        raise InputError("missing", path + (key,))
    return data[key]


def _ops(graph: ET.Element, resources: dict[str, Resource],
         rm_name: str) -> tuple[list[Op], dict[str, Resource], dict[str, str]]:
    """Ops, the resource of each op, and op names by GraphML node id."""
    ops, used, names = [], {}, {}
    for i, el in enumerate(_elements(graph, "node")):
        p = ("node", i)
        node_id = str(as_int(_attr(el, "id", p), p + ("id",)))
        if node_id in names:
            raise InputError("duplicate node id", p + ("id",), node_id)
        data = _data(el)
        name = _field(data, "name", p)
        if name in used:
            raise InputError("duplicate node name", p + ("name",), name)
        res_name = _field(data, "uses_resource", p)
        res = resources.get(res_name)
        if res is None:
            raise InputError(f"unknown resource (not in {rm_name})", p + ("uses_resource",),
                             res_name)
        rows = [{res.name: 1}] * res.blocking if res.limit is not None else []
        ops.append(Op(name, max(1, res.latency, res.blocking), rrt=rows,
                      source_id=int(node_id)))
        used[name], names[node_id] = res, name
    if not ops:
        raise InputError("the graph has no node", ("node",), [])
    return ops, used, names


def _edges(graph: ET.Element, used: dict[str, Resource], names: dict[str, str]) -> list[Edge]:
    edges = []
    for i, el in enumerate(_elements(graph, "edge")):
        p = ("edge", i)
        ends = []
        for key in ("source", "target"):
            node_id = _attr(el, key, p)
            if node_id not in names:
                raise InputError("no node with this id", p + (key,), node_id)
            ends.append(names[node_id])
        data = _data(el)
        # The older cTest variant names the delay `latency` and has no distance (HatScheT: 0).
        delay_key = "delay" if "delay" in data or "latency" not in data else "latency"
        delay = as_int(_field(data, delay_key, p), p + (delay_key,))
        distance = as_int(data.get("distance", "0"), p + ("distance",))
        deptype = data.get("deptype", "Data")
        if deptype not in ("Data", "Precedence"):
            raise InputError('must be "Data" or "Precedence"', p + ("deptype",), deptype)
        edges.append(Edge(ends[0], ends[1], used[ends[0]].latency + delay, distance,
                          "data" if deptype == "Data" else "order"))
    return edges


def model_name(graph: Path) -> str:
    """`adpcm-graph3` for the numbered graphs of an application folder, else the file stem."""
    return f"{graph.parent.name}-{graph.stem}" if graph.stem.startswith("graph") else graph.stem


def import_hatschet(path: str | Path, rm: str | Path | None = None) -> Model:
    """The model of a HatScheT graph and its resource model (default: the RM file beside it)."""
    graph_path = Path(path)
    rm_path = Path(rm) if rm is not None else default_resource_model(graph_path)
    resources = read_resources(rm_path)
    try:
        root = _parse(graph_path)
        if _tag(root) != "graphml":
            raise InputError("not a GraphML file (root element)", (), _tag(root))
        ops, used, names = _ops(root, resources, rm_path.name)
        edges = _edges(root, used, names)
        units = [Unit(r.name, r.limit) for r in resources.values() if r.limit is not None]
        machine = Machine("hatschet", units, (), [WarpGroup("g0", 1)])
        return check_model(Model(model_name(graph_path), machine, ops, edges))
    except InputError as exc:
        raise exc.with_file(str(graph_path)) from None
