"""A fuzzer over model files: random valid models (tests/strategies.py) with random parts
replaced, removed or blown up to extreme magnitudes, given to `warpweave solve` with a time limit.
Whatever the file, the answer is one line and exit 2, or a schedule the verifier accepts (exit 0,
or 3 at a limit), or none (exit 1 or 3) - within the time limit and a grace, never a traceback.

Its budget is fixed (EXAMPLES under the ci profile, 20 times more under --thorough); what it
found is in the battery (tests/test_robustness_battery.py) as named cases.
"""

from __future__ import annotations

import json
import math
import time

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from warpweave.cli import main

from .crosscheck_support import scaled
from .strategies import model_docs

EXAMPLES = 25
LIMIT, GRACE = 2.0, 8.0  # the solve's --time-limit; its grace (a loaded machine, forks)

MAGNITUDES = st.sampled_from([0, 1, -1, 2, 3, 255, 2**31, 10**5, 10**7, 10**9, 10**9 + 1,
                              2**63, 10**18, 10**30])
VALUES = st.one_of(
    MAGNITUDES, st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
    st.booleans(), st.none(), st.lists(st.integers(-2, 3), max_size=2),
    st.dictionaries(st.sampled_from(["tc", "sfu", "x", ""]), st.integers(-1, 3), max_size=2))


def places(doc) -> list[tuple[object, object]]:
    """Every (container, key or index) in a document."""
    out: list[tuple[object, object]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else \
            enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            out.append((node, key))
            stack.append(value)
    return out


@st.composite
def broken_models(draw) -> str:
    """A model file's text: a valid model with one to three parts changed (a number made
    extreme, a value replaced by any JSON value, a key removed or added), now and then cut."""
    doc = draw(model_docs(max_ops=4, max_cycles=3))
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["magnitude", "magnitude", "value", "remove", "add"]))
        where = places(doc)
        numbers = [(c, k) for c, k in where if type(c[k]) is int]
        container, key = draw(st.sampled_from(numbers if action == "magnitude" and numbers
                                              else where))
        if action == "remove":
            del container[key]
        elif action == "add" and isinstance(container, dict):
            container[draw(st.sampled_from(["cycles", "delay", "distance", "uses", "extra"]))] \
                = draw(VALUES)
        else:
            container[key] = draw(MAGNITUDES if action == "magnitude" else VALUES)
    text = json.dumps(doc)
    if draw(st.integers(0, 9)) == 0:  # now and then, broken text
        text = text[:draw(st.integers(0, len(text)))]
    return text


@settings(scaled(EXAMPLES), suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(text=broken_models())
def test_any_model_file_gets_one_line_or_a_verified_answer(text, tmp_path_factory, capsys):
    d = tmp_path_factory.mktemp("fuzz")
    model = d / "m.json"
    model.write_text(text)
    tick = time.perf_counter()
    code = main(["solve", str(model), "--time-limit", str(LIMIT), "--json"])
    seconds = time.perf_counter() - tick
    out, err = capsys.readouterr()
    event(f"exit {code}")
    assert "Traceback" not in err
    assert seconds < LIMIT + GRACE
    if code == 2:
        assert err.startswith("warpweave: error: ") and err.count("\n") == 1, err
        return
    assert code in (0, 1, 3), (code, err)
    answer = json.loads(out)
    if answer["I"] is None:
        assert code != 0
        return
    schedule = d / "s.json"
    schedule.write_text(out)
    valid = main(["verify", str(model), str(schedule)]) == 0
    raw_valid = answer.get("scale", {}).get("raw_valid", True)
    verdict = capsys.readouterr().out
    assert valid or not raw_valid, verdict
    assert code == 3 or math.isfinite(answer["I"])
