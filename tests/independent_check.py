"""An independent checker of DESIGN section 3, for cross-checking the verifier.

It imports nothing from warpweave: it reads the model and schedule documents (the file formats of
DESIGN section 5) and walks the programs cycle by cycle, the slow obvious way: for the loop, Q_n
for every trip count n up to `trips` (default S + the largest distance + 4, well past the bound
the verifier relies on), with the values entering the loop; for "paper-q", Q_S alone.  It returns
the names of the rules a schedule breaks.
"""

from __future__ import annotations

import math


def _ops(model: dict) -> dict[str, dict]:
    out = {}
    for op in model["ops"]:
        cycles = op.get("cycles", len(op.get("rrt", [])) or 1)
        if "uses" in op:
            rows = [dict(op["uses"]) for _ in range(cycles)]
        else:
            rows = [dict(r) for r in op.get("rrt", [])]
        out[op["name"]] = {"cycles": cycles, "rows": rows, "vl": op.get("variable_latency", False),
                           "regs": op.get("regs", 0), "fp": op.get("footprint", {}),
                           "spill": op.get("spill_cost", 0), "warps": op.get("warps", 0),
                           "async": op.get("async", False)}
    return out


def broken_rules(model: dict, schedule: dict, semantics: str = "loop",
                 trips: int | None = None) -> set[str]:
    """The rules `schedule` breaks, on the model as given (a `streaming` key in the schedule
    document, from a solve of the zero-latency relaxation, relaxes nothing: as in `verify`)."""
    ops = _ops(model)
    machine = model["machine"]
    groups = {g["name"]: g for g in machine["warp_groups"]}
    edges = []
    for e in model.get("edges", []):
        edges.append({"src": e["src"], "dst": e["dst"],
                      "delay": e.get("delay", ops[e["src"]]["cycles"]),
                      "dist": e.get("distance", 0), "data": e.get("kind", "data") == "data",
                      "blocking": e.get("blocking", False),
                      "across": e.get("handoff", ops[e["src"]]["spill"]),
                      "within": e.get("handoff_local", 0), "hold": e.get("hold", 0)})
    I, L = schedule["I"], schedule["L"]
    M, A = schedule["start"], schedule["group"]
    S = math.ceil(L / I)
    far = max([e["dist"] for e in edges if e["data"]], default=0)
    if semantics == "paper-q":
        programs = [(S, False)]
    else:
        programs = [(n, True) for n in range(1, (trips or S + far + 4) + 1)]
    bad = set()

    for e in edges:
        gap = M[e["dst"]] + e["dist"] * I - M[e["src"]]
        if gap < e["delay"]:
            bad.add("dependence")
        extra = e["across"] if A[e["src"]] != A[e["dst"]] else e["within"]
        if e["data"] and extra and gap < e["delay"] + extra:
            bad.add("cross_warp_spill")

    for r in range(I):
        for unit, cap in machine["units"].items():
            used = sum(row.get(unit, 0) for v, op in ops.items()
                       for c, row in enumerate(op["rows"]) if (M[v] + c) % I == r)
            if used > cap:
                bad.add("capacity")

    if any(M[v] + op["cycles"] > L for v, op in ops.items()):
        bad.add("completion")

    def tau(v: str, i: int) -> int:
        return M[v] + i * I

    for n, entering in programs:
        T = (n - 1) * I + L
        spans = {}  # (v, i) -> [start, end) of its value
        for v in ops:
            uses = [e for e in edges if e["src"] == v and e["data"]]
            first = -max([e["dist"] for e in uses], default=0) if entering else 0
            for i in range(first, n):
                ends = []
                for e in uses:
                    j = i + e["dist"]
                    if j < 0:
                        continue  # read before the loop
                    if j < n:
                        ends.append(tau(e["dst"], j) + e["hold"])  # done reading it
                        if i >= 0 and tau(e["dst"], j) < tau(v, i):
                            bad.add("liveness")
                    else:
                        ends.append(T + 1)
                begin = tau(v, i) if i >= 0 else 0
                spans[(v, i)] = (begin, max(ends) if ends else begin)
        for t in range(T + 1):
            live = [v for (v, _), (a, b) in spans.items() if a <= t < b]
            for mem, cap in machine.get("memories", {}).items():
                if sum(ops[v]["fp"].get(mem, 0) for v in live) > cap:
                    bad.add("memory")
            for g, spec in groups.items():
                if sum(ops[v]["regs"] for v in live if A[v] == g) > spec.get("reg_limit", 255):
                    bad.add("register_limit")

        for v in ops:
            ins = [e for e in edges if e["dst"] == v]
            if not (any(e["blocking"] for e in ins) or
                    any(e["data"] and A[e["src"]] != A[v] for e in ins)):
                continue
            for i in range(n):
                for o, other in ops.items():
                    if A[o] != A[v]:
                        continue
                    occ = 1 if other["async"] else other["cycles"]
                    for j in range(n):
                        if (o, j) != (v, i) and tau(o, j) <= tau(v, i) < tau(o, j) + occ:
                            bad.add("concurrency")

    for v, op in ops.items():
        if groups[A[v]].get("warps", 1) < op["warps"]:
            bad.add("warp_uniqueness")
        vl = machine.get("variable_latency_group")
        if vl is not None and op["vl"] != (A[v] == vl):
            bad.add("variable_latency")

    return bad
