"""Paired comparisons of conditions: per-case deltas and the cluster bootstrap."""
