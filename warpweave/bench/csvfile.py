"""The case records of a benchmark run as CSV (`warpweave bench --csv`): one row per record,
every repeat its own row, for pandas or a spreadsheet.

The columns are the records' own fields under their own names (runner.py writes them), so a
figure in the CSV is the figure in the JSON lines.  A field a record does not have (the
heuristic's encoding, a killed run's I) is an empty cell.  I and L are in raw cycles;
I_units, L_units and lower_bound in the units solved, `scale` cycles per unit; `optimal` is
True only for a proven optimum (`status` infeasible: proven that none exists).  `notes` are
joined with "; ".
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

COLUMNS = ("suite", "case", "ops", "edges", "config", "backend", "encoding", "search",
           "normalize", "method", "repeat", "status", "optimal", "I", "L", "I_units", "L_units",
           "scale", "stages", "lower_bound", "raw_lower_bound", "gap", "raw_valid",
           "wall_seconds", "first_schedule_seconds", "best_I_seconds", "encode_seconds",
           "build_seconds", "solve_seconds", "calls", "variables", "constraints", "solver",
           "error", "notes")


def csv_text(records: Iterable[dict]) -> str:
    """The header row, then one row per record in the order given."""
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({**r, "notes": "; ".join(r.get("notes", []))})
    return out.getvalue()
