"""The `llvm` exporter: LLVM's `ModuloSchedule` (llvm/CodeGen/ModuloSchedule.h).

A `ModuloSchedule` is the loop, the instructions in schedule order, and per instruction a cycle
and a stage; the expanders (`ModuloScheduleExpander`, `PeelingModuloScheduleExpander`) generate
the prologue, kernel and epilogue from it.  Here an op starting at M(v) has `cycle` = M(v) and
`stage` = M(v) div II, and `instructions` lists the ops by cycle (program order within a cycle).
Ops are keyed by their id in the source graph, else by name.
"""

from __future__ import annotations

from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.exporters import Exporter, op_key

FORMAT = "warpweave.llvm-modulo-schedule/1"


def llvm_schedule(model: Model, schedule: Schedule) -> dict:
    """The document: II, the stage count, and one entry per instruction in schedule order."""
    I = schedule.I  # noqa: E741
    position = {v: k for k, v in enumerate(model.op_names)}
    order = sorted(model.op_names, key=lambda v: (schedule.start[v], position[v]))
    instructions = [{"id": op_key(model, v), "op": v, "cycle": schedule.start[v],
                     "stage": schedule.start[v] // I} for v in order]
    return {"format": FORMAT, "model": model.name, "II": I,
            "num_stages": max(x["stage"] for x in instructions) + 1,
            "instructions": instructions}


LLVM = Exporter("llvm", "LLVM's ModuloSchedule: a cycle and a stage per instruction, in "
                "schedule order", llvm_schedule)
