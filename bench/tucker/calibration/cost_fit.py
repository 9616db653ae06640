"""The fit of the Tucker cost-model calibration (:mod:`.calibrate`, :mod:`.calibrate_ttm`):
non-negative least squares on relative errors (a cost term is never negative; small and large
samples weigh alike)."""
from __future__ import annotations

import numpy as np

__all__ = ["nnls_relative"]


def nnls_relative(X: np.ndarray, t: np.ndarray, scale: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Non-negative least squares on errors relative to ``scale`` (default ``t``); returns
    (coefficients, median |rel err|)."""
    from scipy.optimize import nnls
    w = 1.0 / np.maximum(t if scale is None else scale, 1e-12)
    coef, _ = nnls(X * w[:, None], t * w)
    pred = X @ coef
    return coef, float(np.median(np.abs(pred - t) / t))
