"""The machine a run measures on: its facts, whether it was busy, and the median of repeated timings."""
