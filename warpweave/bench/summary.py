"""What a benchmark run shows: ratios measured in the run, agreement, the heuristic's gap, tables.

Every figure compares records of the same run: a configuration's wall time relative to the
baseline's on the same cases (geometric mean over the cases both decided), never an absolute
time against a fixed threshold.  Configurations that prove an answer must agree; a disagreement
is a bug and is listed first.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

from warpweave.bench.runner import DECIDED

STATUSES = ("optimal", "infeasible", "feasible", "unknown", "timeout", "error")


def _cases(records: Iterable[dict]) -> dict[tuple[str, str], list[dict]]:
    out: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        out.setdefault((r["suite"], r["case"]), []).append(r)
    return out


def _is_heuristic(r: dict) -> bool:
    """A record of a method that proves nothing itself: the heuristic, LNS or GauS (no
    encoding); compared on I."""
    return r.get("encoding") is None


def geomean(values: Sequence[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


# ---------------------------------------------------------------------------------------------
# Agreement


def disagreements(records: Iterable[dict]) -> list[str]:
    """Every contradiction between the records of one case:

    in the units solved, among records of one scale: two proven optima with different (I, L);
    an answer below a proven lower bound; a schedule where another configuration proved none
    exists; a schedule at the proven-optimal I with a shorter L than the proven-minimal one.
    Across scales, in raw cycles: a valid raw schedule (a normalized answer mapped back is one)
    with an I below one proven optimal in raw cycles.
    """
    out = []
    for (suite, case), rs in _cases(records).items():
        where = f"{suite}/{case}"
        for scale in dict.fromkeys(r.get("scale", 1) for r in rs):
            out += _disagreements(where, [r for r in rs if r.get("scale", 1) == scale])
        raw_optimal = [r for r in rs if r.get("status") == "optimal" and r.get("scale", 1) == 1]
        for f in rs:
            if f.get("I") is None or not f.get("raw_valid", True):
                continue
            for p in raw_optimal:
                if f["I"] < p["I"] and -(-f["L"] // f["I"]) <= p["max_stages"]:
                    out.append(f"{where}: {f['config']} found I={f['I']} cycles but "
                               f"{p['config']} proved I={p['I']} cycles optimal")
    return list(dict.fromkeys(out))


def _disagreements(where: str, rs: list[dict]) -> list[str]:
    """The contradictions among records of one case solved at one scale (in its units)."""
    out = []
    optimal = [r for r in rs if r.get("status") == "optimal"]
    infeasible = [r for r in rs if r.get("status") == "infeasible"]
    found = [r for r in rs if r.get("I_units") is not None]
    provers = [r for r in rs if not _is_heuristic(r) and r.get("lower_bound") is not None]
    answers = {(r["I_units"], r["L_units"]) for r in optimal}
    if len(answers) > 1:
        out.append(f"{where}: proven optima differ: " + ", ".join(
            f"{r['config']} I={r['I_units']} L={r['L_units']}" for r in optimal))
    for f in found:
        for p in provers:
            if f["I_units"] < p["lower_bound"] and f.get("stages", 0) <= p["max_stages"]:
                out.append(f"{where}: {f['config']} found I={f['I_units']} but "
                           f"{p['config']} proved no I < {p['lower_bound']}")
        for p in infeasible:
            out.append(f"{where}: {f['config']} found I={f['I_units']} but {p['config']} "
                       "proved no schedule exists")
        for p in optimal:
            if f["I_units"] == p["I_units"] and f["L_units"] < p["L_units"]:
                out.append(f"{where}: {f['config']} found L={f['L_units']} at I="
                           f"{f['I_units']} but {p['config']} proved L >= {p['L_units']}")
    return out


def collapse(records: Sequence[dict]) -> list[dict]:
    """One record per case and configuration: of several repeats, the one with the median wall
    time (of an even number, the lower middle one), with `wall_runs` (every repeat's time,
    sorted) and `repeats`; statuses that differ between repeats are kept in `statuses`."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["suite"], r["case"], r["config"]), []).append(r)
    out = []
    for rs in groups.values():
        if len(rs) == 1:
            out.append(rs[0])
            continue
        ranked = sorted(rs, key=lambda r: r.get("wall_seconds", math.inf))
        median = ranked[(len(ranked) - 1) // 2]
        walls = [r["wall_seconds"] for r in ranked if "wall_seconds" in r]
        extra = {"wall_runs": walls, "repeats": len(rs)}
        statuses = [r.get("status") for r in rs]
        if len(set(statuses)) > 1:
            extra["statuses"] = statuses
        out.append({**median, **extra})
    return out


def problems(records: Iterable[dict]) -> list[str]:
    """Errors and raw-cycle violations (schedules that normalization made invalid in cycles)."""
    out = []
    for r in records:
        if r.get("status") == "error":
            out.append(f"{r['suite']}/{r['case']} {r['config']}: {r.get('error')}")
        elif r.get("I") is not None and not r.get("raw_valid", True):
            out.append(f"{r['suite']}/{r['case']} {r['config']}: raw-cycle violation: "
                       f"{'; '.join(r.get('raw_violations', []))}")
    return out


# ---------------------------------------------------------------------------------------------
# Ratios


def comparable(r: dict) -> bool:
    """A record whose time means something: a proof, or (heuristic) a schedule found."""
    return r.get("status") in DECIDED or (_is_heuristic(r) and r.get("I") is not None)


def config_rows(records: Sequence[dict], configs: Sequence[str], baseline: str,
                limit: float | None = None) -> list[dict]:
    """Per configuration: counts by status, wall time relative to `baseline` (geometric mean
    over the cases where both are `comparable`), the median of the same ratio over every case
    the baseline decided with a configuration that decided nothing counted at `limit` (the
    run's timeout; `capped`: how many were), and the share of time spent building models."""
    by_case = _cases(records)
    rows = []
    for label in configs:
        mine = [r for r in records if r["config"] == label]
        ratios, at_limit, capped = [], [], 0
        for rs in by_case.values():
            a = next((r for r in rs if r["config"] == label), None)
            b = next((r for r in rs if r["config"] == baseline), None)
            if not (a and b and b.get("status") in DECIDED):
                continue
            base = max(b["wall_seconds"], 1e-3)
            if comparable(a):
                ratios.append(max(a["wall_seconds"], 1e-3) / base)
                at_limit.append(ratios[-1])
            elif limit is not None and a.get("status") != "error":
                at_limit.append(max(limit, a.get("wall_seconds", 0.0)) / base)
                capped += 1
        timed = [r for r in mine if "build_seconds" in r]  # solver runs that returned
        wall = sum(r.get("wall_seconds", 0.0) for r in mine)
        spent = sum(r["wall_seconds"] for r in timed)
        build = sum(r["encode_seconds"] + r["build_seconds"] for r in timed)
        rows.append({"config": label, "cases": len(mine),
                     **{s: sum(r.get("status") == s for r in mine) for s in STATUSES},
                     "ratio": geomean(ratios), "ratio_cases": len(ratios),
                     "median_ratio": statistics.median(at_limit) if at_limit else None,
                     "median_cases": len(at_limit), "capped": capped,
                     "wall_seconds": wall,
                     "build_share": build / spent if spent else None})
    return rows


def heuristic_rows(records: Sequence[dict]) -> list[dict]:
    """Per case with a proven optimum: the heuristic's I against it, in raw cycles (the two may
    have been solved in different units).  The optimum is a raw-cycle proof where there is one
    (a proof in units may be above the raw optimum), else the least proven I."""
    rows = []
    for (suite, case), rs in _cases(records).items():
        h = next((r for r in rs if r["config"] == "heuristic"), None)
        proven = [r for r in rs if r.get("status") == "optimal" and r.get("I")]
        if h is None or not proven:
            continue
        opt = min(proven, key=lambda r: (r.get("scale", 1) != 1, r["I"]))
        rows.append({"suite": suite, "case": case, "optimal_I": opt["I"],
                     "heuristic_I": h.get("I"), "heuristic_seconds": h.get("wall_seconds"),
                     "ratio": h["I"] / opt["I"] if h.get("I") else None})
    return rows


# ---------------------------------------------------------------------------------------------
# Markdown


def _secs(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t:.2f}" if t < 10 else f"{t:.1f}" if t < 100 else f"{t:.0f}"


def cell(r: dict | None) -> str:
    """One configuration's answer on one case: `I/L` in the units solved, a mark, seconds.
    ✓ proven (optimal, or none exists); ≥b: not proven, no I below b."""
    if r is None:
        return ""
    status, t = r.get("status"), _secs(r.get("wall_seconds"))
    if len(r.get("wall_runs", ())) > 1:
        t += f" ({_secs(r['wall_runs'][0])}-{_secs(r['wall_runs'][-1])})"
    if status == "optimal":  # proven in the units solved: in raw cycles only at scale 1
        units = "" if r.get("scale", 1) == 1 else " in units"
        return f"{r['I_units']}/{r['L_units']} ✓{units} {t}"
    if status == "infeasible":
        return f"none ✓ {t}"
    if status == "feasible":
        bound = "" if _is_heuristic(r) else f" (≥{r['lower_bound']})"
        return f"{r['I_units']}/{r['L_units']}{bound} {t}"
    if status == "unknown":
        return f"limit (≥{r['lower_bound']}) {t}" if not _is_heuristic(r) else f"none {t}"
    if status == "timeout":
        return f"killed {t}"
    return "error"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _reference(ref: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in ref.items())


def case_table(records: Sequence[dict], configs: Sequence[str]) -> str:
    """One row per case: size, scale, the proven I in raw cycles, each configuration's cell."""
    rows = []
    for (suite, case), rs in _cases(records).items():
        first = rs[0]
        best = next((r for r in rs if r.get("status") == "optimal"), None) or \
            min((r for r in rs if r.get("I") is not None), key=lambda r: r["I"], default=None)
        raw = "-" if best is None else f"{best['I']}" + ("" if best["status"] == "optimal"
                                                          else " (not proven)")
        scale = ", ".join(str(x) for x in dict.fromkeys(r["scale"] for r in rs if "scale" in r))
        mine = {r["config"]: r for r in rs}
        rows.append([f"{suite}/{case}", first.get("ops", "-"), scale or "-", raw,
                     *(cell(mine.get(c)) for c in configs), _reference(first["reference"])])
    return _table(["case", "ops", "cycles/unit", "I (cycles)", *configs, "reference"], rows)


def _decided_by(rs: list[dict]) -> dict | None:
    """The fastest record of one case that proved its answer."""
    return min((r for r in rs if r.get("status") in DECIDED), key=lambda r: r["wall_seconds"],
               default=None)


def meta_section(records: Sequence[dict], baseline: str) -> list[str]:
    """Meta's golden graphs: their recorded II (their normalized units) and wall time next to
    ours.  Different machines and different semantics (docs/importers.md): read with care."""
    rows = []
    for (suite, case), rs in _cases(records).items():
        ref = rs[0]["reference"]
        if "meta_wall_seconds" not in ref:
            continue
        best, base = _decided_by(rs), next((r for r in rs if r["config"] == baseline), None)
        ours = "-" if best is None else \
            f"{best['I_units']}/{best['L_units']} x {best['scale']} = {best['I']} cycles"
        rows.append([f"{suite}/{case}", f"{ref.get('meta_ii')}/{ref.get('meta_length')} "
                     f"(U={ref.get('meta_normalization_u')})", _secs(ref["meta_wall_seconds"]),
                     ours, "-" if best is None else f"{best['config']}: "
                     f"{_secs(best['wall_seconds'])}", cell(base),
                     "-" if base is None or base.get("status") not in DECIDED else
                     f"{base['wall_seconds'] / ref['meta_wall_seconds']:.2f}"])
    if not rows:
        return []
    return ["", "## Meta's golden graphs against their recorded results", "",
            "Meta: II/L in their normalized units (budget U) and wall seconds on an AMD EPYC "
            "9654 (benchmarks/models/meta-recorded-results.json). Ours: I/L in our units x "
            "cycles per unit, the fastest configuration that proved it, the baseline, and the "
            "baseline's time over Meta's.", "",
            _table(["case", "Meta II/L", "Meta s", "ours (proven)", "fastest proof",
                    f"baseline ({baseline})", "baseline s / Meta s"], rows)]


def hatschet_section(records: Sequence[dict], configs: Sequence[str] = ()) -> list[str]:
    """HatScheT graphs: how many were proven, the proven I against the index's lower bound
    max(1, ResMII, RecMII) (HatScheT records no results for them), and each configuration's
    wall seconds over all of them."""
    cases = [(k, rs) for k, rs in _cases(records).items() if "index_res_mii" in rs[0]["reference"]]
    if not cases:
        return []
    proven, above, open_ = 0, [], []
    for (_, case), rs in cases:
        ref, best = rs[0]["reference"], _decided_by(rs)
        bound = max(1, ref["index_res_mii"], ref["index_rec_mii"])
        if best is None:
            open_.append(f"{case} (bound {bound})")
            continue
        proven += 1
        if best["status"] == "optimal" and best["I_units"] != bound:
            above.append(f"{case}: I = {best['I_units']} > {bound}")
    out = ["", "## HatScheT graphs against the index's lower bounds", "",
           f"Proven (optimal or infeasible) by some configuration: {proven} of {len(cases)}; "
           f"proven I equal to the index's max(1, ResMII, RecMII): {proven - len(above)}."]
    out += [f"- above the bound: {x}" for x in above]
    if open_:
        out.append(f"- not proven within the timeout: {', '.join(open_)}")
    out += [f"- {line}" for line in _totals([r for _, rs in cases for r in rs], configs)]
    return out


def _totals(records: Sequence[dict], configs: Sequence[str]) -> list[str]:
    """Per configuration: cases proven, wall seconds in all and the slowest case."""
    out = []
    for c in configs:
        mine = [r for r in records if r["config"] == c and "wall_seconds" in r]
        if not mine:
            continue
        slow = max(mine, key=lambda r: r["wall_seconds"])
        out.append(f"{c}: proved {sum(r.get('status') in DECIDED for r in mine)} of "
                   f"{len(mine)} in {_secs(sum(r['wall_seconds'] for r in mine))} s in all; "
                   f"slowest {slow['case']} {_secs(slow['wall_seconds'])} s")
    return out


def meta_ddg_section(records: Sequence[dict], configs: Sequence[str]) -> list[str]:
    """Meta's raw DDGs modulo-only: per loop, the proven I against the raw lower bound
    max(ResMII, RecMII), and the time of each configuration."""
    rows, reached, decided = [], 0, 0
    for (suite, case), rs in _cases(records).items():
        if suite != "meta-ddg":
            continue
        best = _decided_by(rs)
        bound = next((r["raw_lower_bound"] for r in rs if r.get("raw_lower_bound")), None)
        decided += best is not None
        reached += best is not None and best.get("I") == bound
        mine = {r["config"]: r for r in rs}
        rows.append([case, rs[0].get("ops", "-"), bound if bound is not None else "-",
                     *(f"{cell(mine.get(c))} (I at {_secs(mine[c].get('best_I_seconds'))})"
                       if c in mine else "-" for c in configs)])
    if not rows:
        return []
    return ["", "## Meta's raw DDGs, modulo-only", "",
            f"Proven by some configuration: {decided} of {len(rows)} loops; proven I equal to "
            f"the raw lower bound max(ResMII, RecMII): {reached}. Per configuration: the "
            "answer and its time, then when its I was found (seconds from the start; the rest "
            "is the proof that L is minimal).", "",
            *(f"- {line}" for line in _totals(
                [r for r in records if r["suite"] == "meta-ddg"], configs)), "",
            _table(["loop", "ops", "lower bound", *configs], rows)]


def scaling_section(records: Sequence[dict], configs: Sequence[str]) -> list[str]:
    """Random graphs: per size and variant (joint, modulo-only), how many cases each
    configuration decided and its median time on them; and the largest size it proved every
    case of, per variant."""
    rnd = [r for r in records if r["suite"] == "random" and "ops" in r]
    if not rnd:
        return []

    def variant(r: dict) -> str:
        return r["case"].rpartition(" ")[2] if " " in r["case"] else "joint"

    rows, largest = [], []
    for kind in sorted({variant(r) for r in rnd}):
        mine_kind = [r for r in rnd if variant(r) == kind]
        for n in sorted({r["ops"] for r in mine_kind}):
            row: list = [n, kind]
            for c in configs:
                mine = [r for r in mine_kind if r["ops"] == n and r["config"] == c]
                done = sorted(r["wall_seconds"] for r in mine if comparable(r))
                median = _secs(done[len(done) // 2]) if done else "-"
                row.append(f"{len(done)}/{len(mine)}, {median}")
            rows.append(row)
        for c in configs:
            sizes: dict[int, list[bool]] = {}
            for r in mine_kind:
                if r["config"] == c and not _is_heuristic(r):
                    sizes.setdefault(r["ops"], []).append(r.get("status") in DECIDED)
            best = max((n for n, ok in sizes.items() if all(ok)), default=None)
            if sizes:
                largest.append(f"{c}, {kind}: every case of up to "
                               f"{best if best is not None else '-'} ops proven "
                               f"(sizes {', '.join(map(str, sorted(sizes)))})")
    return ["", "## Random graphs: time against size", "",
            "Per size: cases decided (heuristic: schedules found) / cases, then the median "
            "wall seconds over those.", "", *(f"- {x}" for x in largest), "",
            _table(["ops", "rules", *configs], rows)]


def _raw_lower(r: dict) -> int | None:
    """A record's lower bound on I in raw cycles: its proven bound when it solved in cycles,
    else the raw model's max(ResMII, RecMII) (a bound proven in units says nothing in cycles)."""
    if r.get("scale", 1) == 1 and r.get("lower_bound") is not None:
        return r["lower_bound"]
    return r.get("raw_lower_bound")


def scale_section(records: Sequence[dict], configs: Sequence[str]) -> list[str]:
    """The scale suite: every method's I (raw cycles) against the best lower bound any of them
    proved on the case, side by side (same run)."""
    rows = []
    for (suite, case), rs in _cases(records).items():
        if suite != "scale":
            continue
        lower = max((x for x in map(_raw_lower, rs) if x is not None), default=None)
        row: list = [case, rs[0].get("ops", "-"), "-" if lower is None else lower]
        mine = {r["config"]: r for r in rs}
        for c in configs:
            r = mine.get(c)
            if r is None or r.get("I") is None:
                row.append("-" if r is None else f"none ({r.get('status')}) "
                           f"{_secs(r.get('wall_seconds'))}")
                continue
            units = f" [{r['scale']}]" if r.get("scale", 1) != 1 else ""
            mark = " ✓" if r.get("status") == "optimal" else ""
            gap = f" ({100 * (r['I'] - lower) / max(1, lower):.1f}%)" if lower else ""
            row.append(f"{r['I']}{units}{mark}{gap} {_secs(r['wall_seconds'])}")
        rows.append(row)
    if not rows:
        return []
    return ["", "## Scale: every method against the best lower bound", "",
            "Per case: the best lower bound on I in raw cycles that any configuration proved "
            "(a search run in normalized units contributes the raw model's max(ResMII, RecMII) "
            "only); then each configuration's I in raw cycles ([K]: it solved in units of K "
            "cycles; ✓ proven optimal there), its gap to that bound, and its wall seconds.", "",
            _table(["case", "ops", "lower bound", *configs], rows)]


def markdown(header: dict, records: Sequence[dict]) -> str:
    """The whole report of a run."""
    configs, baseline = header["configs"], header["baseline"]
    bad, issues = disagreements(records), problems(records)  # over every repeat
    records = collapse(records)
    repeats = max((r.get("repeats", 1) for r in records), default=1)
    out = [f"# warpweave bench: {', '.join(header['targets'])}", "",
           f"{header['cpus']} CPUs, load average {header['load_before']} at the start, "
           f"{header.get('load_after', '?')} at the end; "
           f"warpweave {header['warpweave']}, Python {header['python']}; timeout "
           f"{header['timeout']} s per case (killed {header['grace']:.0f} s later), "
           f"normalize {header['normalize']}"
           f"{f', {repeats} repeats (the median shown, the range after it)' * (repeats > 1)}; "
           f"{header['started']}."]
    out += [f"Note: {n}" for n in header.get("notes", [])]
    out += ["", "## Agreement", ""]
    if bad:
        out += [f"- **DISAGREEMENT (a bug)**: {x}" for x in bad]
    else:
        n = sum(1 for rs in _cases(records).values() if any(r.get("status") in DECIDED
                                                             for r in rs))
        out.append(f"No disagreement: every proven answer, lower bound and schedule is "
                   f"consistent across configurations ({n} case{'s' * (n != 1)} with a proof).")
    if issues:
        out += ["", "## Errors and raw-cycle violations", ""] + [f"- {x}" for x in issues]
    out += config_section(records, configs, baseline, header.get("timeout"))
    out += heuristic_section(records)
    out += meta_section(records, baseline)
    out += meta_ddg_section(records, configs)
    out += hatschet_section(records, configs)
    out += scaling_section(records, configs)
    out += scale_section(records, configs)
    out += ["", "## Cases", "",
            "Cells: I/L in the units solved (cycles/unit column), ✓ proven optimal (or `none "
            "✓`: proven infeasible), `(≥b)` not proven, no I below b; `limit`: the search's "
            "time limit came first; `killed`: the hard limit; then wall seconds.", ""]
    out.append(case_table(records, configs))
    return "\n".join(out) + "\n"


def config_section(records: Sequence[dict], configs: Sequence[str], baseline: str,
                   limit: float | None = None) -> list[str]:
    """Counts by status and time relative to the baseline, per configuration."""
    rows = [[r["config"], r["cases"], r["optimal"], r["infeasible"],
             r["feasible"] + r["unknown"], r["timeout"], r["error"],
             "-" if r["ratio"] is None else f"{r['ratio']:.2f} ({r['ratio_cases']})",
             "-" if r["median_ratio"] is None else
             f"{r['median_ratio']:.1f} ({r['median_cases']}, {r['capped']} at limit)",
             _secs(r["wall_seconds"]),
             "-" if r["build_share"] is None else f"{100 * r['build_share']:.0f}%"]
            for r in config_rows(records, configs, baseline, limit)]
    return ["", f"## Configurations (time relative to {baseline}, same run)", "",
            "Ratio: geometric mean of wall time / baseline wall time over the cases both "
            "decided (heuristic: where it found a schedule and the baseline decided); < 1 is "
            "faster. Median at limit: the median of the same ratio over every case the "
            "baseline decided, a configuration that decided nothing counted at the timeout "
            "(a lower bound on its time). Build: share of wall time spent encoding and "
            "translating the model (runs that returned).", "",
            _table(["config", "cases", "optimal", "infeasible", "limit / no proof", "killed",
                    "error", "time ratio (cases)", "median at limit (cases)", "total s",
                    "build"], rows)]


def heuristic_section(records: Sequence[dict]) -> list[str]:
    """The heuristic's I against the proven optimum, case by case."""
    hrows = heuristic_rows(records)
    if not hrows:
        return []
    found = [r for r in hrows if r["ratio"] is not None]
    g = geomean([r["ratio"] for r in found])
    return ["", "## Heuristic against the proven optimum", "",
            f"Found a schedule on {len(found)} of {len(hrows)} cases with a proven optimum; "
            f"equal to it on {sum(r['ratio'] == 1 for r in found)}"
            + (f"; I / optimal I: geometric mean {g:.3f}, worst "
               f"{max(r['ratio'] for r in found):.3f}." if found else "."), "",
            _table(["case", "optimal I (cycles)", "heuristic I (cycles)", "ratio", "heuristic s"],
                   [[f"{r['suite']}/{r['case']}", r["optimal_I"],
                     r["heuristic_I"] if r["heuristic_I"] is not None else "none",
                     "-" if r["ratio"] is None else f"{r['ratio']:.3f}",
                     _secs(r["heuristic_seconds"])] for r in hrows])]
