"""The CUDA C++ printer: a warp-specialized kernel skeleton for Hopper (sm_90a) or Blackwell
(sm_100a) from a warp program, a header of `__device__` hooks (one per op) and a host launcher;
and a driver that compiles it with nvcc and reads `ptxas -v` (registers and spills per kernel).

The kernel has one role per warp group (dispatch on the warp index), `setmaxnreg` per hardware
warp group (four aligned warps; a warp group of the model that is smaller shares the setting of
its neighbours, the largest limit wins), mbarrier rings in shared memory (init by one thread,
arrive after the op - with expect-tx for an async copy - and try_wait.parity loops), named
barriers (bar.sync / bar.arrive with id and thread count), and commit / wait-group:
wgmma.commit_group / wgmma.wait_group N on sm_90a, a per-instance completion mbarrier ring on
sm_100a (tcgen05 has no wait-group).  The kernel itself arrives on every barrier after the hook
returns: right for the default hook bodies, which are synchronous.  An async copy's hook gets its
slot's full barrier and the kernel's arrival announces `WW_TX_BYTES_<op>` bytes (expect-tx, 0 by
default), so a TMA body only has to complete its bytes on that barrier (complete-tx) and set the
count in the hooks header; other hooks made truly asynchronous (wgmma, tcgen05) must move the
arrival into their completion mechanism, as each hook's comment says.  Arch-specific PTX is
guarded by `__CUDA_ARCH_FEAT_SM90_ALL` / `__CUDA_ARCH_FEAT_SM100_ALL`, since nvcc also checks the
code for the generic compute target.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import attrs

from warpweave.codegen.buffers import async_kind
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
from warpweave.errors import InputError
from warpweave.machines import hardware
from warpweave.machines.inventory import SETMAXNREG, RegisterRule
from warpweave.outputs import c_identifiers, output_dir, renamed, write_into

ARCHS = {"sm_90a": "Hopper", "sm_100a": "Blackwell"}
_FEATURE = {"sm_90a": "__CUDA_ARCH_FEAT_SM90_ALL", "sm_100a": "__CUDA_ARCH_FEAT_SM100_ALL"}
MAX_UNROLL = 8


def arch_for(model: Model) -> str:
    """The machine's arch (its own, or its registered machine's; sm_90a for a machine of its
    own); InputError when it is not a CUDA target this printer writes."""
    spec = hardware(model.machine)
    arch = model.machine.arch or (spec.arch if spec else "sm_90a")
    if arch not in ARCHS:
        raise InputError(f"not a CUDA target (the CUDA printer writes {', '.join(ARCHS)})",
                         ("machine", "arch"), arch)
    return arch


def register_rule(model: Model) -> RegisterRule:
    """How the machine's warp groups get registers (its registered machine's rule; setmaxnreg
    on a 64K-register file for a machine of its own)."""
    spec = hardware(model.machine)
    return spec.registers if spec else SETMAXNREG


@attrs.frozen
class Layout:
    """Warps of each group, hardware warp groups and their register settings."""

    first_warp: dict[str, int]
    warps: dict[str, int]
    threads: int
    entry_regs: int
    hw_regs: tuple[int, ...]
    notes: tuple[str, ...]
    # Where the settings give a warp group fewer registers than its groups' limits (the limits
    # the schedule was proven with), a line naming the figures: `emit` fails on them.
    short: tuple[str, ...] = ()


def setmaxnreg_floor(p: WarpProgram, arch: str) -> int:
    """The smallest setmaxnreg value ptxas honours for this kernel: 24 (PTX's minimum), but 32
    on sm_90a when the kernel has wgmma instructions (our commit / wait-group).  Below that,
    ptxas (CUDA 13.0) drops every setmaxnreg of the kernel with "(C7507) Potential Performance
    Loss: 'setmaxnreg' ignored to maintain minimum register requirements" - measured: a kernel
    with wgmma.commit_group and setmaxnreg.dec 24 gets it, with 32 it does not, whatever the
    kernel's own register use."""
    wgmma = arch == "sm_90a" and any(isinstance(x, Commit) for g in p.groups for x in g.body)
    return 32 if wgmma else 24


def layout(model: Model, p: WarpProgram, floor: int = 24) -> Layout:
    """Place groups on consecutive warps (whole warp groups first, so they stay aligned; then
    the small ones packed together), pad to whole warp groups, pick setmaxnreg values.

    A warp group's setting is the least value the register rule sets (a multiple of its step
    in [floor, high]) at or above the largest limit of the groups it holds: rounded up, never
    down, so the code has at least the registers the schedule was proven with.  On a machine of
    its own a limit need not be a setmaxnreg value (a registered machine's limits are checked
    against its rule when the model is read); rounded up, it still fits only while the settings
    fit the register file.  Where no setting is that high, or the settings overflow the file,
    `short` names the figures and the printed kernel has lower settings, for inspection only."""
    rule = register_rule(model)
    unit, step = rule.unit_warps, rule.step
    first, warps, w = {}, {}, 0
    for g in sorted(p.groups, key=lambda g: g.warps % unit != 0):
        first[g.group], warps[g.group] = w, g.warps
        w += g.warps
    hw = max(1, math.ceil(w / rule.unit_warps))
    threads = rule.unit_threads * hw
    # what ptxas allocates under setmaxnreg
    entry = min(255, (rule.file // threads) // step * step)
    notes, short = [], []
    regs = []
    for h in range(hw):
        limits = [g.reg_limit for g in p.groups
                  if first[g.group] < unit * (h + 1) and first[g.group] + g.warps > unit * h]
        want = max(limits, default=floor)
        up = max(floor, -(-want // step) * step)
        if up > rule.high:
            short.append(f"warp group {h}: register limit {want} > {rule.high}, the most "
                         f"{rule.name} sets")
            up = rule.high
        regs.append(up)
        if want < floor:
            notes.append(f"warp group {h}: setmaxnreg {floor}, not {want} (the least ptxas "
                         "honours here)")
        elif up > want and want not in rule.fixed:
            notes.append(f"warp group {h}: setmaxnreg {up} for a register limit of {want} "
                         f"(rounded up to a multiple of {step})")
        if len(limits) > 1:
            notes.append(f"warp group {h} holds several model groups: setmaxnreg {regs[-1]} "
                         f"(the largest of {limits})")
    need = sum(regs) * rule.unit_threads
    if need > rule.file:
        short.append(f"setmaxnreg {regs} x {rule.unit_threads} threads = {need} registers > "
                     f"the {rule.file}-register file")
    asked = list(regs)
    while sum(regs) * rule.unit_threads > rule.file:
        i = max(range(hw), key=regs.__getitem__)
        regs[i] -= step
    notes += [f"register budget: warp group {h} lowered from {asked[h]} to {regs[h]} so the "
              f"groups fit {rule.file} registers (setmaxnreg.inc would wait forever): fewer "
              "than the schedule was proven with" for h in range(hw) if regs[h] < asked[h]]
    return Layout(first, warps, threads, entry, tuple(regs), tuple(dict.fromkeys(notes)),
                  tuple(short))


@attrs.frozen
class CudaSource:
    """The printed files: kernel (.cu) and hooks header (.cuh), with the layout used."""

    arch: str
    kernel_name: str
    kernel: str
    hooks: str
    hooks_name: str
    layout: Layout
    renamed: tuple[str, ...] = ()  # `'q-k' -> 'q_k_2'`: names that are not C identifiers


class _Printer:
    """Prints one warp program as a kernel and a hooks header for one architecture."""

    def __init__(self, model: Model, p: WarpProgram, arch: str):
        if arch not in ARCHS:
            raise InputError(f"unknown arch (choose {', '.join(ARCHS)})", ("arch",), arch)
        self.m, self.p, self.arch = model, p, arch
        self.name = c_identifiers([p.model])[p.model]
        # Op and value names come from input files: one distinct C identifier each (two names
        # that differ only in characters C does not allow must not meet in one identifier).
        self.ids = c_identifiers([op.name for op in model.ops] + list(p.plan.buffers)
                                 + list(p.plan.channels))
        self.lay = layout(model, p, setmaxnreg_floor(p, arch))
        self.smem_values = set(p.plan.channels)
        self.slot = 32 * max(g.warps for g in p.groups)
        # Completion rings for MMA waits on sm_100a: instances in flight between commit and wait.
        self.done: dict[str, int] = {}
        for g in p.groups:
            for x in g.body:
                if isinstance(x, WaitGroup):
                    for op, wlag, _ in x.waits:
                        commit = next(c for c in g.body if isinstance(c, Commit) and c.op == op)
                        self.done[op] = max(self.done.get(op, 1), wlag - commit.lag + 1)
        reg_depths = [b.depth for v, b in p.plan.buffers.items() if v not in self.smem_values]
        unroll = math.lcm(1, *reg_depths)
        self.unroll = unroll if unroll <= MAX_UNROLL else 1
        self.literal = False
        self.notes = list(self.lay.notes)
        if unroll > MAX_UNROLL:
            self.notes.append(f"register rings need an unroll of {unroll} > {MAX_UNROLL}: "
                              "indexed dynamically (they may go to local memory)")

    # -- values and slots --------------------------------------------------------------------

    def ident(self, name: str) -> str:
        """The C identifier of an op or value name."""
        return self.ids[name]

    def tx_barrier(self, op: str) -> bool:
        """An async copy published on an mbarrier: its hook gets the slot's full barrier and the
        kernel's arrival announces the bytes (expect-tx) that the copy completes (complete-tx)."""
        ch = self.p.plan.channels.get(op)
        return (ch is not None and ch.lowering == "mbarrier"
                and async_kind(self.m.op(op)) == "copy")

    def depth(self, value: str) -> int:
        return self.p.plan.buffers[value].depth if value in self.p.plan.buffers \
            else self.p.plan.channels[value].depth

    def slot_expr(self, value: str, lag: int, k: str, static: int | None) -> str:
        d = self.depth(value)
        if d == 1:
            return "0"
        if static is not None and (self.literal or self.unroll % d == 0):
            return str((static - lag) % d)
        return f"(({k}) - {lag}) % {d}"

    def operand(self, value: str, lag: int, k: str, static: int | None) -> str:
        v = self.ident(value)
        s = self.slot_expr(value, lag, k, static)
        if value in self.smem_values:
            return f"ww_buf_{v} + ({s}) * WW_SLOT"
        return f"{v}_r[{s}]"

    # -- instructions ------------------------------------------------------------------------

    def instr(self, g: GroupProgram, x: Instr, k: str, static: int | None) -> list[str]:
        j = f"(({k}) - {x.lag})"
        if isinstance(x, Issue):
            args = ["ctx", j]
            if x.op in self.p.plan.buffers:
                args.append(self.operand(x.op, x.lag, k, static))
            if self.tx_barrier(x.op):
                args.append(f"&ww_full_{self.ident(x.op)}"
                            f"[{self.slot_expr(x.op, x.lag, k, static)}]")
            for r in x.reads:
                ref = self.operand(r.value, r.lag, k, static)
                if r.value not in self.smem_values:
                    ref = f"(({k}) - {r.lag} >= 0 ? {ref} : 0.0f)"
                else:
                    ref = f"(({k}) - {r.lag} >= 0 ? (const float*)({ref}) : ww_zero)"
                args.append(ref)
            return [f"ww_{self.ident(x.op)}({', '.join(args)});"]
        if isinstance(x, WaitFull | WaitEmpty):
            side = "full" if isinstance(x, WaitFull) else "empty"
            d = self.depth(x.channel)
            par = f"(({j} / {d}) & 1)" + (" ^ 1" if side == "empty" else "")
            return [f"ww::mbar_wait(&ww_{side}_{self.ident(x.channel)}"
                    f"[{self.slot_expr(x.channel, x.lag, k, static)}], {par});"]
        if isinstance(x, ArriveFull) and self.tx_barrier(x.op):
            v = self.ident(x.channel)
            return [f"ww::mbar_arrive_expect_tx(&ww_full_{v}"
                    f"[{self.slot_expr(x.channel, x.lag, k, static)}], "
                    f"ctx.gtid == 0 ? WW_TX_BYTES_{v} : 0u);  // + the bytes a TMA completes"]
        if isinstance(x, ArriveFull | ArriveEmpty):
            side = "full" if isinstance(x, ArriveFull) else "empty"
            why = ""
            if isinstance(x, ArriveEmpty) and x.after:
                why = f"  // when {x.after} is done reading: an async body arrives on completion"
            elif isinstance(x, ArriveFull) and async_kind(self.m.op(x.op)):
                why = f"  // {x.op} is async: a real body arrives on completion instead"
            return [f"ww::mbar_arrive(&ww_{side}_{self.ident(x.channel)}"
                    f"[{self.slot_expr(x.channel, x.lag, k, static)}]);{why}"]
        if isinstance(x, Commit):
            if self.arch == "sm_90a":
                return ["ww::mma_commit_group();"]
            if x.op not in self.done:
                return []
            d = self.done[x.op]
            return [f"if ({j} >= 0 && {j} < n) ww_commit_{self.ident(x.op)}(ctx, "
                    f"&ww_done_{self.ident(x.op)}[{j} % {d}]);"]
        if isinstance(x, WaitGroup):
            if self.arch == "sm_90a":
                return [f"ww::mma_wait_group<{x.n}>();"]
            out = []
            for op, wlag, _ in x.waits:
                d = self.done[op]
                i = f"(({k}) - {wlag})"
                out.append(f"if ({i} >= 0 && {i} < n) ww::mbar_wait(&ww_done_{self.ident(op)}"
                           f"[{i} % {d}], ({i} / {d}) & 1);")
            return out
        if isinstance(x, NamedSync):
            return [f"ww::named_sync({x.id}, {x.threads});  // {x.channel}.{x.barrier}"]
        if isinstance(x, NamedArrive):
            return [f"ww::named_arrive({x.id}, {x.threads});  // {x.channel}.{x.barrier}"]
        raise TypeError(x)

    def trip(self, g: GroupProgram, k: str, static: int | None, mode: str) -> list[str]:
        """One trip: mode "prologue" (k is a literal), "loop" (all present), "tail" (guarded).
        `static` is k's value modulo the unroll factor, which fixes the slots of rings whose
        depth divides it (register rings always do)."""
        self.literal = mode == "prologue"
        out = []
        for x in g.body:
            lines = self.instr(g, x, k, static)
            if not lines:
                continue
            if isinstance(x, Commit):
                out += lines
            elif mode == "prologue":
                if int(k) - x.lag >= 0:
                    out += lines
            elif mode == "tail":
                out += [f"if (({k}) - {x.lag} >= 0 && ({k}) - {x.lag} < n) {s}" for s in lines]
            else:
                out += lines
        return out

    def group_body(self, g: GroupProgram) -> list[str]:
        e, u = g.depth, self.unroll
        out = [f"// {g.group}: {g.warps} warps, reg_limit {g.reg_limit}, E = {e}"]
        regs = [v for v in self.p.plan.buffers if v not in self.smem_values
                and self.p.plan.buffers[v] and any(isinstance(x, Issue) and x.op == v
                                                  for x in g.body)]
        for v in regs:
            out.append(f"float {self.ident(v)}_r[{self.depth(v)}] = {{}};")
        for x in g.preamble:
            out += self.instr(g, x, "0", 0)
        for k in range(e):
            out.append(f"{{  // prologue trip {k}")
            out += ["  " + s for s in self.trip(g, str(k), k, "prologue")]
            out.append("}")
        out.append(f"int kb = {e};")
        out.append(f"for (; kb + {u} <= n; kb += {u}) {{  // steady state, unrolled {u}x")
        for t in range(u):
            out += ["  " + s for s in self.trip(g, f"kb + {t}", e + t if u > 1 else None,
                                                "loop")]
        out.append("}")
        for t in range(u - 1 + e):
            out.append(f"{{  // tail trip kb + {t}: rest of the steady state, then the epilogue")
            out += ["  " + s for s in self.trip(g, f"kb + {t}", e + t if u > 1 else None,
                                                "tail")]
            out.append("}")
        for x in g.drain:
            out += self.instr(g, x, "0", 0)
        return out

    def warp_group_blocks(self) -> list[tuple[tuple[int, int], list[GroupProgram]]]:
        """Runs of hardware warp groups with the same roles and setmaxnreg: ((first, last),
        roles).  The role code sits inside its warp group's branch, after that branch's
        setmaxnreg, so ptxas allocates each role within its own warp group's registers (with
        every setmaxnreg before a common role dispatch, each role has to fit the smallest)."""
        lay, out = self.lay, []
        for h, r in enumerate(lay.hw_regs):
            roles = [g for g in self.p.groups if lay.first_warp[g.group] < 4 * (h + 1)
                     and lay.first_warp[g.group] + g.warps > 4 * h]
            if out and out[-1][1] == roles and lay.hw_regs[out[-1][0][0]] == r:
                out[-1] = ((out[-1][0][0], h), roles)
            else:
                out.append(((h, h), roles))
        return out

    # -- files --------------------------------------------------------------------------------

    def hooks(self) -> str:
        out = [f"// Hooks for {self.p.model} ({ARCHS[self.arch]}, {self.arch}): one per op.",
               "// Fill each body with the op's real work. The defaults compute a little so that",
               "// nothing is optimized away. Register values are one float per thread here;",
               "// shared-memory values are WW_SLOT floats per ring slot.",
               "#pragma once", "#include <cstdint>", "",
               f"#define WW_SLOT {self.slot}", "",
               "struct WwCtx {", "  int gtid;      // thread index within the warp group",
               "  float acc;     // keeps the default bodies' results alive", "};", "",
               "static __device__ const float ww_zero[WW_SLOT] = {};", ""]
        for op in self.m.ops:
            if not any(isinstance(x, Issue) and x.op == op.name
                       for g in self.p.groups for x in g.body):
                continue
            params = ["WwCtx& ctx", "int iter"]
            if op.name in self.p.plan.buffers:
                params.append("float* out" if op.name in self.smem_values else "float& out")
            if self.tx_barrier(op.name):
                params.append("uint64_t* full")
            reads = [e for e in self.m.in_edges(op.name) if e.is_data]
            for i, e in enumerate(reads):
                params.append(f"const float* in{i}" if e.src in self.smem_values
                              else f"float in{i}")
            kind = async_kind(op)
            units = dict.fromkeys(f"{u}x{n}" for _, u, n in op.usage())
            out.append(f"// {op.name}: {op.cycles} cycles, units {', '.join(units) or '-'}"
                       + (f", async ({kind})" if kind else "")
                       + (", variable latency" if op.variable_latency else ""))
            if self.tx_barrier(op.name):
                v = self.ident(op.name)
                out.append("//   async copy: a real body issues the TMA (cp.async.bulk...mbarrier::"
                           "complete_tx::bytes)")
                out.append("//   on `full`, the slot's barrier, and sets WW_TX_BYTES below to the "
                           "bytes of one slot:")
                out.append("//   the kernel's arrival (thread 0) announces them with expect_tx, so "
                           "the slot is")
                out.append("//   published when the bytes have landed. The default copies "
                           "synchronously (0 bytes).")
                out.append(f"#ifndef WW_TX_BYTES_{v}")
                out.append(f"#define WW_TX_BYTES_{v} 0u")
                out.append("#endif")
            elif kind == "copy":
                out.append("//   async copy: nothing waits on it through a barrier here.")
            elif kind == "mma":
                out.append("//   async MMA: on sm_90a wgmma.mma_async (the kernel commits and "
                           "waits); on sm_100a tcgen05.mma")
                out.append("//   issued by one thread, completion through ww_commit_<op>.")
            for i, e in enumerate(reads):
                out.append(f"//   in{i}: {e.src} of iteration iter-{e.distance}")
            out.append(f"__device__ __forceinline__ void ww_{self.ident(op.name)}"
                       f"({', '.join(params)}) {{")
            terms = ["0.001f * (float)iter"]
            for i, e in enumerate(reads):
                terms.append(f"in{i}[ctx.gtid % WW_SLOT]" if e.src in self.smem_values
                             else f"in{i}")
            val = f"0.5f * ({' + '.join(terms)}) + ctx.acc * 0.25f"
            out.append(f"  float v = {val};")
            if self.tx_barrier(op.name):
                out.append("  (void)full;")
            if op.name in self.p.plan.buffers:
                if op.name in self.smem_values:
                    out.append("  out[ctx.gtid % WW_SLOT] = v;")
                else:
                    out.append("  out = v;")
            out.append("  ctx.acc += v;")
            out.append("}")
            out.append("")
        if self.arch == "sm_100a":
            for op in self.done:
                out.append(f"// Completion of {op}: the default arrives (its body is synchronous);"
                           " with tcgen05.mma use")
                out.append("// tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster"
                           ".b64 from the issuing thread.")
                out.append(f"__device__ __forceinline__ void ww_commit_{self.ident(op)}("
                           "WwCtx& ctx, uint64_t* bar) {")
                out.append("  uint32_t a = (uint32_t)__cvta_generic_to_shared(bar);")
                out.append("  asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: "
                           "\"r\"(a) : \"memory\");")
                out.append("  (void)ctx;")
                out.append("}")
                out.append("")
        return "\n".join(out) + "\n"

    def kernel(self, hooks_name: str) -> str:
        lay, feat = self.lay, _FEATURE[self.arch]
        out = [f"// {self.p.model}: warp-specialized software pipeline, I={self.p.I}, "
               f"L={self.p.L}, {self.p.S} stages.",
               f"// Generated by warpweave for {ARCHS[self.arch]} ({self.arch}). Compile: "
               f"nvcc -arch={self.arch} -c <file>.cu",
               "#include <cstdint>", "#include <cstdio>", "#include <cuda_runtime.h>",
               f'#include "{hooks_name}"', ""]
        out += _HELPERS.replace("@FEAT@", feat).splitlines()
        out.append("")
        for note in self.notes:
            out.append(f"// note: {note}")
        thr = {g.group: 32 * g.warps for g in self.p.groups}
        for name, ch in self.p.plan.channels.items():
            v = self.ident(name)
            if ch.lowering == "mbarrier":
                out.append(f"#define WW_FULL_COUNT_{v} {thr[ch.group]}")
                cons = sum(thr[c] for c in ch.consumers)
                out.append(f"#define WW_EMPTY_COUNT_{v} {max(1, cons)}")
        out.append(f"constexpr int WW_THREADS = {lay.threads};")
        out.append(f"constexpr int WW_MIN_ITERATIONS = {self.p.min_iterations};")
        out.append("")
        out.append(f"__global__ void __launch_bounds__({lay.threads}, 1)")
        out.append(f"ww_{self.name}_kernel(float* __restrict__ out, int n) {{")
        body = []
        for name, ch in self.p.plan.channels.items():
            v = self.ident(name)
            body.append(f"__shared__ __align__(16) float ww_buf_{v}[{ch.depth} * WW_SLOT];")
            if ch.lowering == "mbarrier":
                body.append(f"__shared__ __align__(8) uint64_t ww_full_{v}[{ch.depth}];")
                if ch.consumers:
                    body.append(f"__shared__ __align__(8) uint64_t ww_empty_{v}[{ch.depth}];")
        if self.arch == "sm_100a":
            for op, d in self.done.items():
                body.append(f"__shared__ __align__(8) uint64_t ww_done_{self.ident(op)}[{d}];")
        body.append("if (threadIdx.x == 0) {")
        for name, ch in self.p.plan.channels.items():
            v = self.ident(name)
            if ch.lowering != "mbarrier":
                continue
            body.append(f"  for (int s = 0; s < {ch.depth}; ++s) {{")
            body.append(f"    ww::mbar_init(&ww_full_{v}[s], WW_FULL_COUNT_{v});")
            if ch.consumers:
                body.append(f"    ww::mbar_init(&ww_empty_{v}[s], WW_EMPTY_COUNT_{v});")
            body.append("  }")
        if self.arch == "sm_100a":
            for op, d in self.done.items():
                grp = next(g for g in self.p.groups for x in g.body
                           if isinstance(x, Commit) and x.op == op)
                body.append(f"  for (int s = 0; s < {d}; ++s) ww::mbar_init(&ww_done_"
                            f"{self.ident(op)}[s], {32 * grp.warps});")
        body.append("  ww::fence_barrier_init();")
        body.append("}")
        body.append("__syncthreads();")
        body.append("const int warp = threadIdx.x / 32;")
        body.append("const int wg = warp / 4;")
        body.append("WwCtx ctx{0, 0.0f};")
        for (h0, h1), roles in self.warp_group_blocks():
            where = f"wg == {h0}" if h0 == h1 else f"wg >= {h0} && wg <= {h1}"
            body.append(f"if ({where}) {{  // roles {', '.join(g.group for g in roles)}")
            r = lay.hw_regs[h0]
            if r != lay.entry_regs and len(lay.hw_regs) > 1:  # one warp group: nobody to share
                body.append(f"  ww::setmaxnreg_{'inc' if r > lay.entry_regs else 'dec'}<{r}>();")
            for g in roles:
                w0 = lay.first_warp[g.group]
                body.append(f"  if (warp >= {w0} && warp < {w0 + g.warps}) {{  // role {g.group}")
                body.append(f"    ctx.gtid = threadIdx.x - {32 * w0};")
                body += ["    " + s for s in self.group_body(g)]
                body.append("  }")
            body.append("}")
        body.append("out[blockIdx.x * blockDim.x + threadIdx.x] = ctx.acc;")
        out += ["  " + s for s in body]
        out.append("}")
        out.append("")
        out.append(f"// Host launcher: one CTA of {lay.threads} threads; out holds one float per "
                   "thread.")
        out.append(f'extern "C" cudaError_t ww_launch_{self.name}(int n, float* out, '
                   "cudaStream_t stream) {")
        out.append("  if (n < WW_MIN_ITERATIONS) return cudaErrorInvalidValue;")
        out.append(f"  ww_{self.name}_kernel<<<1, WW_THREADS, 0, stream>>>(out, n);")
        out.append("  return cudaGetLastError();")
        out.append("}")
        out.append("")
        out.append("#ifdef WW_STANDALONE")
        out.append("int main() {")
        out.append("  float* out = nullptr;")
        out.append("  cudaMalloc(&out, WW_THREADS * sizeof(float));")
        out.append(f"  cudaError_t err = ww_launch_{self.name}(64, out, 0);")
        out.append("  if (err == cudaSuccess) err = cudaDeviceSynchronize();")
        out.append('  std::printf("%s\\n", cudaGetErrorString(err));')
        out.append("  cudaFree(out);")
        out.append("  return err == cudaSuccess ? 0 : 1;")
        out.append("}")
        out.append("#endif")
        return "\n".join(out) + "\n"


_HELPERS = r"""namespace ww {
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(count)
               : "memory");
}
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// Arrive with release semantics (the default .release.cta): the slot's writes become visible.
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_addr(bar)) : "memory");
}
// Arrive and add `bytes` to the phase's transaction count: the phase completes when every
// arrival is in and the bytes have been completed (complete_tx, by a TMA / cp.async.bulk).
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}
// Wait until the phase with the given parity has completed (acquire).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile("{\n"
               "  .reg .pred done;\n"
               "WW_WAIT_%=:\n"
               "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "  @!done bra WW_WAIT_%=;\n"
               "}\n" :: "r"(smem_addr(bar)), "r"(parity) : "memory");
}
__device__ __forceinline__ void named_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(threads) : "memory");
}
template <int R> __device__ __forceinline__ void setmaxnreg_inc() {
#if defined(@FEAT@)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(R));
#endif
}
template <int R> __device__ __forceinline__ void setmaxnreg_dec() {
#if defined(@FEAT@)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(R));
#endif
}
__device__ __forceinline__ void mma_commit_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void mma_wait_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
#endif
}
}  // namespace ww
"""


def emit_cuda(model: Model, p: WarpProgram, arch: str | None = None) -> CudaSource:
    """Print the kernel and hooks for `arch` (default: the machine's, `arch_for`)."""
    arch = arch or arch_for(model)
    pr = _Printer(model, p, arch)
    hooks_name = f"{pr.name}_hooks.cuh"
    return CudaSource(arch, f"ww_{pr.name}_kernel", pr.kernel(hooks_name), pr.hooks(),
                      hooks_name, pr.lay, tuple(renamed(pr.ids)))


def write_cuda(src: CudaSource, out_dir: str | Path, stem: str) -> Path:
    """Write `<stem>.cu` and the hooks header into out_dir (made if missing); return the .cu
    path.  `stem` must be a plain file name (`outputs.file_stem`)."""
    d = output_dir(out_dir)
    write_into(d, src.hooks_name, src.hooks)
    return write_into(d, f"{stem}.cu", src.kernel)


@attrs.frozen
class PtxasReport:
    """What `ptxas -v` said about one kernel for the real target."""

    kernel: str
    target: str
    registers: int
    spill_stores: int
    spill_loads: int
    stack_frame: int
    smem: int


@attrs.frozen
class CompileResult:
    ok: bool
    command: tuple[str, ...]
    output: str
    kernels: tuple[PtxasReport, ...]

    @property
    def warnings(self) -> list[str]:
        """ptxas's "Potential Performance Loss" notes, e.g. (C7507) setmaxnreg ignored."""
        return [line.split(":", 1)[1].strip() for line in self.output.splitlines()
                if "Potential Performance Loss" in line]


def nvcc_path() -> str | None:
    return shutil.which("nvcc") or (str(Path("/usr/local/bin/nvcc"))
                                    if Path("/usr/local/bin/nvcc").exists() else None)


def compile_cuda(cu: str | Path, arch: str, nvcc: str | None = None,
                 timeout: int = 300) -> CompileResult:
    """nvcc -arch=<arch> -c with ptxas -v; parse registers and spills per kernel."""
    nvcc = nvcc or nvcc_path()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found")
    cu = Path(cu)
    cmd = (nvcc, f"-arch={arch}", "-std=c++17", "-Xptxas", "-v", "-c", str(cu), "-o",
           str(cu.with_suffix(".o")))
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    text = run.stdout + run.stderr
    return CompileResult(run.returncode == 0, cmd, text, tuple(parse_ptxas(text, arch)))


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?, (\d+) bytes smem)?")


def parse_ptxas(text: str, arch: str | None = None) -> list[PtxasReport]:
    """Per kernel and target: registers, spill stores/loads, stack frame, static smem."""
    out, cur, props = [], None, (0, 0, 0)
    for line in text.splitlines():
        m = _ENTRY.search(line)
        if m:
            cur, props = (m.group(1), m.group(2)), (0, 0, 0)
            continue
        m = _PROPS.search(line)
        if m and cur:
            props = tuple(int(x) for x in m.groups())
            continue
        m = _USED.search(line)
        if m and cur:
            if arch is None or cur[1] == arch:
                out.append(PtxasReport(cur[0], cur[1], int(m.group(1)), props[1], props[2],
                                       props[0], int(m.group(2) or 0)))
            cur = None
    return out
