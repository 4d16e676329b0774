"""One question the search put to a solver and its answer (`Attempt`), and what it proves.

An `Attempt` is both the announcement of a solver call (status `SOLVING`, given to `progress`
before the call and never recorded) and its recorded answer.  Its `rules_out` is the proof the
answer contributes: the (I, S) cases it shows to have no schedule at any length of their stage
count.  The outcome's proof is the list of recorded attempts, in order.
"""

from __future__ import annotations

import attrs

SOLVING = "solving"  # the status of an announcement: a solver call starts on this question

# The phases whose schedules solve a relaxed problem (fewer constraints), not the model's:
# their schedules are never kept as the search's best.
RELAXED_PHASES = ("relaxation", "modulo")

# The phases whose infeasible (or, over an I range, optimal) answers prove cases infeasible.
PROVING_PHASES = ("joint", "relaxation", "minimize", "modulo", "probe")


@attrs.frozen
class Attempt:
    """One question the search asked: is some L in `lengths` feasible at (I, S)?"""

    I: int  # noqa: E741
    S: int
    lengths: tuple[int, int]
    status: str            # infeasible | optimal | feasible | timeout | unknown (| SOLVING)
    how: str               # backend/encoding, or why no solver was needed
    seconds: float = 0.0
    L: int | None = None
    # joint | relaxation (every stage count at once, the constraints that ignore Q's copies) |
    # probe (the minimize search's first questions: I fixed at the lower bound) | minimize (I a
    # variable over `interval`) | modulo (Algorithm 1's phase 1) | seeded (Algorithm 1's phase
    # 2: L from phase 1's length) | tie-break
    phase: str = "joint"
    # `seconds` split (benchmarks read them): stating the problem in the IR (the encoding),
    # translating the IR into the solver, and the solver's own search.
    encode_seconds: float = 0.0
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    # The I range a `minimize` question covered; I is then the least I found in it (else its
    # lowest value).
    interval: tuple[int, int] | None = None
    # The lowest stage count of an answer that covers S = stages_from..S at once: the stage
    # counts too short for the longest path, recorded in one answer however many they are.
    stages_from: int | None = None
    # The question's size as stated in the IR (benchmarks report it beside the time).
    variables: int | None = None
    constraints: int | None = None

    def rules_out(self) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """The cases this answer shows to have no schedule at any length of their stage count:
        ((lowest I, highest I), (lowest S, highest S)); None when it shows none.  An optimal
        `minimize` answer shows that no I below the one it found works at its stage count."""
        if self.phase not in PROVING_PHASES:
            return None
        lo, hi = self.interval or (self.I, self.I)
        if self.status == "optimal" and self.interval is not None:
            hi = self.I - 1
        elif self.status != "infeasible":
            return None
        if lo > hi:
            return None
        first = 1 if self.phase == "relaxation" else (self.stages_from or self.S)
        return (lo, hi), (first, self.S)

    def to_dict(self) -> dict:
        """The JSON form of the proof (`Outcome.proof`): the fields that are set, seconds
        rounded to 0.1 ms, and the cases ruled out (`rules_out`) where the answer shows some."""
        d = attrs.asdict(self, filter=lambda a, v: v is not None)
        for key in ("seconds", "encode_seconds", "build_seconds", "solve_seconds"):
            d[key] = round(d[key], 4)
        shown = self.rules_out()
        if shown is not None:
            d["rules_out"] = {"I": list(shown[0]), "S": list(shown[1])}
        return d


def too_short(min_length: int, I: int, S: int, phase: str, *,  # noqa: E741
              interval: tuple[int, int] | None = None, stages_from: int | None = None) -> Attempt:
    """The answer, without a solver, that S stages (from `stages_from`) of I (over `interval`)
    are too short for the longest path `min_length`."""
    top = interval[1] if interval else I
    return Attempt(I, S, (min_length, S * top), "infeasible",
                   f"L >= {min_length} (longest path) exceeds S*I", phase=phase,
                   interval=interval, stages_from=stages_from if stages_from != S else None)
