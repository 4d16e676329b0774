"""`fa-simplified`: the running example of the Twill paper, Figure 1.

S = gemm(Q, K[i]); P = exp(S); O += gemm(P, V[i]) on a toy Hopper description (Figure 1b): one
tensor core and one SFU, every op one unit of time, edges S -> P -> O and the accumulator O -> O
carried to the next iteration.  The paper's modulo schedule (Figure 1d) is I=2, S@0, P@2, O@3.
This builder gives exactly `examples/fa-simplified.json`.
"""

from __future__ import annotations

from warpweave.core.model import Machine, Memory, Model, Unit, WarpGroup
from warpweave.kernels.graph import Graph
from warpweave.kernels.spec import KernelSpec
from warpweave.machines.costs import Phase


def build(spec: None) -> Model:
    machine = Machine("toy", [Unit("tc", 1), Unit("sfu", 1)], [Memory("smem", 233472)],
                      [WarpGroup("g0", 4, 255)])
    g = Graph("fa-simplified", machine)
    g.op("S", Phase("tc", 1, 1))
    g.op("P", Phase("sfu", 1, 1))
    g.op("O", Phase("tc", 1, 1))
    g.edge("S", "P")
    g.edge("P", "O")
    g.edge("O", "O", distance=1)
    return g.model()


SPEC = KernelSpec(
    name="fa-simplified",
    description="Figure 1 of the Twill paper: S, P, O on one tensor core and one SFU, unit costs",
    machines=(),
    params=(),
    build_fn=build,
    follows="Twill paper Figure 1 (a)-(d)",
)
