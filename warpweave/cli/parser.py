"""The command line's parser: every command, its arguments and options, each shared option stated
once.  Defaults come from `warpweave.defaults`, which the Python API uses too.

Imports nothing but argparse and the defaults, so `warpweave --help` stays fast: a command's
module (`warpweave.cli.commands`) is imported only to run it.
"""

from __future__ import annotations

import argparse

from warpweave import __version__, defaults

FILE_HELP = "a model file (.json or .toml), or - for standard input"


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, as every other error of the command is
    (argparse prints the whole usage first); subcommands' parsers are of this class too."""

    def error(self, message: str):  # noqa: ANN201 - argparse's signature (NoReturn)
        self.exit(2, f"warpweave: error: {message} (see `{self.prog} --help`)\n")


def _flags(json_help: str | None = "print JSON") -> argparse.ArgumentParser:
    """-q/--quiet (every command) and --json (every command that reports)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("-q", "--quiet", action="store_true", help="print no report (the exit status "
                   "and errors still tell); with --json the JSON is still printed")
    if json_help:
        p.add_argument("--json", action="store_true", help=json_help)
    return p


def _progress() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="the live progress on stderr: auto (default: on a terminal, unless "
                   "TERM=dumb, CI is set, --json or -q), always, never")
    return p


def _target() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("model", metavar="TARGET", help="model file (.json or .toml; - for standard "
                   "input) or kernel name (`warpweave kernels`)")
    p.add_argument("params", nargs="*", metavar="KEY=VALUE", help="kernel parameters")
    p.add_argument("--machine", help="machine of a library kernel (default: its first)")
    return p


def _shared_search() -> argparse.ArgumentParser:
    """What every search takes (solve, the codegen commands, crosscheck, heuristic)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--max-stages", type=int, help="largest stage count S = ceil(L/I) searched "
                   "(default: derived from the graph, see `warpweave bounds`)")
    p.add_argument("--without", action="append", default=[], metavar="CONSTRAINT",
                   help="leave a constraint out (repeatable), e.g. --without concurrency")
    p.add_argument("--normalize", default=defaults.NORMALIZE, metavar="HOW",
                   help="cost normalization: auto (default: the exact search in raw cycles; "
                   "the heuristic and the scalable methods round large costs up to units, "
                   "docs/scale.md), off, units (when the lower bound on I exceeds 128 cycles, "
                   "round costs up to units of about lower/64 cycles: faster, optimal in those "
                   "units only), unit=K (units of K cycles) or paper=U (the Twill paper's ILP "
                   "with bound U); schedules are mapped back to raw cycles and verified there")
    p.add_argument("--time-limit", type=float, help="seconds for the whole search")
    p.add_argument("--seed", type=int, default=defaults.SEED,
                   help=f"seed of the solvers (default {defaults.SEED})")
    p.add_argument("--semantics", **_SEMANTICS)
    return p


_SEMANTICS = dict(
    default=defaults.SEMANTICS, choices=defaults.SEMANTICS_CHOICES,
    help="what a valid schedule is: loop (default: the limits hold on the pipelined loop for "
    "every trip count, values entering the loop included) or paper-q (the Twill paper's "
    "letter: on the straight-line program Q of S copies only; a schedule valid there may not "
    "fit the loop)")


def _streaming() -> argparse.ArgumentParser:
    """How a search treats streaming ops (solve, the codegen commands, sweep, crosscheck)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--streaming", choices=defaults.STREAMING_MODES, default=defaults.STREAMING,
                   help="streaming ops (variable latency, no incoming data edge; paper section "
                   "5.3): given (default) solves them at their real latency; bound first "
                   "solves them at zero latency, a relaxation whose proven lower bound on I the "
                   "search of the model as given starts from; paper answers with the "
                   "relaxation's schedule (the paper's letter), checked on the model as given "
                   "and labelled")
    return p


def _solver() -> argparse.ArgumentParser:
    """The options of the optimal search besides `_shared_search`'s (solve, the codegen
    commands without --schedule, sweep)."""
    p = argparse.ArgumentParser(add_help=False, parents=[_streaming()])
    p.add_argument("--method", default=defaults.METHOD, choices=defaults.METHODS,
                   help="exact: the optimal search; lns: large-neighbourhood search over the "
                   "exact model, from the heuristic's (or GauS's) schedule; gaus: the "
                   "differentiable scheduler (needs warpweave[gaus]); heuristic: iterative "
                   f"modulo scheduling; auto (default): exact up to {defaults.AUTO_EXACT_OPS} "
                   "ops, lns above (60 s without --time-limit)")
    p.add_argument("--backend", default=defaults.BACKEND, help="solver backend: cpsat, cbc, "
                   "highs, z3, cvc5, yices, sat[:SOLVER[/CARD[/PB]]] (see `warpweave backends`; "
                   f"default: {defaults.MINIMIZE_BACKEND} for the minimize search, "
                   f"{defaults.SWEEP_BACKEND} for the sweep)")
    p.add_argument("--encoding", default=defaults.ENCODING, help="encoding of time: integer "
                   f"(default {defaults.ENCODING}; start times, L and I as integers), compact "
                   "(order-encoded start times, per-cycle lifetimes) or paper (the Twill paper's "
                   "Figures 4-6)")
    p.add_argument("--search", default=defaults.SEARCH, choices=("auto", "minimize", "sweep"),
                   help="minimize: I is a variable, one problem per stage count (needs "
                   "--encoding integer); sweep: one problem per I and stage count, I upward "
                   "from the lower bound; auto (default): minimize when the encoding allows")
    p.add_argument("--solve-limit", type=float, help="seconds for each solver call")
    p.add_argument("--tie-break", action="append", default=[], metavar="WHAT",
                   help="among optimal (I, L): groups | cross_edges | register_peak "
                   "(repeatable, applied in order)")
    return p


def _solve() -> argparse.ArgumentParser:
    """The options of the optimal search (solve, and the codegen commands without
    --schedule)."""
    p = argparse.ArgumentParser(add_help=False, parents=[_shared_search(), _solver()])
    p.add_argument("--paper-search", action="store_true", help="the Twill paper's Algorithm 1 "
                   "(phase-1 modulo schedule fixes the stage count), compared with the full "
                   "search")
    return p


def _codegen() -> list[argparse.ArgumentParser]:
    """TARGET, --schedule, and the search options used without it."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--schedule", help="schedule file (.json or .toml; - for standard input); "
                   "without it the target is solved with the search options")
    return [_target(), p, _solve(), _progress()]


def _sub(sub, name: str, help: str, description: str, parents=(), json_help="print JSON"):
    p = sub.add_parser(name, help=help, description=description,
                       parents=[*parents, _flags(json_help)])
    p.set_defaults(command=name)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="warpweave",
        description="Optimal software pipelining with warp specialization for GPU tile loops. "
        "Exit status: 0 success, 1 a negative answer (violations, no schedule), 2 bad input, "
        "3 a limit (a time limit, Ctrl-C) reached before the answer was complete, 4 a bug (a "
        "solver's schedule failed verification).")
    parser.add_argument("--version", action="version", version=f"warpweave {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = _sub(sub, "verify", "check a schedule against a model, rule by rule",
             "Check SCHEDULE against MODEL (docs/semantics.md) and list each violated rule "
             "(every registered constraint, plugins included) with its witness. Exit 0 valid, "
             "1 violations, 2 bad input.", json_help="print a JSON report")
    p.add_argument("--semantics", **_SEMANTICS)
    p.add_argument("model", help=FILE_HELP)
    p.add_argument("schedule", help="schedule file (.json or .toml), or - for standard input")

    _sub(sub, "bounds", "lower bounds on I (ResMII, RecMII) and the search limits",
         "Print ResMII (reservation tables), RecMII (exact maximum delay/distance over "
         "dependence cycles, with the critical cycle), the lower bound on L, and the limits "
         "the search uses. TARGET is a model file or a library kernel (`warpweave kernels`) "
         "with --machine and key=value parameters, as for solve.", parents=[_target()])

    _sub(sub, "show", "a readable summary of a model",
         "Summarize TARGET: units, memories, warp groups, ops with their reservations and "
         "resources, and edges (--json: the model document). TARGET is a model file or a "
         "library kernel (`warpweave kernels`) with --machine and key=value parameters, as "
         "for solve.", parents=[_target()], json_help="print the model document")

    p = _sub(sub, "solve", "find an optimal schedule and warp assignment, with a proof",
             "Search I upward from max(ResMII, RecMII); at each I try every stage count "
             "S <= --max-stages, minimizing L; verify the answer (in raw cycles when costs were "
             "normalized). TARGET is a model file or a library kernel (`warpweave kernels`) "
             "with --machine and key=value parameters. Exit 0 optimal (with --method lns, gaus "
             "or heuristic: also a verified schedule from a method that ended on its own), 1 "
             "no schedule within the bounds, 2 bad input, 3 a limit (--time-limit, Ctrl-C) "
             "reached before the answer was proven (or a raw-cycle violation after "
             "normalization).",
             parents=[_target(), _solve(), _progress()],
             json_help="print the schedule format (docs/formats.md) with optimal, "
             "lower_bound, proof, stage and cycle per op, buffers, ...")
    p.add_argument("--out", help="also write the JSON report to this file")
    p.add_argument("--save-model", metavar="FILE", help="write the model solved (e.g. a built "
                   "kernel) to FILE, for `warpweave verify`")

    p = _sub(sub, "heuristic",
             "a fast schedule by iterative modulo scheduling (no optimality proof)",
             "Rau's iterative modulo scheduling with a greedy warp-group assignment, trying I "
             "upward from max(ResMII, RecMII) (in normalized units when costs are large); every "
             "schedule it prints is verified. A heuristic: it claims no optimality, and failing "
             "is no proof of infeasibility. Exit 0 schedule found, 1 none found, 2 bad input, 3 "
             "none found before --time-limit or Ctrl-C stopped it.",
             parents=[_target(), _shared_search()],
             json_help="print the schedule format with optimal: false, lower_bound, stages, "
             "buffers and the attempts")
    p.add_argument("--budget", type=int, default=defaults.BUDGET, help="scheduling steps per op "
                   f"for one modulo-scheduling attempt (Rau's budget ratio, default "
                   f"{defaults.BUDGET})")
    p.add_argument("--out", help="also write the JSON report to this file")

    p = _sub(sub, "emit", "pipelined code from a schedule: pseudocode, IR, CUDA C++",
             "Lower a valid schedule to per-warp-group programs and write them to --out: the Q "
             "table and pseudocode (pseudo), the warp-program IR as text and JSON (ir), a CUDA "
             "C++ kernel skeleton with hooks (cuda; compiled with nvcc when present, reporting "
             "ptxas registers and spills). Exit 1, with the files written, when the program "
             "breaks a limit (a memory's capacity, a group's register limit: the figures are "
             "named) or nvcc fails to compile it (nvcc's output on standard error).",
             parents=_codegen(),
             json_help="print what was written and allocated as JSON")
    p.add_argument("--target", choices=("pseudo", "ir", "cuda", "all"),
                   default=defaults.EMIT_TARGET, help="what to write (default: all)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--arch", choices=("sm_90a", "sm_100a"), help="CUDA target (default: the "
                   "machine's arch: the registered machine's, or the model's machine.arch, else "
                   "sm_90a)")
    p.add_argument("--no-compile", action="store_true", help="do not run nvcc")

    p = _sub(sub, "simulate", "run the warp programs in a discrete-event simulator",
             "Simulate the warp programs of a valid schedule: deadlock, ring-slot races and "
             "wrong-iteration reads are reported, and the steady-state rate is compared with "
             "1/I. Exit 1 on a deadlock or race, and, with fixed latencies and the schedule's "
             "pacing (the schedule itself), when the rate misses 1/I or an op issues late (the "
             "first late op and the wait that held it are named); else 0.",
             parents=_codegen())
    p.add_argument("--iterations", type=int, default=defaults.ITERATIONS,
                   help=f"loop iterations (default {defaults.ITERATIONS})")
    p.add_argument("--jitter", type=float, default=0.0,
                   help="randomize variable-latency ops by up to +-PCT percent")
    p.add_argument("--pace", choices=("schedule", "greedy"), default=defaults.PACE,
                   help="issue ops at their scheduled cycle (default) or as soon as possible")
    p.add_argument("--depth", action="append", default=[], metavar="VALUE=N",
                   help="give VALUE's ring N slots instead of the plan's (an experiment: what "
                   "a shallower or deeper ring does); repeatable")

    p = _sub(sub, "draw", "pictures: Q timeline (SVG/PNG), dependence graph (DOT/SVG)",
             "Write timeline.svg (and timeline.png with matplotlib), graph.dot and graph.svg "
             "(graphviz dot if on PATH, else an approximate layered drawing of our own).",
             parents=_codegen(), json_help="print each file written and how, as JSON")
    p.add_argument("--out", required=True, help="output directory")

    p = _sub(sub, "import", "convert an external dependence graph into a model file",
             "Convert FILE (with the built-in importers: Meta's raw ddg-0.1 dump, Meta's "
             "curated-ddg-0.2 graph, or a HatScheT GraphML graph with its resource model) into "
             "the warpweave model format; docs/importers.md gives the field mapping. Without "
             "--out the model is printed.", json_help="with --out, print a JSON summary")
    p.add_argument("file", help="the graph file (- for standard input, for formats read from "
                   "a document)")
    p.add_argument("--from", dest="source", required=True, metavar="FORMAT",
                   help="the input format: meta-ddg, meta-curated, hatschet, or a plugin's "
                   "(entry points warpweave.importers)")
    p.add_argument("--loop", type=int, help="Meta formats: the loop_id to import (default: the "
                   "first inner loop)")
    p.add_argument("--groups", help="Meta formats: warp-group sizes over the 32 warps, e.g. "
                   "1,4x7,1x3 (the default); the first is the variable-latency group")
    p.add_argument("--reg-limit", type=int, help="Meta formats: registers per thread of every "
                   "group (default 255 = 8160 words per warp / 32; the B200's rule: 255, or a "
                   "setmaxnreg value)")
    p.add_argument("--async-units", help="Meta formats: units whose ops hold their group's issue "
                   "for one cycle only, e.g. TC,TMA (default: none, as in the paper)")
    p.add_argument("--rm", help="HatScheT: the resource-model XML (default: <graph>_RM.xml or "
                   "<graph>RM.xml beside the graph)")
    p.add_argument("--out", help="write the model here (.json or .toml) instead of printing it")

    p = _sub(sub, "export-schedule", "a schedule in the form a compiler reads (Triton, LLVM)",
             "Write SCHEDULE of MODEL keyed by the source graph's node ids (Meta's DDG ids for "
             "an imported graph; op names otherwise): triton (loop.stage, loop.cluster, "
             "tt.modulo_cycle, ttg.partition per op; tt.modulo_ii), llvm (ModuloSchedule: a "
             "cycle and a stage per instruction), or a plugin's (entry points "
             "warpweave.exporters). docs/importers.md shows the round trip.",
             json_help=None)
    p.add_argument("model", help=FILE_HELP)
    p.add_argument("schedule", help="schedule file (.json or .toml), or - for standard input")
    p.add_argument("--to", required=True, metavar="FORMAT", help="triton, llvm, or a plugin's")
    p.add_argument("--out", help="write the document here instead of printing it")

    p = _sub(sub, "crosscheck", "solve one model with every backend x encoding and compare",
             "Run the optimal search (as `solve` does: normalization, raw "
             "re-verification) with every backend x encoding, print one row each (status, I, "
             "L, seconds, verified), and compare. On a disagreement or a failed verification, "
             "write the replayable IR of the first (I, S) question answered differently (one "
             "file per run), the model solved and the oracle's schedule there to --out. Exit 0 "
             "all agree, 1 a disagreement, 2 bad input, 3 some run hit --time-limit.",
             parents=[_target(), _shared_search(), _streaming(), _progress()])
    p.add_argument("--backends", action="append", default=[], metavar="SPECS",
                   help="comma-separated backend specs (repeatable); `all` for every variant "
                   "of `warpweave backends` (default: each available family)")
    p.add_argument("--encodings", action="append", default=[], metavar="NAMES",
                   help="comma-separated encodings (default: all)")
    p.add_argument("--oracle", action="store_true", help="also enumerate every schedule with the "
                   "verifier (tiny models only) and compare with its answer")
    p.add_argument("--oracle-budget", type=int, default=200_000, metavar="N",
                   help="give the oracle up after N candidate schedules (default 200000)")
    p.add_argument("--out", help="where to write replay files on a disagreement (default "
                   "crosscheck-<model>/)")
    p.add_argument("--reduce", type=int, nargs="?", const=100, default=0, metavar="N",
                   help="on a disagreement, also write --out/reduced.json: the model with every "
                   "edge, op, group and field dropped that the disagreement does not need (at "
                   "most N more cross-checks, default 100)")

    p = _sub(sub, "sweep", "solve a kernel over a grid of parameters, ranked by throughput",
             "Solve library KERNEL at every point of the grid (each --param's values crossed, on "
             "each --machine), every point as `solve` does (verified), and rank the points by "
             "predicted throughput: the kernel's useful FLOPs per iteration over the proven I "
             "(docs/sweep.md says what it leaves out). Answers are kept in --store and reused: "
             "a re-run or an overlapping grid solves only the points not answered yet, and a "
             "sweep stopped by Ctrl-C resumes. --time-limit is per point (default "
             f"{defaults.SWEEP_TIME_LIMIT:g} s). Exit 0 every point answered in full or "
             "rejected by the kernel's builder (it cannot be built; the report says how many), "
             "2 bad input, or no point of the grid can be built (each point's reason on "
             "stderr), 3 interrupted, or some point stopped at its limit or failed (its reason "
             "is in the ranking).", parents=[_shared_search(), _solver(), _progress()],
             json_help="print the sweep as JSON: every point's status, I, bounds, throughput "
             "and resources, ranked")
    p.set_defaults(time_limit=defaults.SWEEP_TIME_LIMIT)
    # the shared option's help says "for the whole search": a sweep's limit is per point
    p._option_string_actions["--time-limit"].help = (
        f"seconds for each point: the limit of its solve, as solve's --time-limit (default "
        f"{defaults.SWEEP_TIME_LIMIT:g}); the sweep as a whole has none")
    p.add_argument("kernel", metavar="KERNEL", help="library kernel (`warpweave kernels`)")
    p.add_argument("--machine", help="machines, comma-separated (default: the kernel's first)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="a swept parameter and its values (repeatable; a parameter given once "
                   "is fixed; values of a warp inventory `groups` are separated by ;)")
    p.add_argument("--store", default=defaults.SWEEP_STORE, metavar="FILE",
                   help=f"the SQLite results file (default {defaults.SWEEP_STORE})")
    p.add_argument("--cluster", metavar="ADDRESS", help="run the points on the Dask cluster "
                   "whose scheduler is at ADDRESS (tcp://host:8786; pip install "
                   "'warpweave[cluster]') instead of local processes")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    p.add_argument("--plot", metavar="FILE", help="draw the Pareto front (throughput against "
                   "registers and shared memory) to FILE: .svg, or .png with matplotlib")

    _sub(sub, "backends", "list the solver backends, their variants and capabilities",
         "List every registered backend (and the concrete variants worth testing: sat solvers "
         "x encodings, cpsat worker counts) with availability (and why not: the extra that "
         "installs it), solver version and capabilities.")

    p = _sub(sub, "export", "write an IR file as LP, MPS, SMT-LIB 2, CNF or WCNF",
             "Translate a saved IR problem (warpweave.ir/1 JSON: what crosscheck disagreements "
             "and rejected solves are saved as) to a standard format, to replay it with an "
             "external solver.", json_help="print what was written as JSON")
    p.add_argument("ir", help="IR file (.json), or - for standard input")
    p.add_argument("--to", required=True, choices=["lp", "mps", "smt2", "cnf", "wcnf"],
                   help="output format")
    p.add_argument("--out", required=True, help="output file")
    p.add_argument("--encodings", metavar="CARD/PB",
                   help="cnf/wcnf: cardinality and PB encodings (default totalizer/best)")

    _sub(sub, "kernels", "list the kernel library: parameters and machines",
         "List every registered kernel builder (plugins included) with its machines and "
         "parameters (key, type, default, meaning).")
    _sub(sub, "machines", "list the machines: units, memories, groups, cost figures",
         "List every registered machine (plugins included): functional units, memories, the "
         "default warp-group inventory, and each cost figure with its source.")
    _sub(sub, "constraints", "list the constraints every schedule must meet",
         "List every registered constraint (the built-in rules of docs/semantics.md and "
         "plugins' rules) with the entry point it comes from: each is part of solve, verify "
         "and crosscheck, and --without NAME leaves one out of a search.")

    p = _sub(sub, "schema", "print the JSON Schema of a file format",
             "Print the JSON Schema (draft 2020-12) shipped for a format: model "
             "(warpweave.model/1), schedule (warpweave.schedule/1) or ir (warpweave.ir/1).",
             json_help=None)
    p.add_argument("format", choices=("model", "schedule", "ir"), help="the format")

    p = _sub(sub, "build", "build a library kernel into a model",
             "Build KERNEL with the given key=value parameters; print its summary, or write the "
             "model file with --out.", json_help="print the model document")
    p.add_argument("kernel", help="kernel name (see `warpweave kernels`)")
    p.add_argument("params", nargs="*", metavar="KEY=VALUE", help="kernel parameters")
    p.add_argument("--machine", help="machine name (default: the kernel's first)")
    p.add_argument("-o", "--out", "--output", dest="out",
                   help="write the model to this file (.json or .toml)")

    p = _sub(sub, "bench", "benchmark backends, encodings and the heuristic on suites",
             "Run every case of the SUITEs (kernels, meta, meta-ddg, hatschet, hatschet-all, "
             "random, scale; or model files, or kernels as name[@machine]) under every "
             "configuration, each in a worker process killed at the hard limit; write JSON "
             "lines and print a markdown report with time ratios measured in the same run, "
             "agreement across configurations and the heuristic's gap. Exit 0, or 1 when "
             "configurations disagree (a bug).",
             json_help="print the records as JSON instead of the markdown report")
    p.add_argument("targets", nargs="*", metavar="SUITE", help="suites, model files or kernels "
                   "(default: kernels)")
    p.add_argument("--suite", action="append", default=[], metavar="NAME,...",
                   help="suites (or model files, kernels) to run, comma-separated or repeated: "
                   "the same as naming them as SUITE")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run each case under each configuration N times, the configurations "
                   "interleaved; the report shows the median and the range (default 1)")
    p.add_argument("--peers", action="store_true", help="add the peers (the paper's encoding "
                   "on yices and z3, normalized) to the configurations given (the default "
                   "matrix has them)")
    p.add_argument("--backends", action="append", default=[], metavar="SPEC,...",
                   help="backend specs (comma-separated or repeated; `heuristic` is one too); "
                   "default: a matrix of cpsat, highs, cbc, yices, sat and z3 configurations")
    p.add_argument("--encodings", action="append", default=[], metavar="NAME,...",
                   help="encodings crossed with --backends (default: integer)")
    p.add_argument("--searches", action="append", default=[], metavar="minimize,sweep",
                   help="search strategies crossed with both (default: as solve's --search "
                   "auto); minimize needs the integer encoding")
    p.add_argument("--all", action="store_true", help="every backend variant on every encoding "
                   "and search")
    p.add_argument("--configs", action="append", default=[], metavar="LABEL,...",
                   help="exactly these configurations, first the baseline, each as reports "
                   "label them: 'BACKEND/ENCODING SEARCH' (e.g. 'cpsat/integer minimize'), "
                   "heuristic, lns or gaus (default for the scale suite: cpsat/integer "
                   "minimize, lns, gaus, heuristic)")
    p.add_argument("--no-heuristic", action="store_true", help="leave the heuristic out")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per case: the search's "
                   "time limit; the worker is killed max(5, 10%%) later (default 120)")
    p.add_argument("--limit", type=int, help="at most N cases per suite, spread over its sizes")
    p.add_argument("--out", help="write the records here as JSON lines")
    p.add_argument("--markdown", metavar="FILE", help="also write the report here")
    p.add_argument("--csv", metavar="FILE", help="also write the records as CSV, one row per "
                   "case and configuration and repeat: suite, case, ops, config, status, I, L, "
                   "lower bound, optimal, seconds (wall, first schedule, best I, build), cycles "
                   "per unit")
    p.add_argument("--plot", metavar="FILE", help="also draw wall time (log scale) per case "
                   "and against graph size (ops), one series per configuration, runs that "
                   "decided nothing hollow at the timeout: .svg, or .png with matplotlib")
    p.add_argument("--report", metavar="FILE", help="run nothing: the report of a results file "
                   "(with --csv, --plot: those of it)")
    p.add_argument("--data", metavar="DIR", help="the benchmarks directory (default: the one "
                   "beside the package)")
    p.add_argument("--normalize", default=defaults.NORMALIZE, metavar="HOW,...",
                   help="cost normalization, as for solve (default "
                   f"{defaults.NORMALIZE}); several (e.g. off,auto) run every configuration "
                   "under each, side by side")
    p.add_argument("--max-stages", type=int, help="stage bound, as for solve")
    p.add_argument("--seed", type=int, default=defaults.SEED, help="solver and heuristic seed "
                   f"(default {defaults.SEED})")

    p = _sub(sub, "reproduce", "ask every published warp role: forced, allowed or excluded at "
             "the optimal I",
             "For FA3, FA4, the FlashAttention backward passes and GEMM, on the published and "
             "the neutral inventory: find the optimal I, then ask each role the publications "
             "describe, imposed and forbidden at that I. An excluded role is explained by "
             "deletion (the constraints whose removal makes it feasible). Prints Markdown as "
             "each case is answered; progress on stderr. Exit 0, or 3 when a limit left an "
             "answer unknown.", json_help=None)
    p.add_argument("--only", nargs="*", default=[], metavar="TEXT", help="topics or cases whose "
                   "name contains one of these (e.g. fa4-fwd, neutral)")
    p.add_argument("--json", metavar="FILE", help="also write every answer as JSON (rewritten "
                   "as each case is answered)")
    p.add_argument("--explain-forced", action="store_true", help="also explain forced roles "
                   "by deletion")
    p.add_argument("--no-reach", action="store_true", help="do not look for the smallest I at "
                   "which an excluded role becomes feasible")
    p.add_argument("--backend", default=defaults.REPRODUCE_BACKEND,
                   help=f"backend of the decisions (default {defaults.REPRODUCE_BACKEND})")
    p.add_argument("--encoding", default=defaults.REPRODUCE_ENCODING,
                   help=f"encoding of the decisions (default {defaults.REPRODUCE_ENCODING})")
    p.add_argument("--solve-limit", type=float, default=defaults.REPRODUCE_SOLVE_LIMIT,
                   help="seconds per decision (default %(default)s; beyond it the answer is "
                   "unknown)")
    p.add_argument("--time-limit", type=float, default=defaults.REPRODUCE_TIME_LIMIT,
                   help="seconds per optimal-I search (default %(default)s)")
    return parser
