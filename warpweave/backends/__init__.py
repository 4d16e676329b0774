"""Thin adapters from the IR to solvers, and exports to standard file formats."""
