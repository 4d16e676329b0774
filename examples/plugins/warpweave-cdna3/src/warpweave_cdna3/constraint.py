"""`lds_copy_wave`: a copy into LDS and every op that reads it run on the same wave group.

On CDNA3 a global-to-LDS copy is a vector-memory instruction of the wave that issues it
(`buffer_load ... lds`, `global_load_lds`); its completion is visible only to that wave, through
its own `vmcnt` counter (`s_waitcnt vmcnt(n)`).  There is no TMA transaction barrier (Hopper's
mbarrier) through which a producer wave could tell a consumer wave that the data has landed
without both stopping at a workgroup barrier.  So, in a warp-specialized loop, the ops that read a
copy's LDS tile wait on the copy in the wave group that issued it: the copy and its readers share
a group.  The built-in rules do not say this (on NVIDIA a TMA load's readers may be anywhere).

Which ops are copies: those that hold the `vmem` unit (the CU's vector-memory path) and occupy
LDS (a footprint in memory `lds`); their readers are the targets of their data edges.  On a
machine without such ops (every NVIDIA model) the rule holds vacuously.
"""

from __future__ import annotations

from collections.abc import Iterator

from warpweave.core.constraints import Constraint, VariableView, neg
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.core.verify import Violation


def lds_copies(model: Model) -> list[str]:
    """The ops that copy into LDS: they use `vmem` and have an `lds` footprint."""
    return [op.name for op in model.ops
            if op.total_use("vmem") and op.footprint_in("lds")]


def reads(model: Model) -> Iterator[tuple[str, str]]:
    """(copy, reader) for every data edge out of a copy."""
    for c in lds_copies(model):
        for e in model.out_edges(c):
            if e.is_data and e.dst != c:
                yield c, e.dst


class LdsCopyWave(Constraint):
    """A copy into LDS and each op reading it run on one wave group (the copy's `vmcnt`)."""

    name = "lds_copy_wave"
    group_symmetric = True   # "the same group" does not care which group it is
    q_free = True            # about groups only, not Q's copies or the length
    hereditary = True        # dropping ops never breaks it

    def check(self, model: Model, schedule: Schedule, semantics: str = "loop"
              ) -> list[Violation]:
        """Its meaning: every (copy, reader) pair on one group.  The same under every
        semantics (it is about groups, not about Q)."""
        g = schedule.group
        return [Violation(self.name, f"{r} reads the LDS copy {c} on group {g[r]}, but {c} "
                          f"is issued (and waited for with vmcnt) on group {g[c]}", (c, r))
                for c, r in reads(model) if g[c] != g[r]]

    def encode(self, view: VariableView) -> None:
        """Its statement: for each pair and each group, copy on the group implies reader on it
        (each op is on exactly one group, so this makes the two groups equal)."""
        for c, r in reads(view.model):
            for grp in view.model.machine.warp_groups:
                view.problem.add_clause([neg(view.on(c, grp.name)), view.on(r, grp.name)])
