"""The SpTrSV summary table and the speed-ups over serial it and Figures 1.1 and 6.1 are drawn from
(sptrsv-elasticity §5.1, §6). Speed-ups are derived at profile time, never stored."""
from __future__ import annotations

import numpy as np
import pandas as pd

from spbench.report.rows import check_columns, executions, run_times


STATUSES = ("ok", "error", "timeout", "skipped", "invalid")


SERIAL = "serial"


def serial_times(df: pd.DataFrame) -> pd.Series:
    """Serial baseline per dataset (Figures 1.1 and 6.1: speed-up over Serial).

    The :func:`~spbench.report.rows.run_times` time of algorithm ``serial`` at cores 1;
    a dataset whose serial rows all ran at a higher core count uses its lowest one (the serial
    kernel is single-threaded whatever ``cores`` says). Datasets without an ok serial run are
    absent. Index: dataset; rows must share one execution.
    """
    times = run_times(df[df["algorithm"].astype(str) == SERIAL])
    times = times[times["algorithm"] == SERIAL]
    first = times.sort_values(["dataset", "cores"]).drop_duplicates("dataset")
    return first.set_index("dataset")["solve_time"].rename("serial_time")


def speedups(df: pd.DataFrame) -> pd.DataFrame:
    """Speed-up over serial of every non-serial (dataset, cores, algorithm) of one execution.

    speed-up = :func:`serial_times` of the dataset / the algorithm's median time there.
    Datasets without a serial baseline are left out. Columns: ``dataset, cores, algorithm,
    solve_time, serial_time, speedup``.
    """
    times = run_times(df)
    times = times[times["algorithm"] != SERIAL]
    out = times.merge(serial_times(df).reset_index(), on="dataset", how="inner")
    out["speedup"] = out["serial_time"] / out["solve_time"]
    return out.sort_values(["algorithm", "cores", "dataset"], ignore_index=True)


def _with_intervals(out: pd.DataFrame, df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Add ``solve_ms_ci_low/high`` (bootstrap 95% interval of the median solve time over the raw
    repetitions, or over the runs) and ``speedup_ci_low/high`` (of the ratio of medians serial /
    this point) after their columns."""
    from spbench.report.intervals import median_interval, point_samples, ratio_of_medians

    rows = df[(df["status"] == "ok").to_numpy()].assign(execution=executions(df)[(df["status"] == "ok").to_numpy()])
    if "kernel" in keys:
        rows = rows.assign(kernel=rows["kernel"].astype(object).where(rows["kernel"].notna(), "").astype(str))
    samples = {}
    for key, part in rows.groupby(keys, sort=True):
        values = point_samples(part, "solve_time", "solve_times")
        if values.size:
            samples[tuple(str(k) for k in key)] = values
    serial = {}
    for key in sorted(samples, key=lambda k: (k[0], k[-1], int(k[keys.index("cores")]))):
        if key[1] == SERIAL:
            serial.setdefault((key[0], key[-1]), samples[key])
    cis = {name: [] for name in ("solve_ms_ci_low", "solve_ms_ci_high", "speedup_ci_low", "speedup_ci_high")}
    for rec in out[keys].itertuples(index=False):
        key = tuple(str(v) for v in rec)
        mine, base = samples.get(key), serial.get((key[0], key[-1]))
        low, high = median_interval(mine) if mine is not None else (np.nan, np.nan)
        ratio = (ratio_of_medians(mine, base) if mine is not None and base is not None
                 and key[1] != SERIAL else None)
        cis["solve_ms_ci_low"].append(low * 1e3)
        cis["solve_ms_ci_high"].append(high * 1e3)
        cis["speedup_ci_low"].append(ratio.low if ratio else np.nan)
        cis["speedup_ci_high"].append(ratio.high if ratio else np.nan)
    at = out.columns.get_loc("speedup")
    for i, name in enumerate(cis):
        out.insert(at + 1 + i, name, cis[name])
    return out


def sptrsv_summary(df: pd.DataFrame) -> pd.DataFrame:
    """SpTrSV summary per (dataset, algorithm, kernel, cores, execution).

    Columns: the keys, ``n, nnz, wavefronts, supersteps`` (first value recorded),
    ``solve_ms`` (median ``solve_time`` of the ok rows, ms), ``speedup`` (over the dataset's
    serial baseline of the same execution, see :func:`serial_times`), their bootstrap 95%
    intervals ``solve_ms_ci_low/high`` and ``speedup_ci_low/high``, ``schedule_ms`` (median
    ``schedule_time`` of the ok rows, ms) and one count column per status. ``kernel`` is a key
    only when the rows have that column.
    """
    check_columns(df)
    d = pd.DataFrame({
        "dataset": df["dataset"].astype(str),
        "algorithm": df["algorithm"].astype(str),
        "cores": df["cores"].astype(int),
        "execution": executions(df),
        "status": df["status"].astype(str),
    }, index=df.index)
    keys = ["dataset", "algorithm", "cores", "execution"]
    if "kernel" in df.columns:
        d["kernel"] = df["kernel"].astype(object).where(df["kernel"].notna(), "").astype(str)
        keys = ["dataset", "algorithm", "kernel", "cores", "execution"]
    ok = d["status"] == "ok"
    for col in ("n", "nnz", "wavefronts", "supersteps"):
        d[col] = pd.to_numeric(df[col], errors="coerce") if col in df.columns else np.nan
    for col, src in (("solve_ms", "solve_time"), ("schedule_ms", "schedule_time")):
        values = (pd.to_numeric(df[src], errors="coerce") if src in df.columns
                  else pd.Series(np.nan, index=df.index))
        d[col] = (values * 1e3).where(ok)
    groups = d.groupby(keys, sort=True)
    out = groups[["n", "nnz", "wavefronts", "supersteps"]].first()
    out["solve_ms"] = groups["solve_ms"].median()
    out["schedule_ms"] = groups["schedule_ms"].median()
    counts = groups["status"].value_counts().unstack(fill_value=0)
    extra = sorted(c for c in counts.columns if c not in STATUSES)
    counts = counts.reindex(columns=[*STATUSES, *extra], fill_value=0).astype(int)
    out = out.join(counts).reset_index()
    baseline = pd.Series(np.nan, index=out.index)
    for kind in out["execution"].unique():
        serial = serial_times(df[(executions(df) == kind).to_numpy()])
        rows = out["execution"] == kind
        baseline[rows] = out.loc[rows, "dataset"].map(serial) * 1e3
    out.insert(out.columns.get_loc("solve_ms") + 1, "speedup", baseline / out["solve_ms"])
    out = _with_intervals(out, df, keys)
    for col in ("n", "nnz", "wavefronts", "supersteps"):
        if (out[col].dropna() % 1 == 0).all():
            out[col] = out[col].astype("Int64")
    return out
