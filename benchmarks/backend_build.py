"""Translation time of each backend on a large synthetic IR problem (no solving).

Usage: python benchmarks/backend_build.py [--clauses 200000] [--pb 3000] [SPEC ...]
Prints one line per backend: the seconds `Backend.session(problem)` took to load the problem.
"""

from __future__ import annotations

import argparse
import random
import time

from warpweave.core.registry import backend
from warpweave.ir import Problem

DEFAULT_SPECS = ["cbc", "highs", "z3", "cvc5", "yices", "sat", "sat:cadical195/seqcounter/bdd",
                 "cpsat"]


def synthetic(clauses: int, pb: int, seed: int = 0) -> Problem:
    """Random 3-clauses over n = clauses/10 Booleans, `pb` weighted PB constraints of 12 terms,
    pb/2 implications over a few integers, pb/2 at-most-one and an objective."""
    rng = random.Random(seed)
    p = Problem("synthetic")
    n = max(10, clauses // 10)
    v = [p.bool(f"b{i}") for i in range(n)]
    ints = [p.int(f"t{i}", 0, 31) for i in range(200)]

    def lit():
        x = rng.choice(v)
        return x if rng.random() < 0.5 else ~x

    for _ in range(clauses):
        p.add_clause([lit(), lit(), lit()])
    for _ in range(pb):
        p.add_linear([(rng.randint(1, 5), lit()) for _ in range(12)], "<=", 20)
    for _ in range(pb // 2):
        a, b = rng.sample(ints, 2)
        p.add_implies(lit(), [(1, a), (-1, b)], ">=", rng.randint(1, 4))
    for _ in range(pb // 2):
        p.at_most_one([lit() for _ in range(6)])
    p.minimize([(1, t) for t in ints[:20]])
    return p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clauses", type=int, default=200_000)
    ap.add_argument("--pb", type=int, default=3000)
    ap.add_argument("specs", nargs="*", default=DEFAULT_SPECS)
    args = ap.parse_args()
    start = time.perf_counter()
    p = synthetic(args.clauses, args.pb)
    print(f"IR: {p.summary()} built in {time.perf_counter() - start:.1f}s")
    for spec in args.specs:
        session = backend(spec).session(p)
        print(f"{session.backend.spec:34s} {session.build_seconds:7.2f}s", flush=True)
        session.close()


if __name__ == "__main__":
    main()
