"""The statistics of `spbench compare`: is a point's change between two sweeps beyond noise?

The unit of replication is the run: two sweeps differ by the machine's state between runs
(load, frequency, memory placement) more than repetitions inside one run differ, so a point's
repetitions are summarised by their run's median and the runs' log-medians are compared by
Welch's t (a t-interval of the log ratio). The test asks whether the change is beyond the
threshold band [1/(1+t), 1+t] (H0: |log ratio| <= log(1+t); with t = 0 the ordinary two-sided
test of no change), so a flagged point's interval lies outside the band. The p-values of all
tested points are adjusted by Benjamini–Hochberg (``scipy.stats.false_discovery_control``), which
keeps the expected share of false flags among the flags at the stated rate. A point with fewer
than :data:`MIN_RUNS` runs on a side has no between-run spread to test against: inconclusive.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: runs per side a point needs for its t-test (one run has no between-run spread)
MIN_RUNS = 2
CONFIDENCE = 0.95
#: default false discovery rate of the Benjamini–Hochberg adjustment
FDR = 0.05


@dataclass(frozen=True)
class PointTest:
    """One point's comparison: the ratio NEW/BASE of its runs' geometric-mean medians, its
    t-interval, and the p-value of a change beyond the threshold (NaN when inconclusive)."""

    ratio: float
    low: float
    high: float
    p_value: float
    runs_base: int
    runs_new: int
    log_se: float = math.nan
    df: float = math.nan

    @property
    def tested(self) -> bool:
        return min(self.runs_base, self.runs_new) >= MIN_RUNS


def compare_point(base_runs: Sequence[float], new_runs: Sequence[float], threshold: float,
               confidence: float = CONFIDENCE) -> PointTest:
    """Welch's t on the log of each run's value (a run's median): ratio exp(mean log new − mean
    log base), its ``confidence`` t-interval, and the two-sided p-value of |log ratio| > log(1 +
    threshold). With fewer than MIN_RUNS runs on a side: the ratio of the runs' geometric means,
    NaN interval and p-value."""
    lb, ln = np.log(np.asarray(base_runs, float)), np.log(np.asarray(new_runs, float))
    if lb.size == 0 or ln.size == 0:
        raise ValueError("compare_point needs at least one run on each side")
    d = float(ln.mean() - lb.mean())
    nb, nn = lb.size, ln.size
    if min(nb, nn) < MIN_RUNS:
        return PointTest(math.exp(d), math.nan, math.nan, math.nan, nb, nn)
    vb, vn = lb.var(ddof=1) / nb, ln.var(ddof=1) / nn
    se = math.sqrt(vb + vn)
    band = math.log1p(threshold)
    if se == 0:  # every run gave the same value on both sides (a count, a simulated volume)
        p = 0.0 if abs(d) > band else 1.0
        return PointTest(math.exp(d), math.exp(d), math.exp(d), p, nb, nn, 0.0, math.inf)
    df = (vb + vn) ** 2 / (vb ** 2 / (nb - 1) + vn ** 2 / (nn - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    beyond_up = float(stats.t.sf((d - band) / se, df))      # H0: log ratio <= band
    beyond_down = float(stats.t.cdf((d + band) / se, df))   # H0: log ratio >= -band
    p = min(1.0, 2 * min(beyond_up, beyond_down))
    return PointTest(math.exp(d), math.exp(d - half), math.exp(d + half), p, nb, nn, se, df)


def adjusted_p_values(tests: Sequence[PointTest]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values over the tested points (NaN for inconclusive ones)."""
    p = np.array([t.p_value if t.tested else np.nan for t in tests], float)
    mask = np.isfinite(p)
    out = np.full(p.shape, np.nan)
    if mask.any():
        out[mask] = stats.false_discovery_control(p[mask], method="bh")
    return out


def verdict(test: PointTest, adjusted_p: float, fdr: float, higher_is_better: bool = False) -> str:
    """"regression", "improvement", "inconclusive" (too few runs) or "unchanged" (no change beyond
    the threshold shown at false discovery rate ``fdr``); for a larger-is-better metric a rise is
    the improvement."""
    if not test.tested:
        return "inconclusive"
    if not adjusted_p <= fdr:
        return "unchanged"
    return "improvement" if (test.ratio > 1) == higher_is_better else "regression"


def geomean_interval(tests: Sequence[PointTest], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(geometric mean of the points' ratios, low, high) over a fixed set of points: the mean log
    ratio's variance is the sum of the points' (each point's runs are independent of another's),
    its degrees of freedom by Welch–Satterthwaite. NaN bounds when any point is inconclusive."""
    if not tests:
        return math.nan, math.nan, math.nan
    m = len(tests)
    mean = float(np.mean(np.log([t.ratio for t in tests])))
    if not all(t.tested for t in tests):
        return math.exp(mean), math.nan, math.nan
    parts = np.array([t.log_se ** 2 for t in tests]) / m ** 2
    var = float(parts.sum())
    if var == 0:
        return math.exp(mean), math.exp(mean), math.exp(mean)
    df = var ** 2 / sum(v ** 2 / t.df for v, t in zip(parts, tests) if v > 0)
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * math.sqrt(var)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)
