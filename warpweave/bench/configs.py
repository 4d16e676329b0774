"""The configurations a benchmark compares: backend x encoding x search strategy, and the
heuristic scheduler.

The first configuration of a matrix is the baseline that every other one is timed against; by
default it is what `warpweave solve` runs when told nothing.  The heuristic
(`warpweave.core.heuristic`, when installed) is one more column; it proves nothing, so it is
compared on I only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import attrs

from warpweave.errors import InputError
from warpweave.pipeline import DEFAULT_ENCODING, MINIMIZE_BACKEND

HEURISTIC = "heuristic"
HEURISTIC_MODULE = "warpweave.core.heuristic"
# The scalable methods (`warpweave solve --method`): a column each, like the heuristic, but with
# the lower bound they report (`warpweave.scale`).
SCALABLE = ("lns", "gaus")
# What a suite is compared on when no configuration is asked for.
SUITE_DEFAULTS = {"scale": (f"{MINIMIZE_BACKEND}/{DEFAULT_ENCODING} minimize", "lns", "gaus",
                            HEURISTIC)}
SEARCHES = ("minimize", "sweep")

# The peers every default run includes: the Twill paper's literal encoding on yices (the
# paper's configuration: one SMT solver, normalized costs, one problem per I) and on z3.
PEERS = (("yices", "paper", "sweep", "units"), ("z3", "paper", "sweep", "units"))
# The default matrix: solve's default first (the baseline), then the peers (and the heuristic).
DEFAULT_MATRIX = ((MINIMIZE_BACKEND, DEFAULT_ENCODING, "minimize", None), *PEERS)


@attrs.frozen
class Config:
    """A backend spec, an encoding and a search strategy, and the cost normalization if it is
    not the run's; or the heuristic, LNS or GauS (no encoding)."""

    backend: str
    encoding: str | None = None
    search: str | None = None
    normalize: str | None = None   # None: the run's --normalize

    @property
    def label(self) -> str:
        if self.method != "exact":
            return self.backend
        return f"{self.backend}/{self.encoding} {self.search}" + \
            (f" normalize={self.normalize}" if self.normalize else "")

    @property
    def heuristic(self) -> bool:
        return self.backend == HEURISTIC

    @property
    def method(self) -> str:
        """exact (a backend, encoding and search), heuristic, lns or gaus."""
        return self.backend if self.backend in (HEURISTIC, *SCALABLE) else "exact"


def parse_label(text: str) -> Config:
    """The configuration a label names: `BACKEND/ENCODING [SEARCH] [normalize=HOW]` (as
    reports print them; no search: solve's auto), `heuristic`, `lns` or `gaus`."""
    if text.strip() in (HEURISTIC, *SCALABLE):
        return Config(text.strip())
    spec, *rest = text.split()
    normalize = None
    if rest and rest[-1].startswith("normalize="):
        normalize = rest.pop().partition("=")[2]
    search = rest.pop(0) if rest else ""
    backend, _, encoding = spec.rpartition("/")
    if not backend or not encoding or rest:
        raise InputError("a configuration is BACKEND/ENCODING [minimize|sweep] "
                         "[normalize=HOW], heuristic, lns or gaus", ("--configs",), text)
    from warpweave.core.registry import ENCODINGS
    ENCODINGS.get(encoding)
    search = search or _auto(encoding)
    if search not in SEARCHES or not _fits(encoding, search):
        raise InputError(f"the search must be sweep{' or minimize' * _fits(encoding, 'minimize')}"
                         f" on {encoding}", ("--configs",), text)
    return Config(backend, encoding, search, normalize)


def heuristic_available() -> bool:
    """Whether the heuristic scheduler is installed (it is imported lazily, in the worker)."""
    return importlib.util.find_spec(HEURISTIC_MODULE) is not None


def matrix(backends: Sequence[str] = (), encodings: Sequence[str] = (),
           searches: Sequence[str] = (), every: bool = False, heuristic: bool = True,
           labels: Sequence[str] = (), normalizations: Sequence[str] = (),
           peers: bool = False) -> tuple[list[Config], list[str]]:
    """The configurations to run and notes on what was left out.

    `labels`: exactly these configurations (`parse_label`), in this order.  Nothing given:
    DEFAULT_MATRIX.  Otherwise the product of `backends` (default: solve's
    default), `encodings` (default: DEFAULT_ENCODING) and `searches` (default: minimize where the
    encoding takes I as a variable, else sweep; minimize is dropped for encodings that cannot).
    `every`: every backend variant (`backend_specs`) on every encoding and search.
    `normalizations`: more than one crosses every solver configuration with each (raw cycles
    and units side by side); one is the run's own.  `peers` adds PEERS (the default matrix has
    them).  `heuristic` (also given as the backend `heuristic`) adds the heuristic when it is
    installed.  Unknown
    encodings or searches and malformed backend specs are input errors; a backend whose solver
    is missing here is left out with a note.
    """
    from warpweave.core.registry import ENCODINGS, backend_specs
    for s in searches:
        if s not in SEARCHES:
            raise InputError(f"must be {' or '.join(SEARCHES)}", ("--searches",), s)
    for e in encodings:
        ENCODINGS.get(e)  # an InputError naming it if unknown
    notes: list[str] = [f"left out the minimize search on {e}: it needs an encoding that takes "
                        "I as a variable" for e in encodings
                        if "minimize" in searches and not _fits(e, "minimize")]
    if labels:
        chosen = [parse_label(x) for x in labels]
        heuristic = heuristic or any(c.heuristic for c in chosen)
        triples = [(c.backend, c.encoding, c.search, c.normalize) for c in chosen
                   if c.method == "exact"]
        methods = [c for c in chosen if c.backend in SCALABLE]
    elif every:
        triples = [(b, e, s, None) for b in backend_specs() for e in ENCODINGS.names()
                   for s in SEARCHES if _fits(e, s)]
    elif backends or encodings or searches:
        heuristic = heuristic or HEURISTIC in backends
        solvers = [b for b in backends if b != HEURISTIC]
        triples = [] if backends and not solvers else [
            (b, e, s, None) for b in solvers or [MINIMIZE_BACKEND] for e in encodings or
            [DEFAULT_ENCODING] for s in searches or [_auto(e)] if _fits(e, s)]
    else:
        triples = list(DEFAULT_MATRIX)
    if not labels:
        methods = []
    if len(normalizations) > 1:
        triples = [(b, e, s, n or how) for how in normalizations for b, e, s, n in triples]
    if peers:
        triples += [t for t in PEERS if t not in triples]
    usable = {b: _unavailable(b) for b in dict.fromkeys(t[0] for t in triples)}
    for b, why in usable.items():
        if why:
            notes.append(f"left out {b}: {why}")
    configs = [Config(*t) for t in dict.fromkeys(triples) if not usable[t[0]]]
    for c in dict.fromkeys(methods):
        why = _method_unavailable(c.backend)
        if why:
            notes.append(f"left out {c.backend}: {why}")
        else:
            configs.append(c)
    if heuristic:
        if heuristic_available():
            configs.append(Config(HEURISTIC))
        else:
            notes.append(f"left out the heuristic: {HEURISTIC_MODULE} is not installed")
    if not configs:
        raise InputError("no configuration can run here", ("--backends",), list(usable))
    return configs, notes


def _method_unavailable(method: str) -> str | None:
    """Why a scalable method cannot run here (GauS without PyTorch), or None."""
    if method == "gaus":
        from warpweave.scale.method import gaus_available
        return gaus_available()
    return None


def _takes_interval(encoding: str) -> bool:
    """Whether the encoding can state I as a variable (the minimize search needs it)."""
    from warpweave.core.registry import ENCODINGS
    return bool(getattr(ENCODINGS.get(encoding), "variable_interval", False))


def _auto(encoding: str) -> str:
    """solve's `--search auto`: minimize where the encoding allows it."""
    return "minimize" if _takes_interval(encoding) else "sweep"


def _fits(encoding: str, search: str) -> bool:
    return search == "sweep" or _takes_interval(encoding)


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
