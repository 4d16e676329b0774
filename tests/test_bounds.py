"""ResMII, exact RecMII with the critical cycle, and the search limits on known graphs."""

from __future__ import annotations

from fractions import Fraction

import pytest

from warpweave.core.bounds import bounds, critical_cycle, i_upper, res_mii
from warpweave.core.formats import model_from_dict


def model(ops, edges=(), units=None):
    return model_from_dict({"machine": {"units": units or {"tc": 1, "sfu": 1},
                                        "warp_groups": [{"name": "g0"}]},
                            "ops": ops, "edges": list(edges)})


def test_figure_1(fa_model):
    b = bounds(fa_model)
    assert (b.res_mii, b.res_unit, b.rec_mii, b.lower, b.min_length) == (2, "tc", 1, 2, 3)
    assert b.critical.describe() == "O -> O" and b.critical.ratio == 1


def test_res_mii_counts_every_row_and_capacity():
    m = model([{"name": "X", "cycles": 4, "rrt": [{"tc": 1}, {}, {}, {"tc": 1}]},
               {"name": "Y", "cycles": 3, "uses": {"sfu": 2}},
               {"name": "Z", "uses": {"tc": 1}}], units={"tc": 1, "sfu": 4})
    assert res_mii(m) == (3, "tc")  # tc: 2 + 1 = 3 slots; sfu: 6 / 4 -> 2


@pytest.mark.parametrize("edges, ratio, cycle", [
    # one cycle of distance 2: delay 7 over 2 iterations -> 7/2, RecMII 4
    ([("A", "B", 3, 0), ("B", "C", 4, 0), ("C", "A", 0, 2)], Fraction(7, 2), "A -> B -> C -> A"),
    # two cycles: 5/1 beats 9/3
    ([("A", "B", 5, 0), ("B", "A", 0, 1), ("B", "C", 4, 0), ("C", "A", 0, 2)], Fraction(5),
     "A -> B -> A"),
    # a self loop with distance 3 and a long delay
    ([("C", "C", 10, 3), ("A", "B", 1, 0)], Fraction(10, 3), "C -> C"),
])
def test_rec_mii_is_the_exact_maximum_cycle_ratio(edges, ratio, cycle):
    ops = [{"name": n} for n in "ABC"]
    m = model(ops, [{"src": s, "dst": d, "delay": w, "distance": k} for s, d, w, k in edges])
    crit = critical_cycle(m)
    assert crit.ratio == ratio and crit.describe() == cycle
    assert bounds(m).rec_mii == -(-ratio.numerator // ratio.denominator)


def test_rec_mii_on_random_graphs_matches_enumeration():
    """Against brute force: all simple cycles of small random graphs (deterministic seeds)."""
    import itertools
    import random
    for seed in range(40):
        rnd = random.Random(seed)
        names = [f"v{i}" for i in range(5)]
        edges = []
        for s, d in itertools.product(names, names):
            if rnd.random() < 0.35:
                edges.append({"src": s, "dst": d, "delay": rnd.randint(0, 6),
                              "distance": rnd.randint(1, 3) if names.index(d) <= names.index(s)
                              else rnd.randint(0, 2)})
        m = model([{"name": n} for n in names], edges)
        best = Fraction(0)
        for k in range(1, 6):
            for perm in itertools.permutations(names, k):
                if perm[0] != min(perm):
                    continue
                hops = list(zip(perm, perm[1:] + perm[:1], strict=True))
                # the best edge for each hop may differ: enumerate parallel-edge choices
                options = [[e for e in m.edges if (e.src, e.dst) == hop] for hop in hops]
                for choice in itertools.product(*options):
                    dist = sum(e.distance for e in choice)
                    if dist:
                        best = max(best, Fraction(sum(e.delay for e in choice), dist))
        crit = critical_cycle(m)
        assert (crit.ratio if crit else Fraction(0)) == best, seed


def test_i_upper_is_the_sum_of_extents():
    m = model([{"name": "A", "cycles": 3, "uses": {"tc": 1}, "spill_cost": 2},
               {"name": "B", "uses": {"sfu": 1}}],
              [{"src": "A", "dst": "B", "delay": 6}, {"src": "B", "dst": "A", "delay": 0,
                                                      "distance": 1, "kind": "order"}])
    assert i_upper(m) == (6 + 2) + 1

