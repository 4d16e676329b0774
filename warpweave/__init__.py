"""warpweave: provably optimal software pipelining jointly with warp specialization.

The Python API (`warpweave.api`) is exported here and imported on first use, so that
`import warpweave` (and `warpweave --help`) stays fast::

    import warpweave as ww
    r = ww.solve(ww.kernel("fa3-fwd", "h100"))
    print(r.I, r.optimal)
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = (
    "CrossCheck", "Emitted", "HeuristicRun", "InvalidSchedule", "Lowered", "Result",
    "ScheduleView", "Simulation", "Verdict", "bounds", "cross_check", "draw", "emit", "export_ir",
    "export_schedule", "heuristic", "import_graph", "kernel", "list_backends", "list_constraints",
    "list_kernels", "list_machines", "load_model", "load_schedule", "lower", "ring_depths",
    "schedule_for", "simulate", "solve", "sweep", "sweep_plot", "target", "verdict", "verify",
    "view",
)
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from warpweave import api
        return getattr(api, name)
    raise AttributeError(f"module 'warpweave' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
