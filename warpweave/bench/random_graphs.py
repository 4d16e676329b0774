"""Random loop bodies for timing the schedulers.

Two generators:

- `random_graph_doc(n, seed)`: a layered dependence graph with recurrences, anti-dependences,
  multi-row reservation tables, a variable-latency load group and register and shared-memory
  pressure (4 groups, fixed capacities).  The `random` suite (5-60 ops) uses it.
- `scale_graph_doc(n, seed, ...)`: a random DAG by size and density, like the prior
  implementation's `generate_random_dag(num_nodes, edge_density, num_back_edges)`: every pair of
  ops i < j gets an edge with probability `density`, plus `back_edges` loop-carried edges
  each from an op back to one of its ancestors a few edges up (a recurrence, distance 1-3);
  units of a few kinds, most pipelined (held for the first cycle only), some holding their unit
  at the first and last cycle (a multi-row table, so feasibility is not monotone in I).
  `joint=True` adds what warp specialization needs: four groups (one for variable-latency
  loads), registers per value against the groups' limits, shared-memory footprints against a
  capacity that grows with n, spill costs, async ops and
  blocking edges from the loads.  The `scale` suite uses it (100 to 1,000 ops).

`python -m warpweave.bench.random_graphs N SEED > model.json` writes a `random_graph_doc` model;
`... --scale [--density P] [--back-edges K] [--joint]` a `scale_graph_doc` one.
"""

from __future__ import annotations

import argparse
import json
import random

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


# Unit kinds of the scale generator: (share of the ops, latency range, cycles the unit is held:
# 1 = pipelined, 0 = the whole latency).  Capacities are given per model.
SCALE_UNITS = {"alu": (0.45, (1, 3), 1), "mul": (0.25, (2, 4), 1), "mem": (0.2, (2, 6), 1),
               "sfu": (0.1, (2, 4), 0)}
SCALE_CAPACITY = {"alu": 4, "mul": 2, "mem": 2, "sfu": 1}
JOINT_GROUPS = ({"name": "load", "warps": 1, "reg_limit": 64},
                {"name": "mma", "warps": 4, "reg_limit": 240},
                {"name": "wg0", "warps": 4, "reg_limit": 160},
                {"name": "wg1", "warps": 4, "reg_limit": 160})


def default_density(n: int) -> float:
    """Two forward edges per op on average: 4/n (the seed's 1,000-op example used 0.01)."""
    return min(1.0, 4.0 / max(1, n))


def scale_graph_doc(n: int, seed: int = 0, *, density: float | None = None,
                    back_edges: int | None = None, joint: bool = False,
                    capacity: dict[str, int] | None = None) -> dict:
    """A random loop body of `n` ops (see the module docstring), the same for the same arguments.

    `density`: probability of an edge between two ops (default `default_density`);
    `back_edges`: loop-carried edges (default n/20, as the seed's 50 for 1,000 ops);
    `capacity`: units per kind (default SCALE_CAPACITY).
    """
    if n < 2:
        raise ValueError("a scale graph needs at least 2 ops")
    rng = random.Random(f"scale/{n}/{seed}")
    p = default_density(n) if density is None else density
    caps = dict(SCALE_CAPACITY if capacity is None else capacity)
    kinds = [k for k in SCALE_UNITS if caps.get(k, 0) > 0]
    shares = [SCALE_UNITS[k][0] for k in kinds]
    ops: list[dict] = []
    for k in range(n):
        op: dict = {"name": f"v{k}"}
        load = joint and rng.random() < 0.1
        kind = "mem" if load and "mem" in kinds else rng.choices(kinds, shares)[0]
        _, (lo, hi), held = SCALE_UNITS[kind]
        cycles = rng.randint(lo, hi)
        op["cycles"] = cycles
        if held == 0 or cycles == 1:
            op["uses"] = {kind: 1}
        elif rng.random() < 0.1:  # the unit at the first and the last cycle
            op["rrt"] = [{kind: 1}] + [{}] * (cycles - 2) + [{kind: 1}]
        else:
            op["rrt"] = [{kind: 1}]
        if joint:
            if load:
                op.update(variable_latency=True, footprint={"smem": rng.randint(1, 8)})
                op["async"] = True  # a TMA load: issued, then awaited by its readers
            else:
                op["regs"] = rng.randint(0, 8)
                op["spill_cost"] = rng.randint(0, 2)
                op["async"] = rng.random() < 0.6
                op["warps"] = 4 if rng.random() < 0.2 else 0
        ops.append(op)
    edges: list[dict] = []
    for j in range(1, n):
        for i in range(j):
            if rng.random() < p:
                edges.append({"src": f"v{i}", "dst": f"v{j}"})
                if ops[i].get("variable_latency"):
                    edges[-1]["blocking"] = True
    preds: list[list[int]] = [[] for _ in range(n)]
    for e in edges:
        preds[int(e["dst"][1:])].append(int(e["src"][1:]))
    for _ in range(n // 20 if back_edges is None else back_edges):
        # A recurrence: back from b to an ancestor a a few edges up (or any earlier op).
        b = rng.randrange(1, n)
        a = b
        for _ in range(rng.randint(1, 8)):
            if not preds[a]:
                break
            a = rng.choice(preds[a])
        if a == b:
            a = rng.randrange(b)
        kind = rng.choice(["data", "order"]) if joint else "data"
        # A value read a later iteration: an accumulator (distance 1); an anti-dependence of a
        # multi-buffered tile: the buffer depth (1-3).
        edges.append({"src": f"v{b}", "dst": f"v{a}", "kind": kind,
                      "distance": 1 if kind == "data" and joint else rng.randint(1, 3)})
    machine: dict = {"name": "scale-joint" if joint else "scale",
                     "units": {k: caps[k] for k in kinds},
                     "warp_groups": [{"name": "g0", "warps": 4, "reg_limit": 255}]}
    if joint:
        machine.update(memories={"smem": max(32, n // 2)},
                       warp_groups=[dict(g) for g in JOINT_GROUPS],
                       variable_latency_group="load")
    name = f"scale-{n}-{seed}" + ("-joint" if joint else "")
    return {"name": name, "machine": machine, "ops": ops, "edges": edges}


def scale_graph(n: int, seed: int = 0, **kw) -> Model:
    return model_from_dict(scale_graph_doc(n, seed, **kw))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="print a random model (JSON)")
    p.add_argument("n", type=int, help="number of ops")
    p.add_argument("seed", type=int, nargs="?", default=0)
    p.add_argument("--scale", action="store_true", help="the scale generator (a random DAG by "
                   "density, with back edges)")
    p.add_argument("--density", type=float, help="scale: edge probability per pair of ops")
    p.add_argument("--back-edges", type=int, help="scale: loop-carried edges (default n/20)")
    p.add_argument("--joint", action="store_true", help="scale: warp groups, registers, memory")
    args = p.parse_args(argv)
    if args.scale:
        doc = scale_graph_doc(args.n, args.seed, density=args.density,
                              back_edges=args.back_edges, joint=args.joint)
    else:
        doc = random_graph_doc(args.n, args.seed)
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
