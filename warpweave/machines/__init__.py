"""Machine models with cost models whose figures have sources."""
