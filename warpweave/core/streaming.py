"""Streaming ops (Twill paper section 5.3): variable-latency ops with no incoming data edge.

On their own warps they run ahead of the pipeline, so the model gives them zero latency: their
outgoing edges get delay 0 and the op keeps only the cycles in which it holds a unit.  How far
ahead each must run is reported as a pipeline-depth parameter (ceil(latency / I) iterations) for
an auto-tuner or the code generator.

The zero latency is a relaxation, exact only when every such op v can really run ahead far
enough: its in-edges (order edges u -> v: ring slot or buffer reuse, delay d, distance a) must
release it its latency before each consumer (edge v -> w, distance b): M(w) + (a + b) * I >=
M(u) + d + latency; and its warp issues in order (ops by slot), so it is also held back by every
op queued before it there, and by the units it shares with ops placed around its zero-latency
slot.  `warpweave simulate --real-latency` runs a schedule
with the real latencies and shows where it falls short of 1/I.
"""

from __future__ import annotations

import math

import attrs

from warpweave.core.model import Model


@attrs.frozen
class StreamingOp:
    """A streaming op: its name and the latency (largest outgoing delay) it had."""

    op: str
    latency: int
    cycles: int

    def depth(self, I: int) -> int:  # noqa: E741
        """Iterations it must run ahead of its consumers at initiation interval I."""
        return max(1, math.ceil(self.latency / I))

    def to_dict(self, I: int) -> dict:  # noqa: E741
        return {"op": self.op, "latency": self.latency, "cycles": self.cycles,
                "depth": self.depth(I)}


def streaming_ops(model: Model) -> list[str]:
    """The variable-latency ops without an incoming data edge."""
    return [op.name for op in model.ops if op.variable_latency
            and not any(e.is_data for e in model.in_edges(op.name))]


def apply_streaming(model: Model) -> tuple[Model, list[StreamingOp]]:
    """The model with zero-latency streaming ops, and what was changed."""
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
