"""Buffers and channels derived from a valid schedule (DESIGN section 6).

Every value with a data use gets a ring of `depth` slots (instance `j` lives in slot `j mod depth`).
The depth is the number of simultaneously live copies in the steady-state loop: a value issued at
M(u) and last read at M(u) + life lives in ceil(life / I) overlapping copies.  In Q's steady-state
window Q's liveness is the loop's, minus copies from before Q, so Q never counts more there; at
Q's end rule 4 keeps values used beyond Q live to T+1, which is not a property of the loop.  An
anti-dependence - an order edge c -> p where c reads p's value - says the slot stays busy until c
completes; with data distance dd and order distance da the ring needs dd + da slots.

Every op whose results or order constraints cross warp groups gets a channel (Tawa's aref): the
producer's completion arrives on `full[slot]`, each consumer group waits on it with the parity of
the instance's round and arrives on `empty[slot]` once its last reader has issued, and the producer
waits on `empty[slot]` before writing the slot again.  A channel is at least as deep as its largest
iteration distance, so every instance that is overwritten is also read.

The steady-state peaks (`steady_peaks`) apply rule 4's liveness to the infinite loop.  A value read
at distance D > 0 lives into stage S or later, where the loop overlaps it with iterations Q does
not have (Q has S copies; rule 4 keeps such a value live to T+1, but no later copy is there), so
the loop of a valid schedule can need more registers or memory than a limit (fa-bwd on H100: dk
of iteration j-1 with qk and dp of iteration j).  This is a report on the emitted loop; DESIGN's
semantics (Q) is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from warpweave.core.errors import InputError
from warpweave.core.model import Edge, Model, Op
from warpweave.core.schedule import Schedule

_MMA_WORDS = ("tc", "mma", "tensor", "gemm", "umma", "wgmma")


def async_kind(op: Op) -> str | None:
    """How an async op's completion is observed: "mma" (commit / wait-group) or "copy" (mbarrier).

    The model has no field for it, so the units decide: an async op on a tensor-core-like unit
    (name containing tc, mma, tensor, gemm) is an MMA, any other async op a copy (TMA-like)."""
    if not op.is_async:
        return None
    units = {u.lower() for _, u, _ in op.usage()}
    return "mma" if any(w in u for u in units for w in _MMA_WORDS) else "copy"


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@attrs.frozen
class Buffer:
    """The ring of one value: `depth` slots; `space` is where it lives (a memory name or "reg")."""

    value: str
    depth: int
    space: str
    life: int
    reason: str


@attrs.frozen
class Reader:
    """A consumer of a channel: op `op` on `group`, reading instance k - `lag` in trip k."""

    op: str
    group: str
    lag: int
    data: bool
    anti: bool = False


@attrs.frozen
class Channel:
    """An aref for the cross-group uses of op `producer`: full/empty barrier rings of `depth`.

    `consumers` are the other groups that wait on `full` and arrive on `empty`; `self_wait` says
    the producer's own group also waits on `full` (an async copy read in its own group).
    `arrive_delay` is when, after the producer issues, the hand-off is complete (delay + spill).
    `lowering` is "mbarrier" or "named" (a depth-1 register hand-off through named barriers)."""

    producer: str
    group: str
    depth: int
    consumers: tuple[str, ...]
    readers: tuple[Reader, ...]
    arrive_delay: int
    self_wait: bool = False
    lowering: str = "mbarrier"
    named_ids: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.producer

    def readers_in(self, group: str) -> list[Reader]:
        return [r for r in self.readers if r.group == group]


@attrs.frozen
class SteadyPeak:
    """The largest weight live in the steady-state loop in one pool ("registers" of a group or a
    "memory"), at modulo slot `slot`, with `copies` (value, live copies) there: the witness."""

    kind: str
    pool: str
    peak: int
    limit: int
    slot: int
    copies: tuple[tuple[str, int], ...]

    @property
    def exceeds(self) -> bool:
        return self.peak > self.limit

    def __str__(self) -> str:
        held = ", ".join(f"{v} x{n}" for v, n in self.copies)
        return (f"{self.kind} {self.pool} {self.peak} {'>' if self.exceeds else '<='} "
                f"{self.limit} at slot {self.slot} ({held})")


@attrs.frozen
class Plan:
    """Buffers and channels of a schedule, how each edge is synchronized, and the loop's
    steady-state register and memory peaks."""

    buffers: Mapping[str, Buffer]
    channels: Mapping[str, Channel]
    anti: tuple[Edge, ...]
    notes: tuple[str, ...] = ()
    steady: tuple[SteadyPeak, ...] = ()


def _span(s: Schedule, e: Edge) -> int:
    """Cycles from the producer's issue to the consumer's issue across the edge."""
    return s.start[e.dst] + e.distance * s.I - s.start[e.src]


def steady_peaks(model: Model, s: Schedule) -> tuple[SteadyPeak, ...]:
    """Per group (registers) and memory (footprint), the loop's peak live weight over modulo
    slots: the loop can hold more at once than Q, where the verifier checks the limits.  Rule 4
    with no end of Q: instance j of v is live on [M(v) + j*I, its latest data read)."""
    life = {op.name: max((_span(s, e) for e in model.out_edges(op.name) if e.is_data), default=0)
            for op in model.ops}

    def copies(v: str, r: int) -> int:
        """Instances of v live at cycle r (any r: the count repeats every I)."""
        return (r - s.start[v]) // s.I - (r - s.start[v] - life[v]) // s.I

    pools = [("registers", g.name, g.reg_limit,
              lambda op, g=g.name: op.regs if s.group[op.name] == g else 0)
             for g in model.machine.warp_groups]
    pools += [("memory", m.name, m.capacity, lambda op, m=m.name: op.footprint_in(m))
              for m in model.machine.memories]
    # Live weight only rises where some instance issues, so those slots hold every peak.
    slots = sorted({t % s.I for t in s.start.values()})
    peaks = []
    for kind, pool, limit, weight in pools:
        best = None
        for r in slots:
            held = [(op, copies(op.name, r)) for op in model.ops if weight(op)]
            held = [(op, n) for op, n in held if n]
            total = sum(weight(op) * n for op, n in held)
            if best is None or total > best.peak:
                best = SteadyPeak(kind, pool, total, limit, r,
                                  tuple((op.name, n) for op, n in held))
        peaks.append(best)
    return tuple(peaks)


def anti_dependences(model: Model) -> list[Edge]:
    """Order edges c -> p such that c reads p's value (a data edge p -> c): buffer reuse."""
    readers = {(e.src, e.dst) for e in model.edges if e.is_data}
    return [e for e in model.edges if not e.is_data and (e.dst, e.src) in readers]


def edge_sync(model: Model, s: Schedule, e: Edge) -> str:
    """How edge e is enforced: "cross" (a channel), "mma" (commit / wait-group), "copy" (wait on
    the producer's full barrier in its own group) or "local" (in-order issue and fixed latency;
    also MMA -> MMA in one group, which the tensor core orders itself)."""
    if s.group[e.src] != s.group[e.dst]:
        return "cross"
    kind = async_kind(model.op(e.src))
    if kind == "mma" and async_kind(model.op(e.dst)) == "mma":
        return "local"  # an MMA chain: the tensor core runs one issuer's MMAs in order
    return kind or "local"


def plan(model: Model, s: Schedule, depths: Mapping[str, int] | None = None,
         named_barriers: bool = True, extra: Mapping[str, str] | None = None,
         run_ahead: Mapping[str, int] | None = None) -> Plan:
    """Ring depths and channels for a (valid) schedule; `depths` overrides computed depths;
    `extra` names values that get one more slot, with the reason; `run_ahead[op]` adds slots
    for a streaming op (zero latency in the model) to run that many iterations ahead."""
    extra, run_ahead = extra or {}, run_ahead or {}
    depths = dict(depths or {})
    for name, d in depths.items():
        if not model.has_op(name):
            raise InputError("unknown op", ("depths", name), name)
        if not isinstance(d, int) or d < 1:
            raise InputError("must be an integer >= 1", ("depths", name), d)
    anti = anti_dependences(model)
    # Cross-group anti-dependences are folded into the protected value's channel: the reader's
    # group releases the slot when the reader completes.  Same-group ones are ordinary edges.
    folded = {(e.src, e.dst) for e in anti if s.group[e.src] != s.group[e.dst]}
    data_dist: dict[tuple[str, str], int] = {}
    for e in model.edges:
        if e.is_data:
            key = (e.src, e.dst)
            data_dist[key] = max(data_dist.get(key, 0), e.distance)
    notes: list[str] = []
    buffers: dict[str, Buffer] = {}
    channels: dict[str, Channel] = {}
    for op in model.ops:
        u = op.name
        out = model.out_edges(u)
        synced = [e for e in out if e.is_data or (edge_sync(model, s, e) in ("cross", "copy")
                                                    and (e.src, e.dst) not in folded)]
        if not synced:
            continue
        life = max(_span(s, e) for e in synced)
        depth, reason = max(1, ceil_div(life, s.I)), f"live {life} cycles at I={s.I}"
        for a in anti:
            if a.dst == u:
                need = data_dist[(a.dst, a.src)] + a.distance
                if need > depth:
                    depth, reason = need, f"anti-dependence {a.src} -> {u} (distance {need})"
        cross = [e for e in synced if s.group[e.dst] != s.group[u]
                 and (e.is_data or (e.src, e.dst) not in folded)]
        copy_self = [e for e in synced if edge_sync(model, s, e) == "copy"]
        ch_life = max((_span(s, e) for e in cross + copy_self), default=0)
        if (cross or copy_self) and ch_life % s.I == 0 and ch_life // s.I + 1 > depth:
            # A barrier wait and the refill of its slot in the same cycle have no order that
            # holds under variable latency; a lifetime of exactly depth*I needs one more slot.
            depth, reason = ch_life // s.I + 1, (f"channel life {ch_life} = "
                                                 f"{ch_life // s.I}*I, plus one slot")
        for e in cross:
            if e.distance > depth:
                depth, reason = e.distance, f"channel distance {e.distance} to {e.dst}"
        if u in extra:
            depth, reason = depth + 1, f"{reason}; one more slot: {extra[u]}"
        if run_ahead.get(u):
            depth, reason = depth + run_ahead[u], (f"{reason}; +{run_ahead[u]} to run ahead "
                                                   "(streaming op)")
        if u in depths:
            reason = f"overridden (computed {depth}: {reason})"
            depth = depths[u]
        space = op.footprint[0][0] if op.footprint else ("smem" if cross else "reg")
        if any(e.is_data for e in out):
            buffers[u] = Buffer(u, depth, space, life, reason)
        if not cross and not copy_self:
            continue
        readers = []
        for e in cross + copy_self:
            readers.append(Reader(e.dst, s.group[e.dst], s.stage(e.dst) + e.distance,
                                  e.is_data, (e.dst, u) in folded))
        consumers = tuple(dict.fromkeys(r.group for r in readers if r.group != s.group[u]))
        # One full barrier publishes the value: as soon as the most eager reader may use it.
        arrive = min(e.delay + (0 if not e.is_data else e.handoff_local
                                if s.group[e.dst] == s.group[u] else e.handoff)
                     for e in cross + copy_self)
        lowering, ids = "mbarrier", None
        if (named_barriers and not op.is_async and depth == 1 and len(consumers) == 1
                and op.regs > 0 and not copy_self and not any(r.anti for r in readers)):
            used = sum(1 for c in channels.values() if c.lowering == "named")
            if used < 7:
                lowering, ids = "named", (1 + 2 * used, 2 + 2 * used)
            else:
                notes.append(f"channel {u}: out of named barrier ids, lowered to mbarriers")
        channels[u] = Channel(u, s.group[u], depth, consumers, tuple(readers), arrive,
                              bool(copy_self), lowering, ids)
    return Plan(buffers, channels, tuple(anti), tuple(notes), steady_peaks(model, s))
