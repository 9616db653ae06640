"""Dolan–Moré performance profiles of result rows (paper 2, Figure 5.1 and §6.1), from the row
reductions of :mod:`spbench.report.rows`.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from spbench.report.rows import INSTANCE, check_columns, run_times, series_labels

DEFAULT_TAUS = np.linspace(1.0, 3.0, 201)
"""Threshold grid of Figure 5.1: τ from 1 to 3."""

RATIO_RTOL = 1e-12
"""Relative slack in ``ratio <= τ`` so that a time of exactly 2 × best counts at τ = 2."""


def performance_profile(df: pd.DataFrame, taus: Sequence[float] | np.ndarray = DEFAULT_TAUS, *,
                        exclude: Iterable[str] = ("serial",), min_cores: int = 2) -> pd.DataFrame:
    """Performance profile of Figure 5.1: fraction of runs within τ × the best run.

    An instance is one (dataset, cores) pair with ``cores >= min_cores``. Its best time is the
    least :func:`run_times` time over all algorithms on it. For each algorithm the result gives,
    for every τ, the fraction of instances on which its time is ``<= τ × best``; ties at the
    best count as best for every tied algorithm. The comparison allows a relative slack of
    :data:`RATIO_RTOL` against floating-point rounding of the ratio.

    By default the profile compares the parallel schedulers as the paper does: algorithms named
    in ``exclude`` (``serial``) and single-core instances are left out; pass ``exclude=()`` and
    ``min_cores=1`` to include them.

    Dolan–Moré convention: an algorithm with no ok run on an instance (missing, error, timeout,
    skipped, invalid) counts as a failure there, within no τ, so every algorithm's fraction has
    the same denominator. An instance no algorithm solved has no best and is left out. Every
    algorithm present in ``df`` (any status) gets a curve, all zero if it never succeeded.

    Returns a DataFrame with columns ``tau, algorithm, fraction``, sorted by algorithm then τ.
    """
    check_columns(df)
    taus = np.asarray(taus, dtype=float)
    if taus.ndim != 1 or taus.size == 0 or np.any(taus < 1):
        raise ValueError("taus must be a non-empty 1-D sequence of thresholds >= 1")
    excluded = set(exclude)
    df = df.assign(algorithm=series_labels(df).to_numpy()).drop(columns="kernel", errors="ignore")
    keep = ~df["algorithm"].isin(excluded) & (df["cores"].astype(int) >= min_cores)
    rows = df[keep]
    algorithms = sorted(set(rows["algorithm"]))
    columns = ["tau", "algorithm", "fraction"]
    times = run_times(rows)
    if times.empty or not algorithms:
        return pd.DataFrame({c: pd.Series(dtype=float if c != "algorithm" else object)
                             for c in columns})
    wide = times.pivot_table(index=INSTANCE, columns="algorithm", values="solve_time",
                             aggfunc="first").reindex(columns=algorithms)
    ratios = wide.div(wide.min(axis=1), axis=0).fillna(np.inf)
    frames = []
    for algorithm in algorithms:
        r = ratios[algorithm].to_numpy()
        fraction = (r[None, :] <= taus[:, None] * (1 + RATIO_RTOL)).mean(axis=1)
        frames.append(pd.DataFrame({"tau": taus, "algorithm": algorithm, "fraction": fraction}))
    return pd.concat(frames, ignore_index=True)[columns]
