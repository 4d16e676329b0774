"""Results files: JSON lines, a `run` header first, then one `case` record per line.

The header says where and how the figures were measured (CPUs, load, versions, settings), so a
file read back later (`warpweave bench --report FILE`) gives the same report.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from collections.abc import Sequence
from pathlib import Path

from warpweave import __version__
from warpweave.bench.configs import Config
from warpweave.bench.runner import Settings
from warpweave.core.formats import read_text
from warpweave.errors import InputError
from warpweave.outputs import output_file


def run_header(targets: Sequence[str], configs: Sequence[Config], settings: Settings,
               notes: Sequence[str] = ()) -> dict:
    """The `run` record: the machine, the versions, the settings, the configurations."""
    return {"type": "run", "targets": list(targets), "configs": [c.label for c in configs],
            "baseline": configs[0].label, "timeout": settings.timeout, "grace": settings.grace,
            "normalize": settings.normalize, "max_stages": settings.max_stages,
            "cpus": os.cpu_count(), "load_before": _load(),
            "platform": platform.platform(), "processor": platform.processor(),
            "python": platform.python_version(), "warpweave": __version__,
            "started": datetime.datetime.now().isoformat(timespec="seconds"),
            "notes": list(notes)}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


class Writer:
    """Appends records to a JSON-lines file as they come (a killed run keeps what it had)."""

    def __init__(self, path: str | Path | None):
        try:  # streamed, not written at the end: a killed run keeps its records
            self.file = open(output_file(path), "w") if path else None  # noqa: SIM115
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", ("--out",), str(path)) from None

    def write(self, record: dict) -> None:
        if self.file:
            self.file.write(json.dumps(record) + "\n")
            self.file.flush()

    def close(self) -> dict:
        """Write the closing `end` record (the load at the end), close, return the record."""
        end = {"type": "end", "load_after": _load(),
               "finished": datetime.datetime.now().isoformat(timespec="seconds")}
        self.write(end)
        if self.file:
            self.file.close()
        return end


def read_results(path: str | Path) -> tuple[dict, list[dict]]:
    """The header (the `end` record's fields merged in) and the case records of a results file."""
    header: dict = {}
    records = []
    lines = read_text(path).splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"line {n} is not JSON: {exc.msg}", file=str(path)) from None
        kind = doc.get("type") if isinstance(doc, dict) else None
        if kind == "run":
            header = doc
        elif kind == "end":
            header = {**header, **doc, "type": "run"}
        elif kind == "case":
            records.append(doc)
        else:
            raise InputError("expected a record with type run, case or end",
                             (f"line {n}", "type"), kind, file=str(path))
    if not header:
        raise InputError("no `run` header record", file=str(path))
    return header, records
