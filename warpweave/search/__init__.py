"""The optimal search: the smallest I, then the smallest L at that I, with a proof.

For each I from max(ResMII, RecMII) upward (one by one: feasibility is not monotone in I), and each
stage count S = 1..S_max, one problem decides every length L in ((S-1)*I, S*I] at once and
minimizes L: within a stage count a feasible L stays feasible when L grows, and a smaller S always
means a smaller L.  The first I with a feasible S is optimal when every (I', S) below it was shown
infeasible; the L found is minimal when the smaller S at that I were infeasible and the solve was
optimal.  Beyond `Bounds.i_upper` a larger I cannot help, so the search ends.

Every schedule a backend returns is verified (each constraint's `check`) before it is reported; a
failed check writes the replayable IR and raises `SearchBug`.  Time limits and Ctrl-C return the
best schedule so far with its proven lower bound.

`progress` hears of each answer as it is recorded, and, before each solver call, of the question
being put (an `Attempt` with status `SOLVING`, never recorded): a caller can show what the search
is waiting on during a long call.

`paper=True` runs the Twill paper's Algorithm 1 instead: per I, an optimal modulo schedule without
the warp constraints fixes the stage count; only that stage count is tried for the joint problem,
seeded with that schedule (a warm start) and its length.

Incremental solving: each problem minimizes L within its stage count in one solver (natively, or
by bound tightening under assumptions in the same solver).  Warm starts (`Problem.hints`, for
backends that take them) are given where a feasible point is known: Algorithm 1's phase 2 and the
tie-breakers, which start from the optimum they refine.  Most questions of the search are
infeasibility proofs, which no starting point shortens.

The modules, from the records up:
- `attempt`: one question and its answer (`Attempt`), and the cases an answer rules out;
- `outcome`: what a search found and proved (`Outcome`), its proof read back as ranges;
- `solver`: one backend x encoding: states an (I, S) problem, solves it, verifies the schedule
  (`SearchBug` when the verifier rejects it);
- `run`: a search in progress (`Run`): the ask-and-record protocol every solver call goes
  through (deadlines, Ctrl-C, progress, the best verified schedule and the proven bounds);
- `strategies`: sweep, minimize (with its probe) and Algorithm 1, driving a `Run`;
- `tiebreak`: the secondary objectives among schedules of the optimal (I, L);
- `optimal`: the entry points `search` and `decide`, `choose` (what `auto` means) and
  `check_limits`.
"""

from warpweave.search.attempt import SOLVING, Attempt
from warpweave.search.optimal import check_limits, choose, decide, search
from warpweave.search.outcome import Outcome
from warpweave.search.solver import SearchBug
from warpweave.search.strategies import MODULO_ONLY
from warpweave.search.tiebreak import TIE_BREAKERS

__all__ = ["MODULO_ONLY", "SOLVING", "TIE_BREAKERS", "Attempt", "Outcome", "SearchBug",
           "check_limits", "choose", "decide", "search"]
