"""Shared fixtures: paths to the examples and a small model builder."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def fa_model():
    from warpweave.core.formats import load_model
    return load_model(EXAMPLES / "fa-simplified.json")
