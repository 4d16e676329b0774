"""The bad-input battery of the newcomer's report (shared/reports/newcomer.md, section (c)), one
case a row: every bad input, option and output path gives exit 2 and one line on stderr naming
what is wrong, or a verified answer; never a traceback, and nothing written outside `--out`.

Each case runs `warpweave` in process, in an empty working directory holding its input files;
the files in that directory afterwards are compared with the ones the case may write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from warpweave.cli import main

from .conftest import EXAMPLES, ROOT

MODEL = json.loads((EXAMPLES / "fa-simplified.json").read_text())
SCHEDULE = json.loads((EXAMPLES / "fa-simplified.schedule.json").read_text())
CURATED = ROOT / "benchmarks" / "data" / "meta-tlx" / "golden-fwd.curated_ddg.json"


def model(change: Callable[[dict], object] = lambda d: None) -> str:
    """fa-simplified as JSON, with `change` applied to its document."""
    doc = json.loads(json.dumps(MODEL))
    change(doc)
    return json.dumps(doc)


def schedule(change: Callable[[dict], object] = lambda d: None) -> str:
    doc = json.loads(json.dumps(SCHEDULE))
    change(doc)
    return json.dumps(doc)


def op(k: int, **keys) -> Callable[[dict], object]:
    return lambda d: d["ops"][k].update(keys)


def edge(k: int, **keys) -> Callable[[dict], object]:
    return lambda d: d["edges"][k].update(keys)


def machine(**keys) -> Callable[[dict], object]:
    return lambda d: d["machine"].update(keys)


def chain(n: int) -> str:
    """A chain of n ops on three units, with loop-carried edges (the newcomer's big models)."""
    ops = [{"name": f"op{i}", "cycles": 1 + i % 7, "uses": {("tc", "sfu", "alu")[i % 3]: 1}}
           for i in range(n)]
    edges = [{"src": f"op{i}", "dst": f"op{i + 1}"} for i in range(n - 1)]
    edges += [{"src": f"op{i}", "dst": f"op{i}", "distance": 1} for i in range(0, n, 10)]
    return json.dumps({"name": f"chain{n}", "machine": {
        "units": {"tc": 1, "sfu": 1, "alu": 2},
        "warp_groups": [{"name": "g0", "warps": 4}, {"name": "g1", "warps": 4}]},
        "ops": ops, "edges": edges})


@attrs.frozen
class Case:
    argv: tuple[str, ...]
    code: int
    says: str                      # in the error line (exit 2), else in stdout
    files: dict[str, str | bytes] = attrs.field(factory=dict)
    writes: tuple[str, ...] = ()   # what it may leave in the working directory


def case(argv: str, code: int, says: str, writes: tuple[str, ...] = (), **files) -> Case:
    return Case(tuple(argv.split()), code, says,
                {k.replace("__", "."): v for k, v in files.items()}, writes)


M = "m.json"
FAST = "--time-limit 20"  # a bound on any solve here; none comes near it
CASES = {
    # (c) 1-11: reading a model file
    "missing file": case("bounds nope.json", 2, "nope.json: cannot read: No such file"),
    "directory": case("bounds adir", 2, "adir: cannot read: Is a directory", adir=None),
    "empty file": case("bounds m.json", 2, "malformed JSON at line 1 column 1", m__json=""),
    "truncated": case("bounds m.json", 2, "malformed JSON", m__json=model()[:60]),
    "array": case("bounds m.json", 2, "the top level must be an object", m__json="[1, 2]"),
    "wrong format": case("bounds m.json", 2, 'format = "warpweave.model/2": unsupported',
                         m__json=model(lambda d: d.update(format="warpweave.model/2"))),
    "unknown key": case("bounds m.json", 2, 'colour = "red": unknown key',
                        m__json=model(lambda d: d.update(colour="red"))),
    "unknown op key": case("bounds m.json", 2, "ops[0].cycels = 3: unknown key",
                           m__json=model(op(0, cycels=3))),
    "unknown edge key": case("bounds m.json", 2, "edges[0].delya = 3: unknown key",
                             m__json=model(edge(0, delya=3))),
    "cycles -1": case("bounds m.json", 2, "ops[0].cycles = -1: must be >= 1",
                      m__json=model(op(0, cycles=-1))),
    "cycles 0": case("bounds m.json", 2, "ops[0].cycles = 0: must be >= 1",
                     m__json=model(op(0, cycles=0))),
    "cycles 1.5": case("bounds m.json", 2, "ops[0].cycles = 1.5: must be an integer",
                       m__json=model(op(0, cycles=1.5))),
    "cycles string": case("bounds m.json", 2, 'ops[0].cycles = "3": must be an integer',
                          m__json=model(op(0, cycles="3"))),
    "cycles true": case("bounds m.json", 2, "ops[0].cycles = true: must be an integer",
                        m__json=model(op(0, cycles=True))),
    "cycles NaN": case("bounds m.json", 2, "ops[0].cycles = NaN: must be an integer",
                       m__json=model(op(0, cycles=float("nan")))),
    # 12-16: magnitudes
    "cycles 1e18": case("bounds m.json", 2, "ops[0].cycles = 1000000000000000000: must be <= "
                        "1000000000 cycles", m__json=model(op(0, cycles=10**18))),
    "cycles 1e9 used": case("bounds m.json", 2, "ops[0].cycles = 1000000000: reservation "
                            "tables hold a row per cycle", m__json=model(op(0, cycles=10**9))),
    "cycles 1e7 solve": case(f"solve m.json {FAST}", 2, "ops[0].cycles = 10000000: "
                             "reservation tables", m__json=model(op(0, cycles=10**7))),
    "delay 1e18 solve": case(f"solve m.json {FAST}", 2, "edges[0].delay = 1000000000000000000: "
                             "must be <= 1000000000", m__json=model(edge(0, delay=10**18))),
    "cycles 1e5 solve": case("solve m.json --time-limit 10", 0, "proven optimal",
                             m__json=model(op(0, cycles=10**5))),
    "delay 1e5 solve": case(f"solve m.json {FAST} --max-stages 4", 0, "proven optimal",
                            m__json=model(edge(0, delay=10**5))),
    "delay 1e9 on a cycle": case(f"solve m.json {FAST}", 0, "proven optimal",
                                 m__json=model(edge(2, delay=10**9))),
    "distance 1e18": case(f"solve m.json {FAST}", 0, "proven optimal",
                          m__json=model(edge(2, distance=10**18))),
    # found by the fuzzer: a count of 10^30 values in flight overflowed the verifier's range
    "distance 1e30": case(f"solve m.json {FAST}", 2, "edges[2].distance = "
                          "1000000000000000000000000000000: must be <= 1000000000000000000 "
                          "iterations", m__json=model(edge(2, distance=10**30))),
    "capacity 1e18": case(f"solve m.json {FAST}", 0, "proven optimal",
                          m__json=model(machine(units={"tc": 10**18, "sfu": 1}))),
    "reg_limit 1e18": case(f"solve m.json {FAST}", 0, "proven optimal", m__json=model(
        machine(warp_groups=[{"name": "g0", "warps": 4, "reg_limit": 10**18}]))),
    # 17-24: units, names, edges, machines
    "unknown unit": case("bounds m.json", 2, 'ops[0].uses.xx = "xx": unknown unit',
                         m__json=model(op(0, uses={"xx": 1}))),
    "capacity 0": case("bounds m.json", 2, "ops[0].uses.tc = 1: uses 1 of unit 'tc' at once, "
                       "which has capacity 0", m__json=model(machine(units={"tc": 0, "sfu": 1}))),
    "capacity -2": case("bounds m.json", 2, "machine.units.tc = -2: must be >= 0",
                        m__json=model(machine(units={"tc": -2, "sfu": 1}))),
    "uses 5 of 1": case(f"solve m.json {FAST}", 2, "ops[0].uses.tc = 5: uses 5 of unit 'tc' at "
                        "once, which has capacity 1", m__json=model(op(0, uses={"tc": 5}))),
    "duplicate op": case("bounds m.json", 2, "ops[1].name = \"S\": duplicate name",
                         m__json=model(op(1, name="S"))),
    "edge to nowhere": case("bounds m.json", 2, 'edges[0].dst = "ZZ": edge to a missing op',
                            m__json=model(edge(0, dst="ZZ"))),
    "zero-distance cycle": case(f"solve m.json {FAST}", 2, "dependence cycle with distance 0 "
                                "and delay 1 admits no schedule: O -> O",
                                m__json=model(edge(2, distance=0))),
    "negative distance": case("bounds m.json", 2, "edges[2].distance = -1: must be >= 0",
                              m__json=model(edge(2, distance=-1))),
    "negative delay": case("bounds m.json", 2, "edges[0].delay = -1: must be >= 0",
                           m__json=model(edge(0, delay=-1))),
    "bad edge kind": case("bounds m.json", 2, 'edges[0].kind = "control": must be "data" or',
                          m__json=model(edge(0, kind="control"))),
    "no ops": case("bounds m.json", 2, "ops = []: a model needs at least one op",
                   m__json=model(lambda d: d.update(ops=[], edges=[]))),
    "no groups": case("bounds m.json", 2, "the machine needs at least one warp group",
                      m__json=model(machine(warp_groups=[]))),
    "warps 0": case("bounds m.json", 2, "machine.warp_groups[0].warps = 0: must be >= 1",
                    m__json=model(machine(warp_groups=[{"name": "g0", "warps": 0}]))),
    "unknown vl group": case("bounds m.json", 2, 'variable_latency_group = "g9": unknown warp',
                             m__json=model(machine(variable_latency_group="g9"))),
    "ops as object": case("bounds m.json", 2, "ops = {}: must be a list",
                          m__json=model(lambda d: d.update(ops={}))),
    "op without name": case("bounds m.json", 2, "ops[0].name: missing",
                            m__json=model(lambda d: d["ops"][0].pop("name"))),
    "negative use": case("bounds m.json", 2, "ops[0].uses.tc = -1: must be >= 0",
                         m__json=model(op(0, uses={"tc": -1}))),
    "machine null": case("bounds m.json", 2, "machine = null: must be an object",
                         m__json=model(lambda d: d.update(machine=None))),
    "empty op name": case("bounds m.json", 2, 'ops[0].name = "": must be a non-empty string',
                          m__json=model(op(0, name=""))),
    # 25-30: schedules
    "schedule missing op": case(f"verify {M} s.json", 2, "start.O: missing", m__json=model(),
                                s__json=schedule(lambda d: d["start"].pop("O"))),
    "schedule extra op": case(f"verify {M} s.json", 2, 'start.X = "X": unknown op',
                              m__json=model(), s__json=schedule(lambda d: d["start"].update(X=1))),
    "schedule start -1": case(f"verify {M} s.json", 2, "start.S = -1: must be >= 0",
                              m__json=model(), s__json=schedule(lambda d: d["start"].update(S=-1))),
    "schedule I 0": case(f"verify {M} s.json", 2, "I = 0: must be >= 1", m__json=model(),
                         s__json=schedule(lambda d: d.update(I=0))),
    "schedule string start": case(f"verify {M} s.json", 2, 'start.S = "0": must be an integer',
                                  m__json=model(),
                                  s__json=schedule(lambda d: d["start"].update(S="0"))),
    "schedule of another model": case(f"verify {M} s.json", 2, "the schedule is for model "
                                      "'gemm'", m__json=model(),
                                      s__json=schedule(lambda d: d.update(model="gemm"))),
    "schedule unknown group": case(f"verify {M} s.json", 2, 'group.S = "g9": unknown warp group',
                                   m__json=model(),
                                   s__json=schedule(lambda d: d["group"].update(S="g9"))),
    "schedule L too small": case(f"verify {M} s.json", 1, "invalid: ", m__json=model(),
                                 s__json=schedule(lambda d: d.update(L=2))),
    "model as schedule": case(f"verify {M} {M}", 2, "a model file, not a schedule",
                              m__json=model()),
    "bad schedule in emit": case(f"emit {M} --schedule s.json --out out", 2, "I = 0: must be",
                                 m__json=model(), s__json=schedule(lambda d: d.update(I=0))),
    "bad schedule in draw": case(f"draw {M} --schedule s.json --out out", 2, "I = 0: must be",
                                 m__json=model(), s__json=schedule(lambda d: d.update(I=0))),
    "bad schedule in simulate": case(f"simulate {M} --schedule s.json", 2, "I = 0: must be",
                                     m__json=model(), s__json=schedule(lambda d: d.update(I=0))),
    # 31-40: kernels and options
    "unsupported machine": case("solve fa3-fwd --machine a100", 2, 'machine = "a100"'),
    "unknown kernel": case("solve fa5-fwd", 2, '"fa5-fwd": unknown kernel'),
    "bad parameter value": case("solve fa3-fwd subtiles=abc", 2, "params.subtiles"),
    "unknown parameter": case("build fa3-fwd subtile=2", 2, "subtile"),
    "parameter without =": case("solve fa3-fwd subtiles", 2, "a kernel parameter is key=value"),
    "parameters on a file": case(f"solve {M} subtiles=2", 2, "key=value parameters are for "
                                 "library kernels", m__json=model()),
    "unknown backend": case(f"solve {M} --backend nope", 2, "nope", m__json=model()),
    "bad sat options": case(f"solve {M} --backend sat:foo", 2, "foo", m__json=model()),
    "unknown encoding": case(f"solve {M} --encoding nope", 2, "nope", m__json=model()),
    "minimize on compact": case(f"solve {M} --search minimize --encoding compact", 2,
                                "--encoding integer", m__json=model()),
    "unknown constraint": case(f"solve {M} --without gravity", 2, '"gravity": unknown '
                               "constraint", m__json=model()),
    "unknown tie-breaker": case(f"solve {M} --tie-break beauty", 2, "beauty", m__json=model()),
    "bad normalize": case(f"solve {M} --normalize unit=0", 2, "--normalize", m__json=model()),
    "time limit -1": case(f"solve {M} --time-limit -1", 2, "--time-limit = -1.0: must be > 0",
                          m__json=model()),
    "time limit 0": case(f"solve {M} --time-limit 0", 2, "--time-limit = 0.0: must be > 0",
                         m__json=model()),
    "solve limit 0": case(f"solve {M} --solve-limit 0", 2, "--solve-limit = 0.0: must be > 0",
                          m__json=model()),
    "max stages 0": case(f"solve {M} --max-stages 0", 2, "--max-stages = 0: must be >= 1",
                         m__json=model()),
    "max stages -3": case(f"solve {M} --max-stages -3", 2, "--max-stages = -3: must be >= 1",
                          m__json=model()),
    "heuristic max stages 0": case(f"heuristic {M} --max-stages 0", 2, "--max-stages = 0: "
                                   "must be >= 1", m__json=model()),
    # 41-45: file formats
    "malformed TOML": case("bounds m.toml", 2, "malformed TOML", m__toml='name = "x\n'),
    "binary garbage": case("bounds m.json", 2, "not UTF-8 text", m__json=b"\x80\x81\xfe\xff"),
    "yaml model": case("bounds m.yaml", 2, "m.yaml", m__yaml="name: x\n"),
    "UTF-8 BOM": case("bounds m.json", 2, "malformed JSON", m__json="\ufeff" + model()),
    "duplicate key": case("show m.json", 2, "ops[0].cycles: key given twice (first 1, then 7)",
                          m__json=model().replace('"cycles": 1,', '"cycles": 1, "cycles": 7,',
                                                  1)),
    "TOML string cycles": case("bounds m.toml", 2, 'ops[0].cycles = "576": must be an integer',
                               m__toml='[machine]\nunits = {tc = 1}\nwarp_groups = [{name = '
                               '"g0"}]\n[[ops]]\nname = "A"\ncycles = "576"\n'),
    "deep nesting": case("bounds m.json", 2, "m.json", m__json="[" * 100_000),
    # 46-50: output paths (checked before any solve)
    "emit to /proc": case(f"emit {M} --out /proc/ww-out", 2, '--out = "/proc/ww-out": cannot '
                          "make the directory", m__json=model()),
    "emit to a file": case(f"emit {M} --out afile", 2, '--out = "afile": is a file, not a '
                           "directory", m__json=model(), afile="x"),
    "draw to a file": case(f"draw {M} --out afile", 2, '--out = "afile": is a file',
                           m__json=model(), afile="x"),
    "solve out a directory": case(f"solve {M} --out adir", 2, '--out = "adir": is a '
                                  "directory, not a file", m__json=model(), adir=None),
    "solve out without its directory": case(f"solve {M} --out nodir/x.json", 2,
                                            '--out = "nodir/x.json": directory nodir does not '
                                            "exist", m__json=model()),
    "solve out yaml": case(f"solve {M} --out x.yaml", 2, "must be .json or .toml",
                           m__json=model()),
    "save-model without its directory": case(f"solve {M} --save-model nodir/m.json", 2,
                                             '--save-model = "nodir/m.json": directory',
                                             m__json=model()),
    "build to /proc": case("build fa3-fwd -o /proc/x.json", 2, '--out = "/proc/x.json": '
                           "cannot write in directory /proc"),
    "build to yaml": case("build fa3-fwd -o x.yaml", 2, '--out = "x.yaml": the format is '
                          "taken from the suffix"),
    "import to /proc": case(f"import {CURATED} --from meta-curated --out /proc/x.json", 2,
                            '--out = "/proc/x.json"'),
    "export to /proc": case("export ir.json --to cnf --out /proc/x.cnf", 2,
                            '--out = "/proc/x.cnf"', ir__json='{"format": "warpweave.ir/1"}'),
    "garbage bench report": case("bench --report g.json", 2, "g.json: not UTF-8 text",
                                 g__json=b"\x80\x81"),
    "bench out without its directory": case("bench kernels --limit 1 --out nodir/r.jsonl", 2,
                                            '--out = "nodir/r.jsonl": directory'),
    "heuristic out without its directory": case(f"heuristic {M} --out nodir/x.json", 2,
                                                "directory nodir does not exist",
                                                m__json=model()),
    # 51-54: import, export, crosscheck, bench, the command line itself
    "import a model file": case(f"import {M} --from meta-curated", 2, "m.json",
                                m__json=model()),
    "import garbage": case("import g.json --from meta-ddg", 2, "g.json", g__json="[]"),
    "export a model": case(f"export {M} --to lp --out x.lp", 2, "m.json", m__json=model()),
    "export missing": case("export none.json --to lp --out x.lp", 2, "none.json"),
    "crosscheck unknown backend": case(f"crosscheck {M} --backends nope", 2, "nope",
                                       m__json=model()),
    "bench unknown suite": case("bench nosuch", 2, "nosuch"),
    "unknown command": case("optimize", 2, "invalid choice: 'optimize'"),
    # 55-58: names and sizes
    "names that collide in C": case(
        f"emit {M} --schedule s.json --target cuda --no-compile --out out", 0, "renamed",
        ("out",), m__json=model(lambda d: (d["ops"][0].update(name="q-k"),
                                           d["ops"][1].update(name="q_k"),
                                           d["edges"][0].update(src="q-k", dst="q_k"),
                                           d["edges"][1].update(src="q_k"))),
        s__json=schedule(lambda d: d.update(start={"q-k": 0, "q_k": 2, "O": 3},
                                            group={"q-k": "g0", "q_k": "g0", "O": "g0"}))),
    "model name with a slash": case(f"emit {M} --schedule s.json --target pseudo --out out", 0,
                                    "__.._x.qtable.txt", ("out",),
                                    m__json=model(lambda d: d.update(name="ü/../x")),
                                    s__json=schedule(lambda d: d.pop("model"))),
    "model name leaving --out": case(f"emit {M} --schedule s.json --target pseudo --out out",
                                     0, "_escaped.qtable.txt", ("out",),
                                     m__json=model(lambda d: d.update(name="../escaped")),
                                     s__json=schedule(lambda d: d.pop("model"))),
    "10,000 ops: show": case("show big.json", 0, "10000 ops", big__json=chain(10_000)),
    "10,000 ops: bounds": case("bounds big.json", 0, "RecMII", big__json=chain(10_000)),
    "10,000 ops: solve": case("solve big.json --time-limit 3", 3, "time limit of 3 s reached",
                              big__json=chain(10_000)),
}


@pytest.mark.parametrize("c", CASES.values(), ids=CASES.keys())
def test_bad_input_is_one_line_or_a_verified_answer(c: Case, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    for name, content in c.files.items():
        if content is None:
            (work / name).mkdir()
        elif isinstance(content, bytes):
            (work / name).write_bytes(content)
        else:
            (work / name).write_text(content)
    monkeypatch.chdir(work)
    before = _tree(tmp_path)
    try:
        code = main(list(c.argv))
    except SystemExit as exc:  # argparse
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if c.code == 2:
        assert err.startswith("warpweave: error: ") and err.count("\n") == 1, err
        assert c.says in err
    else:
        assert c.says in out, (out, err)
    assert code == c.code, (out, err)
    new = _tree(tmp_path) - before
    assert all(Path(p).relative_to("work").parts[0] in c.writes for p in new), new


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}
