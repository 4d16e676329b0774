"""What a scalable method returns: the best verified schedule, the best lower bound, the gap, and
how the answer improved over time (for the anytime display and the benchmarks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

import attrs

from warpweave.core.bounds import Bounds
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule


def gap(I: int, lower: int) -> float:  # noqa: E741
    """The relative gap of an initiation interval to a lower bound: (I - lower) / lower."""
    return (I - lower) / max(1, lower)


@attrs.frozen
class Improvement:
    """A moment of an anytime run: a better verified schedule (I, L), or a better lower bound,
    after `seconds`, found by `how`."""

    seconds: float
    I: int | None  # noqa: E741
    L: int | None
    lower: int
    how: str

    @property
    def gap(self) -> float | None:
        return None if self.I is None else gap(self.I, self.lower)

    def to_dict(self) -> dict:
        d = attrs.asdict(self)
        d["seconds"] = round(self.seconds, 3)
        d["gap"] = None if self.gap is None else round(self.gap, 4)
        return d


Listener = Callable[[Improvement], None]


def improvement_line(x: Improvement) -> str:
    """One moment of an anytime run, for a terminal: the best I and L, the lower bound, the
    gap, the seconds, and how."""
    found = f"I={x.I} L={x.L}" if x.I is not None else "no schedule yet"
    gap_text = f"gap {100 * x.gap:.1f}%" if x.gap is not None else "gap -"
    return f"  {x.seconds:7.2f} s  {found}  lower bound {x.lower}  {gap_text}  ({x.how})"


def improvement_printer(stream: TextIO, live: bool | None = None) -> Listener | None:
    """A listener that prints each improvement on `stream` when it is a terminal, or as `live`
    says (else None: piped output and --json stay clean)."""
    if not (stream.isatty() if live is None else live):
        return None

    def show(x: Improvement) -> None:
        stream.write(improvement_line(x) + "\n")
        stream.flush()

    return show


@attrs.frozen
class ScaleResult:
    """The outcome of GauS, LNS or the heuristic run as a method: a schedule verified against
    every constraint in force (or None, with `why`), the best lower bound known and how it was
    shown, and every improvement on the way."""

    method: str
    model: Model
    schedule: Schedule | None
    lower_bound: int
    bounds: Bounds
    lower_how: tuple[str, ...]       # what the lower bound rests on
    history: tuple[Improvement, ...]
    seconds: float
    why: str | None = None
    notes: tuple[str, ...] = ()
    lower_proven_optimal: bool = False  # I and L both proven minimal
    interrupted: bool = False           # stopped by Ctrl-C
    timed_out: bool = False             # cut by the time limit it was given (not its own end)

    @property
    def gap(self) -> float | None:
        return None if self.schedule is None else gap(self.schedule.I, self.lower_bound)
