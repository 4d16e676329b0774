"""Lower a valid schedule to warp programs: per group, one trip of the steady-state loop.

Op `v` issues in trip `k` for iteration `k - stage(v)` at offset `M(v) mod I`; a group's ops are
ordered by offset, ties broken so that a zero-delay producer precedes its reader and a reader of a
slot precedes the op that refills that slot in the same cycle.  Around each issue go the
synchronizations its edges need (`buffers.edge_sync`): nothing for in-group fixed-latency edges,
commit / wait-group for in-group async MMAs, aref waits and arrivals for channels.
"""

from __future__ import annotations

from collections.abc import Mapping

from warpweave.codegen.buffers import Channel, Plan, async_kind, edge_sync, plan
from warpweave.codegen.warp_ir import (
    ArriveEmpty,
    ArriveFull,
    Commit,
    GroupProgram,
    Hazard,
    Instr,
    Issue,
    NamedArrive,
    NamedSync,
    Read,
    WaitEmpty,
    WaitFull,
    WaitGroup,
    WarpProgram,
)
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule


def _order(model: Model, s: Schedule, p: Plan, ops: list[str]) -> tuple[list[str], set[str]]:
    """The ops of one group in trip order, and the values whose same-cycle read-before-refill
    order is cyclic (each needs one more slot)."""
    index = {v: i for i, v in enumerate(model.op_names)}
    before: dict[str, set[str]] = {v: set() for v in ops}
    refill: dict[str, set[str]] = {v: set() for v in ops}
    mine = set(ops)
    for e in model.edges:
        u, v = e.src, e.dst
        if u not in mine or v not in mine or u == v or s.start[u] % s.I != s.start[v] % s.I:
            continue
        gap = s.stage(v) + e.distance - s.stage(u)
        if gap == 0:
            before[v].add(u)  # same trip, same offset: the producer goes first
        elif e.is_data and u in p.buffers and gap % p.buffers[u].depth == 0:
            before[u].add(v)  # v reads the slot that u refills in this very cycle
            refill[u].add(v)
    out, cyclic = [], set()
    for off in sorted({s.start[v] % s.I for v in ops}):
        pending = sorted((v for v in ops if s.start[v] % s.I == off), key=index.__getitem__)
        while pending:
            ready = [v for v in pending if not (before[v] & set(pending))]
            if not ready:
                cyclic |= {u for u in pending if refill[u] & set(pending)}
                ready = pending
            out.append(ready[0])
            pending.remove(ready[0])
    return out, cyclic


def _channel_points(ch: Channel, group: str, pos: dict[str, int]):
    """The first and the last reader in `group` of one instance of the channel (or Nones)."""
    mine = [r for r in ch.readers if r.group == group]
    if not mine:
        return None, None
    first = min(mine, key=lambda r: (r.lag, pos[r.op]))
    last = max(mine, key=lambda r: (r.lag, pos[r.op]))
    return first, last


def _wait_counts(body: list[Instr | tuple]) -> list[Instr]:
    """Replace each reader's ("waitgroup", lag, {(op, lag): delay}) placeholder by its own
    WaitGroup: the instances it needs with its own edges' delays, and the wgmma count `n` that
    waits for them (the commits after the newest awaited one, counted around the trip)."""
    commits = [i for i, x in enumerate(body) if isinstance(x, Commit)]
    where = {x.op: (i, x.lag) for i, x in enumerate(body) if isinstance(x, Commit)}
    out: list[Instr] = []
    for i, x in enumerate(body):
        if not isinstance(x, tuple):
            out.append(x)
            continue
        _, lag, waits = x
        ns = []
        for op, wlag in waits:
            pc, clag = where[op]
            trips_back = wlag - clag
            if trips_back == 0:
                ns.append(sum(1 for c in commits if pc < c < i))
            else:
                ns.append(sum(1 for c in commits if c > pc) + (trips_back - 1) * len(commits)
                          + sum(1 for c in commits if c < i))
        out.append(WaitGroup(min(ns), lag, tuple((op, wl, d) for (op, wl), d in waits.items())))
    return out


def lower(model: Model, s: Schedule, depths: Mapping[str, int] | None = None,
          named_barriers: bool = True) -> WarpProgram:
    """The warp programs of a valid schedule (`depths` overrides ring depths, for experiments)."""
    extra: dict[str, str] = {}
    while True:  # give one more slot to values read and refilled in a cyclic same-cycle order
        p = plan(model, s, depths, named_barriers, extra)
        more = {}
        for g in model.machine.warp_groups:
            mine = [v for v in model.op_names if s.group[v] == g.name]
            for v in _order(model, s, p, mine)[1]:
                more[v] = f"read and refilled in one cycle of group {g.name}, in a cyclic order"
        if not more.keys() - extra.keys() or depths:
            break
        extra.update(more)
    notes = list(p.notes)
    groups = []
    for g in model.machine.warp_groups:
        ops = [v for v in model.op_names if s.group[v] == g.name]
        if not ops:
            continue
        order, cyclic = _order(model, s, p, ops)
        if cyclic:  # only with overridden depths
            notes.append(f"group {g.name}: same-cycle order among {', '.join(sorted(cyclic))} "
                         "is cyclic; the simulator will flag the race")
        groups.append(_group_program(model, s, p, g.name, order, notes))
    return WarpProgram(model.name, s.I, s.L, s.stages, tuple(groups), p, tuple(notes))


def _group_program(model: Model, s: Schedule, p: Plan, group: str,
                   order: list[str], notes: list[str]) -> GroupProgram:
    """One group's stream: for each op in trip order, its waits, its issue, its arrivals (and
    what the hardware will do differently, in `notes`)."""
    warps = {g.name: g.warps for g in model.machine.warp_groups}
    pos = {v: i for i, v in enumerate(order)}
    points = {name: _channel_points(ch, group, pos) for name, ch in p.channels.items()}
    body: list = []
    for v in order:
        sv = s.stage(v)
        hazards, waits = [], {}
        for e in model.in_edges(v):
            kind = edge_sync(model, s, e)
            if kind == "local":
                hazards.append(Hazard(e.src, sv + e.distance, e.delay))
            elif kind == "mma":  # this reader's own need: its edge's delay
                key = (e.src, sv + e.distance)
                waits[key] = max(waits.get(key, 0), e.delay)
                if e.delay < model.op(e.src).cycles:
                    notes.append(f"{e.src} -> {v}: delay {e.delay} < {model.op(e.src).cycles} "
                                 f"cycles of the async {e.src}; the simulator takes the model's "
                                 "delay, the hardware signals completion at the end")
        if waits:
            body.append(("waitgroup", sv, waits))
        for name, ch in p.channels.items():  # aref get: before the first reader of an instance
            first = points[name][0]
            if first is not None and first.op == v:
                body.append(NamedSync(name, "full", ch.named_ids[0], _threads(ch, warps),
                                      first.lag) if ch.lowering == "named"
                            else WaitFull(name, first.lag))
        ch = p.channels.get(v)
        if ch is not None and ch.consumers:  # aref put: wait for a free slot
            body.append(NamedSync(v, "empty", ch.named_ids[1], _threads(ch, warps), sv)
                        if ch.lowering == "named" else WaitEmpty(v, sv))
        reads = tuple(Read(e.src, sv + e.distance) for e in model.in_edges(v) if e.is_data)
        body.append(Issue(v, sv, reads, tuple(hazards)))
        if async_kind(model.op(v)) == "mma":
            body.append(Commit(v, sv))
        if ch is not None:  # publish when the op completes
            body.append(NamedArrive(v, "full", ch.named_ids[0], _threads(ch, warps), sv, after=v)
                        if ch.lowering == "named" else ArriveFull(v, sv, v))
        for name, ch2 in p.channels.items():  # aref consumed: after the last reader
            last = points[name][1]
            if last is None or last.op != v or ch2.group == group:
                continue
            if ch2.lowering == "named":
                body.append(NamedArrive(name, "empty", ch2.named_ids[1], _threads(ch2, warps),
                                        last.lag))
                continue
            anti = [r for r in ch2.readers_in(group) if r.anti]
            after = max(anti, key=lambda r: (r.lag, pos[r.op])) if anti else None
            # the anti-dependent reader of this instance runs as iteration instance + distance
            lag = last.lag - after.lag + s.stage(after.op) if after else 0
            body.append(ArriveEmpty(name, last.lag, after.op if after else None, lag))
    preamble, drain = [], []
    for name, ch in p.channels.items():
        if ch.lowering != "named":
            continue
        if group in ch.consumers:  # the slot starts empty: one credit up front
            preamble.append(NamedArrive(name, "empty", ch.named_ids[1], _threads(ch, warps), 0))
        if group == ch.group:  # take the last credit so the barrier ends balanced
            drain.append(NamedSync(name, "empty", ch.named_ids[1], _threads(ch, warps), 0))
    g = next(x for x in model.machine.warp_groups if x.name == group)
    return GroupProgram(group, g.warps, g.reg_limit, tuple(_wait_counts(body)), tuple(preamble),
                        tuple(drain))


def _threads(ch: Channel, warps: dict[str, int]) -> int:
    return 32 * (warps[ch.group] + sum(warps[c] for c in ch.consumers))
