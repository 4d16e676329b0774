"""Sweeps: a library kernel solved over a grid of parameters (tile shapes, warp inventories,
register budgets) on one or more machines, each point ranked by predicted throughput.

The modules, in the order data flows through them:

- `grid`: the points - the kernel's parameters crossed (`tile_m=64,80,128` x `tile_n=64,128`)
  on each machine, every value checked against the kernel's declared parameters (a point the
  kernel's builder rejects - a tile too large for shared memory - is recorded as rejected with
  the builder's reason, without a solve);
- `point`: one point as a task a worker runs (the model document and the solve options) and
  `solve_point`, which solves it and returns a plain record; the same function runs in a local
  worker process and on a cluster's worker;
- `store`: the results store (SQLite), keyed by a hash of the model and the solver
  configuration; only the driver opens it;
- `executors`: where tasks run - a pool of local worker processes (the default) or a Dask
  cluster (`--cluster ADDRESS`);
- `throughput`: the figures a point is ranked by (useful FLOPs per cycle at its I);
- `run`: the driver (`run_sweep`): plan, reuse, solve, record, rank;
- `plot`: the Pareto front of throughput against registers and shared memory, as SVG or PNG.

`warpweave.sweep(...)` (the API) and `warpweave sweep` (the command) call `run.run_sweep`.
The package is `sweeps`, not `sweep`: `import warpweave.sweep` would shadow the API function.
"""
