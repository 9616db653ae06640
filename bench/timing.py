"""The median of repeated timings of a call after warm-up runs, as the benchmarks and the cost-model
calibrations time their kernels (page faults and plan caches are paid before the first timed call)."""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

__all__ = ["collect_timings", "median_time"]

_collectors: list[list] = []


@contextmanager
def collect_timings():
    """Inside the block every :func:`median_time` call also appends its timed list to the yielded
    list: the repeated timings whose spread tells a calibration the machine was busy
    (:func:`spbench.machine_load.timing_spread`)."""
    groups: list = []
    _collectors.append(groups)
    try:
        yield groups
    finally:
        _collectors.remove(groups)


def median_time(fn, repeats: int, warmup: int = 1) -> float:
    """Seconds of ``fn()``: the median of ``repeats`` timed calls after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    for groups in _collectors:
        groups.append(times)
    return float(np.median(times))
