"""What a search found and what it proved (`Outcome`), and the proof read back as ranges.

Every way of scheduling reports an `Outcome`: the exact search (`warpweave.search.optimal`),
a search stopped before its first question (`Outcome.stopped`), and the scalable methods
(`warpweave.scale.method`, with no attempts: their lower bound rests on bounds, not on a proof).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from warpweave.core.bounds import Bounds
from warpweave.core.constraints import Constraint
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.search.attempt import Attempt


@attrs.frozen
class Outcome:
    """What the search found and what it proved."""

    model: Model
    schedule: Schedule | None
    status: str                    # optimal | feasible | infeasible | unknown
    optimal: bool                  # I and L both proven minimal
    lower_bound: int               # no I below this is feasible (within S <= max_stages)
    bounds: Bounds
    max_stages: int
    attempts: tuple[Attempt, ...]
    backend: str
    encoding: str
    constraints: tuple[str, ...]
    seconds: float
    interrupted: bool = False
    notes: tuple[str, ...] = ()

    @classmethod
    def stopped(cls, model: Model, b: Bounds, max_stages: int | None, backend: str,
                encoding: str, constraints: Sequence[Constraint], seconds: float,
                stop: BaseException, where: str, notes: Sequence[str] = ()) -> Outcome:
        """A search stopped (a time limit, Ctrl-C) before its first question: no schedule,
        the bounds `b` (the lower bound is b.lower), and a note saying where it stopped."""
        interrupted = isinstance(stop, KeyboardInterrupt)
        note = f"{'interrupted' if interrupted else stop} while {where}, before any solver call"
        return cls(model, None, "unknown", False, b.lower, b,
                   b.default_max_stages() if max_stages is None else max_stages, (), backend,
                   encoding, tuple(c.name for c in constraints), seconds, interrupted,
                   (*notes, note))

    def proof(self) -> list[dict]:
        """Every question asked, in order, with its answer, how it was answered, and the cases
        it shows infeasible (`rules_out`): together, each I below the answer and each stage
        count below the answer's at its I, shown infeasible."""
        return [a.to_dict() for a in self.attempts]

    def ruled_out(self) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
        """The cases shown infeasible, ((I from, to), (S from, to), how), grouped by how (in the
        order first used); contiguous stage counts of one I range, then contiguous I ranges of
        one stage-count range, are merged."""
        by_how: dict[str, list[Case]] = {}
        for a in self.attempts:
            shown = a.rules_out()
            if shown is not None:
                by_how.setdefault(a.how, []).append(shown)
        return [(i, s, how) for how, cases in by_how.items()
                for i, s in merge(merge(cases, 1), 0)]


Case = tuple[tuple[int, int], tuple[int, int]]  # ((I from, to), (S from, to))


def merge(cases: list[Case], axis: int) -> list[Case]:
    """Neighbouring cases equal on the other axis whose ranges on `axis` (0: I, 1: S) meet or
    overlap (the probe's I = lower bound, then the minimize question from it), made one."""
    out: list[Case] = []
    for case in cases:
        if out and out[-1][1 - axis] == case[1 - axis] and \
                out[-1][axis][0] <= case[axis][0] <= out[-1][axis][1] + 1:
            joined = (out[-1][axis][0], max(out[-1][axis][1], case[axis][1]))
            out[-1] = (joined, case[1]) if axis == 0 else (case[0], joined)
        else:
            out.append(case)
    return out
