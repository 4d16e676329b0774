"""The interchange formats of DESIGN section 5: model and schedule files, JSON or TOML.

Reading checks every key and value and raises InputError naming the file, the key path
(`ops[3].uses.tcc`) and the value; writing omits defaults so files stay short.
"""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from warpweave.core.model import Edge, Machine, Memory, Model, Op, Unit, WarpGroup
from warpweave.core.schedule import Schedule
from warpweave.core.validate import check_cost, check_model, check_rows
from warpweave.errors import InputError
from warpweave.outputs import output_file, write

DOCUMENT_SUFFIXES = (".json", ".toml")  # the formats written, by suffix
MODEL_FORMAT = "warpweave.model/1"
SCHEDULE_FORMAT = "warpweave.schedule/1"

_OP_KEYS = {"name", "id", "cycles", "uses", "rrt", "variable_latency", "regs", "footprint",
            "spill_cost", "warps", "async"}
_EDGE_KEYS = {"src", "dst", "delay", "distance", "kind", "blocking", "handoff",
              "handoff_local", "hold"}
_MACHINE_KEYS = {"name", "arch", "units", "memories", "warp_groups", "variable_latency_group"}
_GROUP_KEYS = {"name", "warps", "reg_limit"}
_MODEL_KEYS = {"format", "name", "machine", "ops", "edges"}
_SCHEDULE_KEYS = {"format", "model", "I", "L", "start", "group"}
# Fields `solve --json` adds; a schedule file may carry them and `verify` ignores them.
SCHEDULE_EXTRA_KEYS = {"stage", "cycle", "optimal", "lower_bound", "proof", "stages", "buffers",
                       "backend",
                       "encoding", "seconds", "scale", "status", "streaming", "paper_search",
                       "tie_breakers", "constraints", "notes", "machine", "heuristic",
                       "I_optimal", "proven_in", "stage_bound",
                       "stage_bound_needed", "semantics", "method", "gap", "lower_bound_how",
                       "plan_refits", "history", "violations"}


# ---------------------------------------------------------------------------------------------
# Reading raw files


STDIN = "-"  # the file argument that means standard input (read as JSON)


def read_text(path: str | Path) -> str:
    """The text of a file (`-`: standard input); an InputError naming it if it cannot be read or
    is not UTF-8."""
    try:
        return sys.stdin.read() if str(path) == STDIN else Path(path).read_text()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None
    except ValueError as exc:  # a path with a NUL byte
        raise InputError(f"cannot read: {exc}", file=str(path)) from None


def read_document(path: str | Path) -> dict:
    """Parse a JSON or TOML file (by extension; JSON otherwise) into a dict."""
    p = Path(path)
    text = read_text(p)
    try:
        doc = tomllib.loads(text) if p.suffix == ".toml" else _json(text)
    except InputError as exc:
        raise exc.with_file(str(path)) from None
    except RecursionError:
        raise InputError("nested too deeply", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                         file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", file=str(path)) from None
    if not isinstance(doc, dict):
        raise InputError("the top level must be an object", file=str(path))
    return doc


def _json(text: str) -> Any:
    """JSON, where an object that gives a key twice is an input error naming the key's path
    (JSON leaves repeated keys to the reader; Python's keeps the last one silently)."""
    repeated: list[tuple[dict, str, Any, Any]] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) < len(pairs) and not repeated:
            seen: dict[str, Any] = {}
            for key, value in pairs:
                if key in seen:
                    repeated.append((obj, key, seen[key], value))
                    break
                seen[key] = value
        return obj

    doc = json.loads(text, object_pairs_hook=pairs_hook)
    if repeated:
        obj, key, first, then = repeated[0]
        raise InputError(f"key given twice (first {_brief(first)}, then {_brief(then)}); "
                         "a JSON object gives each key once", _path_to(doc, obj) + (key,))
    return doc


def _brief(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 30 else text[:27] + "..."


def _path_to(doc: Any, target: dict) -> tuple:
    """The key path from `doc` to the object `target` (by identity)."""
    stack: list[tuple[Any, tuple]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        items = node.items() if isinstance(node, dict) else \
            enumerate(node) if isinstance(node, list) else ()
        stack.extend((value, path + (key,)) for key, value in items)
    return ()


class _Reader:
    """Typed access to a dict with key paths for errors."""

    def __init__(self, data: Any, path: tuple):
        self.path = path
        if not isinstance(data, Mapping):
            raise InputError("must be an object", path, data)
        self.data = data

    def keys(self, allowed: set[str]) -> None:
        for key in self.data:
            if key not in allowed:
                raise InputError(f"unknown key (allowed: {', '.join(sorted(allowed))})",
                                 self.path + (key,), self.data[key])

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def str(self, key: str, default: str | None = None, required: bool = False) -> str | None:
        if key not in self.data:
            if required:
                raise InputError("missing", self.path + (key,))
            return default
        value = self.data[key]
        if not isinstance(value, str) or not value:
            raise InputError("must be a non-empty string", self.path + (key,), value)
        return value

    def int(self, key: str, default: int | None = None, low: int = 0,
            required: bool = False) -> int | None:
        if key not in self.data:
            if required:
                raise InputError("missing", self.path + (key,))
            return default
        return _int(self.data[key], self.path + (key,), low)

    def bool(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise InputError("must be true or false", self.path + (key,), value)
        return value

    def amounts(self, key: str, low: int = 0) -> dict[str, int]:
        """A {name: non-negative integer} table."""
        sub = _Reader(self.data.get(key, {}), self.path + (key,))
        return {name: _int(v, sub.path + (name,), low) for name, v in sub.data.items()}

    def list(self, key: str) -> list:
        value = self.data.get(key, [])
        if not isinstance(value, list):
            raise InputError("must be a list", self.path + (key,), value)
        return value


def _int(value: Any, path: tuple, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("must be an integer", path, value)
    if value < low:
        raise InputError(f"must be >= {low}", path, value)
    return value


# ---------------------------------------------------------------------------------------------
# Models


def _machine(data: Any) -> Machine:
    if isinstance(data, str):
        from warpweave.core.registry import MACHINES
        try:
            built = MACHINES.get(data)
        except InputError as exc:
            raise exc.with_path(("machine",)) from None
        return built() if callable(built) else built
    r = _Reader(data, ("machine",))
    r.keys(_MACHINE_KEYS)
    groups = []
    for i, g in enumerate(r.list("warp_groups")):
        gr = _Reader(g, ("machine", "warp_groups", i))
        gr.keys(_GROUP_KEYS)
        groups.append(WarpGroup(gr.str("name", required=True), gr.int("warps", 1, low=1),
                                gr.int("reg_limit", 255)))
    vl = r.raw("variable_latency_group")
    if vl is not None and (not isinstance(vl, str) or not vl):
        raise InputError("must be a group name or null", ("machine", "variable_latency_group"), vl)
    return Machine(
        name=r.str("name", "machine"),
        arch=r.str("arch"),
        units=[Unit(n, c) for n, c in r.amounts("units").items()],
        memories=[Memory(n, c) for n, c in r.amounts("memories").items()],
        warp_groups=groups,
        variable_latency_group=vl,
    )


def _op(data: Any, i: int, rows_before: int = 0) -> tuple[Op, bool]:
    """An op and whether it was given with the `uses` shorthand (`rows_before`: the rows
    of the ops before it, so that a shorthand's rows are counted before they are made)."""
    r = _Reader(data, ("ops", i))
    r.keys(_OP_KEYS)
    if r.has("uses") and r.has("rrt"):
        raise InputError("give either uses or rrt, not both", ("ops", i, "rrt"), r.raw("rrt"))
    rows = [_Reader(row, ("ops", i, "rrt", c)) for c, row in enumerate(r.list("rrt"))]
    rrt = [{u: _int(n, row.path + (u,), 0) for u, n in row.data.items()} for row in rows]
    cycles = r.int("cycles", len(rrt) or 1, low=1)
    source_id = r.raw("id")
    if source_id is not None and (isinstance(source_id, bool) or not isinstance(
            source_id, int | str) or source_id == ""):
        raise InputError("must be an integer or a non-empty string", ("ops", i, "id"), source_id)
    common = dict(variable_latency=r.bool("variable_latency"), regs=r.int("regs", 0),
                  footprint=r.amounts("footprint"), spill_cost=r.int("spill_cost", 0),
                  warps=r.int("warps", 0), is_async=r.bool("async"), source_id=source_id)
    name = r.str("name", required=True)
    check_cost(cycles, ("ops", i, "cycles"))
    if r.has("uses"):
        uses = r.amounts("uses")
        if any(uses.values()):
            check_rows(rows_before + cycles, ("ops", i, "cycles"), cycles)
        return Op.using(name, cycles, uses, **common), True
    return Op(name, cycles, rrt=rrt, **common), False


def _edge(data: Any, i: int, cycles: Mapping[str, int]) -> Edge:
    r = _Reader(data, ("edges", i))
    r.keys(_EDGE_KEYS)
    src = r.str("src", required=True)
    kind = r.str("kind", "data")
    if kind not in ("data", "order"):
        raise InputError('must be "data" or "order"', ("edges", i, "kind"), kind)
    return Edge(src, r.str("dst", required=True), r.int("delay", cycles.get(src, 0)),
                r.int("distance", 0), kind, r.bool("blocking"), r.int("handoff"),
                r.int("handoff_local", 0), r.int("hold", 0))


def model_from_dict(doc: Mapping, default_name: str = "model") -> Model:
    """Build and check a model from a parsed document (InputError on any bad key or value)."""
    r = _Reader(doc, ())
    if "start" in doc and "ops" not in doc:
        raise InputError("a schedule file, not a model (a model gives machine, ops and edges)")
    r.keys(_MODEL_KEYS)
    fmt = r.raw("format", MODEL_FORMAT)
    if fmt != MODEL_FORMAT:
        raise InputError(f"unsupported format (this version reads {MODEL_FORMAT})", ("format",),
                         fmt)
    if not r.has("machine"):
        raise InputError("missing", ("machine",))
    machine = _machine(r.raw("machine"))
    parsed: list[tuple[Op, bool]] = []
    rows = 0
    for i, o in enumerate(r.list("ops")):
        parsed.append(_op(o, i, rows))
        rows += len(parsed[-1][0].rrt)
    ops = [op for op, _ in parsed]
    cycles = {op.name: op.cycles for op in ops}
    edges = [_edge(e, i, cycles) for i, e in enumerate(r.list("edges"))]
    model = Model(r.str("name", default_name), machine, ops, edges)
    try:
        return check_model(model)
    except InputError as exc:
        p = exc.path
        # Report reservation errors against the key the file used (`uses`, not `rrt[c]`).
        if len(p) == 5 and p[0] == "ops" and p[2] == "rrt" and parsed[p[1]][1]:
            raise exc.with_path(("ops", p[1], "uses", p[4])) from None
        raise


def load_model(path: str | Path) -> Model:
    """Read a model file; every problem is an InputError that names the file."""
    try:
        return model_from_dict(read_document(path),
                               "stdin" if str(path) == STDIN else Path(path).stem)
    except InputError as exc:
        raise exc.with_file(str(path)) from None


def model_to_dict(model: Model) -> dict:
    """The document form of a model, defaults omitted."""
    m = model.machine
    groups = []
    for g in m.warp_groups:
        groups.append({"name": g.name, "warps": g.warps, "reg_limit": g.reg_limit})
    machine: dict[str, Any] = {"name": m.name, **({"arch": m.arch} if m.arch else {}),
                               "units": {u.name: u.capacity for u in m.units},
                               "memories": {x.name: x.capacity for x in m.memories},
                               "warp_groups": groups}
    if m.variable_latency_group is not None:
        machine["variable_latency_group"] = m.variable_latency_group
    ops = []
    for op in model.ops:
        d: dict[str, Any] = {"name": op.name}
        if op.source_id is not None:
            d["id"] = op.source_id
        d["cycles"] = op.cycles
        uniform = op.uniform_use()
        if uniform is not None:
            if uniform:
                d["uses"] = uniform
        else:
            d["rrt"] = [dict(row) for row in op.rrt]
        for key, value, default in (("variable_latency", op.variable_latency, False),
                                    ("regs", op.regs, 0), ("footprint", dict(op.footprint), {}),
                                    ("spill_cost", op.spill_cost, 0), ("warps", op.warps, 0),
                                    ("async", op.is_async, False)):
            if value != default:
                d[key] = value
        ops.append(d)
    cycles = {op.name: op.cycles for op in model.ops}
    spill = {op.name: op.spill_cost for op in model.ops}
    edges = []
    for e in model.edges:
        d = {"src": e.src, "dst": e.dst}
        if e.delay != cycles[e.src]:
            d["delay"] = e.delay
        for key, value, default in (("distance", e.distance, 0), ("kind", e.kind, "data"),
                                    ("blocking", e.blocking, False),
                                    ("handoff", e.handoff, spill[e.src]),
                                    ("handoff_local", e.handoff_local, 0),
                                    ("hold", e.hold, 0)):
            if value != default:
                d[key] = value
        edges.append(d)
    return {"format": MODEL_FORMAT, "name": model.name, "machine": machine, "ops": ops,
            "edges": edges}


def dumps(doc: dict, toml: bool = False) -> str:
    """A document as JSON (indented, one op or edge per line) or TOML."""
    if toml:
        return tomli_w.dumps(doc)
    lines = []
    for key, value in doc.items():
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            inner = ",\n".join("    " + json.dumps(x) for x in value)
            lines.append(f"  {json.dumps(key)}: [\n{inner}\n  ]")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write_document(doc: dict, path: str | Path, option: str = "--out") -> Path:
    """Write `doc` as JSON or TOML, as the suffix says (another suffix is an input error naming
    `option`), atomically (`warpweave.outputs`)."""
    p = output_file(path, option, DOCUMENT_SUFFIXES)
    return write(p, dumps(doc, toml=p.suffix == ".toml"), option)


# ---------------------------------------------------------------------------------------------
# Schedules


def schedule_from_dict(doc: Mapping, model: Model) -> Schedule:
    """Build a schedule for `model` from a parsed document, checking every op and group name."""
    r = _Reader(doc, ())
    if "ops" in doc and "start" not in doc:
        raise InputError("a model file, not a schedule (a schedule gives I, start and group)")
    r.keys(_SCHEDULE_KEYS | SCHEDULE_EXTRA_KEYS)
    fmt = r.raw("format", SCHEDULE_FORMAT)
    if fmt != SCHEDULE_FORMAT:
        raise InputError(f"unsupported format (this version reads {SCHEDULE_FORMAT})",
                         ("format",), fmt)
    named = r.str("model")
    if named is not None and named != model.name:
        raise InputError(f"the schedule is for model {named!r}, not {model.name!r}", ("model",),
                         named)
    I = r.int("I", low=1, required=True)  # noqa: E741
    start_r = _Reader(r.raw("start", {}), ("start",))
    group_r = _Reader(r.raw("group", {}), ("group",))
    groups = {g.name for g in model.machine.warp_groups}
    for sub in (start_r, group_r):
        for name in sub.data:
            if not model.has_op(name):
                raise InputError("unknown op", sub.path + (name,), name)
    start, group = {}, {}
    for op in model.op_names:
        start[op] = start_r.int(op, low=0, required=True)
        if op not in group_r.data and len(groups) == 1:
            group[op] = next(iter(groups))
            continue
        g = group_r.str(op, required=True)
        if g not in groups:
            raise InputError(f"unknown warp group (groups: {', '.join(sorted(groups))})",
                             ("group", op), g)
        group[op] = g
    tight = max(start[op.name] + op.cycles for op in model.ops)
    return Schedule(model.name, I, r.int("L", tight, low=1), start, group)


def load_schedule(path: str | Path, model: Model) -> Schedule:
    try:
        return schedule_from_dict(read_document(path), model)
    except InputError as exc:
        raise exc.with_file(str(path)) from None


def schedule_report(model: str, schedule: Schedule | None, extra: dict,
                    buffers: dict[str, int] | None = None) -> dict:
    """What `solve --json` and `heuristic --json` print: the schedule format with their `extra`
    fields, `stages` and `buffers` when there is a schedule, and `"I": null` when there is none."""
    if schedule is None:
        return {"format": SCHEDULE_FORMAT, "model": model, "I": None, **extra}
    extra = {**extra, "stage": {v: schedule.stage(v) for v in schedule.start},
             "cycle": {v: t % schedule.I for v, t in schedule.start.items()},
             "stages": schedule.stages}
    if buffers is not None:
        extra["buffers"] = buffers
    return schedule_to_dict(schedule, **extra)


def schedule_to_dict(schedule: Schedule, **extra: Any) -> dict:
    """The schedule format of DESIGN section 5 plus any `extra` fields (`optimal`, `proof`, ...)."""
    doc = {"format": SCHEDULE_FORMAT, "model": schedule.model, "I": schedule.I, "L": schedule.L,
           "start": dict(schedule.start), "group": dict(schedule.group)}
    doc.update(extra)
    return doc
