"""The kernel library: builders that return models."""
