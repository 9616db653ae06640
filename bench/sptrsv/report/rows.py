"""SpTrSV result rows as paper 2's tables read them (§6.2-6.5): the ok rows, their data set group,
the geometric mean and the paper's core count nearest to ours.

Data set groups come from the data set name (:func:`spbench.report.labels.dataset_group`):
``name+ichol`` is iChol, ``name+metis`` METIS, a plain name SuiteSparse; a generator's matrix is
"generated" and a user file "other", so neither pools with a paper group nor sits beside its
printed numbers.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from spbench.report import labels
from spbench.sptrsv.report import paper_values as paper
from spbench.report.rows import executions, series_labels
from spbench.sptrsv.report.summary import SERIAL

GROUP_ORDER = {g: i for i, g in enumerate(paper.GROUPS)}


def geomean(values) -> float:
    """Geometric mean of positive numbers (NaN for none)."""
    v = np.asarray(list(values), dtype=float)
    return float(np.exp(np.log(v).mean())) if v.size else float("nan")


def _numeric(df: pd.DataFrame, column: str) -> pd.Series:
    if column not in df.columns:
        return pd.Series(np.nan, index=df.index)
    return pd.to_numeric(df[column], errors="coerce")


def _kernels(df: pd.DataFrame) -> pd.Series:
    if "kernel" not in df.columns:
        return pd.Series("", index=df.index, dtype=object)
    return df["kernel"].astype(object).where(df["kernel"].notna(), "").astype(str)


def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The ok rows with the columns every table needs, a fresh index (duplicates are allowed)."""
    df = df.reset_index(drop=True)
    out = pd.DataFrame({
        "dataset": df["dataset"].astype(str),
        "group": df["dataset"].astype(str).map(labels.dataset_group),
        "algorithm": df["algorithm"].astype(str),
        "label": series_labels(df).astype(str),
        "kernel": _kernels(df),
        "cores": pd.to_numeric(df["cores"], errors="coerce"),
        "execution": executions(df).astype(str),
        "status": df["status"].astype(str),
        "solve_time": _numeric(df, "solve_time"),
        "schedule_time": _numeric(df, "schedule_time"),
        "supersteps": _numeric(df, "supersteps"),
        "wavefronts": _numeric(df, "wavefronts"),
        "nnz": _numeric(df, "nnz"),
        "solve_times": df["solve_times"] if "solve_times" in df.columns else None,
        "schedule_noisy": df["schedule_noisy"] if "schedule_noisy" in df.columns else None,
    })
    return out[(out["status"] == "ok") & out["cores"].notna()].astype({"cores": int})


def noisy_schedules(rows: pd.DataFrame) -> tuple[str, int]:
    """(one sentence, count) of how many of ``rows``' scheduling times were noisy: each is the
    median of a point's calls (key ``schedule_repeats``), noisy when the slowest call passed
    ``execute.NOISY_SPREAD`` × that median (Fig. 6.2's slope, Table 6.3's amortisation)."""
    from spbench.sptrsv.execute import NOISY_MIN_CALLS, NOISY_SPREAD

    flags = [bool(v) for v in rows["schedule_noisy"] if isinstance(v, (bool, np.bool_))]
    noisy, unjudged = sum(flags), len(rows) - len(flags)
    text = (f"{noisy} of {len(rows)} scheduling times noisy (a point's slowest call above {NOISY_SPREAD:g}× "
            "the median of its calls, which is its time; config key schedule_repeats)")
    if unjudged:
        text += f"; {unjudged} from fewer than {NOISY_MIN_CALLS} calls, too few to tell"
    return text + ".", noisy


def sort_groups(df: pd.DataFrame, *keys: str) -> pd.DataFrame:
    """``df`` in the paper's group order (SuiteSparse, iChol, METIS, then the others), then ``keys``."""
    order = df["group"].map(lambda g: GROUP_ORDER.get(g, len(GROUP_ORDER)))
    return (df.assign(_order=order).sort_values(["_order", "group", *keys])
            .drop(columns="_order").reset_index(drop=True))


def nearest_cores(choices: Sequence[int], cores: int) -> int | None:
    """The core count among ``choices`` closest to ``cores`` on a log scale (ties: the smaller)."""
    choices = sorted(set(int(c) for c in choices))
    if not choices or cores < 1:
        return None
    return min(choices, key=lambda c: (abs(math.log(c) - math.log(cores)), c))


def timed_repetitions(row_times, fallback: float) -> list[float]:
    """A row's timed repetitions (``solve_times``) or, without them, its median ``solve_time``."""
    times = row_times
    if isinstance(times, str):
        try:
            times = json.loads(times)
        except json.JSONDecodeError:
            times = None
    if isinstance(times, (list, tuple, np.ndarray)):
        values = [float(t) for t in times if t is not None and np.isfinite(float(t))]
        if values:
            return values
    return [float(fallback)] if np.isfinite(fallback) else []


def default_cores(rows: pd.DataFrame) -> int | None:
    """The largest core count of a parallel (not serial) row: the tables' default."""
    parallel = rows[rows["algorithm"] != SERIAL]
    return int(parallel["cores"].max()) if len(parallel) else None
