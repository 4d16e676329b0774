"""The published strategies, written as schedules of our models.

A publication fixes, for each group of warps, its instruction stream: which ops it runs and in
which order, including ops of a neighbouring iteration (FA3 issues the QK GEMM of the *next*
iteration before the softmax of the current one; FA4's MMA warp issues PV1 of the previous
iteration between QK0 and QK1).  It gives no start times in our cost units, so `place` derives
them: ops are placed one by one at the earliest start that keeps, modulo I, the dependences (both
ways, with cross-group spill costs), the stream order (an op issues after the previous op of its
stream has left the group), the reservation tables and the concurrency rule against what is
already placed.  `realize` tries I upward from the lower bound and returns the first placement the
verifier (`warpweave.core.verify`) accepts in full.  This is not a search for the best schedule -
the placement is greedy and the strategy fixed - it shows that the published strategy is a valid
schedule of the model, and at which I.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from warpweave.core.bounds import bounds
from warpweave.core.model import Model, Op
from warpweave.core.schedule import Schedule
from warpweave.core.verify import Violation, verify


@attrs.frozen
class Strategy:
    """A published strategy: per warp group, the stream of one loop iteration as (op, shift)
    pairs in program order; shift k means the instance of iteration j + k runs in the stream of
    iteration j."""

    name: str
    source: str
    streams: Mapping[str, tuple[tuple[str, int], ...]] = attrs.field(
        converter=lambda d: {g: tuple(s) for g, s in d.items()})
    anchors: tuple[str, ...] = attrs.field(converter=tuple, default=())

    @property
    def group(self) -> dict[str, str]:
        return {op: g for g, stream in self.streams.items() for op, _ in stream}


@attrs.frozen
class _Link:
    """start(dst) + distance * I >= start(src) + delay: an edge, or stream order."""

    src: str
    dst: str
    delay: int
    distance: int


def _waits(model: Model, group: Mapping[str, str], v: str) -> bool:
    """Whether v blocks at issue (rule 9): a blocking in-edge or a data in-edge across groups."""
    return any(e.blocking or (e.is_data and group[e.src] != group[v]) for e in model.in_edges(v))


def _occupancy(model: Model, v: str) -> int:
    op = model.op(v)
    return 1 if op.is_async else op.cycles


def _links(model: Model, strategy: Strategy) -> list[_Link]:
    """The dependences (with their hand-offs, across or within groups) and the stream orders."""
    group = strategy.group
    links = []
    for e in model.edges:
        extra = 0
        if e.is_data:
            extra = e.handoff_local if group[e.src] == group[e.dst] else e.handoff
        links.append(_Link(e.src, e.dst, e.delay + extra, e.distance))
    for stream in strategy.streams.values():
        for k, (u, su) in enumerate(stream):
            v, sv = stream[(k + 1) % len(stream)]
            wrap = 1 if k + 1 == len(stream) else 0
            links.append(_Link(u, v, _occupancy(model, u), sv - su + wrap))
    return links


def _placement_order(model: Model, strategy: Strategy, late: bool) -> list[str]:
    """The strategy's anchors (the ops whose relative placement the publication is about, e.g.
    the QK GEMMs of the two tiles of a ping-pong), then producers before consumers (distance-0
    edges), otherwise in stream order.  With `late`, variable-latency ops come last, so that they
    can be placed as late as their consumers allow."""
    listed = [op for stream in strategy.streams.values() for op, _ in stream]
    vl = {op: late and model.op(op).variable_latency for op in listed}
    listed.sort(key=lambda op: (op not in strategy.anchors, vl[op]))
    rank = {op: i for i, op in enumerate(listed)}
    preds = {op: {e.src for e in model.in_edges(op) if e.distance == 0 and e.src != op
                  and vl[e.src] <= vl[op]} for op in listed}
    order: list[str] = list(strategy.anchors)
    while len(order) < len(listed):
        ready = [op for op in listed if op not in order and preds[op] <= set(order)]
        order.append(min(ready or [op for op in listed if op not in order], key=rank.get))
    return order


def _runs(op: Op) -> list[tuple[str, int, int, int]]:
    """The reservation table as runs (unit, first cycle, length, count)."""
    runs: list[tuple[str, int, int, int]] = []
    for c, unit, n in sorted(op.usage(), key=lambda x: (x[1], x[0])):
        if runs and runs[-1][0] == unit and runs[-1][1] + runs[-1][2] == c and runs[-1][3] == n:
            runs[-1] = (unit, runs[-1][1], runs[-1][2] + 1, n)
        else:
            runs.append((unit, c, 1, n))
    return runs


class _Table:
    """The modular reservation table: use per unit and slot."""

    def __init__(self, model: Model, I: int):
        self.I = I
        self.cap = {u.name: u.capacity for u in model.machine.units}
        self.slots = {u: [0] * I for u in self.cap}

    def _spans(self, first: int, length: int):
        if length >= self.I:
            yield 0, self.I
            return
        a = first % self.I
        if a + length <= self.I:
            yield a, a + length
        else:
            yield a, self.I
            yield 0, a + length - self.I

    def fits(self, runs, t: int) -> bool:
        for unit, c, length, n in runs:
            per_slot = n * -(-length // self.I)   # a run longer than I wraps onto itself
            for a, b in self._spans(t + c, length):
                if max(self.slots[unit][a:b]) + per_slot > self.cap[unit]:
                    return False
        return True

    def add(self, runs, t: int) -> None:
        for unit, c, length, n in runs:
            for k in range(length):
                self.slots[unit][(t + c + k) % self.I] += n


def _earliest(model: Model, links: list[_Link], start: Mapping[str, int], v: str,
              memo: dict[str, int]) -> int:
    """A lower bound on v's start from the placed ops through unplaced producers (distance-0
    dependences; an unplaced variable-latency source bounds nothing)."""
    if v in start:
        return start[v]
    if v not in memo:
        memo[v] = -(10 ** 9)     # guards zero-delay cycles
        memo[v] = max([_earliest(model, links, start, k.src, memo) + k.delay for k in links
                       if k.dst == v and k.distance == 0 and k.src != v
                       and (k.src in start or not model.op(k.src).variable_latency)],
                      default=-(10 ** 9))
    return memo[v]


def place(model: Model, I: int, strategy: Strategy, late: bool = True) -> Schedule | None:
    """Greedy modulo placement of the strategy at initiation interval I (None if stuck).  With
    `late`, variable-latency ops are placed last and as late as their consumers allow."""
    group = strategy.group
    links = _links(model, strategy)
    table = _Table(model, I)
    start: dict[str, int] = {}
    for v in _placement_order(model, strategy, late):
        lo = hi = None
        for k in links:
            if k.src == v and k.dst == v and k.delay > k.distance * I:
                return None
            if k.dst == v and k.src in start:
                b = start[k.src] + k.delay - k.distance * I
                lo = b if lo is None else max(lo, b)
            if k.src == v and k.dst in start:
                b = start[k.dst] + k.distance * I - k.delay
                hi = b if hi is None else min(hi, b)
        if start:
            bound = _earliest(model, links, start, v, {})
            if bound > -(10 ** 9):
                lo = bound if lo is None else max(lo, bound)
        if late and hi is not None and (lo is None or model.op(v).variable_latency):
            # a load placed after its consumers: as late as they allow
            candidates = range(hi, max(hi - I, lo - 1 if lo is not None else hi - I), -1)
        else:
            lo = lo or 0
            candidates = range(lo, (lo + I - 1 if hi is None else min(hi, lo + I - 1)) + 1)
        runs = _runs(model.op(v))
        t = next((t for t in candidates if table.fits(runs, t)
                  and _concurrent_ok(model, I, group, start, v, t)), None)
        if t is None:
            return None
        start[v] = t
        table.add(runs, t)
    shift = min(start.values())
    return Schedule.tight(model, I, {v: t - shift for v, t in start.items()}, group)


def _concurrent_ok(model: Model, I: int, group: Mapping[str, str],
                   start: Mapping[str, int], v: str, t: int) -> bool:
    """Rule 9 modulo I against the ops already placed on v's group."""
    mine, waits = _occupancy(model, v), _waits(model, group, v)
    if waits and mine > I:
        return False     # its own next copy would issue inside it
    for o, s in start.items():
        if group[o] != group[v]:
            continue
        if waits and (t - s) % I < _occupancy(model, o):
            return False
        if _waits(model, group, o) and (s - t) % I < mine:
            return False
    return True


def realize(model: Model, strategy: Strategy, limit: int = 3) -> tuple[Schedule | None,
                                                                         list[Violation]]:
    """A valid schedule of the strategy at a small I, and the violations of the last failed
    attempt.  I runs up from the lower bound in steps of 1/64 of it (up to `limit` times the
    bound); below the first step that verifies, I is refined one by one, so the I returned is the
    smallest on that grid and in the last step before it."""
    lower = bounds(model).lower
    step = max(1, lower // 64)
    last: list[Violation] = []

    def attempt(I: int) -> Schedule | None:
        nonlocal last
        for late in (True, False):
            schedule = place(model, I, strategy, late)
            if schedule is not None:
                last = verify(model, schedule)
                if not last:
                    return schedule
        return None

    for coarse in range(lower, limit * lower + 1, step):
        found = attempt(coarse)
        if found is not None:
            for fine in range(max(lower, coarse - step + 1), coarse):
                better = attempt(fine)
                if better is not None:
                    return better, []
            return found, []
    return None, last


# ---------------------------------------------------------------------------------------------
# The strategies


def figure1() -> Schedule:
    """The Twill paper's Figure 1d: I=2, L=4, S@0, P@2, O@3 on the one group g0."""
    return Schedule("fa-simplified", 2, 4, {"S": 0, "P": 2, "O": 3},
                    {"S": "g0", "P": "g0", "O": "g0"})


def _roles(model: Model) -> tuple[str, list[str], list[str]]:
    """The variable-latency group, the groups of 4+ warps, the other small groups."""
    m = model.machine
    big = [g.name for g in m.warp_groups if g.warps >= 4]
    small = [g.name for g in m.warp_groups if g.warps < 4 and g.name != m.variable_latency_group]
    return m.variable_latency_group, big, small


def _suffixes(model: Model, first: str) -> list[str]:
    return sorted(v[len(first):] for v in model.op_names if v.startswith(first))


def _stream(*ops: str, shift: dict[str, int] | None = None) -> tuple[tuple[str, int], ...]:
    return tuple((op, (shift or {}).get(op, 0)) for op in ops)


def fa3_pipeline(model: Model) -> Strategy:
    """FA3 forward (Shah et al. 2024) as the Twill paper's Figure 1f pipeline: the producer warp
    loads K and V; each consumer warpgroup issues the QK GEMM of the next iteration, then rowmax,
    softmax, cast and rescale of the current one, then its PV GEMM.  With two Q tiles, tile t
    runs on consumer t and the two share the tensor core (ping-pong)."""
    vl, big, _ = _roles(model)
    streams = {vl: _stream("load_k", "load_v")}
    for t, x in enumerate(_suffixes(model, "qk")):
        streams[big[t]] = _stream(*(f"{k}{x}" for k in ("qk", "rowmax", "softmax", "cast",
                                                         "rescale", "pv")),
                                  shift={f"qk{x}": 1})
    return Strategy("fa3-pipeline", "FA3 paper 3.1-3.2; Twill paper Figure 1f", streams,
                    anchors=[f"qk{x}" for x in _suffixes(model, "qk")])


def fa4_roles(model: Model) -> Strategy:
    """FA4 forward (flash_fwd_sm100.py; Twill paper 6.2.2 and Figure 9): load warp; MMA warp
    issuing QK0(i), PV1(i-1), QK1(i), PV0(i); softmax of tile 0 and of tile 1 on two warpgroups;
    the correction (rescale) of both tiles on a third."""
    vl, big, small = _roles(model)
    return Strategy("fa4-roles", "FA4 forward warp roles", {
        vl: _stream("load_k", "load_v"),
        small[0]: _stream("qk0", "pv1", "qk1", "pv0", shift={"pv1": -1}),
        big[0]: _stream("load_s0", "rowmax0", "softmax0", "rowsum0"),
        big[1]: _stream("load_s1", "rowmax1", "softmax1", "rowsum1"),
        big[2]: _stream("rescale0", "rescale1"),
    }, anchors=("qk0", "pv1", "qk1"))


def fa_bwd_roles(model: Model) -> Strategy:
    """The published backward strategies (Twill paper 6.3).  h100, FA3 bwd: the producer loads;
    consumer warpgroup h runs everything of half h.  b200, FA4 bwd's three groups: load warp, MMA
    warp, compute warpgroup h for the exponential and dS of half h, and a reduce warpgroup that
    stages dQ and issues the reduce-add."""
    vl, big, small = _roles(model)
    halves = _suffixes(model, "qk")
    streams = {vl: _stream("load_q", "load_do")}
    if any(m.name == "tmem" for m in model.machine.memories):
        streams[small[0]] = _stream(*(f"{k}{x}" for x in halves for k in ("qk", "dp")),
                                    *(f"{k}{x}" for x in halves for k in ("dv", "dk", "dq")))
        for h, x in enumerate(halves):
            streams[big[h + 1]] = _stream(f"exp{x}", f"ds{x}")
        streams[big[0]] = _stream(*(f"{k}{x}" for x in halves for k in ("dq_stage", "dq_store")))
    else:
        for h, x in enumerate(halves):
            streams[big[h]] = _stream(*(f"{k}{x}" for k in ("qk", "dp", "exp", "ds", "dv", "dk",
                                                             "dq", "dq_stage", "dq_store")))
    return Strategy("fa-bwd-roles", "FA3 / FA4 backward warp roles", streams)


def gemm_producer_consumer(model: Model) -> Strategy:
    """Warp-specialized GEMM (CUTLASS): TMA on the producer warp; the MMAs on a consumer
    warpgroup (h100, which also runs the epilogue) or on the MMA warp (b200, with the epilogue on
    a warpgroup)."""
    vl, big, small = _roles(model)
    k = len(_suffixes(model, "mma"))
    loads, mmas = [f"load{i}" for i in range(k)], [f"mma{i}" for i in range(k)]
    if any(m.name == "tmem" for m in model.machine.memories):
        streams = {vl: _stream(*loads), small[0]: _stream(*mmas), big[0]: _stream("epi", "store")}
    else:
        streams = {vl: _stream(*loads), big[0]: _stream(*mmas, "epi", "store")}
    return Strategy("gemm-producer-consumer", "CUTLASS warp-specialized GEMM", streams)
