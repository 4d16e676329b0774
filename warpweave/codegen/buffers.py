"""Buffers and channels derived from a valid schedule (DESIGN section 6).

Every value with a data use gets a ring of `depth` slots (instance `j` lives in slot `j mod depth`).
The depth is the number of simultaneously live copies in the steady-state loop: a value issued at
M(u) and last read at M(u) + life lives in ceil(life / I) overlapping copies, as rule 4 counts them
on the loop (DESIGN section 3: every trip count).  An anti-dependence - an order edge c -> p where
c reads p's value - says the slot stays busy until c completes; with data distance dd and order
distance da the ring needs dd + da slots.

Every op whose results or order constraints cross warp groups gets a channel (Tawa's aref): the
producer's completion arrives on `full[slot]`, each consumer group waits on it with the parity of
the instance's round and arrives on `empty[slot]` once its last reader has issued, and the producer
waits on `empty[slot]` before writing the slot again.  A channel is at least as deep as its largest
iteration distance, so every instance that is overwritten is also read.

The steady-state peaks (`steady_peaks`) are rule 4's liveness in the infinite loop's steady
state, which the verifier's limits (rules 5 and 8 on every trip count) already bound: `emit`
checks them, and the memory each layout of ring slots allocates (`memory_layout`), so that a plan
needing more than was proven fails with its figures.  Where it can: a tile an async MMA reads
until it completes is busy past the reader's issue, where rule 4 ends its life, so a layout can
exceed a capacity that the schedule's live sum meets (fa-bwd on B200).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping, Sequence

import attrs

from warpweave import limits
from warpweave.core.model import Edge, Model, Op
from warpweave.core.registry import backend
from warpweave.core.schedule import Schedule
from warpweave.errors import InputError
from warpweave.ir import Problem

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
class Place:
    """Where the instances j of `value` with j mod `every` = `slot` live in a memory: `size`
    units from `offset` (`every` is the value's ring depth, or a multiple of it when the layout
    repeats over several rounds of the ring: `memory_layout`)."""

    value: str
    slot: int
    offset: int
    size: int
    every: int = 1


@attrs.frozen
class MemoryUse:
    """What the plan allocates in one memory: the rings of the values with a footprint there,
    laid out so that slots never busy at the same cycle of the loop may share a place
    (`memory_layout`), against the capacity and the loop's peak live footprint (rule 5)."""

    memory: str
    allocated: int
    capacity: int
    peak: int
    places: tuple[Place, ...]

    @property
    def exceeds(self) -> bool:
        return self.allocated > self.capacity

    def __str__(self) -> str:
        return (f"memory {self.memory}: plan allocates {self.allocated} "
                f"{'>' if self.exceeds else '<='} {self.capacity} (loop peak {self.peak})")


@attrs.frozen
class Plan:
    """Buffers and channels of a schedule, how each edge is synchronized, the loop's
    steady-state register and memory peaks, and what the buffers take in each memory."""

    buffers: Mapping[str, Buffer]
    channels: Mapping[str, Channel]
    anti: tuple[Edge, ...]
    notes: tuple[str, ...] = ()
    steady: tuple[SteadyPeak, ...] = ()
    memory: tuple[MemoryUse, ...] = ()

    def over_limits(self) -> list[str]:
        """Each register peak and memory allocation over its limit, as a line naming it."""
        return [str(x) for x in (*self.steady, *self.memory)
                if x.exceeds and not (isinstance(x, SteadyPeak) and x.kind == "memory")]


def _span(s: Schedule, e: Edge) -> int:
    """Cycles from the producer's issue to the consumer's issue across the edge."""
    return s.start[e.dst] + e.distance * s.I - s.start[e.src]


def _done(s: Schedule, e: Edge) -> int:
    """Cycles from the producer's issue until the consumer is done with the edge: its issue,
    plus the cycles it holds the value (rule 4; an order edge holds nothing)."""
    return _span(s, e) + e.hold


def steady_peaks(model: Model, s: Schedule) -> tuple[SteadyPeak, ...]:
    """Per group (registers) and memory (footprint), the loop's peak live weight over modulo
    slots: the loop can hold more at once than Q, where the verifier checks the limits.  Rule 4
    with no end of Q: instance j of v is live on [M(v) + j*I, its latest data read done)."""
    life = {op.name: max((_done(s, e) for e in model.out_edges(op.name) if e.is_data), default=0)
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
        weighted = [(op, weight(op)) for op in model.ops if weight(op)]
        # Nothing weighs in this pool: every slot holds 0, the first is the peak.
        for r in slots if weighted else slots[:1]:
            limits.check()  # slots x ops: seconds on 10,000 ops
            held = [(op.name, n, w) for op, w in weighted if (n := copies(op.name, r))]
            total = sum(w * n for _, n, w in held)
            if best is None or total > best.peak:
                best = SteadyPeak(kind, pool, total, limit, r,
                                  tuple((v, n) for v, n, _ in held))
        peaks.append(best)
    return tuple(peaks)


def _reads(model: Model, s: Schedule, v: str) -> list[tuple[str, int, int]]:
    """(reader, distance, cycles from v's issue until that read is done) for v's data edges:
    done when the reader is done with it (rule 4: its issue plus the edge's hold), or, for a
    reader the model says keeps reading longer (an anti-dependence: a tile an MMA reads until
    it completes, in a model that gives no hold), when its order edge allows."""
    out = [(e.dst, e.distance, _done(s, e)) for e in model.out_edges(v) if e.is_data]
    data = {(e.dst, e.distance) for e in model.out_edges(v) if e.is_data}
    for a in anti_dependences(model):
        if a.dst == v:
            out += [(c, dd, s.start[c] + dd * s.I + a.delay - s.start[v])
                    for c, dd in data if c == a.src]
    return out


def _in_place(model: Model, s: Schedule, memory: str, values: list[str]
              ) -> dict[str, tuple[str, int]]:
    """The values whose storage their last reader takes over: v -> (w, distance) when w reads v
    last (every other read of v is done when w issues), w's result is as large as v in this
    memory, and so w may write it in place (an accumulator's MMA, FA4's P over S).  Each value
    is taken over at most once and takes over at most one value (one that closes a cycle, an
    accumulator, first)."""
    size = {v: model.op(v).footprint_in(memory) for v in values}
    cand: dict[str, tuple[str, int]] = {}
    for v in values:
        reads = _reads(model, s, v)
        for e in model.out_edges(v):
            w, at = e.dst, _span(s, e)
            if not e.is_data or size.get(w) != size[v] or w == v and e.distance == 0:
                continue
            others = [done for r, d, done in reads if (r, d) != (w, e.distance)]
            if all(done <= at for done in others):
                cand.setdefault(v, (w, e.distance))
    preds: dict[str, list[str]] = {}
    for v, (w, _) in cand.items():
        preds.setdefault(w, []).append(v)

    def closes(v: str, w: str) -> bool:  # following the candidates from w comes back to v
        seen, x = set(), w
        while x in cand and x not in seen:
            seen.add(x)
            x = cand[x][0]
            if x == v:
                return True
        return False

    chosen = {}
    for w, vs in preds.items():
        vs.sort(key=lambda v: (not closes(v, w), v))
        chosen[vs[0]] = cand[vs[0]]
    return chosen


def _storage(model: Model, s: Schedule, memory: str, values: list[str],
             depth: Mapping[str, int]) -> list[tuple[str, int, int, int]]:
    """The storage the values of one memory need, as (label, size, start, span, slots): a value
    alone, a chain of in-place takeovers (busy from its first value's issue until its last value
    is done), or a cycle of them (an accumulator: busy all the time, one slot per iteration of
    distance around the cycle)."""
    nxt = _in_place(model, s, memory, values)
    prev = {w: v for v, (w, _) in nxt.items()}
    out, done = [], set()
    for v in values:
        if v in done:
            continue
        head, seen = v, {v}  # walk back to the chain's first value, or around a cycle
        while head in prev and prev[head] not in seen:
            head = prev[head]
            seen.add(head)
        members, x, dist = [head], head, 0
        while x in nxt and nxt[x][0] not in members:
            dist += nxt[x][1]
            x = nxt[x][0]
            members.append(x)
        done.update(members)
        size = model.op(head).footprint_in(memory)
        label = "+".join(members)
        if x in nxt and nxt[x][0] == head:  # a cycle: always busy
            around = dist + nxt[x][1]
            out.append((label, size, 0, around * s.I, around))
            continue
        span = max([depth[x] * s.I if not _reads(model, s, x) else 0,
                    *(done for _, _, done in _reads(model, s, x))]) + s.start[x] + dist * s.I \
            - s.start[head]
        out.append((label, size, s.start[head], span, max(1, ceil_div(span, s.I))))
    return out


def _overlap(a: int, la: int, pa: int, b: int, lb: int, pb: int) -> bool:
    """Do the periodic intervals [a, a+la) + k*pa and [b, b+lb) + m*pb ever overlap?  Their
    start differences are (a - b) + g*Z with g = gcd(pa, pb); they overlap iff one difference
    x has -la < x < lb."""
    if la <= 0 or lb <= 0:
        return False
    g = math.gcd(pa, pb)
    r = (a - b) % g
    return r < lb or g - r < la


Slot = tuple[int, str, int, int, int, int]  # size, storage, slot, start, busy span, period

# How many times the storages' common period (I x the least common multiple of their slot
# counts) a layout may take to repeat, beside one place per ring slot.
UNROLLS = (1, 2, 3)


def _first_fit(slots: Sequence[Slot], I: int) -> list[Place]:  # noqa: E741
    """Each slot at the lowest offset where it overlaps no placed slot that is busy with it."""
    placed: list[tuple[int, int, int, int, int]] = []  # offset, size, start, span, period
    places = []
    for size, label, k, start, span, period in slots:
        taken = sorted((o, o + z) for o, z, st, sp, pd in placed
                       if _overlap(start, span, period, st, sp, pd))
        offset = 0
        for lo, hi in taken:
            if offset + size <= lo:
                break
            offset = max(offset, hi)
        placed.append((offset, size, start, span, period))
        places.append(Place(label, k, offset, size, period // I))
    return places


def _orders(slots: Sequence[Slot], tries: int = 24) -> Iterator[list[Slot]]:
    """Orders to place the slots in (first-fit depends on it): largest first, earliest first,
    longest busy first, then seeded shuffles; the layout keeps the best."""
    yield sorted(slots, key=lambda x: (-x[0], x[3], x[1], x[2]))
    yield sorted(slots, key=lambda x: (x[3], -x[0], x[1], x[2]))
    yield sorted(slots, key=lambda x: (-x[4], -x[0], x[1], x[2]))
    rng = random.Random(0)
    for _ in range(tries):
        order = sorted(slots, key=lambda x: (-x[0], x[1], x[2]))
        rng.shuffle(order)
        yield order


# The exact layout's solver: the first of these backends installed here, and its time.
PACKERS = ("cpsat", "highs", "cbc")
PACK_SECONDS = 20.0


def _top(places: Sequence[Place]) -> int:
    return max((x.offset + x.size for x in places), default=0)


def _packer():
    """The first of PACKERS this install can run (loading only the families it tries), or
    None."""
    for family in PACKERS:
        try:
            return backend(family)
        except InputError:  # not installed here, or its plugin failed to load
            continue
    return None


def _packed(slots: Sequence[Slot], capacity: int, I: int  # noqa: E741
            ) -> list[Place] | None:
    """The slots placed within `capacity` with the least top, by an exact solve: an offset per
    slot, and for each two slots busy at some common cycle, one below the other (dynamic
    storage allocation, which first-fit only approximates: the live sum can fit where no order
    of first-fit does).  None if no packer backend is installed, none fits, or the solver found
    no layout in its time."""
    packer = _packer()
    if packer is None or any(x[0] > capacity for x in slots):
        return None
    p = Problem("memory-layout")
    top = p.int("top", 0, capacity)
    offsets = [p.int(f"offset{i}", 0, capacity - x[0]) for i, x in enumerate(slots)]
    for i, (a, b) in enumerate(zip(slots, offsets, strict=True)):
        p.add_linear([(1, b), (-1, top)], "<=", -a[0])
        for c, d in zip(slots[i + 1:], offsets[i + 1:], strict=True):
            if _overlap(a[3], a[4], a[5], c[3], c[4], c[5]):
                below = p.bool(f"below{len(p.vars)}")
                p.add_implies(below, [(1, b), (-1, d)], "<=", -a[0])
                p.add_implies(~below, [(1, d), (-1, b)], "<=", -c[0])
    p.minimize([(1, top)])
    left = limits.remaining()
    seconds = PACK_SECONDS if left is None else min(PACK_SECONDS, left)
    result = packer.solve(p, time_limit=seconds)
    if not result.status.has_solution:
        return None
    return [Place(x[1], x[2], result.values[o], x[0], x[5] // I)
            for x, o in zip(slots, offsets, strict=True)]


def _slots(storage: Sequence[tuple[str, int, int, int, int]], I: int,  # noqa: E741
           unroll: int | None) -> list[Slot]:
    """The places a memory's storage asks for: one per ring slot (`unroll` None: slot k holds
    the instances j = k mod its count, busy with period count x I), or one per instance class
    j mod n, n = `unroll` x the least common multiple of the counts (period n x I).  The second
    lets an instance take a different place each round: a ring of one slot beside a ring of
    two can then use whichever of two places the other ring leaves free (where one place per
    slot must keep three)."""
    if unroll is None:
        return [(size, label, k, start + k * I, span, count * I)
                for label, size, start, span, count in storage for k in range(count)]
    n = unroll * math.lcm(*(count for *_, count in storage)) if storage else 1
    return [(size, label, j, start + j * I, span, n * I)
            for label, size, start, span, _ in storage for j in range(n)]


def memory_layout(model: Model, s: Schedule, buffers: Mapping[str, Buffer],
                  steady: Sequence[SteadyPeak]) -> tuple[MemoryUse, ...]:
    """Per memory, a place for every slot of the storage the values with a footprint there need.

    A value's storage is busy from its issue until every read of it is done: the model's
    lifetime (rule 4), and for an anti-dependent reader (a reader that keeps reading, an MMA
    reading a tile) until its order edge's delay.  A value that its last reader overwrites in
    place (an accumulator, P over S) shares its storage with that reader's result
    (`_in_place`).  Slot `k` of a storage of `D` slots
    holds the instances `j = k mod D`: a periodic busy interval of period `D*I`.  Slots whose
    busy intervals never meet in the loop may share a place, as rule 5 lets values share memory
    over time (a GEMM's loads taking turns in a ring of tile slots).  A layout may also repeat
    over several rounds of the rings, an instance's place chosen by its iteration (`_slots`).
    Placed first-fit, largest first and in other orders (the best kept); where that exceeds the
    capacity, by an exact solve when a solver is installed (`_packed`); the allocation is the
    highest place's end.  The
    sharing is safe by the schedule's timing; a kernel that keeps it under variable latency must
    order each writer after the reads it replaces.  (The CUDA skeleton keeps one placeholder
    ring per value.)"""
    uses = []
    peaks = {p.pool: p.peak for p in steady if p.kind == "memory"}
    for mem in model.machine.memories:
        limits.check()
        values = [v for v in buffers if model.op(v).footprint_in(mem.name)]
        storage = _storage(model, s, mem.name, values, {v: b.depth for v, b in buffers.items()})
        # The same slots twice (one unroll when every ring has as many slots) are tried once.
        layouts = list(dict.fromkeys(tuple(_slots(storage, s.I, u)) for u in (None, *UNROLLS)))
        places = min((_first_fit(order, s.I) for slots in layouts for order in _orders(slots)),
                     key=_top)
        for slots in layouts:
            if _top(places) > mem.capacity:
                places = _packed(slots, mem.capacity, s.I) or places
        top = _top(places)
        uses.append(MemoryUse(mem.name, top, mem.capacity, peaks.get(mem.name, 0),
                              tuple(sorted(places, key=lambda x: (x.value, x.slot)))))
    return tuple(uses)


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
         named_barriers: bool = True, extra: Mapping[str, str] | None = None) -> Plan:
    """Ring depths and channels for a (valid) schedule; `depths` overrides computed depths;
    `extra` names values that get one more slot, with the reason."""
    extra = extra or {}
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
    for op in limits.checked(model.ops, 256):
        u = op.name
        out = model.out_edges(u)
        synced = [e for e in out if e.is_data or (edge_sync(model, s, e) in ("cross", "copy")
                                                    and (e.src, e.dst) not in folded)]
        if not synced:
            continue
        life = max(_done(s, e) for e in synced)
        depth, reason = max(1, ceil_div(life, s.I)), f"live {life} cycles at I={s.I}"
        for a in anti:
            if a.dst != u:
                continue
            declared = data_dist[(a.dst, a.src)] + a.distance
            if (a.src, a.dst) in folded:
                # Across groups the slot is released on the channel's empty barrier when the
                # reader completes, whatever the depth: the schedule's refill decides how many
                # slots, at most the ring the model declares (rule 1 on the order edge).
                busy = s.start[a.src] + data_dist[(a.dst, a.src)] * s.I + a.delay - s.start[u]
                need, why = ceil_div(busy, s.I), (f"busy {busy} cycles at I={s.I}, until "
                                                  f"{a.src} is done (anti-dependence; declared "
                                                  f"ring {declared})")
            else:
                # In one group only the order edge itself (a hazard) keeps the refill after
                # the reader: the ring is the one it declares.
                need, why = declared, f"anti-dependence {a.src} -> {u} (distance {declared})"
            if need > depth:
                depth, reason = need, why
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
    steady = steady_peaks(model, s)
    return Plan(buffers, channels, tuple(anti), tuple(notes), steady,
                memory_layout(model, s, buffers, steady))
