"""The heuristic against the optimal search on model files: I, L and seconds of each, side by side.

    python benchmarks/heuristic_vs_optimal.py MODEL... [--backend B] [--time-limit 600]
        [--max-stages K] [--normalize auto|off|unit=K] [--streaming given|paper] [--json]

Both see the same model - as given, or with streaming ops at zero latency (`--streaming paper`,
the Twill paper's relaxation: then both answers are the relaxation's), and costs
normalized as `solve` does (--normalize, default auto: large raw-cycle costs are rounded up to
units, and both answers are then in those units) - and the same stage bound.  The heuristic's
schedule is verified inside `heuristic_schedule`; the search verifies its own.  A search that
cannot run (no such backend here) is reported in its row.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from warpweave.core.formats import load_model
from warpweave.core.heuristic import heuristic_schedule
from warpweave.core.streaming import apply_streaming
from warpweave.errors import InputError
from warpweave.pipeline import DEFAULT_ENCODING, MINIMIZE_BACKEND, normalization
from warpweave.search import search


def compare(path: str, backend: str, encoding: str, time_limit: float | None,
            max_stages: int | None, streaming: str = "given", normalize: str = "auto") -> dict:
    """One row: the model, the lower bound, the heuristic's and the search's answers."""
    model = load_model(path)
    if streaming == "paper":
        model, _ = apply_streaming(model)
    norm = normalization(model, normalize)
    if norm is not None:
        model = norm.model
    h = heuristic_schedule(model, max_stages=max_stages)
    row = {"model": Path(path).stem, "ops": len(model.ops), "cycles_per_unit": norm.scale if norm
           else 1, "lower": h.lower_bound, "stages": h.max_stages,
           "heuristic": {"I": h.schedule.I if h.schedule else None,
                         "L": h.schedule.L if h.schedule else None,
                         "seconds": round(h.seconds, 3), "why": h.why}}
    tick = time.perf_counter()
    try:
        out = search(model, backend=backend, encoding=encoding, max_stages=h.max_stages,
                     time_limit=time_limit,
                     strategy="minimize" if encoding == DEFAULT_ENCODING else "sweep")
    except InputError as exc:
        row["optimal"] = {"error": str(exc)}
        return row
    s = out.schedule
    row["optimal"] = {"I": s.I if s else None, "L": s.L if s else None, "status": out.status,
                      "lower_bound": out.lower_bound,
                      "seconds": round(time.perf_counter() - tick, 3)}
    return row


def _cell(x) -> str:
    return "-" if x is None else str(x)


def table(rows: list[dict]) -> str:
    head = ["model", "ops", "unit", "lower", "S<=", "I heur", "L heur", "s heur", "I opt",
            "L opt", "status", "s opt", "gap"]
    lines = [head]
    for r in rows:
        h, o = r["heuristic"], r["optimal"]
        gap = h["I"] - o["I"] if h["I"] is not None and o.get("I") is not None else None
        lines.append([r["model"], str(r["ops"]), str(r["cycles_per_unit"]), str(r["lower"]),
                      str(r["stages"]),
                      _cell(h["I"]), _cell(h["L"]), f"{h['seconds']:.3f}",
                      _cell(o.get("I")), _cell(o.get("L")),
                      o.get("status", "error: " + o.get("error", "")),
                      _cell(o.get("seconds")), _cell(gap)])
    widths = [max(len(line[k]) for line in lines) for k in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                     for line in lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models", nargs="+", help="model files (.json or .toml)")
    p.add_argument("--backend", default=MINIMIZE_BACKEND)
    p.add_argument("--encoding", default=DEFAULT_ENCODING)
    p.add_argument("--time-limit", type=float, default=600.0, help="seconds per search")
    p.add_argument("--max-stages", type=int)
    p.add_argument("--streaming", choices=("given", "paper"), default="given")
    p.add_argument("--normalize", default="auto", help="auto (default), off, unit=K")
    p.add_argument("--json", action="store_true", help="one JSON object per model")
    args = p.parse_args(argv)
    rows = []
    for path in args.models:
        try:
            row = compare(path, args.backend, args.encoding, args.time_limit, args.max_stages,
                          args.streaming, args.normalize)
        except InputError as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            continue
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    if not args.json and rows:
        print(table(rows))
    return 0 if rows else 2


if __name__ == "__main__":
    sys.exit(main())
