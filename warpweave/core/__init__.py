"""The model, schedules, the straight-line program Q, the verifier, bounds, and the search."""
