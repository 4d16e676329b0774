"""A discrete-event simulator of warp programs: does the generated synchronization realize the
schedule, without deadlock or race, at one iteration every I cycles?

Semantics (the model's, DESIGN section 3):
- each group runs its stream in order; issuing an op takes no issue time (ops of a group run
  concurrently); a wait that is not yet satisfied blocks the stream;
- an op holds its reservation table's units from its issue; capacity is checked per cycle;
- op `u` of iteration `j` has latency `cycles(u)`, or for a variable-latency op with jitter a seeded
  random latency around it; the result crosses edge `e` at issue + delay(e) + (latency -
  cycles): each reader waits for what its own edge needs (an async MMA's reader included);
- in "schedule" pacing an op issues no earlier than its planned cycle `j*I + M(u)` (the static
  schedule); in "greedy" pacing as soon as its stream reaches it;
- mbarriers complete a phase per expected arrival count and waits test the phase parity as the
  hardware does; named barriers complete a generation when their thread count has arrived.

Checked: deadlock (no event left while a group is blocked), a ring slot written while an earlier
instance still has unissued readers (or an anti-dependent reader still running), a read of the
wrong iteration's value or of a value not yet ready, a barrier phase lapped before it was observed,
a named barrier arrived on twice by one group in one generation, and a wait-group that lets an
awaited MMA still be running.  Measured: iterations per cycle between the first and last
steady-state iteration completions, and the op instances issued after their planned cycle (the
first with the wait that held it).  With fixed latencies and the schedule's pacing the run is the
schedule, so `SimResult.passed` asks it to reach exactly 1/I with no op late.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import defaultdict
from fractions import Fraction

import attrs

from warpweave.codegen.buffers import async_kind
from warpweave.codegen.warp_ir import (
    ArriveEmpty,
    ArriveFull,
    Commit,
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
from warpweave.core.schedule import Schedule


@attrs.frozen
class Race:
    """A correctness error found while simulating: kind, where, and when."""

    kind: str
    message: str
    time: int

    def __str__(self) -> str:
        return f"{self.kind} at cycle {self.time}: {self.message}"


@attrs.frozen
class Late:
    """An op instance issued after its planned cycle, and what held it: the wait (or hazard, or
    busy unit) its stream was blocked on past that cycle."""

    op: str
    iteration: int
    planned: int
    issued: int
    cause: str

    def __str__(self) -> str:
        return (f"{self.op}#{self.iteration} issued at cycle {self.issued}, planned "
                f"{self.planned}: {self.cause}")


@attrs.frozen
class SimResult:
    """What a run found: deadlock and races, the steady-state rate against 1/I, and the ops
    issued after their planned cycle (the first of them with its cause)."""

    iterations: int
    makespan: int
    deadlock: tuple[str, ...]
    races: tuple[Race, ...]
    rate: Fraction | None
    target: Fraction
    stalls: dict[str, int]
    finish: tuple[int, ...]
    late: int = 0  # op instances issued after their planned cycle j*I + M(op)
    first_late: Late | None = None
    jitter: float = 0.0
    pace: str = "schedule"

    @property
    def ok(self) -> bool:
        """No deadlock and no race: the synchronization is correct (any latencies, pacing)."""
        return not self.deadlock and not self.races

    @property
    def exact(self) -> bool:
        """Fixed latencies and the schedule's pacing: the run is the schedule itself, so it must
        reach 1/I with no op late (DESIGN section 6)."""
        return not self.jitter and self.pace == "schedule"

    @property
    def realizes(self) -> bool:
        """The program realizes the schedule: correct, at exactly 1/I, no op issued late."""
        return self.ok and self.rate == self.target and self.late == 0

    @property
    def passed(self) -> bool:
        """The check `warpweave simulate` makes: correct always; with fixed latencies and the
        schedule's pacing also realizing the schedule."""
        return self.realizes if self.exact else self.ok

    def gap(self) -> str | None:
        """None when the rate reaches 1/I, else why not (the largest stalls)."""
        if self.rate is not None and self.rate >= self.target:
            return None
        top = sorted(self.stalls.items(), key=lambda kv: -kv[1])[:3]
        why = ", ".join(f"{k} {v} cycles" for k, v in top) or "no stall recorded"
        rate = (f"no steady rate measured (1/I = {self.target})" if self.rate is None
                else f"rate {self.rate} < 1/I = {self.target}")
        return f"{rate}: stalls {why}"

    def verdict(self) -> str:
        """One line: what was checked and whether it held (with the reason when it did not)."""
        if self.deadlock:
            return "FAILED: deadlock"
        if self.races:
            return f"FAILED: {len(self.races)} race(s)"
        if self.exact:
            if self.realizes:
                return "ok: the program realizes the schedule (1/I, no op late)"
            what = []
            if self.rate is None:
                what.append(f"no steady rate measured (1/I = {self.target})")
            elif self.rate != self.target:
                what.append(f"rate {self.rate} misses 1/I = {self.target}")
            if self.late:
                what.append(f"{self.late} op(s) issued late, first {self.first_late}")
            return "FAILED: " + "; ".join(what)
        reach = ("no steady rate: too few iterations finished to measure one"
                 if self.rate is None else "it reaches 1/I" if self.rate >= self.target
                 else f"{self.rate}, below 1/I = {self.target}")
        why = []
        if self.jitter:
            why.append(f"with {self.jitter:.0%} jitter a late result holds its readers back, "
                       "which is what the barriers are for")
        if self.pace == "greedy":
            why.append("greedy pacing issues each op as soon as its stream allows, as warps do "
                       "without a clock to wait for; below 1/I, an op that issued early may have "
                       "taken the unit slot the schedule gave another op: the waits alone do "
                       "not keep the schedule's order (--pace schedule checks the schedule "
                       "itself)")
        return f"ok: no deadlock or race; the rate is reported, not checked ({reach}): " + \
            "; ".join(why)


class _Stream:
    """One group's expanded instruction stream with its program counter."""

    def __init__(self, name: str, warps: int, items: list[tuple[int, Instr]]):
        self.name = name
        self.threads = 32 * warps
        self.items = items
        self.pc = 0
        self.blocked_since: int | None = None
        self.pacing = False
        self.commits = 0                                  # async groups committed so far
        self.committed: dict[tuple[str, int], int] = {}   # MMA instance -> its group's number
        self.open: list[tuple[str, int]] = []
        self.held: tuple[str, int] | None = None  # the last wait that blocked it, released when
        self.why: str | None = None  # what holds its next issue back (a hazard, a busy unit)

    @property
    def done(self) -> bool:
        return self.pc >= len(self.items)


class Simulator:
    """Runs a WarpProgram for `n` iterations; see the module docstring for the semantics."""

    def __init__(self, model: Model, schedule: Schedule, program: WarpProgram, n: int,
                 jitter: float = 0.0, seed: int = 0, pace: str = "schedule"):
        if n < program.min_iterations:
            raise ValueError(f"need at least {program.min_iterations} iterations, got {n}")
        self.m, self.s, self.p, self.n = model, schedule, program, n
        self.pace = pace
        rng = random.Random(seed)
        self.lat: dict[tuple[str, int], int] = {}
        for op in model.ops:
            for j in range(n):
                lat = op.cycles
                if jitter and op.variable_latency:  # integer extra in [-floor, +ceil] of c*jitter
                    spread = op.cycles * jitter
                    lat = max(1, lat + rng.randint(-math.floor(spread), math.ceil(spread)))
                self.lat[(op.name, j)] = lat
        self.streams = []
        for g in program.groups:
            items = [(0, x) for x in g.preamble]
            for _, k, xs in g.trips(n):
                items += [(k, x) for x in xs]
            items += [(n + g.depth, x) for x in g.drain]
            self.streams.append(_Stream(g.group, g.warps, items))
        self.threads = {st.name: st.threads for st in self.streams}
        self.t = 0
        self.issued: dict[tuple[str, int], int] = {}
        self.events: list[tuple[int, int, str, tuple]] = []
        self._seq = 0
        self.units: dict[tuple[str, int], int] = defaultdict(int)
        self.cap = {u.name: u.capacity for u in model.machine.units}
        self.slots: dict[tuple[str, int], int] = {}
        self.unread: dict[tuple[str, int], set] = {}
        self.busy: dict[tuple[str, int], int] = defaultdict(int)
        self.full_done: dict[tuple[str, int], int] = defaultdict(int)
        self.empty_arr: dict[tuple[str, int], int] = defaultdict(int)
        self.empty_done: dict[tuple[str, int], int] = defaultdict(int)
        self.named: dict[int, dict] = {}
        self.races: list[Race] = []
        self.stalls: dict[str, int] = defaultdict(int)
        self.late = 0
        self.first_late: Late | None = None
        self.jitter = jitter

    def planned(self, op: str, j: int) -> int:
        """The cycle the schedule issues `op` of iteration `j` at."""
        return j * self.s.I + self.s.start[op]

    # -- time of results ------------------------------------------------------------------

    def _extra(self, op: str, j: int) -> int:
        return self.lat[(op, j)] - self.m.op(op).cycles

    def ready(self, op: str, j: int, delay: int) -> int:
        return self.issued[(op, j)] + max(0, delay + self._extra(op, j))

    def completion(self, op: str, j: int) -> int:
        """When the instance is done: its issue plus its latency."""
        return self.issued[(op, j)] + self.lat[(op, j)]

    def _anti(self, reader: str, value: str) -> list[int]:
        return [e.delay for e in self.m.out_edges(reader) if e.dst == value and not e.is_data]

    def release(self, reader: str, j: int, value: str) -> int:
        """When an anti-dependent reader is done with its operand: its order edge's delay."""
        return self.ready(reader, j, max(self._anti(reader, value)))

    def _later(self, when: int, kind: str, data: tuple) -> None:
        self._seq += 1
        heapq.heappush(self.events, (when, self._seq, kind, data))

    def _race(self, kind: str, message: str) -> None:
        self.races.append(Race(kind, message, self.t))

    # -- one instruction --------------------------------------------------------------------

    def _try(self, st: _Stream, k: int, x: Instr) -> int | bool:
        """Execute x if it can run now: True; else False, or the cycle at which to retry."""
        if isinstance(x, Issue):
            return self._issue(st, k, x)
        j = k - x.lag
        if isinstance(x, WaitFull):
            ch = self.p.plan.channels[x.channel]
            key, q = (x.channel, j % ch.depth), j // ch.depth
            if self.full_done[key] >= q + 2:
                self._race("lapped", f"full[{key[1]}] of {x.channel} completed round {q + 1} "
                           f"before {st.name} observed round {q}")
            return self.full_done[key] >= q + 1
        if isinstance(x, WaitEmpty):
            ch = self.p.plan.channels[x.channel]
            key, q = (x.channel, j % ch.depth), j // ch.depth
            return self.empty_done[key] >= q
        if isinstance(x, ArriveFull):
            ch = self.p.plan.channels[x.channel]
            when = self.issued[(x.op, j)] + max(0, ch.arrive_delay + self._extra(x.op, j))
            self._later(max(when, self.t), "full", (x.channel, j))
            return True
        if isinstance(x, ArriveEmpty):
            when, rj = self.t, k - x.after_lag
            if x.after is not None and (x.after, rj) in self.issued:  # the reader may not exist
                when = max(self.t, self.release(x.after, rj, x.channel))
            self._later(when, "empty", (x.channel, j))
            return True
        if isinstance(x, Commit):
            for inst in st.open:
                st.committed[inst] = st.commits
            st.commits += 1
            st.open = []
            return True
        if isinstance(x, WaitGroup):
            return self._wait_group(st, k, x)
        if isinstance(x, NamedSync):
            return self._named_sync(st, x)
        if isinstance(x, NamedArrive):
            when = self.t
            if x.after is not None:
                ch = self.p.plan.channels[x.channel]
                when = self.issued[(x.after, j)] + max(0, ch.arrive_delay
                                                       + self._extra(x.after, j))
            self._later(max(when, self.t), "named", (x.id, x.threads, st.name))
            return True
        raise TypeError(x)

    def _issue(self, st: _Stream, k: int, x: Issue) -> int | bool:
        j = k - x.lag
        op = self.m.op(x.op)
        retry = []
        if self.pace == "schedule":
            planned = self.planned(x.op, j)
            if planned > self.t:
                st.pacing = True  # waiting for the planned cycle is the schedule, not a stall
                return planned
        for h in x.hazards:
            i = k - h.lag
            if not 0 <= i < self.n:
                continue
            if (h.op, i) not in self.issued:
                self._race("order", f"{x.op}#{j} in {st.name} depends on {h.op}#{i}, which its "
                           "stream has not issued")
                continue
            r = self.ready(h.op, i, h.delay)
            if r > self.t:
                retry.append(r)
                st.why = f"its in-group dependence on {h.op}#{i} (ready at cycle {r})"
        if retry:
            return max(retry)
        for c, unit, count in op.usage():
            if self.units[(unit, self.t + c)] + count > self.cap[unit]:
                st.why = f"unit {unit} busy at cycle {self.t + c}"
                return self.t + 1
        for c, unit, count in op.usage():
            self.units[(unit, self.t + c)] += count
        self.issued[(x.op, j)] = self.t
        if self.t > self.planned(x.op, j):
            self.late += 1
            if self.first_late is None:
                self.first_late = Late(x.op, j, self.planned(x.op, j), self.t,
                                       self._cause(st, self.planned(x.op, j)))
        st.why = None
        for rd in x.reads:
            self._read(st, x.op, j, rd.value, k - rd.lag)
        buf = self.p.plan.buffers.get(x.op)
        if buf is not None:
            self._write(x.op, j, buf.depth)
        if async_kind(op) == "mma":
            st.open.append((x.op, j))
        return True

    def _cause(self, st: _Stream, planned: int) -> str:
        """What held a late issue: its own hazard or unit, else the wait that released its
        stream after the planned cycle, else an earlier issue of the stream."""
        if st.why:
            return f"held by {st.why}"
        if st.held is not None and st.held[1] > planned:
            return f"its stream waited at {st.held[0]} until cycle {st.held[1]}"
        return "its stream reached it late (an earlier issue in the stream was late)"

    def _read(self, st: _Stream, reader: str, rj: int, value: str, i: int) -> None:
        if i < 0:
            return  # the value from before the loop
        depth = self.p.plan.buffers[value].depth
        slot = (value, i % depth)
        have = self.slots.get(slot)
        who = f"{reader}#{rj} in {st.name} reads {value}#{i} from slot {i % depth}"
        if have != i:
            self._race("wrong-iteration", f"{who}, which holds {value}#{have}")
            return
        ch = self.p.plan.channels.get(value)
        if ch is not None and any(r.op == reader for r in ch.readers):
            delay = ch.arrive_delay  # read through the channel: ready once published
        else:
            delay = min(e.delay for e in self.m.in_edges(reader) if e.src == value and e.is_data)
        if self.ready(value, i, delay) > self.t:
            self._race("not-ready", f"{who} before it is ready")
        self.unread.get((value, i), set()).discard((reader, rj))
        if self._anti(reader, value):
            self.busy[(value, i)] = max(self.busy[(value, i)], self.release(reader, rj, value))

    def _write(self, value: str, j: int, depth: int) -> None:
        slot = (value, j % depth)
        old = self.slots.get(slot)
        if old is not None:
            left = self.unread.get((value, old), set())
            if left:
                names = ", ".join(f"{r}#{i}" for r, i in sorted(left))
                self._race("overwrite", f"{value}#{j} overwrites slot {j % depth} holding "
                           f"{value}#{old}, still unread by {names}")
            elif self.busy[(value, old)] > self.t:
                self._race("overwrite", f"{value}#{j} overwrites slot {j % depth} while a reader "
                           f"of {value}#{old} runs until cycle {self.busy[(value, old)]}")
        self.slots[slot] = j
        self.unread[(value, j)] = {(e.dst, j + e.distance) for e in self.m.out_edges(value)
                                   if e.is_data and j + e.distance < self.n}

    def _wait_group(self, st: _Stream, k: int, x: WaitGroup) -> int | bool:
        """Returns when every awaited instance is there for this reader's own edges (else the
        cycle to retry at); then checks that the wgmma count `n` waits for each of them too:
        its group is not among the newest `n` committed."""
        due = [self.ready(op, k - lag, delay) for op, lag, delay in x.waits
               if (op, k - lag) in self.issued]
        if any(r > self.t for r in due):
            return max(due)
        for op, lag, _ in x.waits:
            j = k - lag
            got = st.committed.get((op, j))
            if 0 <= j < self.n and (got is None or got >= st.commits - x.n):
                self._race("wait-group", f"wait_group({x.n}) in {st.name} would return with "
                           f"{op}#{j} " + ("not committed" if got is None else
                                           "among the newest groups, still pending"))
        return True

    def _named_sync(self, st: _Stream, x: NamedSync) -> bool:
        bar = self.named.setdefault(x.id, {"gen": 0, "count": 0, "who": set(), "waiting": {}})
        if st.name in bar["waiting"]:
            if bar["gen"] > bar["waiting"][st.name]:
                del bar["waiting"][st.name]
                return True
            return False
        gen = bar["gen"]
        self._named_arrive(x.id, x.threads, st.name)
        if bar["gen"] > gen:
            return True
        bar["waiting"][st.name] = gen
        return False

    def _named_arrive(self, bid: int, threads: int, group: str) -> None:
        bar = self.named.setdefault(bid, {"gen": 0, "count": 0, "who": set(), "waiting": {}})
        if group in bar["who"]:
            self._race("named-barrier", f"{group} arrives twice on barrier {bid} in generation "
                       f"{bar['gen']}")
        bar["who"].add(group)
        bar["count"] += self.threads[group]
        if bar["count"] >= threads:
            if bar["count"] > threads:
                self._race("named-barrier", f"barrier {bid}: {bar['count']} > {threads} threads")
            bar["gen"] += 1
            bar["count"] = 0
            bar["who"] = set()

    # -- the event loop -----------------------------------------------------------------------

    def _fire(self, kind: str, data: tuple) -> None:
        if kind == "full":
            name, j = data
            self.full_done[(name, j % self.p.plan.channels[name].depth)] += 1
        elif kind == "empty":
            name, j = data
            ch = self.p.plan.channels[name]
            key = (name, j % ch.depth)
            self.empty_arr[key] += 1
            if self.empty_arr[key] == len(ch.consumers):
                self.empty_arr[key] = 0
                self.empty_done[key] += 1
        elif kind == "named":
            bid, threads, group = data
            self._named_arrive(bid, threads, group)

    def run(self) -> SimResult:
        limit = 10 * (self.n + 4 * self.s.stages + 4) * (self.s.I + self.s.L) + 1000
        deadlock: list[str] = []
        while True:
            while self.events and self.events[0][0] <= self.t:
                _, _, kind, data = heapq.heappop(self.events)
                self._fire(kind, data)
            retry: list[int] = []
            progress = True
            while progress:
                progress = False
                for st in self.streams:
                    while not st.done:
                        k, x = st.items[st.pc]
                        got = self._try(st, k, x)
                        if got is True:
                            if st.blocked_since is not None and not st.pacing:
                                lost = self.t - max(st.blocked_since, self._due(st))
                                if lost > 0:
                                    self.stalls[_why(x, st.name)] += lost
                                if not isinstance(x, Issue):
                                    st.held = (_show(x, k), self.t)
                            st.blocked_since, st.pacing = None, False
                            st.pc += 1
                            progress = True
                            continue
                        if st.blocked_since is None:
                            st.blocked_since = self.t
                        if got is not False:
                            retry.append(got)
                        break
                while self.events and self.events[0][0] <= self.t:
                    _, _, kind, data = heapq.heappop(self.events)
                    self._fire(kind, data)
                    progress = True
            if all(st.done for st in self.streams) and not self.events:
                break
            later = [t for t in retry if t > self.t]
            if self.events:
                later.append(self.events[0][0])
            if not later or self.t > limit:
                for st in self.streams:
                    if not st.done:
                        k, x = st.items[st.pc]
                        deadlock.append(f"{st.name} blocked since cycle {st.blocked_since} at "
                                        f"trip {k}: {_show(x, k)}")
                break
            self.t = min(later)
        return self._result(tuple(deadlock))

    def _due(self, st: _Stream) -> int:
        """The planned cycle of the stream's next issue: waiting before it costs nothing."""
        if self.pace != "schedule":
            return 0
        for k, x in st.items[st.pc:]:
            if isinstance(x, Issue):
                return self.planned(x.op, k - x.lag)
        return 0

    def _result(self, deadlock: tuple[str, ...]) -> SimResult:
        finish = []
        for j in range(self.n):
            times = [self.completion(op, j) for op in self.m.op_names if (op, j) in self.issued]
            if len(times) < len(self.m.ops):
                break
            finish.append(max(times))
        e = self.p.min_iterations
        rate = None
        lo, hi = e, len(finish) - 1 - e
        if not deadlock and hi > lo and finish[hi] > finish[lo]:
            rate = Fraction(hi - lo, finish[hi] - finish[lo])
        return SimResult(self.n, self.t, deadlock, tuple(self.races), rate,
                         Fraction(1, self.s.I), dict(self.stalls), tuple(finish), self.late,
                         self.first_late, self.jitter, self.pace)


def _why(x: Instr, group: str) -> str:
    if isinstance(x, Issue):
        return f"{group}: issue {x.op} (pacing, hazard or unit)"
    return f"{group}: {_show(x)}"


def _show(x: Instr, k: int | None = None) -> str:
    """An instruction in a line: its kind and what it is for (the instances, in trip k)."""
    if isinstance(x, WaitGroup):
        what = ", ".join(f"{op}#{k - lag}" if k is not None else op for op, lag, _ in x.waits)
        return f"WaitGroup({x.n}) for {what}"
    name = type(x).__name__
    detail = getattr(x, "channel", None) or getattr(x, "op", None) or ""
    if k is not None and detail and hasattr(x, "lag"):
        detail = f"{detail}#{k - x.lag}"
    return f"{name} {detail}".strip()


def simulate(model: Model, schedule: Schedule, program: WarpProgram, iterations: int = 32,
             jitter: float = 0.0, seed: int = 0, pace: str = "schedule") -> SimResult:
    """Simulate `program` for `iterations` loop iterations (jitter: fraction, e.g. 0.3)."""
    return Simulator(model, schedule, program, iterations, jitter, seed, pace).run()
