"""Dolan–Moré performance profiles of result rows (paper 2, Figure 5.1 and §6.1).

Also the two reductions every profile output starts from: which rows count (status ``ok``,
one ``execution``) and one time per (dataset, cores, algorithm), the median over its repeats.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

DEFAULT_TAUS = np.linspace(1.0, 3.0, 201)
"""Threshold grid of Figure 5.1: τ from 1 to 3."""

RATIO_RTOL = 1e-12
"""Relative slack in ``ratio <= τ`` so that a time of exactly 2 × best counts at τ = 2."""

REQUIRED_COLUMNS = ("dataset", "algorithm", "cores", "status", "solve_time")
INSTANCE = ["dataset", "cores"]


def check_columns(df: pd.DataFrame, columns: Iterable[str] = REQUIRED_COLUMNS) -> None:
    """Raise ValueError naming the columns ``df`` lacks."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        have = sorted(map(str, df.columns))
        raise ValueError(f"result rows lack column(s) {missing}; have {have}")


def executions(df: pd.DataFrame) -> pd.Series:
    """The ``execution`` of each row; rows without one count as ``measured``."""
    if "execution" not in df.columns:
        return pd.Series("measured", index=df.index, dtype=object)
    return df["execution"].astype(object).where(df["execution"].notna(), "measured")


def series_labels(df: pd.DataFrame) -> pd.Series:
    """Name of the curve each row belongs to: its ``algorithm``.

    An algorithm that appears with more than one ``kernel`` in ``df`` (say growlocal run with
    both the BSP and SSP kernels) gets one curve per kernel, labelled ``algorithm/kernel``,
    so that different kernels are never pooled into one median.
    """
    algo = df["algorithm"].astype(str)
    if "kernel" not in df.columns:
        return algo
    kernel = df["kernel"].astype(object).where(df["kernel"].notna(), "")
    n_kernels = kernel.groupby(algo.to_numpy()).transform("nunique")
    return algo.where(n_kernels <= 1, algo + "/" + kernel.astype(str))


def run_times(df: pd.DataFrame) -> pd.DataFrame:
    """One solve time per (dataset, cores, algorithm): the median over its ``ok`` repeats.

    Each row's ``solve_time`` is already the median of its timed repetitions (DESIGN §5);
    several rows of one point (``repeat`` 0, 1, ...) are reduced by their median again.
    Rows whose status is not ``ok`` or whose time is not a finite positive number are left out.
    ``algorithm`` in the result is the curve label of :func:`series_labels`, taken over all of
    ``df`` so that it does not depend on which rows failed.
    Raises ValueError when the ok rows mix measured and simulated executions.
    """
    check_columns(df)
    is_ok = (df["status"] == "ok").to_numpy()
    labels = series_labels(df)[is_ok]
    ok = df[is_ok]
    kinds = sorted(set(executions(ok)))
    if len(kinds) > 1:
        raise ValueError(
            f"rows mix executions {kinds}; profile measured and simulated rows separately")
    times = pd.to_numeric(ok["solve_time"], errors="coerce")
    keep = np.isfinite(times) & (times > 0)
    out = pd.DataFrame({
        "dataset": ok["dataset"].astype(str),
        "cores": ok["cores"].astype(int),
        "algorithm": labels,
        "solve_time": times,
    })[keep]
    return (out.groupby(["dataset", "cores", "algorithm"], as_index=False, sort=True)["solve_time"]
            .median())


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
