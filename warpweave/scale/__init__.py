"""Scheduling loops of 100 to 1,000 ops: GauS (a differentiable relaxation, with PyTorch), large-
neighbourhood search over the exact model, and the lower bounds that every answer's gap is
measured against."""
