"""Fitting helpers of the Tucker cost-model calibration (:mod:`.calibrate`, :mod:`.calibrate_ttm`):
the median of repeated timings after a warm-up, and non-negative least squares on relative errors
(a cost term is never negative; small and large samples weigh alike)."""
from __future__ import annotations

import time

import numpy as np

__all__ = ["median_time", "nnls_relative"]


def median_time(fn, reps: int) -> float:
    fn()                                   # warm-up (page faults, plan caches)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def nnls_relative(X: np.ndarray, t: np.ndarray, scale: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Non-negative least squares on errors relative to ``scale`` (default ``t``); returns
    (coefficients, median |rel err|)."""
    from scipy.optimize import nnls
    w = 1.0 / np.maximum(t if scale is None else scale, 1e-12)
    coef, _ = nnls(X * w[:, None], t * w)
    pred = X @ coef
    return coef, float(np.median(np.abs(pred - t) / t))
