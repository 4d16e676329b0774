"""The configurations a benchmark compares: backend x encoding, and the heuristic scheduler.

The first configuration of a matrix is the baseline that every other one is timed against.
The heuristic (`warpweave.core.heuristic`, when installed) is one more column; it proves nothing,
so it is compared on I only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import attrs

from warpweave.core.errors import InputError
from warpweave.pipeline import DEFAULT_BACKEND

HEURISTIC = "heuristic"
HEURISTIC_MODULE = "warpweave.core.heuristic"

# The default matrix: the default sat configuration first (the baseline), CP-SAT on both
# encodings it suits, the MIP solvers on the integer encoding, two SMT solvers.
DEFAULT_MATRIX = ((DEFAULT_BACKEND, "compact"), ("cpsat", "compact"), ("cpsat", "integer"),
                  ("cbc", "integer"), ("highs", "integer"), ("z3", "compact"),
                  ("yices", "compact"))


@attrs.frozen
class Config:
    """A backend spec and an encoding, or the heuristic (encoding None)."""

    backend: str
    encoding: str | None = None

    @property
    def label(self) -> str:
        return self.backend if self.encoding is None else f"{self.backend}/{self.encoding}"

    @property
    def heuristic(self) -> bool:
        return self.backend == HEURISTIC


def heuristic_available() -> bool:
    """Whether the heuristic scheduler is installed (it is imported lazily, in the worker)."""
    return importlib.util.find_spec(HEURISTIC_MODULE) is not None


def matrix(backends: Sequence[str] = (), encodings: Sequence[str] = (), every: bool = False,
           heuristic: bool = True) -> tuple[list[Config], list[str]]:
    """The configurations to run and notes on what was left out.

    No `backends` and no `encodings`: DEFAULT_MATRIX.  Otherwise the product of `backends`
    (default: the default backend) and `encodings` (default: compact).  `every`: every backend
    variant (`backend_specs`) on every encoding.  Unknown encodings and malformed backend specs
    are input errors; a backend whose solver is missing here is left out with a note.
    """
    from warpweave.core.registry import ENCODINGS, backend_specs
    if every:
        pairs = [(b, e) for b in backend_specs() for e in ENCODINGS.names()]
    elif backends or encodings:
        heuristic = heuristic or HEURISTIC in backends
        solvers = [b for b in backends if b != HEURISTIC]
        pairs = [] if backends and not solvers else \
            [(b, e) for b in solvers or [DEFAULT_BACKEND] for e in encodings or ["compact"]]
    else:
        pairs = list(DEFAULT_MATRIX)
    notes: list[str] = []
    for e in sorted({e for _, e in pairs}):
        ENCODINGS.get(e)  # InputError naming it if unknown
    usable = {b: _unavailable(b) for b in dict.fromkeys(b for b, _ in pairs)}
    for b, why in usable.items():
        if why:
            notes.append(f"left out {b}: {why}")
    configs = [Config(b, e) for b, e in dict.fromkeys(pairs) if not usable[b]]
    if heuristic:
        if heuristic_available():
            configs.append(Config(HEURISTIC))
        else:
            notes.append(f"left out the heuristic: {HEURISTIC_MODULE} is not installed")
    if not configs:
        raise InputError("no configuration can run here", ("--backends",), list(usable))
    return configs, notes


def _unavailable(spec: str) -> str | None:
    """Why the backend `spec` cannot run here, or None.  A malformed spec is an InputError."""
    from warpweave.core.registry import BACKENDS
    from warpweave.core.registry import backend as make_backend
    cls = BACKENDS.get(spec.partition(":")[0])
    reason = cls.unavailable() if hasattr(cls, "unavailable") else None
    if reason:
        return reason
    make_backend(spec)  # validates the options
    return None
