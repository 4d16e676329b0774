"""Ctrl-C at random moments of a solve: every one must end the run within a second, with exit
status 3 and what was known (a schedule or the bounds), and none may be lost.

    python -m benchmarks.interrupts [--trials 100] [--seed 0] [--within 1.0] [-- COMMAND ...]
    (from the repository root; the default command is `warpweave solve fa4-fwd --machine b200`)

First the command runs once to the end, to learn how long it takes (T).  Then each trial starts
it in a process group of its own, as a shell starts a foreground job, and sends SIGINT to the
whole group - what a terminal's Ctrl-C does, solver children included - at a moment drawn
uniformly from [0, T) (seeded).  A trial fails when the command exits other than 3, takes longer
than `--within` seconds after the signal to exit, leaves a process of its group behind, prints a
Python traceback, or prints nothing; it is `late` (not counted) when the command had ended
before the signal.  One line per trial, a summary at the end, the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import time

DEFAULT = ["warpweave", "solve", "fa4-fwd", "--machine", "b200"]


def trial(command: list[str], delay: float, patience: float) -> dict:
    """Run `command`, SIGINT its process group after `delay` seconds; what happened."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, text=True)
    try:
        proc.wait(timeout=delay)
        out, err = proc.communicate()
        return {"delay": delay, "late": True, "code": proc.returncode, "after": None,
                "out": out, "err": err, "left": False}
    except subprocess.TimeoutExpired:
        pass
    sent = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=patience)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None  # ignored: still running `patience` seconds after the signal
    after = time.perf_counter() - sent
    time.sleep(0.2)
    try:
        os.killpg(proc.pid, 0)
        left = True
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        left = False
    return {"delay": delay, "late": False, "code": code, "after": after, "out": out,
            "err": err, "left": left, "total": time.perf_counter() - start}


def verdict(r: dict, within: float) -> str:
    """'ok', 'late' or what went wrong."""
    if r["late"]:
        return "late"
    wrong = []
    if r["code"] != 3:
        wrong.append(f"exit {r['code']}")
    if r["after"] is not None and r["after"] > within:
        wrong.append(f"{r['after']:.2f} s after the signal")
    if r["left"]:
        wrong.append("a process of its group was left")
    if "Traceback" in r["err"]:
        wrong.append("traceback")
    if not (r["out"].strip() or r["err"].strip()):
        wrong.append("said nothing")
    return "; ".join(wrong) or "ok"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--within", type=float, default=1.0, help="seconds a run may take to end "
                   "after the signal (default 1)")
    p.add_argument("--patience", type=float, default=30.0, help="seconds after the signal "
                   "before a run counts as having ignored it (default 30)")
    p.add_argument("command", nargs="*", default=DEFAULT)
    args = p.parse_args(argv)
    command = args.command or DEFAULT
    print(f"load before: {os.getloadavg()[0]:.2f}  command: {' '.join(command)}")
    tick = time.perf_counter()
    full = subprocess.run(command, capture_output=True, text=True)
    length = time.perf_counter() - tick
    print(f"uninterrupted: exit {full.returncode} in {length:.1f} s")
    rng = random.Random(args.seed)
    results = []
    for k in range(args.trials):
        r = trial(command, rng.uniform(0, length), args.patience)
        r["verdict"] = verdict(r, args.within)
        results.append(r)
        said = (r["err"].strip().splitlines() or r["out"].strip().splitlines() or [""])[-1]
        after = f"{r['after']:.2f} s" if r["after"] is not None else "-"
        print(f"{k + 1:3d} signal at {r['delay']:6.2f} s: exit {r['code']}, ended {after} after; "
              f"{r['verdict']}  [{said[:70]}]", flush=True)
    sent = [r for r in results if not r["late"]]
    bad = [r for r in sent if r["verdict"] != "ok"]
    afters = [r["after"] for r in sent if r["after"] is not None]
    print(f"\n{len(sent)} interrupted, {len(results) - len(sent)} ended before the signal; "
          f"{len(bad)} failed")
    if afters:
        print(f"seconds from the signal to the exit: median {statistics.median(afters):.2f}, "
              f"max {max(afters):.2f}")
    codes: dict = {}
    for r in sent:
        codes[r["code"]] = codes.get(r["code"], 0) + 1
    print(f"exit statuses: {codes}")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
