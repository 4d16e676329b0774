"""The results store: one SQLite file (stdlib `sqlite3`), one row per solved point.

A row is keyed by `point_key`: the SHA-256 of the model document (`model_to_dict`, the model
exactly as built - its costs, groups and limits; a kernel whose costs change gives new keys) and
the solver configuration (every solve option but the limits: method, backend, encoding, search,
rules left out, stage bound, normalization, streaming, semantics, seed, tie-breakers), as
canonical JSON.  Two sweeps that share a point -
a re-run, or an overlapping grid - share its row.  The limits (`time_limit`, `solve_limit`) are
not part of the key: they decide only whether a stored answer is final (`reusable`).

Only the driver opens the file (`warpweave.sweeps.run`); workers, local or on a cluster, return
plain records and never touch it, so one writer and no locking across machines.  Each record is
committed as it arrives: an interrupted sweep keeps every point answered before the interrupt.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from warpweave.errors import InputError

# The options of `api.solve` that decide a point's answer (the key); the limits decide only
# whether a stopped answer may be reused.
LIMITS = ("time_limit", "solve_limit")
SCHEMA = 1  # bump when the key's recipe or the table changes: old rows are then never matched

_TABLE = """
CREATE TABLE IF NOT EXISTS points (
    key TEXT PRIMARY KEY,
    kernel TEXT NOT NULL,
    machine TEXT,
    params TEXT NOT NULL,
    options TEXT NOT NULL,
    status TEXT NOT NULL,
    complete INTEGER NOT NULL,
    reason TEXT,
    I INTEGER,
    lower_bound INTEGER,
    seconds REAL,
    solved_by TEXT,
    record TEXT NOT NULL,
    recorded REAL NOT NULL
)"""


def canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)


def point_key(model_doc: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """The store's key of a model solved with `options` (the limits left out)."""
    config = {k: v for k, v in options.items() if k not in LIMITS}
    text = canonical({"schema": SCHEMA, "model": model_doc, "solver": config})
    return hashlib.sha256(text.encode()).hexdigest()


def reusable(record: Mapping[str, Any], options: Mapping[str, Any]) -> bool:
    """Whether a stored record answers a solve with `options`: a complete search (it would answer
    the same), or one stopped at limits no smaller than these (it would stop again).  A failure
    that is not the input's (a solver crash, a bug) is always tried again."""
    if record.get("complete"):
        return True
    if record.get("status") == "error":
        return False
    limits = record.get("limits") or {}
    for name in LIMITS:
        asked, had = options.get(name), limits.get(name)
        if had is not None and (asked is None or asked > had):
            return False
    return True


class Store:
    """The results file, opened by the driver (a context manager: closed on exit)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError("is a directory, not a results file", ("--store",), str(path))
        try:
            self.db = sqlite3.connect(self.path)
            self.db.execute(_TABLE)
            self.db.commit()
        except sqlite3.Error as exc:
            raise InputError(f"not a usable SQLite results file ({exc})", ("--store",),
                             str(path)) from None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def get(self, keys: Iterable[str]) -> dict[str, dict]:
        """The stored records of `keys` (those that have one)."""
        keys = list(keys)
        out: dict[str, dict] = {}
        for i in range(0, len(keys), 500):  # SQLite's limit on bound parameters
            chunk = keys[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for key, record in self.db.execute(
                    f"SELECT key, record FROM points WHERE key IN ({marks})", chunk):
                out[key] = json.loads(record)
        return out

    def put(self, key: str, point: Mapping[str, Any], options: Mapping[str, Any],
            record: Mapping[str, Any]) -> None:
        """Record (or replace) the answer of one point and commit it."""
        self.db.execute(
            "INSERT OR REPLACE INTO points VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (key, point["kernel"], point["machine"], canonical(point["params"]),
             canonical(options), record["status"], int(bool(record.get("complete"))),
             record.get("reason"), record.get("I"), record.get("lower_bound"),
             record.get("seconds"), record.get("solved_by"), canonical(record), time.time()))
        self.db.commit()

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM points").fetchone()[0]
