"""The job of `warpweave crosscheck`: solve one model with every backend x encoding (each run is a
full `solve`: streaming ops, cost normalization, the optimal search, raw re-verification), compare
the answers, and on a disagreement write what is needed to replay it.

Two runs disagree when both finished (status `optimal` or `infeasible`) with different answers
(status, I, L), or when a schedule fails verification (in raw cycles) or a backend's schedule was
rejected inside the search (`SearchBug`).  With `oracle`, the brute-force answer
(`warpweave.core.oracle`, tiny models only) is compared too.  The replay files are the IR of the
first `(I, S)` question the disagreeing runs answered differently (or the oracle answers
differently), one file per run (`Problem.write`; `warpweave export` turns it into LP, SMT-LIB or
CNF), the model that was solved, and the oracle's schedule there if it has one.  With
`--reduce`, also the smallest model on which the disagreement persists (`reduce_disagreement`).
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from warpweave.core.bounds import bounds
from warpweave.core.constraints import constraint_set
from warpweave.core.formats import model_to_dict, schedule_to_dict, write_document
from warpweave.core.model import Model
from warpweave.core.oracle import Oracle, OracleBudget
from warpweave.core.registry import ENCODINGS
from warpweave.errors import InputError
from warpweave.pipeline import Options, Run, run_solve
from warpweave.reduce import Reduction, reduce_model
from warpweave.search import SearchBug

DECIDED = ("optimal", "infeasible")


@attrs.frozen(eq=False)  # identity: rows key dictionaries, and runs hold unhashable dicts
class Row:
    """One backend x encoding run: what it answered (raw cycles), how long it took, whether its
    schedule verified, and the run itself (None if the search raised a `SearchBug`)."""

    backend: str
    encoding: str
    status: str
    I: int | None  # noqa: E741
    L: int | None
    seconds: float
    verified: str          # yes | no: <first violation> | - (no schedule)
    run: Run | None = None

    @property
    def answer(self) -> tuple:
        """(status, I, L) in the units that were solved (normalized, if they were)."""
        s = self.run.outcome.schedule if self.run else None
        return (self.status, s.I if s else None, s.L if s else None)

    @property
    def decided(self) -> bool:
        return self.status in DECIDED


@attrs.frozen
class Report:
    model: Model                   # as solved (streaming applied, normalized if it was)
    scale: int | None              # cycles per unit when costs were normalized
    max_stages: int
    rows: tuple[Row, ...]
    oracle: tuple | None           # the oracle's (status, I, L), if it decided
    oracle_note: str | None        # what the oracle did (or why it gave up)
    problems: tuple[str, ...]      # every disagreement and failed verification, one line each
    written: tuple[Path, ...]

    @property
    def exit_status(self) -> int:
        """0 all agree, 1 a disagreement or a failed verification, 3 some run did not finish."""
        if self.problems:
            return 1
        return 0 if all(r.decided for r in self.rows) else 3


def crosscheck(model: Model, backends: Sequence[str], encodings: Sequence[str],
               options: Options | None = None, oracle: bool = False,
               oracle_budget: int | None = None, out: Path | None = None,
               progress: Callable[[Row], None] | None = None) -> Report:
    """Run `model` on every backend x encoding with `options` and compare (module docstring).
    Files are written under `out` (default `crosscheck-<model name>`) only when something
    disagrees; the directory is removed again if nothing was written."""
    # The model's optimum on every backend x encoding: no plan round (`pipeline.fit_plan`)
    options = attrs.evolve(options or Options(), plan=False)
    out = Path(out or f"crosscheck-{_slug(model.name)}")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for b in backends:
        for e in encodings:
            row = _run(model, attrs.evolve(options, backend=b, encoding=e, bug_dir=out))
            rows.append(row)
            if progress:
                progress(row)
    done = next((r.run for r in rows if r.run), None)
    solved = done.model if done else model
    scale = done.normalized.scale if done and done.normalized else None
    cons = constraint_set(without=options.without)
    b = bounds(solved, {c.name for c in cons})
    k = options.max_stages or b.default_max_stages()
    truth, note, oracle_obj = None, None, None
    if oracle:
        oracle_obj = Oracle(solved, budget=oracle_budget, rules=cons,
                            semantics=options.semantics)
        try:
            best = oracle_obj.optimum(k, b.i_upper)
            truth = ("optimal", best.I, best.L) if best else ("infeasible", None, None)
            note = f"{oracle_obj.calls} candidate schedules examined"
        except OracleBudget as exc:
            units = f" (units of {scale} cycles)" if scale else ""
            note = f"gave up ({exc}) while deciding I={exc.below}{units}" + (
                "; no smaller I has a schedule" if exc.below > 1 else "")
    problems = _problems(rows, truth)
    written: list[Path] = []
    if problems:
        written = _write_replay(solved, rows, cons, b.min_length, oracle_obj, out)
    written += sorted(p for p in out.glob("warpweave-bug-*.ir.json"))  # from SearchBug
    if created and not any(out.iterdir()):
        out.rmdir()
    return Report(solved, scale, k, tuple(rows), truth, note, tuple(problems), tuple(written))


def reduce_disagreement(model: Model, backends: Sequence[str], encodings: Sequence[str],
                        options: Options, oracle: bool = False,
                        oracle_budget: int | None = None, budget: int = 100) -> Reduction:
    """The smallest model (`warpweave.reduce`) on which the same cross-check still finds a
    disagreement: a repro to read and to replay (at most `budget` cross-checks).  A Ctrl-C,
    which the searches absorb, stops the reduction with the smallest model so far."""
    def fails(smaller: Model) -> bool:
        with tempfile.TemporaryDirectory() as scratch:
            rep = crosscheck(smaller, backends, encodings, options, oracle=oracle,
                             oracle_budget=oracle_budget, out=Path(scratch))
        if any(r.run and r.run.outcome.interrupted for r in rep.rows):
            raise KeyboardInterrupt
        return bool(rep.problems)
    return reduce_model(model, fails, budget=budget)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)


def _run(model: Model, options: Options) -> Row:
    tick = time.perf_counter()
    try:
        run = run_solve(model, options)
    except SearchBug as exc:
        return Row(options.backend, options.encoding, "bug", None, None,
                   time.perf_counter() - tick, f"no: {exc}")
    s = run.schedule
    verified = "-"
    if s is not None:  # every constraint in force, in raw cycles
        bad = [v for c in constraint_set(without=options.without)
               for v in c.check(run.raw, s, semantics=options.semantics)]
        verified = f"no: {bad[0]}" if bad else "yes"
    return Row(options.backend, options.encoding, run.outcome.status, s.I if s else None,
               s.L if s else None, time.perf_counter() - tick, verified, run)


def _problems(rows: Sequence[Row], truth: tuple | None) -> list[str]:
    out = [f"{r.backend}/{r.encoding}: {r.verified[4:]}" for r in rows
           if r.verified.startswith("no")]
    answers = {r.answer for r in rows if r.decided}
    if len(answers) > 1:
        out.append("answers differ: " + "; ".join(
            f"{show_answer(a)} from " + ", ".join(f"{r.backend}/{r.encoding}" for r in rows
                                            if r.decided and r.answer == a)
            for a in sorted(answers, key=str)))
    if truth is not None:
        wrong = [r for r in rows if r.decided and r.answer != truth]
        if wrong:
            out.append(f"the oracle says {show_answer(truth)}, not " + ", ".join(
                f"{show_answer(r.answer)} ({r.backend}/{r.encoding})" for r in wrong))
    return out


def show_answer(answer: tuple) -> str:
    """`optimal I=2 L=4`, `infeasible`."""
    status, I, L = answer  # noqa: E741
    return status if I is None else f"{status} I={I} L={L}"


def _claims(row: Row) -> dict[tuple[int, int], object]:
    """What a run said about each (I, S) it asked: 'infeasible', or the L it found (None if it
    was not proven minimal)."""
    said: dict[tuple[int, int], object] = {}
    for a in row.run.outcome.attempts if row.run else ():
        if a.phase == "relaxation":
            if a.status == "infeasible":
                said.update({(a.I, s): "infeasible" for s in range(1, a.S + 1)})
        elif a.phase == "joint":
            said[(a.I, a.S)] = "infeasible" if a.status == "infeasible" else \
                (a.L if a.status == "optimal" else None)
    return said


def _first_conflict(rows: Sequence[Row], oracle: Oracle | None):
    """The smallest (I, S) that two runs (or a run and the oracle) answered differently, with
    the runs involved and the oracle's schedule there (if any)."""
    claims = {r: _claims(r) for r in rows}
    for key in sorted({k for c in claims.values() for k in c}):
        said = {r: c[key] for r, c in claims.items() if key in c and c[key] is not None}
        witness = None
        if oracle is not None:
            try:
                witness = oracle.at(*key).schedule
            except OracleBudget:
                pass
        known = set(said.values()) | ({witness.L if witness else "infeasible"}
                                      if oracle is not None else set())
        if len(known) > 1:
            return key, list(said), witness
    return None, [], None


def _write_replay(model: Model, rows: Sequence[Row], cons, min_length: int,
                  oracle: Oracle | None, out: Path) -> list[Path]:
    """The solved model, the IR of each run at the first conflicting (I, S), the oracle's
    schedule there."""
    written = [out / "model.json"]
    write_document(model_to_dict(model), written[0])
    key, involved, witness = _first_conflict(rows, oracle)
    if key is None:
        return written
    I, S = key  # noqa: E741
    for enc in dict.fromkeys(r.encoding for r in involved):
        view = ENCODINGS.get(enc)(model, I, S, cons, min_length=min_length)
        for r in (r for r in involved if r.encoding == enc):
            path = out / f"{_slug(r.backend)}--{enc}--I{I}-S{S}.ir.json"
            view.problem.write(path)
            written.append(path)
    if witness is not None:
        path = out / f"oracle--I{I}-S{S}.schedule.json"
        write_document(schedule_to_dict(witness), path)
        written.append(path)
    return written


def parse_list(values: Sequence[str], default: Sequence[str], every: Sequence[str],
               what: str) -> list[str]:
    """Comma-separated, repeatable option values; none given means `default`, `all` `every`."""
    names = [x for v in values for x in v.split(",") if x]
    if not names:
        return list(default)
    if names == ["all"]:
        return list(every)
    if "all" in names:
        raise InputError(f"`all` stands alone in --{what}", (f"--{what}",), ",".join(names))
    return list(dict.fromkeys(names))
