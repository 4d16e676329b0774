"""Benchmark suites: named lists of cases, each a model to build and what is known about it.

A `Case` is plain data (it crosses into a worker process) and builds its model there with
`load()`.  Suites: `kernels` (every library kernel on each machine it supports, default
parameters, plus the sub-tiled FA3 forward and FA backward), `meta` (Meta's golden graphs,
`benchmarks/models/`), `meta-ddg` (every loop of Meta's raw Blackwell DDGs, modulo-only),
`hatschet` (the committed HatScheT subset, `benchmarks/data/hatschet/`), `hatschet-all` (all 323
HatScheT graphs, from the archive beside it), `random` (seeded random loop bodies of growing size,
joint and modulo-only), `scale` (what the scalable methods are for:
the prior implementation's kernels modulo-only and joint, HatScheT's largest graphs, Meta's
sub-tiled FA backward graph with warp groups, random graphs of 200 ops with warp groups and
register limits and of 1,000 ops modulo-only).  A target that is no suite name is one case: a
model file, or a library kernel written `kernel[@machine]`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from warpweave.core.model import Model
from warpweave.errors import InputError

# Sub-tiled variants worth their own row (the Twill paper's FA3 forward and FA backward).
SUBTILED = (("fa3-fwd", "subtiles=2"), ("fa-bwd", "subtiles=2"))
RANDOM_SIZES = (5, 10, 20, 30, 40, 60, 80, 120)
RANDOM_SEEDS = (0, 1)


@attrs.frozen
class Case:
    """One model of a suite: how to build it, and reference figures to print beside it."""

    suite: str
    name: str
    kind: str                       # kernel | file | hatschet | random | scale | meta-ddg
    target: str                     # kernel name, model or graph file
    machine: str | None = None
    params: tuple[str, ...] = ()
    size: int = 0                   # random: number of ops
    seed: int = 0                   # random: generator seed
    aux: str | None = None          # hatschet: the resource-model file
    loop: int | None = None         # meta-ddg: the loop id (default: the first inner loop)
    without: tuple[str, ...] = ()   # rules left out (modulo-only cases)
    reference: dict[str, Any] = attrs.field(factory=dict, eq=False, hash=False)

    def load(self) -> Model:
        """Build the model (in the worker process)."""
        if self.kind == "kernel":
            from warpweave.pipeline import load_target
            return load_target(self.target, self.machine, self.params)
        if self.kind == "file":
            from warpweave.core.formats import load_model
            return load_model(self.target)
        if self.kind == "hatschet":
            from warpweave.importers import import_hatschet
            return import_hatschet(self.target, self.aux)
        if self.kind == "random":
            from warpweave.bench.random_graphs import random_graph
            return random_graph(self.size, self.seed)
        if self.kind == "scale":
            from warpweave.bench.random_graphs import scale_graph
            return scale_graph(self.size, self.seed, joint="joint" in self.params)
        if self.kind == "meta-ddg":
            from warpweave.importers import import_model
            return import_model(self.target, "meta-ddg", loop=self.loop)
        raise ValueError(f"unknown case kind {self.kind!r}")


def default_data_dir() -> Path:
    """The repository's `benchmarks/` beside the package (an editable or source install)."""
    return Path(__file__).resolve().parents[2] / "benchmarks"


def kernel_cases() -> list[Case]:
    """Every registered kernel on each machine it supports (its own toy machine if none), at
    default parameters, then the sub-tiled variants of SUBTILED on each of their machines."""
    from warpweave.core.registry import KERNELS
    from warpweave.kernels import kernel_spec
    out = []
    variants = [(name, ()) for name in KERNELS.names()] + \
        [(name, (p,)) for name, p in SUBTILED if name in KERNELS.names()]
    for name, params in variants:
        spec = kernel_spec(name)
        for machine in spec.machines or (None,):
            label = name + (f"@{machine}" if machine else "") + "".join(f" {p}" for p in params)
            out.append(Case("kernels", label, "kernel", name, machine, params))
    return out


def meta_cases(data: Path) -> list[Case]:
    """Meta's golden graphs as imported (`benchmarks/models/meta-golden-*.json`), with their
    recorded figures (`meta-recorded-results.json`) as the reference."""
    models = data / "models"
    recorded = _read_json(models / "meta-recorded-results.json").get("cases", {})
    out = []
    for path in sorted(models.glob("meta-golden-*.json")):
        key = path.stem.removeprefix("meta-golden-")
        ref = recorded.get(key, {})
        keep = ("ii", "length", "wall_seconds", "normalization_u")
        out.append(Case("meta", key, "file", str(path),
                        reference={f"meta_{k}": ref[k] for k in keep if k in ref}))
    return out


def hatschet_cases(data: Path) -> list[Case]:
    """The committed HatScheT subset, smallest graph first, with the index's lower bounds."""
    root = data / "data" / "hatschet"
    return _hatschet_index(root, root / "index.csv", "hatschet")


def hatschet_all_cases(data: Path) -> list[Case]:
    """All 323 HatScheT graphs of at most 120 nodes (`benchmarks/data/hatschet/all.tar.xz`,
    unpacked once into the user's cache), smallest first, with the index's lower bounds."""
    root = unpack(data / "data" / "hatschet" / "all.tar.xz")
    return _hatschet_index(root, root / "index.csv", "hatschet-all")


def _hatschet_index(root: Path, index: Path, suite: str) -> list[Case]:
    try:
        with open(index, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(index)) from None
    out = []
    for row in sorted(rows, key=lambda r: (int(r["nodes"]), r["graph"])):
        name = row["graph"].removesuffix(".graphml")
        ref = {"index_res_mii": int(row["res_mii"]), "index_rec_mii": int(row["rec_mii"])}
        out.append(Case(suite, name, "hatschet", str(root / row["graph"]),
                        aux=str(root / row["resource_model"]), reference=ref))
    return out


def unpack(archive: Path) -> Path:
    """The directory `archive` (a .tar.xz of data files) is unpacked into, under the user's
    cache (`$XDG_CACHE_HOME/warpweave`, else `~/.cache/warpweave`), keyed by the archive's
    hash: unpacked once, then reused (the workers read the files from there)."""
    import hashlib
    import os
    import tarfile
    try:
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror} (give the benchmarks directory with "
                         "--data)", file=str(archive)) from None
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "warpweave"
    root = cache / f"{archive.name.split('.')[0]}-{digest}"
    if not (root / ".complete").exists():
        partial = root.with_name(root.name + f".{os.getpid()}")
        with tarfile.open(archive, "r:xz") as tar:
            tar.extractall(partial, filter="data")
        (partial / ".complete").touch()
        try:
            partial.rename(root)
        except OSError:  # unpacked meanwhile by another process: keep its copy
            import shutil
            shutil.rmtree(partial, ignore_errors=True)
    return root


def random_cases(sizes: Sequence[int] = RANDOM_SIZES,
                 seeds: Sequence[int] = RANDOM_SEEDS) -> list[Case]:
    """Seeded random loop bodies (`bench.random_graphs`) of growing size, joint (every rule)
    and modulo-only (dependence, capacity and completion), smallest first."""
    others = _modulo_only()
    return [c for n in sizes for s in seeds for c in (
        Case("random", f"random-{n}-{s} joint", "random", "random", size=n, seed=s),
        Case("random", f"random-{n}-{s} modulo-only", "random", "random", size=n, seed=s,
             without=others))]


def meta_ddg_cases(data: Path) -> list[Case]:
    """Every loop of Meta's raw Blackwell DDGs (`benchmarks/data/meta-tlx/*-ddg*.json`: inner
    loops, and the outer persistent loops holding one as a super node), modulo-only."""
    others = _modulo_only()
    out = []
    for path in sorted((data / "data" / "meta-tlx").glob("case*-ddg*.json")):
        loops = [x.get("loop_id") for x in _read_json(path).get("loops", [])]
        stem = path.stem.removesuffix("-ddg").replace("-ddg_", "_")
        for loop in loops:
            name = stem if len(loops) == 1 else f"{stem}-loop{loop}"
            out.append(Case("meta-ddg", f"{name} modulo-only", "meta-ddg", str(path),
                            loop=loop, without=others))
    return out


def _modulo_only() -> tuple[str, ...]:
    """The registered rules but dependence, capacity and completion (what modulo-only leaves
    out)."""
    from warpweave.core.registry import CONSTRAINTS
    return tuple(r for r in CONSTRAINTS.names() if r not in MODULO_RULES)


# The prior implementation's kernels (its README lists GauS's II for them) on our machines.
SEED_KERNELS = (("fa-simplified", None), ("fa3-fwd", "h100"), ("fa4-fwd", "b200"),
                ("gemm", "h100"))
MODULO_RULES = ("dependence", "capacity", "completion")
HATSCHET_LARGEST = 4


def scale_cases(data: Path) -> list[Case]:
    """The `scale` suite (see the module docstring).  Modulo-only cases leave out every rule but
    dependence, capacity and completion (the prior implementation's setting)."""
    others = _modulo_only()
    out = []
    for name, machine in SEED_KERNELS:
        label = name + (f"@{machine}" if machine else "")
        out.append(Case("scale", f"{label} modulo-only", "kernel", name, machine,
                        without=others))
        out.append(Case("scale", f"{label} joint", "kernel", name, machine))
    largest = hatschet_cases(data)[-HATSCHET_LARGEST:]  # sorted by size
    out += [attrs.evolve(c, suite="scale", without=others) for c in largest]
    bwd = data / "data" / "meta-tlx" / "case4_FA_bwd_subtiled-ddg.json"
    out.append(Case("scale", "case4_FA_bwd_subtiled joint", "meta-ddg", str(bwd)))
    out += [Case("scale", f"scale-200-{s} joint", "scale", "scale", size=200, seed=s,
                 params=("joint",)) for s in (0, 1)]
    out.append(Case("scale", "scale-1000-0 modulo-only", "scale", "scale", size=1000, seed=0))
    return out


SUITES: dict[str, Callable[[Path], list[Case]]] = {
    "kernels": lambda data: kernel_cases(),
    "meta": meta_cases,
    "hatschet": hatschet_cases,
    "hatschet-all": hatschet_all_cases,
    "meta-ddg": meta_ddg_cases,
    "random": lambda data: random_cases(),
    "scale": scale_cases,
}


def single_case(target: str) -> Case:
    """A model file, or a library kernel `name[@machine]` at default parameters."""
    if Path(target).suffix in (".json", ".toml") or Path(target).exists():
        if not Path(target).is_file():
            raise InputError("no such model file", value=target)
        return Case("files", Path(target).stem, "file", target)
    from warpweave.kernels import kernel_spec
    name, _, machine = target.partition("@")
    try:
        spec = kernel_spec(name)
    except InputError:
        raise InputError(f"neither a suite ({', '.join(SUITES)}), a model file nor a library "
                         "kernel", ("bench",), target) from None
    if machine and machine not in spec.machines:
        raise InputError(f"kernel {name} supports {', '.join(spec.machines) or 'its own machine'}",
                         ("bench",), target)
    return Case("kernels", target, "kernel", name, machine or None)


def select(targets: Sequence[str], data: Path | None = None,
           limit: int | None = None) -> list[Case]:
    """The cases of `targets` (suite names, model files, kernels), each suite cut to an evenly
    spread sample of `limit` cases."""
    data = data or default_data_dir()
    out: list[Case] = []
    for target in targets:
        if target in SUITES:
            out += sample(SUITES[target](data), limit)
        else:
            out.append(single_case(target))
    return out


def sample(cases: list[Case], limit: int | None) -> list[Case]:
    """`limit` cases spread evenly over `cases` (which are ordered by size), first and last
    included; all of them without a limit."""
    if limit is None or limit >= len(cases):
        return cases
    if limit < 1:
        raise InputError("must be >= 1", ("--limit",), limit)
    if limit == 1:
        return cases[:1]
    picks = sorted({round(k * (len(cases) - 1) / (limit - 1)) for k in range(limit)})
    return [cases[k] for k in picks]


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror} (give the benchmarks directory with "
                         "--data)", file=str(path)) from None
