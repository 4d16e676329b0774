"""Benchmarks: suites of models run under a matrix of backend x encoding configurations (and the
heuristic scheduler), each case in a worker process with a hard timeout; results as JSON lines
and a markdown report of ratios measured in the same run (`warpweave bench`)."""

from __future__ import annotations

from warpweave.bench.configs import Config, matrix
from warpweave.bench.results import Writer, read_results, run_header
from warpweave.bench.runner import Settings, run_case, run_matrix
from warpweave.bench.suites import SUITES, Case, select
from warpweave.bench.summary import disagreements, markdown

__all__ = ["SUITES", "Case", "Config", "Settings", "Writer", "disagreements", "markdown",
           "matrix", "read_results", "run_case", "run_header", "run_matrix", "select"]
