"""The solver-neutral IR and the encodings of time into it."""
