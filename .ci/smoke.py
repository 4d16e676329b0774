"""CI smoke test of an installed warpweave (not the checkout): run from outside the checkout in a
venv that `pip install`ed it.  Usage: python smoke.py base|all CHECKOUT

base: the slim install solves with CP-SAT (the issue's one-liner: fa3-fwd on h100 is I = 1024,
      proven in raw cycles; optimal in I and L solved in raw cycles), `python -m warpweave
      verify` works, the schemas ship, and every other backend
      says which extra installs it.
all:  every backend row is available and every family solves the paper's Figure 1 loop to the
      same optimum; the PNG timeline draws.
Prints one line per check; exits 1 at the first that fails.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import warpweave as ww


def check(what: str, ok: bool, detail: str = "") -> None:
    print(f"smoke: {'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}",
          flush=True)
    if not ok:
        sys.exit(1)


def base(checkout: Path) -> None:
    check("warpweave is the installed package", "site-packages" in Path(ww.__file__).parts,
          ww.__file__)
    r = ww.solve(ww.kernel("fa3-fwd", "h100"))
    check("ww.solve(ww.kernel('fa3-fwd', 'h100')): I = 1024, optimal (I and L in raw cycles)",
          (r.I, r.optimal) == (1024, True), f"{r.I} {r.optimal} {r.claim}")
    r = ww.solve(ww.kernel("fa3-fwd", "h100"), normalize="units")
    check("in 16-cycle units: I = 1024 is the raw lower bound, L minimal in units only",
          (r.I, r.claim["I_optimal"], r.optimal) == (1024, True, False), f"{r.I} {r.claim}")
    ex = checkout / "examples"
    run = subprocess.run([sys.executable, "-m", "warpweave", "verify",
                          str(ex / "fa-simplified.json"), str(ex / "fa-simplified.schedule.json")],
                         capture_output=True, text=True)
    check("python -m warpweave verify", run.returncode == 0, run.stdout.strip())
    from importlib.resources import files
    shipped = sorted(p.name for p in files("warpweave").joinpath("schemas").iterdir())
    check("schemas ship with the package", len([n for n in shipped if n.endswith(".json")]) >= 3,
          ", ".join(shipped))
    rows = ww.list_backends()
    ok = [r["spec"] for r in rows if r["available"]]
    check("the base install has CP-SAT", bool(ok) and all(s.startswith("cpsat") for s in ok),
          ", ".join(ok))
    hint = [r["spec"] for r in rows if not r["available"]
            and "pip install 'warpweave[" not in r["reason"]]
    check("every missing backend names its extra", not hint, ", ".join(hint))


def everything(checkout: Path) -> None:
    rows = ww.list_backends()
    missing = [f"{r['spec']} ({r['reason']})" for r in rows if not r["available"]]
    check(f"all {len(rows)} backend rows available", not missing, "; ".join(missing))
    model = checkout / "examples" / "fa-simplified.json"
    answers = {}
    for family in ("cpsat", "cbc", "highs", "z3", "cvc5", "yices", "sat"):
        r = ww.solve(model, backend=family)
        answers[family] = (r.I, r.optimal)
    check("every family solves Figure 1 to I=2, optimal", set(answers.values()) == {(2, True)},
          str(answers))
    with tempfile.TemporaryDirectory() as out:
        made = ww.draw(model, checkout / "examples" / "fa-simplified.schedule.json", out=out)
    check("draw makes the PNG timeline", made["timeline.png"] == "matplotlib",
          made["timeline.png"])


if __name__ == "__main__":
    which, checkout = sys.argv[1], Path(sys.argv[2]).resolve()
    {"base": base, "all": everything}[which](checkout)
