"""`warpweave crosscheck`: agreement, disagreements with replay files, failed verification, input
errors."""

from __future__ import annotations

import json

from warpweave.cli import main
from warpweave.core.formats import load_model, load_schedule
from warpweave.core.registry import ENCODINGS, backend
from warpweave.core.verify import verify
from warpweave.encodings.compact import CompactEncoding
from warpweave.ir import Problem

from .conftest import EXAMPLES, ROOT

FA = str(EXAMPLES / "fa-simplified.json")


class Cramped(CompactEncoding):
    """A wrong encoding that is merely too strict: one unit of capacity less than the machine's,
    so it answers a larger I and the verifier cannot object."""

    name = "cramped"

    def limit_unit(self, rows, capacity):
        super().limit_unit(rows, capacity - 1 if capacity > 1 else capacity)


class Forgetful(CompactEncoding):
    """A wrong encoding that drops capacity: the search's own verification rejects it."""

    name = "forgetful"

    def limit_unit(self, rows, capacity):
        pass


def test_everything_agrees_on_figure_1(tmp_path, capsys):
    out = tmp_path / "x"
    assert main(["crosscheck", FA, "--backends", "sat,cpsat", "--encodings", "compact",
                 "--encodings", "paper,integer", "--oracle", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 backends x 3 encodings" in text and "all finished runs agree" in text
    rows = [line.split() for line in text.splitlines() if line.startswith("  sat ")
            or line.startswith("  cpsat ")]
    assert len(rows) == 6 and {(r[2], r[3], r[4], r[6]) for r in rows} == \
        {("optimal", "2", "4", "yes")}
    assert "oracle: optimal I=2 L=4" in text
    assert not out.exists()  # nothing to replay


def test_a_disagreement_writes_replayable_ir(tmp_path, capsys):
    model = tmp_path / "three.json"
    model.write_text(json.dumps({"name": "three", "machine": {
        "units": {"u": 2}, "warp_groups": [{"name": "g"}]},
        "ops": [{"name": n, "uses": {"u": 1}} for n in "ABC"]}))
    ENCODINGS.add("cramped", Cramped)
    out = tmp_path / "replay"
    assert main(["crosscheck", str(model), "--backends", "sat", "--encodings",
                 "compact,cramped", "--oracle", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "DISAGREEMENT: answers differ: optimal I=2 L=2 from sat/compact; optimal I=3 L=3 " \
           "from sat/cramped" in text
    assert "DISAGREEMENT: the oracle says optimal I=2 L=2, not optimal I=3 L=3 (sat/cramped)" \
        in text
    names = sorted(p.name for p in out.iterdir())
    assert names == ["model.json", "oracle--I2-S1.schedule.json", "sat--compact--I2-S1.ir.json",
                     "sat--cramped--I2-S1.ir.json"]
    # Replay: the compact problem is feasible, the cramped one is not, and the oracle's schedule
    # is valid for the model that was solved.
    ok = backend("cpsat").solve(Problem.read(out / "sat--compact--I2-S1.ir.json"))
    bad = backend("cpsat").solve(Problem.read(out / "sat--cramped--I2-S1.ir.json"))
    assert ok.status.has_solution and bad.status.value == "UNSAT"
    solved = load_model(out / "model.json")
    assert verify(solved, load_schedule(out / "oracle--I2-S1.schedule.json", solved)) == []
    assert main(["export", str(out / "sat--cramped--I2-S1.ir.json"), "--to", "lp", "--out",
                 str(tmp_path / "c.lp")]) == 0


def test_reduce_writes_the_smallest_model_that_still_disagrees(tmp_path, capsys):
    """Cramped answers a larger I when ops share the unit of capacity 2: the reduced model keeps
    two such ops and nothing else, and disagrees again when cross-checked."""
    model = tmp_path / "five.json"
    model.write_text(json.dumps({"name": "five", "machine": {
        "units": {"u": 2, "v": 1}, "warp_groups": [{"name": "g", "reg_limit": 64},
                                                   {"name": "h"}]},
        "ops": [{"name": "A", "uses": {"u": 1}, "regs": 8}, {"name": "B", "uses": {"u": 1}},
                {"name": "C", "uses": {"u": 1}, "cycles": 2}, {"name": "D", "uses": {"v": 1}}],
        "edges": [{"src": "A", "dst": "D"}, {"src": "D", "dst": "D", "distance": 1}]}))
    ENCODINGS.add("cramped", Cramped)
    out = tmp_path / "replay"
    args = ["--backends", "cpsat", "--encodings", "compact,cramped", "--out"]
    assert main(["crosscheck", str(model), *args, str(out), "--reduce"]) == 1
    text = capsys.readouterr().out
    assert "reduced from 4 ops / 2 edges to 2 / 0 (" in text and "still disagreeing" in text
    reduced = load_model(out / "reduced.json")
    assert [{u for _, u, _ in op.usage()} for op in reduced.ops] == [{"u"}, {"u"}]
    assert not any(op.regs for op in reduced.ops)
    assert len(reduced.machine.warp_groups) == 1
    assert main(["crosscheck", str(out / "reduced.json"), *args, str(tmp_path / "again")]) == 1


def test_a_rejected_schedule_is_reported_with_its_ir(tmp_path, capsys):
    ENCODINGS.add("forgetful", Forgetful)
    out = tmp_path / "replay"
    assert main(["crosscheck", FA, "--backends", "sat", "--encodings", "compact,forgetful",
                 "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "DISAGREEMENT: sat/forgetful: sat:maplechrono/totalizer/best/forgetful returned a " \
        "schedule the verifier rejects at I=2, S=4: capacity" in text
    assert any(p.name.startswith("warpweave-bug-") for p in out.iterdir())


def test_the_planted_wrap_bug_is_caught_on_issue_13s_model(tmp_path, capsys):
    """Issue 13's encoding bug, planted (an op's run counted once however often it wraps the I
    slots): on two 5-cycle ops on a unit of capacity 3, `crosscheck` reports the schedule at
    I = 4 that the verifier rejects, where the integer encoding agrees with the oracle (I = 5)."""
    from .test_encodings import WrapsOnce
    ENCODINGS.add("wraps-once", WrapsOnce)
    model = str(ROOT / "tests" / "models" / "loop" / "long-ops-capacity-3.json")
    out = tmp_path / "replay"
    assert main(["crosscheck", model, "--backends", "cpsat", "--encodings",
                 "integer,wraps-once", "--oracle", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "cpsat/wraps-once: cpsat:workers=1/wraps-once returned a schedule the verifier " \
        "rejects at I=4" in text and "capacity: unit u slot 0: 4 > capacity 3" in text
    assert "DISAGREEMENT: cpsat/integer" not in text
    assert any(p.name.startswith("warpweave-bug-") for p in out.iterdir())


def test_input_errors(capsys):
    assert main(["crosscheck", FA, "--backends", "nope"]) == 2
    assert main(["crosscheck", FA, "--encodings", "nope"]) == 2
    assert main(["crosscheck", FA, "--backends", "all,sat"]) == 2
    assert "unknown backend" in capsys.readouterr().err


def test_library_kernels_are_targets_and_the_oracle_can_give_up(capsys):
    assert main(["crosscheck", "fa-simplified", "--backends", "cpsat", "--encodings",
                 "compact,integer", "--oracle", "--oracle-budget", "30"]) == 0
    text = capsys.readouterr().out
    assert "1 backend x 2 encodings" in text
    assert "oracle: gave up (more than 30 candidate schedules) while deciding I=2; no smaller " \
        "I has a schedule" in text


def test_without_a_constraint_everything_follows(capsys):
    """Runs, verification and the oracle all leave the constraint out."""
    assert main(["crosscheck", FA, "--backends", "sat", "--encodings", "paper", "--oracle",
                 "--without", "capacity"]) == 0
    text = capsys.readouterr().out
    assert "optimal  1  3" in text and "oracle: optimal I=1 L=3" in text
