"""The median of repeated timings of a call after warm-up runs, as the benchmarks and the cost-model
calibrations time their kernels (page faults and plan caches are paid before the first timed call)."""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

__all__ = ["collect_timings", "median_time", "interleaved_medians"]

_collectors: list[list] = []


@contextmanager
def collect_timings():
    """Inside the block every :func:`median_time` call also appends its timed list to the yielded
    list: the repeated timings whose spread tells a calibration the machine was busy
    (:func:`spbench.machine.load.timing_spread`)."""
    groups: list = []
    _collectors.append(groups)
    try:
        yield groups
    finally:  # by identity: nested collectors' lists may be equal (both empty) yet distinct
        _collectors[:] = [g for g in _collectors if g is not groups]


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


def interleaved_medians(samplers, rounds: int, warmup: int = 1) -> list[float]:
    """Median seconds of each of ``samplers`` (callables returning the seconds of one timed sample)
    over ``rounds`` rounds that visit every sampler in turn, after ``warmup`` untimed visits.

    On a shared or virtual machine the speed of one kernel drifts over tens of seconds (here the same
    cold TTM's 10-second median moved between 30 and 46 ms within three quiet minutes); timing case
    after case would give each case its own moment of that drift and a fit over the cases would
    read the drift as a cost. Round-robin, every case sees the same mix of moments."""
    for sample in samplers:
        for _ in range(warmup):
            sample()
    times: list[list[float]] = [[] for _ in samplers]
    for _ in range(rounds):
        for i, sample in enumerate(samplers):
            times[i].append(float(sample()))
    for groups in _collectors:
        groups.extend(times)
    return [float(np.median(t)) for t in times]
