"""Theorem 6.1's bounds for Lite (tucker-lite §6), checked on every Lite row: a leaf both the
sweep side (simulated rows) and the MPI job (measured rows) use."""
from __future__ import annotations


def theorem_6_1_slack(mode_metrics: list, nnz: int, ranks: int) -> dict:
    """Smallest slack over modes of Theorem 6.1's bounds (tucker-lite §6): E_max ≤ ⌈|E|/P⌉,
    R_sum ≤ L_n + P, R_max ≤ ⌈L_n/P⌉ + 2; a negative slack means the bound is broken."""
    limit = -(-nnz // ranks)
    return {
        "e_max": min(limit - m["e_max"] for m in mode_metrics),
        "r_sum": min(m["slices"] + ranks - m["r_sum"] for m in mode_metrics),
        "r_max": min(-(-m["slices"] // ranks) + 2 - m["r_max"] for m in mode_metrics),
    }
