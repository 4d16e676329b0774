"""The `triton` exporter: the attributes Triton's software pipeliner reads per op.

Triton's pipeliner (`PipeliningUtility.h`: `loop.stage`, `loop.cluster`) takes a coarse schedule:
each op of the loop body has a stage (which iteration, relative to the newest, it belongs to in the
pipelined loop) and a cluster (its place in the order of the loop body; the ops of one cluster keep
their program order).  Meta's modulo scheduler in their Triton fork fills them from a modulo
schedule as `loop.stage = cycle / II` and `loop.cluster` = the rank of the cycle within its stage,
and keeps `tt.modulo_cycle` and `tt.modulo_ii`.  Here, for an op starting at cycle M(v):

- `loop.stage` = M(v) div I;
- `tt.modulo_cycle` = M(v) mod I, its cycle in the loop body;
- `loop.cluster` = the rank of `tt.modulo_cycle` among the distinct body cycles (ops issued in the
  same body cycle share a cluster);
- `ttg.partition` = the index of its warp group among the groups the schedule uses (machine
  order), each listed in `partitions` with its warps: the warp-specialized partition.

Ops are keyed by their id in the source graph (Meta's DDG node id for an imported graph), else by
name, and listed in body order.
"""

from __future__ import annotations

from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.exporters import Exporter, op_key

FORMAT = "warpweave.triton-schedule/1"


def triton_schedule(model: Model, schedule: Schedule) -> dict:
    """The document: `tt.modulo_ii`, the partitions, and one entry per op in body order."""
    I = schedule.I  # noqa: E741
    used = {schedule.group[op] for op in model.op_names}
    groups = [g for g in model.machine.warp_groups if g.name in used]
    partition = {g.name: k for k, g in enumerate(groups)}
    body = sorted({t % I for t in schedule.start.values()})
    cluster = {c: k for k, c in enumerate(body)}
    order = sorted(model.op_names, key=lambda v: (schedule.start[v] % I, schedule.start[v]))
    ops = [{"id": op_key(model, v), "op": v, "loop.stage": schedule.start[v] // I,
            "loop.cluster": cluster[schedule.start[v] % I],
            "tt.modulo_cycle": schedule.start[v] % I,
            "ttg.partition": partition[schedule.group[v]]} for v in order]
    return {"format": FORMAT, "model": model.name, "tt.modulo_ii": I,
            "num_stages": max(op["loop.stage"] for op in ops) + 1,
            "partitions": [{"ttg.partition": partition[g.name], "group": g.name,
                            "num_warps": g.warps} for g in groups],
            "ops": ops}


TRITON = Exporter("triton", "Triton's pipeliner: loop.stage, loop.cluster, tt.modulo_cycle and "
                  "ttg.partition per op, tt.modulo_ii", triton_schedule)
