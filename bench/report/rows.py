"""The reductions every profile of SpTrSV-style rows starts from (sptrsv-elasticity §5.1): which rows
count (status ``ok``, one ``execution``), the curve each row belongs to, and one time per (dataset,
cores, algorithm), the median over its repeats."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd


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
