"""Streaming ops (Twill paper section 5.3): variable-latency ops with no incoming data edge.

The paper gives them zero latency, so that they may run ahead of the pipeline on their own
warps.  `apply_streaming` builds that model: each such op's out-edges get delay 0 and the op keeps
only the cycles in which it holds a unit.

That model is a **relaxation**: it only removes or weakens constraints (a smaller delay on
rule 1, fewer cycles for rules 3 and 9; the reservation table, the data edges and so the
lifetimes of rules 4, 5 and 8 are unchanged), so every schedule of the model as given is one of
the relaxation, with the same start times, groups and length.  Two things follow and are all
that warpweave uses it for (`pipeline.run_solve`):

- a lower bound: no I below the relaxation's optimum (within a stage bound) has a schedule of
  the model as given either (`solve --streaming bound` starts the search of the model as given
  there);
- exactness on a schedule: when the relaxation's optimal schedule is valid on the model as
  given, it is optimal there too (`solve --streaming paper` checks it, and says so either way).

It is not exact in general.  Run ahead, a streaming op holds its memory (a ring slot) from its
real issue, `latency` cycles before its first reader, which the relaxation does not count; and its
in-edges (the order edges u -> v of ring-slot reuse, delay d, distance a) must release it early
enough: `M(w) + (a + b) * I >= M(u) + d + latency` for each reader w (edge v -> w, distance b).
A 2-deep ring read 10 cycles after the load needs I >= 6, where the relaxation answers I = 1;
the GEMM on B200 needs 4224 cycles where it answers 4096 (the loads in flight do not fit in
shared memory with the ones being read).  So the default (`--streaming given`) solves streaming
ops at their real latency: the schedule then issues each load where it really runs ahead, the
ring covers its flight (`codegen.buffers`), and memory counts it (rule 5).
"""

from __future__ import annotations

import attrs

from warpweave.core.model import Model


@attrs.frozen
class StreamingOp:
    """A streaming op: its name, the latency (largest outgoing delay) and cycles it had."""

    op: str
    latency: int
    cycles: int


def streaming_ops(model: Model) -> list[str]:
    """The variable-latency ops without an incoming data edge."""
    return [op.name for op in model.ops if op.variable_latency
            and not any(e.is_data for e in model.in_edges(op.name))]


def apply_streaming(model: Model) -> tuple[Model, list[StreamingOp]]:
    """The relaxation: the model with zero-latency streaming ops, and what was changed."""
    names = set(streaming_ops(model))
    if not names:
        return model, []
    changed, ops = [], []
    for op in model.ops:
        if op.name not in names:
            ops.append(op)
            continue
        busy = [c for c, row in enumerate(op.rrt) if row]
        cycles = busy[-1] + 1 if busy else 1
        latency = max([e.delay for e in model.out_edges(op.name)], default=0)
        changed.append(StreamingOp(op.name, latency, op.cycles))
        ops.append(attrs.evolve(op, cycles=cycles, rrt=op.rrt[:cycles]))
    edges = [attrs.evolve(e, delay=0) if e.src in names else e for e in model.edges]
    return model.replace(ops=ops, edges=edges), changed
