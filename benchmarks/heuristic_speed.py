"""Time the heuristic on large random loop bodies (`warpweave.bench.random_graphs`), every answer
verified.

    python -m benchmarks.heuristic_speed [N ...] [--seeds K]      (from the repository root)

One row per size: the gap I - lower bound over the seeds, the attempts, and the seconds (median
and worst, wall clock; and the median in CPU time of this process, which a busy machine does not
inflate).  A schedule the verifier rejected would be a bug; it is counted separately.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from warpweave.bench.random_graphs import random_graph
from warpweave.core.heuristic import heuristic_schedule
from warpweave.core.verify import verify


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("sizes", nargs="*", type=int, default=[10, 20, 50, 100, 200])
    p.add_argument("--seeds", type=int, default=5)
    args = p.parse_args(argv)
    print(f"{'ops':>5} {'found':>6} {'I-lower':>16} {'attempts':>9} {'median s':>9} "
          f"{'worst s':>8} {'cpu s':>6}  rejected")
    bad = 0
    for n in args.sizes:
        gaps, tries, secs, cpu, found, rejected = [], [], [], [], 0, 0
        for seed in range(args.seeds):
            m = random_graph(n, seed)
            tick = time.process_time()
            r = heuristic_schedule(m)
            cpu.append(time.process_time() - tick)
            secs.append(r.seconds)
            tries.append(len(r.trials))
            if r.schedule is not None:
                found += 1
                gaps.append(r.schedule.I - r.lower_bound)
                rejected += bool(verify(m, r.schedule))
        bad += rejected
        print(f"{n:>5} {found:>3}/{args.seeds:<2} {' '.join(map(str, gaps)):>16} "
              f"{statistics.median(tries):>9} {statistics.median(secs):>9.3f} "
              f"{max(secs):>8.3f} {statistics.median(cpu):>6.3f}  {rejected}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
