"""A greedy reducer for failing models: the smallest model that still shows a failure.

`warpweave crosscheck --reduce` uses it on a disagreement, and the property tests on the model
hypothesis has shrunk (hypothesis shrinks the choices that drew a model, so an op that no edge
touches, a duplicate edge or a field the failure does not need can survive: ops are numbered, and
dropping `v2` would renumber every edge to `v3`).  The reducer works on the model document: it
tries one deletion or simplification at a time and keeps it while the failure still happens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs

from warpweave.core.formats import model_from_dict, model_to_dict
from warpweave.core.model import Model
from warpweave.errors import InputError

# Op fields the reducer tries without (each back to its default) and edge fields likewise.
OP_FIELDS = ("rrt", "uses", "regs", "footprint", "spill_cost", "async", "warps",
             "variable_latency")
EDGE_FIELDS = ("delay", "kind", "blocking", "handoff", "handoff_local", "hold")


def smaller_docs(doc: dict) -> Iterator[dict]:
    """Each document one step simpler than `doc`: an edge dropped, an op dropped with its edges,
    a field of an op or edge back to its default, an op down to one cycle, a group dropped."""
    ops, edges = doc["ops"], doc.get("edges", [])
    for k in range(len(edges)):
        yield {**doc, "edges": edges[:k] + edges[k + 1:]}
    if len(ops) > 1:
        for op in ops:
            yield {**doc, "ops": [o for o in ops if o is not op],
                   "edges": [e for e in edges if op["name"] not in (e["src"], e["dst"])]}
    for k, op in enumerate(ops):
        simpler = [{key: v for key, v in op.items() if key != f} for f in OP_FIELDS if f in op]
        if op.get("cycles", 1) > 1 and "rrt" not in op:
            simpler.append({**op, "cycles": 1})
        for s in simpler:
            yield {**doc, "ops": ops[:k] + [s] + ops[k + 1:]}
    for k, e in enumerate(edges):
        for f in EDGE_FIELDS:
            if f in e:
                yield {**doc, "edges": edges[:k] + [{key: v for key, v in e.items() if key != f}]
                       + edges[k + 1:]}
    groups = doc["machine"].get("warp_groups", [])
    if len(groups) > 1:
        vl = doc["machine"].get("variable_latency_group")
        for g in groups:
            if g["name"] != vl:
                yield {**doc, "machine": {**doc["machine"],
                                          "warp_groups": [x for x in groups if x is not g]}}


@attrs.frozen
class Reduction:
    """What `reduce_model` reached: the smallest failing model, the calls of `fails` it took,
    and whether a Ctrl-C stopped it early (then `model` is the smallest found so far)."""

    model: Model
    calls: int
    interrupted: bool = False


def reduce_model(model: Model, fails: Callable[[Model], bool], budget: int = 400) -> Reduction:
    """The smallest model reachable from `model` by steps of `smaller_docs` on which `fails`
    still holds (greedy, first step that works; at most `budget` calls of `fails`).  A
    KeyboardInterrupt (from `fails` or the user) stops it with what it has."""
    doc = model_to_dict(model)
    calls = 0
    progress = True
    try:
        while progress and calls < budget:
            progress = False
            for candidate in smaller_docs(doc):
                try:
                    smaller = model_from_dict(candidate)
                except InputError:
                    continue
                calls += 1
                if fails(smaller):
                    doc, progress = model_to_dict(smaller), True
                    break
                if calls >= budget:
                    break
    except KeyboardInterrupt:
        return Reduction(model_from_dict(doc), calls, interrupted=True)
    return Reduction(model_from_dict(doc), calls)
