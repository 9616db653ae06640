"""Bootstrap 95% intervals for ratios of medians and their geometric means.

A point's ratio is median(new) / median(base) over its raw samples: the timed repetitions of
one run (``solve_times``), or one value per run when the point has several runs. Its interval
is scipy.stats.bootstrap's percentile interval, each side resampled on its own. A geometric
mean over points (datasets, matched points) is bootstrapped in two stages, points and then the
repetitions inside each point (Davison & Hinkley 1997, §3.8): resample the points, and take for
replicate b each chosen point's b-th bootstrap ratio. Seeded: the same rows give the same
interval.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

CONFIDENCE = 0.95
RESAMPLES = 4999
SEED = 0


@dataclass(frozen=True)
class Ratio:
    """median(new) / median(base) with its interval (NaN bounds when a side has one sample) and
    its bootstrap replicates (None then)."""

    value: float
    low: float
    high: float
    replicates: np.ndarray | None


def raw_samples(values) -> np.ndarray:
    """Finite positive numbers of a row's raw list (a list, an array or its JSON text)."""
    if isinstance(values, str):
        try:
            values = json.loads(values)
        except json.JSONDecodeError:
            return np.empty(0)
    if not isinstance(values, (list, tuple, np.ndarray)):
        return np.empty(0)
    out = pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce").to_numpy(float)
    return out[np.isfinite(out) & (out > 0)]


def point_samples(rows: pd.DataFrame, metric: str, raw: str | None = None) -> np.ndarray:
    """The samples of one point's ok rows: the raw repetitions of its single run (column ``raw``,
    e.g. ``solve_times``), or with several runs one value per run (the median of its raw list, or
    ``metric`` itself)."""
    per_run = []
    for _, row in rows.iterrows():
        reps = raw_samples(row[raw]) if raw and raw in rows.columns else np.empty(0)
        if len(rows) == 1 and reps.size:
            return reps
        value = float(np.median(reps)) if reps.size else pd.to_numeric(row.get(metric), errors="coerce")
        if value is not None and np.isfinite(value) and value > 0:
            per_run.append(float(value))
    return np.asarray(per_run, dtype=float)


def _median_ratio(base, new, axis=-1):
    return np.median(new, axis=axis) / np.median(base, axis=axis)


def ratio_of_medians(base: Sequence[float], new: Sequence[float], *, seed: int = SEED,
                     resamples: int = RESAMPLES, confidence: float = CONFIDENCE) -> Ratio:
    """median(new) / median(base) with a bootstrap percentile interval (both sides resampled)."""
    base, new = np.asarray(base, float), np.asarray(new, float)
    if base.size == 0 or new.size == 0:
        raise ValueError("ratio_of_medians needs at least one sample on each side")
    value = float(np.median(new) / np.median(base))
    if base.size < 2 or new.size < 2:
        return Ratio(value, float("nan"), float("nan"), None)
    res = stats.bootstrap((base, new), _median_ratio, vectorized=True, n_resamples=resamples,
                          method="percentile", confidence_level=confidence,
                          rng=np.random.default_rng(seed))
    return Ratio(value, float(res.confidence_interval.low), float(res.confidence_interval.high),
                 np.asarray(res.bootstrap_distribution, float))


def median_interval(samples: Sequence[float], *, seed: int = SEED, resamples: int = RESAMPLES,
                    confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Bootstrap percentile interval of the median of ``samples`` (NaN bounds for fewer than two)."""
    samples = np.asarray(samples, float)
    if samples.size < 2:
        return float("nan"), float("nan")
    res = stats.bootstrap((samples,), np.median, n_resamples=resamples, method="percentile",
                          confidence_level=confidence, rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def geomean_interval(ratios: Sequence[Ratio], *, seed: int = SEED,
                     confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(geometric mean of the ratios, low, high): two-stage bootstrap over the points and, within a
    point, over its replicates (a point without replicates contributes its ratio every time).
    Bounds are NaN for fewer than two points and no replicates."""
    if not ratios:
        return float("nan"), float("nan"), float("nan")
    logs = np.log([r.value for r in ratios])
    value = float(np.exp(logs.mean()))
    sizes = {r.replicates.size for r in ratios if r.replicates is not None}
    if len(ratios) < 2 and not sizes:
        return value, float("nan"), float("nan")
    B = min(sizes) if sizes else RESAMPLES
    reps = np.stack([np.log(r.replicates[:B]) if r.replicates is not None else np.full(B, lg)
                     for r, lg in zip(ratios, logs)])          # points × B
    rng = np.random.default_rng(seed + 1)
    chosen = rng.integers(0, len(ratios), size=(B, len(ratios)))
    means = reps[chosen, np.arange(B)[:, None]].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return value, float(np.exp(low)), float(np.exp(high))


def mann_whitney(base: Sequence[float], new: Sequence[float]) -> float:
    """Two-sided Mann–Whitney U p-value of base against new (NaN with fewer than two samples a side)."""
    base, new = np.asarray(base, float), np.asarray(new, float)
    if base.size < 2 or new.size < 2:
        return float("nan")
    return float(stats.mannwhitneyu(base, new, alternative="two-sided").pvalue)
