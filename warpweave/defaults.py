"""The defaults of every job, in one place: `pipeline.Options`, the Python API (`warpweave.api`)
and the command line's options all read them, so a script gets what `warpweave solve` does.

This module imports nothing, so that the command line's parser (and `warpweave --help`) can read
the defaults without importing the solver machinery.
"""

# The search (`warpweave solve`, `ww.solve`).  Measured on the kernel library
# (docs/reproduction.md): I as a variable with CP-SAT decides each kernel in under a minute of
# CPU; sweeping I with SAT is fast per I but may need many I.
BACKEND = "auto"                 # cpsat for the minimize search, sat for the sweep
MINIMIZE_BACKEND = "cpsat"
SWEEP_BACKEND = "sat:cadical195/totalizer/bdd"
ENCODING = "integer"
SEARCH = "auto"                  # minimize if the encoding takes I as a variable, else sweep
NORMALIZE = "auto"               # auto | off | unit=K | paper=U
# Which scheduler answers `solve` (`warpweave.scale.method`): auto is the exact search up to
# AUTO_EXACT_OPS ops (every HatScheT graph of at most 60 ops was proven optimal within 60 s on a
# loaded 2-core machine, docs/scale.md), large-neighbourhood search above.
METHOD = "auto"
METHODS = ("auto", "exact", "lns", "gaus", "heuristic")
AUTO_EXACT_OPS = 60
SEED = 0
# Streaming ops (Twill 5.3): solved as given; the zero-latency relaxation only for a lower bound
# ("bound") or as the answer, labelled ("paper"): `pipeline` and docs/codegen.md.
STREAMING = "given"
STREAMING_MODES = ("given", "bound", "paper")
# What a valid schedule is (docs/semantics.md): the loop for every trip count, or the paper's Q.
SEMANTICS = "loop"
SEMANTICS_CHOICES = ("loop", "paper-q")

# The published roles asked as questions (`warpweave reproduce`): each a decision at the optimal
# I.  The SAT sweep on the compact encoding proves FA4's MMA-warp question infeasible at the
# optimum in minutes (docs/reproduction.md).
REPRODUCE_BACKEND = SWEEP_BACKEND
REPRODUCE_ENCODING = "compact"
REPRODUCE_SOLVE_LIMIT = 1200.0   # seconds per decision; beyond it the answer is unknown
REPRODUCE_TIME_LIMIT = 3600.0    # seconds per optimal-I search

# The heuristic (`warpweave heuristic`, `ww.heuristic`): Rau's budget ratio.
BUDGET = 6

# The simulator (`warpweave simulate`, `ww.simulate`).
ITERATIONS = 64
PACE = "schedule"

# Code generation (`warpweave emit`, `ww.emit`).
EMIT_TARGET = "all"

# Sweeps (`warpweave sweep`, `ww.sweep`): where the results are kept, and each point's time limit
# (a sweep runs many solves; one that cannot finish is recorded with its bounds, not waited on).
SWEEP_STORE = "warpweave-sweep.db"
SWEEP_TIME_LIMIT = 300.0
