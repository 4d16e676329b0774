"""JSON Schemas (draft 2020-12) of the interchange formats, shipped with the package so that
producers in other languages (a Triton pass, an MLIR tool) can validate what they write:
`model.schema.json` (`warpweave.model/1`), `schedule.schema.json` (`warpweave.schedule/1`) and
`ir.schema.json` (`warpweave.ir/1`).  warpweave's own loaders stay the judges of bad input and
report it as one line naming the file, key path and value; `tests/test_schemas.py` checks that
every file the project ships or writes validates and that the schemas name the keys the loaders
read.  `warpweave schema NAME` prints one.
"""

from __future__ import annotations

import json
from importlib.resources import files

SCHEMAS = ("model", "schedule", "ir")


def schema(name: str) -> dict:
    """The parsed schema of format `name` (one of SCHEMAS)."""
    if name not in SCHEMAS:
        raise ValueError(f"no schema {name!r} (schemas: {', '.join(SCHEMAS)})")
    return json.loads(files(__name__).joinpath(f"{name}.schema.json").read_text())
