"""The median of repeated timings of a call after warm-up runs, as the benchmarks and the cost-model
calibrations time their kernels (page faults and plan caches are paid before the first timed call)."""
from __future__ import annotations

import time

import numpy as np

__all__ = ["median_time"]


def median_time(fn, repeats: int, warmup: int = 1) -> float:
    """Seconds of ``fn()``: the median of ``repeats`` timed calls after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))
