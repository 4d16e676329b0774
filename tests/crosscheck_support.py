"""What the cross-checking properties share: the matrix, example counts per profile, statistics for
the session summary (examples per property, features of the models drawn), the oracle per model,
counterexamples saved as model files, and a diagnosis of which constraint's encoding rejects a
valid schedule."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from hypothesis import HealthCheck, event, note, settings
from hypothesis.control import current_build_context
from hypothesis.errors import InvalidArgument

from warpweave.core.bounds import bounds
from warpweave.core.formats import dumps, model_to_dict
from warpweave.core.model import Model
from warpweave.core.oracle import Oracle
from warpweave.core.registry import CONSTRAINTS, ENCODINGS, backend, backend_specs
from warpweave.core.schedule import Schedule
from warpweave.reduce import reduce_model

from .strategies import FEATURES, features

ENCODING_NAMES = ("compact", "paper", "integer")
SPECS = tuple(backend_specs())
# One spec per family (default options), CP-SAT's interleaved portfolio, and the SAT solvers that
# PySAT cannot interrupt (no time limits are used here, so they are safe).
FAMILY_SPECS = ("sat", "cpsat", "yices", "highs", "cbc", "z3", "cvc5", "cpsat:workers=2",
                "sat:cadical195", "sat:kissat404")
# The other SAT variants: every PySAT cardinality and PB encoding, two more solvers.
SAT_VARIANTS = tuple(s for s in SPECS if s.startswith("sat:") and s not in (
    "sat:maplechrono/totalizer/best", "sat:cadical195/totalizer/best",
    "sat:kissat404/totalizer/best"))
CI_EXAMPLES = 100   # max_examples of the ci profile; `scaled` is relative to it
ORACLE_BUDGET = 20_000  # verifier calls per model: beyond it the oracle stays undecided
REGRESSIONS = Path(__file__).resolve().parent / "regressions"

PROFILES = {
    "ci": dict(max_examples=CI_EXAMPLES, deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]),
    "thorough": dict(max_examples=20 * CI_EXAMPLES, deadline=None, print_blob=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]),
}

# The rules in force: the constraint registry, the one list `verify` and the search read.
REGISTERED = [CONSTRAINTS.get(name) for name in CONSTRAINTS.names()]


def scaled(n: int) -> settings:
    """Settings for a property that runs `n` examples under the ci profile, proportionally more
    under `thorough` (read when the test module is imported, after conftest loads the profile)."""
    return settings(max_examples=max(1, n * settings.default.max_examples // CI_EXAMPLES))


# ---------------------------------------------------------------------------------------------
# Statistics for the session summary (conftest.pytest_terminal_summary)

EXAMPLES: Counter = Counter()
EVENTS: dict[str, Counter] = defaultdict(Counter)
CASES: dict[str, set] = defaultdict(set)
MODELS: Counter = Counter()  # models drawn by the properties, and how many had each feature


def count(prop: str, case: str = "") -> None:
    """One generated example of property `prop` (in parametrized case `case`); call it first."""
    EXAMPLES[prop] += 1
    CASES[prop].add(case)


def tally(prop: str, *events: str) -> None:
    """Events of an example that passed (what kind of model, what the answer was, ...)."""
    for e in events:
        EVENTS[prop][e] += 1


def drawn(doc: dict) -> None:
    """A model document drawn for a property: count its features (`strategies.FEATURES`) for the
    summary, and as hypothesis events (`--hypothesis-show-statistics` shows them per test)."""
    MODELS["models"] += 1
    for f in sorted(features(doc)):
        MODELS[f] += 1
        event(f)


def statistics() -> dict:
    """This process's statistics as JSON-able data: a test worker (pytest-xdist) sends them to
    the controller, which `merge`s them for the one session summary."""
    return {"examples": dict(EXAMPLES), "events": {k: dict(v) for k, v in EVENTS.items()},
            "cases": {k: sorted(v) for k, v in CASES.items()}, "models": dict(MODELS)}


def merge(stats: dict) -> None:
    """Adds a worker's `statistics()` to this process's."""
    EXAMPLES.update(stats["examples"])
    for prop, events in stats["events"].items():
        EVENTS[prop].update(events)
    for prop, cases in stats["cases"].items():
        CASES[prop].update(cases)
    MODELS.update(stats["models"])


def summary_lines() -> list[str]:
    lines = []
    for prop in sorted(EXAMPLES):
        events = ", ".join(f"{k} {v}" for k, v in sorted(EVENTS[prop].items()))
        lines.append(f"{prop}: {EXAMPLES[prop]} examples over {len(CASES[prop])} case(s)"
                     + (f" ({events})" if events else ""))
    if MODELS:
        lines.append(f"features of the {MODELS['models']} models drawn: " + ", ".join(
            f"{f} {MODELS[f]}" for f in FEATURES))
    return lines


# ---------------------------------------------------------------------------------------------
# The oracle, once per model


_ORACLES: dict[str, Oracle] = {}


def oracle(model: Model) -> Oracle:
    """The oracle of `model` (cached by its document: hypothesis replays models while shrinking)."""
    key = json.dumps(model_to_dict(model), sort_keys=True)
    if key not in _ORACLES:
        if len(_ORACLES) > 500:
            _ORACLES.clear()
        _ORACLES[key] = Oracle(model, budget=ORACLE_BUDGET)
    return _ORACLES[key]


def search_range(model: Model) -> int:
    """The largest I the search tries (the oracle's range too)."""
    return bounds(model).i_upper


# ---------------------------------------------------------------------------------------------
# Counterexamples as model files


_ORIGINS: dict[str, list[tuple]] = defaultdict(list)


def origin(exc: BaseException) -> tuple:
    """Where `exc` was raised: its type and the file and line of the innermost frame (how
    hypothesis tells distinct failures of one test apart)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return (type(exc).__name__, tb.tb_frame.f_code.co_filename if tb else "",
            tb.tb_lineno if tb else 0)


def _final_replay() -> bool:
    """Whether hypothesis is replaying its final, shrunk example (False outside a property)."""
    try:
        return current_build_context().is_final
    except InvalidArgument:
        return False


@contextlib.contextmanager
def keep_counterexample(prop: str, case: str, *models: Model,
                        fails: Callable[[Model], bool] | None = None,
                        **context) -> Iterator[None]:
    """On failure, write each model as a model file `regressions/failed-<prop>-<case>[-k].json`
    and note where; `context` (backend, encoding, max_stages, ...) goes into the note.  Every
    failing example overwrites the file, so the last write is hypothesis' final, shrunk replay
    (and an interrupted shrink leaves the smallest model so far).  On that final replay, with
    `fails` (does the property still fail on this model?), the one model is first reduced further
    (`warpweave/reduce.py`).  When hypothesis finds distinct failures (raised at different places),
    the n-th one's files get `-failure<n>` after `<case>`, so none overwrites another's.
    `test_crosscheck.test_regression` replays every model file there.  (`WARPWEAVE_REGRESSIONS`
    names another directory.)"""
    try:
        yield
    except Exception as exc:
        if fails is not None and len(models) == 1 and _final_replay():
            reduced = reduce_model(models[0], fails).model
            note(f"reduced from {len(models[0].ops)} ops / {len(models[0].edges)} edges to "
                 f"{len(reduced.ops)} / {len(reduced.edges)}")
            models = (reduced,)
        where = Path(os.environ.get("WARPWEAVE_REGRESSIONS", REGRESSIONS))
        where.mkdir(parents=True, exist_ok=True)
        stem = re.sub(r"[^A-Za-z0-9_=.-]+", "_", "-".join(
            x for x in (prop.replace("test_", "", 1), case) if x))
        seen, here = _ORIGINS[stem], origin(exc)
        if here not in seen:
            seen.append(here)
        if seen.index(here):
            stem += f"-failure{seen.index(here) + 1}"
        for k, m in enumerate(models):
            path = where / f"failed-{stem}{'-' + str(k) if k else ''}.json"
            path.write_text(dumps(model_to_dict(m.replace(name=path.stem))))
            note(f"counterexample model saved to {path} ({context})")
        raise


# ---------------------------------------------------------------------------------------------
# Solving one (I, S) and explaining a disagreement


def all_constraints():
    """Every registered constraint (built-ins and any installed plugin's), as the search uses."""
    return [c() for c in REGISTERED]


def solve_at(model: Model, encoding: str, spec: str, I: int, S: int):  # noqa: E741
    """(status, schedule or None) of one (I, S) problem with every constraint, minimizing L."""
    view = ENCODINGS.get(encoding)(model, I, S, all_constraints())
    result = backend(spec).solve(view.problem)
    schedule = view.decode(result.values) if result.status.has_solution else None
    return result.status.value, schedule


def rejecting_constraints(model: Model, encoding: str, schedule: Schedule) -> list[str]:
    """The constraints whose encoding (alone, in `encoding`, solved by the default sat backend)
    rejects `schedule` pinned: for a valid schedule this names the faulty encode."""
    out = []
    for c in all_constraints():
        view = ENCODINGS.get(encoding)(model, schedule.I, schedule.stages, [c], symmetry=False)
        pins = view.pin(schedule)
        if False in pins or not backend("sat").solve(view.problem, assumptions=pins) \
                .status.has_solution:
            out.append(c.name)
    return out


def describe(schedule: Schedule | None) -> str:
    if schedule is None:
        return "none"
    return (f"I={schedule.I} L={schedule.L} start={dict(schedule.start)} "
            f"group={dict(schedule.group)}")
