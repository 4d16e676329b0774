"""Schedule exporters: a verified schedule in the form a compiler reads, keyed by the source
graph's node ids (an op's `id`, which importers set; its name when it has none).

Built-ins and plugins register alike, as `Exporter` objects in the entry-point group
`warpweave.exporters` (`pyproject.toml`): `triton` (per op `loop.stage`, `loop.cluster`,
`tt.modulo_cycle` and the warp partition, as Triton's pipeliner and Meta's modulo scheduler
annotate ops) and `llvm` (per instruction a cycle and a stage, LLVM's `ModuloSchedule`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from warpweave.core.model import Model
from warpweave.core.registry import Registry
from warpweave.core.schedule import Schedule
from warpweave.errors import InputError

EXPORTERS = Registry("warpweave.exporters", "exporter")


@attrs.frozen
class Exporter:
    """A schedule format: `function(model, schedule, **options)` returns the document (a dict,
    written as JSON); `options` names the keyword options it takes, with their meaning."""

    name: str
    description: str
    function: Callable[..., dict] = attrs.field(repr=False)
    options: Mapping[str, str] = attrs.field(factory=dict)


def op_key(model: Model, op: str) -> int | str:
    """What an exported op is keyed by: its id in the source graph, else its name."""
    source_id = model.op(op).source_id
    return op if source_id is None else source_id


def export_schedule(model: Model, schedule: Schedule, to: str, **options: Any) -> dict:
    """`schedule` of `model` in format `to` (an exporter's name); InputError for an unknown
    format or an option it does not take."""
    try:
        exporter = EXPORTERS.get(to)
    except InputError as exc:
        raise exc.with_path(("--to",)) from None
    for key in options:
        if key not in exporter.options:
            raise InputError(f"not an option of the {to} exporter (options: "
                             f"{', '.join(exporter.options) or 'none'})", ("options", key),
                             options[key])
    return exporter.function(model, schedule, **options)


__all__ = ["EXPORTERS", "Exporter", "export_schedule", "op_key"]
