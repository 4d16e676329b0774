"""Text printers of a schedule and its warp programs: the Q table (the paper's Figure 1e), the
pipelined pseudocode per warp group (Figure 1f) and the annotated warp-program IR."""

from __future__ import annotations

import json

import attrs

from warpweave.codegen.warp_ir import (
    ArriveEmpty,
    ArriveFull,
    Commit,
    GroupProgram,
    Instr,
    Issue,
    NamedArrive,
    NamedSync,
    WaitEmpty,
    WaitFull,
    WaitGroup,
    WarpProgram,
)
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule, straight_line


def q_table(model: Model, schedule: Schedule, fold: bool = False) -> str:
    """Q as a table: one row per cycle, one column per unit and per group, `op<copy>` in cells;
    the steady-state rows (the last I rows before the epilogue) are marked.  With `fold`, only
    the cycles where an op issues have a row, and each run of cycles between them is one row
    saying how many there are (Q has a row per cycle: thousands for a kernel in cycles)."""
    q = straight_line(model, schedule)
    units = [u.name for u in model.machine.units]
    groups = [g.name for g in model.machine.warp_groups if g.name in schedule.group.values()]
    cells: dict[tuple[int, str], list[str]] = {}
    for x in q.instances:
        op = model.op(x.op)
        for c, unit, _ in op.usage():
            cells.setdefault((x.issue + c, unit), []).append(f"{x.op}{x.copy}")
        cells.setdefault((x.issue, schedule.group[x.op]), []).append(f"{x.op}{x.copy}")
    lo, hi = (q.S - 1) * q.I, q.S * q.I
    head = ["cycle"] + units + [f"@{g}" for g in groups] + [""]
    rows = [head]
    issued = {x.issue for x in q.instances}
    t = 0
    while t < q.T:
        if fold and t not in issued:
            end = next((u for u in range(t, q.T) if u in issued), q.T)
            rows.append([f"{t}-{end - 1}" if end - t > 1 else str(t)]
                        + [""] * (len(units) + len(groups))
                        + [f"{end - t} cycle{'s' * (end - t != 1)} without an issue"])
            t = end
            continue
        mark = "steady" if lo <= t < hi else ("prologue" if t < lo else "epilogue")
        rows.append([str(t)] + [" ".join(cells.get((t, c), [])) for c in units + groups] + [mark])
        t += 1
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


def _index(lag: int, k: int | None, e: int | None, n: str = "n") -> str:
    """Iteration `k - lag` as text: a number in the prologue, `i-lag` in the loop, `n-..` after."""
    if k is not None:
        return str(k - lag)
    if e is not None:
        off = e - lag
        return n if off == 0 else f"{n}{off:+d}"
    return "i" if lag == 0 else f"i-{lag}"


def _line(model: Model, p: WarpProgram, x: Instr, k: int | None, e: int | None) -> str | None:
    ix = lambda lag: _index(lag, k, e)  # noqa: E731
    if isinstance(x, Issue):
        args = ", ".join(f"{r.value}[{ix(r.lag)}]" for r in x.reads)
        lhs = f"{x.op}[{ix(x.lag)}] = " if x.op in p.plan.buffers else ""
        return f"{lhs}{x.op}({args})"
    if isinstance(x, WaitFull):
        return f"get {x.channel}[{ix(x.lag)}]"
    if isinstance(x, WaitEmpty):
        return f"put {x.channel}[{ix(x.lag)}]  // waits for a free slot"
    if isinstance(x, ArriveFull):
        return None  # part of put: published when the op completes
    if isinstance(x, ArriveEmpty):
        return f"consumed {x.channel}[{ix(x.lag)}]"
    if isinstance(x, Commit):
        return "commit_group()"
    if isinstance(x, WaitGroup):
        return f"wait_group({x.n})"
    if isinstance(x, NamedSync | NamedArrive):
        verb = "sync" if isinstance(x, NamedSync) else "arrive"
        return f"bar.{verb} {x.channel}.{x.barrier}  // named barrier {x.id}, {x.threads} threads"
    return str(x)


def pseudocode(model: Model, p: WarpProgram) -> str:
    """The pipelined loop per warp group: prologue, steady state, epilogue (Figure 1f)."""
    out = [f"// {p.model}: I={p.I}, L={p.L}, {p.S} stage{'s' * (p.S != 1)}; "
           f"a loop of n >= {p.min_iterations} iterations"]
    if p.plan.buffers:
        out.append("// buffers: " + ", ".join(
            f"{b.value} x{b.depth} ({b.space})" for b in p.plan.buffers.values()))
    for name, ch in p.plan.channels.items():
        out.append(f"// channel {name}: {ch.group} -> {', '.join(ch.consumers) or ch.group}, "
                   f"{ch.depth} slot{'s' * (ch.depth != 1)}, {ch.lowering}")
    out.append("// X[j] is the value of iteration j; j < 0 is the value from before the loop")
    for g in p.groups:
        out.append("")
        out.append(f"group {g.group}:  // {g.warps} warps, {g.reg_limit} registers")
        out += _group_code(model, p, g)
    return "\n".join(out) + "\n"


def _group_code(model: Model, p: WarpProgram, g: GroupProgram) -> list[str]:
    e_max = g.depth
    out = []
    if g.preamble:
        out += ["  " + _line(model, p, x, 0, None) for x in g.preamble]
    big = 10 ** 6  # stands for "n large enough" when choosing what each trip contains
    if e_max:
        out.append("  // Prologue.")
        for k in range(e_max):
            xs = [_line(model, p, x, k, None) for x in g.trip(k, big)]
            out += ["  " + s for s in xs if s]
    out.append("  // Steady state.")
    out.append(f"  for i in {e_max} .. n-1:")
    xs = [_line(model, p, x, None, None) for x in g.body]
    out += ["    " + s for s in xs if s]
    if e_max:
        out.append("  // Epilogue.")
        for e in range(e_max):
            present = [x for x in g.body if not isinstance(x, Commit) and x.lag >= e + 1]
            xs = [_line(model, p, x, None, e) for x in present]
            out += ["  " + s for s in xs if s]
    if g.drain:
        out += ["  " + _line(model, p, x, 0, None) for x in g.drain]
    return out


def ir_text(p: WarpProgram) -> str:
    """The warp-program IR: plan, then each group's preamble, trip template and drain."""
    out = [f"warp program {p.model}: I={p.I} L={p.L} S={p.S} min_iterations={p.min_iterations}"]
    for b in p.plan.buffers.values():
        out.append(f"buffer {b.value}: depth {b.depth} in {b.space} ({b.reason})")
    for name, ch in p.plan.channels.items():
        readers = ", ".join(f"{r.op}@{r.group} lag {r.lag}{' anti' if r.anti else ''}"
                            for r in ch.readers)
        ids = f" ids {ch.named_ids}" if ch.named_ids else ""
        out.append(f"channel {name}: {ch.group} -> [{', '.join(ch.consumers)}] depth "
                   f"{ch.depth} {ch.lowering}{ids}, publish at +{ch.arrive_delay}"
                   f"{', self-wait' if ch.self_wait else ''}; readers {readers}")
    for note in p.notes:
        out.append(f"note: {note}")
    for g in p.groups:
        out.append(f"group {g.group} ({g.warps} warps, reg_limit {g.reg_limit}), E={g.depth}:")
        for label, xs in (("preamble", g.preamble), ("trip k", g.body), ("drain", g.drain)):
            if xs:
                out.append(f"  {label}:")
                out += [f"    {_ir_line(x)}" for x in xs]
    return "\n".join(out) + "\n"


def _ir_line(x: Instr) -> str:
    fields = attrs.asdict(x, recurse=False)
    name = type(x).__name__
    if isinstance(x, Issue):
        reads = " ".join(f"{r.value}@k-{r.lag}" for r in x.reads)
        haz = " ".join(f"{h.op}@k-{h.lag}+{h.delay}" for h in x.hazards)
        return (f"issue {x.op}@k-{x.lag}" + (f" reads {reads}" if reads else "")
                + (f" after {haz}" if haz else ""))
    if isinstance(x, WaitFull | WaitEmpty):
        return f"{name} {x.channel} slot (k-{x.lag}) mod D, parity from (k-{x.lag}) div D"
    rest = " ".join(f"{k}={v}" for k, v in fields.items())
    return f"{name} {rest}"


def ir_json(p: WarpProgram) -> str:
    """The IR as JSON (every instruction with its kind), for tools."""
    def inst(x: Instr) -> dict:
        return {"kind": type(x).__name__, **attrs.asdict(x)}
    doc = {"format": "warpweave.warp-program/1", "model": p.model, "I": p.I, "L": p.L, "S": p.S,
           "min_iterations": p.min_iterations,
           "buffers": {k: attrs.asdict(b) for k, b in p.plan.buffers.items()},
           "channels": {k: attrs.asdict(c) for k, c in p.plan.channels.items()},
           "steady_state": [attrs.asdict(x) for x in p.plan.steady],
           "memory": [attrs.asdict(x) for x in p.plan.memory],
           "notes": list(p.notes),
           "groups": [{"group": g.group, "warps": g.warps, "reg_limit": g.reg_limit,
                       "preamble": [inst(x) for x in g.preamble],
                       "body": [inst(x) for x in g.body],
                       "drain": [inst(x) for x in g.drain]} for g in p.groups]}
    return json.dumps(doc, indent=1)
