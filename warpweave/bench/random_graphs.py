"""Large random loop bodies for timing the schedulers: a layered dependence graph with recurrences,
anti-dependences, multi-row reservation tables, a variable-latency load group and register and
shared-memory pressure.  `python -m warpweave.bench.random_graphs N SEED > model.json` writes
one."""

from __future__ import annotations

import json
import random
import sys

from warpweave.core.formats import model_from_dict
from warpweave.core.model import Model


def random_graph_doc(n: int, seed: int = 0) -> dict:
    """A model document of `n` ops, the same for the same (n, seed)."""
    rng = random.Random(seed)
    units = {"tc": 1, "sfu": 1, "tma": 1, "alu": 2}
    groups = [{"name": "load", "warps": 1, "reg_limit": 40},
              {"name": "mma", "warps": 4, "reg_limit": 240},
              {"name": "soft0", "warps": 4, "reg_limit": 200},
              {"name": "soft1", "warps": 4, "reg_limit": 200}]
    ops, edges = [], []
    for k in range(n):
        load = rng.random() < 0.15
        cycles = rng.randint(1, 3) if load else rng.randint(1, 8)
        op: dict = {"name": f"v{k}", "cycles": cycles, "regs": 0 if load else rng.randint(0, 24)}
        if load:
            op.update(uses={"tma": 1}, variable_latency=True, cycles=1,
                      footprint={"smem": rng.randint(1, 8)})
        elif rng.random() < 0.3:  # a multi-row table: the unit at the first and last cycle
            unit = rng.choice(["tc", "sfu"])
            op["rrt"] = [{unit: 1}] + [{}] * (cycles - 2) + [{unit: 1}] if cycles > 1 \
                else [{unit: 1}]
        else:
            op["uses"] = {rng.choice(["tc", "sfu", "alu", "alu"]): 1}
        op["spill_cost"] = rng.randint(0, 3)
        op["async"] = rng.random() < 0.3
        op["warps"] = 4 if not load and rng.random() < 0.2 else 0
        ops.append(op)
        for src in rng.sample(range(k), min(k, rng.randint(1, 2))) if k else []:
            edges.append({"src": f"v{src}", "dst": f"v{k}",
                          "blocking": ops[src].get("variable_latency", False)})
    for _ in range(max(1, n // 8)):  # recurrences and anti-dependences across iterations
        a, b = sorted(rng.sample(range(n), 2))
        edges.append({"src": f"v{b}", "dst": f"v{a}", "distance": rng.randint(1, 3),
                      "kind": rng.choice(["data", "order"])})
    return {"name": f"random-{n}-{seed}",
            "machine": {"name": "rand", "units": units, "memories": {"smem": 64},
                        "warp_groups": groups, "variable_latency_group": "load"},
            "ops": ops, "edges": edges}


def random_graph(n: int, seed: int = 0) -> Model:
    return model_from_dict(random_graph_doc(n, seed))


if __name__ == "__main__":
    print(json.dumps(random_graph_doc(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2
                                      else 0), indent=1))
