"""The rest of paper 2's evaluation (§6.2–6.5) from SpTrSV result rows.

One function per table or figure, each returning tidy numbers computed from the rows:

- :func:`barrier_reduction`: Table 6.1, geometric mean of wavefronts / supersteps;
- :func:`ssp_over_bsp`: Table 6.2, geometric mean of t_bsp / t_ssp on one schedule;
- :func:`schedule_points`, :func:`fit_slopes`, :func:`scheduling_time_figure`: Figure 6.2;
- :func:`amortisation`, :func:`amortisation_table`: Eq. 6.1 and Table 6.3;
- :func:`speedup_band_figure`: Figure 1.1, the speed-up figure with the 10–90 percentile band.

:func:`write_paper_sections` writes them all into a profile folder and returns the REPORT.md
sections, with the numbers the paper prints (:mod:`spbench.profile.paper_values`) beside ours.
Data set groups come from the data set name: ``name+ichol`` is iChol, ``name+metis`` METIS,
a plain name SuiteSparse (:func:`dataset_group`).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.profile import labels, paper_values as paper  # noqa: E402
from spbench.profile.figures import (  # noqa: E402
    _colors, plain_log_ticks, save_figure, speedup_vs_cores)
from spbench.profile.perfprofile import executions, series_labels  # noqa: E402
from spbench.profile.sptrsv_standins import matrix_comparison  # noqa: E402
from spbench.profile.tables import (  # noqa: E402
    SERIAL, format_markdown, write_csv, write_table, write_text)

GROUP_SUFFIXES = {"ichol": "iChol", "metis": "METIS"}
GROUP_ORDER = {g: i for i, g in enumerate(paper.GROUPS)}
MIN_SIZES, MIN_SPAN = 3, 4.0
"""Figure 6.2: a fitted slope needs this many matrix sizes spanning this factor in nnz."""
P2P = ("spmp",)
"""Algorithms that synchronise point to point: no barriers, so not in Table 6.1."""


# ---------------------------------------------------------------------------------- helpers

def dataset_group(name: str) -> str:
    """The paper's data set group of a matrix (:func:`spbench.profile.labels.dataset_group`):
    SuiteSparse, iChol (``+ichol``) or METIS (``+metis``) for the paper's matrices and their
    stand-ins; "generated" for a generator's matrix and "other" for a user file, so neither pools
    with a paper group nor sits beside its printed numbers."""
    return labels.dataset_group(name)


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


def _base(df: pd.DataFrame) -> pd.DataFrame:
    """The ok rows with the columns every table needs, a fresh index (duplicates are allowed)."""
    df = df.reset_index(drop=True)
    out = pd.DataFrame({
        "dataset": df["dataset"].astype(str),
        "group": df["dataset"].astype(str).map(dataset_group),
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
    })
    return out[(out["status"] == "ok") & out["cores"].notna()].astype({"cores": int})


def _sort_groups(df: pd.DataFrame, *keys: str) -> pd.DataFrame:
    order = df["group"].map(lambda g: GROUP_ORDER.get(g, len(GROUP_ORDER)))
    return (df.assign(_order=order).sort_values(["_order", "group", *keys])
            .drop(columns="_order").reset_index(drop=True))


def _nearest(choices: Sequence[int], cores: int) -> int | None:
    """The core count among ``choices`` closest to ``cores`` on a log scale (ties: the smaller)."""
    choices = sorted(set(int(c) for c in choices))
    if not choices or cores < 1:
        return None
    return min(choices, key=lambda c: (abs(math.log(c) - math.log(cores)), c))


def _paper_cell(value: float | None, cores: int | None) -> str:
    if value is None or cores is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.2f} ({cores})"


def _times_of(row_times, fallback: float) -> list[float]:
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


def _default_cores(rows: pd.DataFrame) -> int | None:
    parallel = rows[rows["algorithm"] != SERIAL]
    return int(parallel["cores"].max()) if len(parallel) else None


# ---------------------------------------------------------------------------------- Table 6.1

def barrier_reduction(df: pd.DataFrame) -> pd.DataFrame:
    """Table 6.1: geometric mean over matrices of ``wavefronts / supersteps``.

    Per (group, cores, algorithm) over the ok rows of schedulers that synchronise by barriers:
    serial, the point-to-point SpMP and rows run with the ``p2p`` kernel are left out. A
    schedule's superstep count does not depend on the kernel or the execution, so one value per
    (dataset, algorithm, cores) is taken (the median of its rows). Columns: ``group, cores,
    algorithm, matrices, reduction`` and, for ElasticDivide, ``reduction_x2`` (its barriers are
    weak with staleness 2: the paper counts them twice, §6.3), NaN for the others.
    """
    rows = _base(df)
    rows = rows[(rows["algorithm"] != SERIAL) & ~rows["algorithm"].isin(P2P)
                & (rows["kernel"] != "p2p")]
    rows = rows[(rows["supersteps"] > 0) & (rows["wavefronts"] > 0)]
    columns = ["group", "cores", "algorithm", "matrices", "reduction", "reduction_x2"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    per_matrix = (rows.groupby(["group", "dataset", "algorithm", "cores"], as_index=False)
                  [["wavefronts", "supersteps"]].median())
    per_matrix["ratio"] = per_matrix["wavefronts"] / per_matrix["supersteps"]
    out = (per_matrix.groupby(["group", "cores", "algorithm"])["ratio"]
           .agg(matrices="size", reduction=geomean).reset_index())
    out["reduction_x2"] = np.where(out["algorithm"] == "elastic_divide",
                                   out["reduction"] * paper.STALENESS, np.nan)
    return _sort_groups(out, "cores", "algorithm")[columns]


def barrier_reduction_display(table: pd.DataFrame) -> pd.DataFrame:
    """Table 6.1 wide, one row per (group, cores): this run's values per algorithm, then the
    paper's at the same group and the printed core count nearest to ours (in brackets)."""
    order = list(paper.ALGORITHM_NAMES)
    algorithms = sorted(set(table["algorithm"]),
                        key=lambda a: (order.index(a) if a in order else len(order), a))
    records = []
    for (group, cores), part in table.groupby(["group", "cores"], sort=False):
        rec: dict[str, object] = {"group": group, "cores": int(cores),
                                  "matrices": int(part["matrices"].max())}
        values = part.set_index("algorithm")
        for a in algorithms:
            rec[f"this run: {a}"] = (float(values.at[a, "reduction"]) if a in values.index
                                     else np.nan)
            if a == "elastic_divide":
                rec["this run: elastic_divide ×2"] = (float(values.at[a, "reduction_x2"])
                                                     if a in values.index else np.nan)
        near = _nearest([c for g, c in paper.TABLE_6_1 if g == group], int(cores))
        cells = paper.TABLE_6_1.get((group, near), {})
        for a in ("hdagg", "growlocal", "elastic_divide"):
            rec[f"paper (cores): {paper.ALGORITHM_NAMES[a]}"] = _paper_cell(cells.get(a), near)
        doubled = cells.get("elastic_divide")
        rec["paper (cores): ElasticDivide ×2"] = _paper_cell(
            None if doubled is None else doubled * paper.STALENESS, near)
        records.append(rec)
    return pd.DataFrame(records)


# ---------------------------------------------------------------------------------- Table 6.2

def ssp_over_bsp(df: pd.DataFrame, algorithm: str = "elastic_divide") -> pd.DataFrame:
    """Table 6.2: geometric mean over matrices of ``t_bsp / t_ssp`` for one scheduler.

    Per (execution, dataset, cores) where ``algorithm`` ran ok with both the ``bsp`` and the
    ``ssp`` kernel, the median solve time of each kernel gives one ratio (> 1: the SSP kernel
    is faster); the ratios are pooled per (execution, group, cores). Columns: ``execution,
    group, cores, matrices, ssp_over_bsp``; empty without such a pair.
    """
    rows = _base(df)
    rows = rows[(rows["algorithm"] == algorithm) & rows["kernel"].isin(["bsp", "ssp"])
                & np.isfinite(rows["solve_time"]) & (rows["solve_time"] > 0)]
    columns = ["execution", "group", "cores", "matrices", "ssp_over_bsp"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    wide = rows.pivot_table(index=["execution", "group", "dataset", "cores"], columns="kernel",
                            values="solve_time", aggfunc="median")
    if not {"bsp", "ssp"} <= set(wide.columns):
        return pd.DataFrame(columns=columns)
    wide = wide.dropna(subset=["bsp", "ssp"])
    if wide.empty:
        return pd.DataFrame(columns=columns)
    ratio = (wide["bsp"] / wide["ssp"]).rename("ratio").reset_index()
    out = (ratio.groupby(["execution", "group", "cores"])["ratio"]
           .agg(matrices="size", ssp_over_bsp=geomean).reset_index())
    return _sort_groups(out, "cores", "execution")[columns]


def ssp_over_bsp_display(table: pd.DataFrame) -> pd.DataFrame:
    """Table 6.2 with the paper's value for the same group on each architecture at the printed
    core count nearest to ours (in brackets)."""
    records = []
    for rec in table.to_dict("records"):
        out = {"execution": rec["execution"], "group": rec["group"], "cores": int(rec["cores"]),
               "matrices": int(rec["matrices"]), "this run: t_bsp / t_ssp": rec["ssp_over_bsp"]}
        for arch in paper.ARCHITECTURES:
            near = _nearest([c for a, c in paper.TABLE_6_2 if a == arch], int(rec["cores"]))
            value = paper.TABLE_6_2.get((arch, near), {}).get(rec["group"])
            out[f"paper ({arch}, cores)"] = _paper_cell(value, near)
        records.append(out)
    return pd.DataFrame(records)


# ---------------------------------------------------------------------------------- Figure 6.2

def schedule_points(df: pd.DataFrame, cores: int | None = None) -> pd.DataFrame:
    """Points of Figure 6.2: scheduling time (ms) against nnz, one per (algorithm, matrix).

    Rows of ``cores`` (default: the largest core count of a parallel row) with a positive
    ``schedule_time`` and ``nnz``; serial has no schedule. The scheduler's time does not depend
    on the kernel or on how the solve was executed, so rows of one (algorithm, dataset) are
    pooled by the median. Columns: ``algorithm, dataset, group, cores, nnz, schedule_ms``.
    """
    rows = _base(df)
    rows = rows[rows["algorithm"] != SERIAL]
    columns = ["algorithm", "dataset", "group", "cores", "nnz", "schedule_ms"]
    if cores is None:
        cores = _default_cores(rows)
    rows = rows[(rows["cores"] == cores) & (rows["schedule_time"] > 0) & (rows["nnz"] > 0)]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    out = (rows.groupby(["algorithm", "dataset", "group", "cores"], as_index=False)
           .agg(nnz=("nnz", "median"), schedule_ms=("schedule_time", "median")))
    out["schedule_ms"] *= 1e3
    return out.sort_values(["algorithm", "nnz", "dataset"], ignore_index=True)[columns]


def fit_slopes(points: pd.DataFrame) -> pd.DataFrame:
    """ℓ2 fit of ``log10(schedule_ms) = m log10(nnz) + c`` per algorithm (Figure 6.2).

    Columns: ``algorithm, points, slope, intercept`` (log10 of ms), ``paper_slope`` (what §6.5
    states: HDagg 1.38–1.56, the others ≤ 1.0). A slope needs at least :data:`MIN_SIZES`
    distinct nnz spanning at least :data:`MIN_SPAN` × (a line through two points is no fit):
    otherwise slope and intercept are NaN ("n/a" in the report).
    """
    records = []
    for algorithm, part in points.groupby("algorithm", sort=True):
        x = np.log10(part["nnz"].to_numpy(dtype=float))
        y = np.log10(part["schedule_ms"].to_numpy(dtype=float))
        if len(np.unique(x)) >= MIN_SIZES and x.max() - x.min() >= np.log10(MIN_SPAN):
            slope, intercept = np.polyfit(x, y, 1)
        else:
            slope = intercept = np.nan
        records.append({"algorithm": algorithm, "points": len(part), "slope": float(slope),
                        "intercept": float(intercept),
                        "paper_slope": _paper_slope(str(algorithm))})
    return pd.DataFrame(records, columns=["algorithm", "points", "slope", "intercept",
                                          "paper_slope"])


def _paper_slope(algorithm: str) -> str:
    stated = paper.FIG_6_2_SLOPES.get(algorithm)
    if stated is None:
        return ""
    low, high = stated
    return f"≤ {high:g}" if low is None else f"{low:g}–{high:g}"


def scheduling_time_figure(df: pd.DataFrame, out_dir: str | os.PathLike,
                           cores: int | None = None, stem: str = "scheduling_time"
                           ) -> list[Path]:
    """Figure 6.2: scheduling time (ms) against nnz on log-log axes with the fitted lines.

    Writes ``<stem>.png/.pdf/.csv`` (the :func:`schedule_points`) and ``<stem>_slopes.md/.csv``
    (:func:`fit_slopes`); the legend gives each algorithm's slope m. Returns [] when there is no
    point to plot.
    """
    points = schedule_points(df, cores)
    if points.empty:
        return []
    out_dir = Path(out_dir)
    slopes = fit_slopes(points).set_index("algorithm")
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = _colors(df)  # the colours of the other figures where a curve is one algorithm
    fig, ax = plt.subplots(figsize=(7.6, 4.2), layout="constrained")
    for i, (algorithm, part) in enumerate(points.groupby("algorithm", sort=True)):
        color = colors.get(algorithm, cycle[i % len(cycle)])
        m, c = slopes.at[algorithm, "slope"], slopes.at[algorithm, "intercept"]
        label = f"{algorithm} (m n/a)" if np.isnan(m) else f"{algorithm} (m = {m:.2f})"
        ax.scatter(part["nnz"], part["schedule_ms"], color=color, s=18, label=label)
        if not np.isnan(m):
            x = np.geomspace(part["nnz"].min(), part["nnz"].max(), 50)
            ax.plot(x, 10 ** (m * np.log10(x) + c), color=color, linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of non-zeroes")
    ax.set_ylabel("schedule compute time [ms]")
    data = labels.provenance_tag(df[df["dataset"].astype(str).isin(set(points["dataset"]))])
    ax.set_title(f"Scheduling time vs nnz, {int(points['cores'].iloc[0])} cores, "
                 "ℓ2 fit log y = m log x + c" + (f"\n{data}" if data else ""), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    fig.canvas.draw()  # the limits autoscaling chose, for the tick labels
    plain_log_ticks(ax.xaxis)
    plain_log_ticks(ax.yaxis)
    fig.legend(fontsize=8, loc="outside right upper")
    written = save_figure(fig, out_dir, stem, points)
    return written + write_table(slopes.reset_index(), out_dir / f"{stem}_slopes")


# ---------------------------------------------------------------------------------- Table 6.3

def amortisation(df: pd.DataFrame, cores: int | None = None) -> pd.DataFrame:
    """Eq. 6.1 per matrix: solves after which scheduling + parallel solves beat serial solves.

    ``n = mean(t_schedule) / (mean(t_serial) - mean(t_parallel))`` when ``mean(t_serial) >
    mean(t_parallel)``, else +∞. The means are arithmetic (the paper's bars) over all timed
    repetitions (``solve_times``; a row without them contributes its ``solve_time``) of the ok
    rows of one (execution, dataset, curve label, cores); the serial baseline is the dataset's
    ok ``serial`` run at its lowest core count in the same execution. ``cores``: default the
    largest core count of a parallel row. Columns: ``execution, group, dataset, algorithm``
    (curve label), ``kernel, cores, schedule_time, serial_time, parallel_time, amortisation``
    (times in s); rows without a serial baseline or a schedule time are left out.
    """
    rows = _base(df)
    columns = ["execution", "group", "dataset", "algorithm", "kernel", "cores", "schedule_time",
               "serial_time", "parallel_time", "amortisation"]
    rows = rows[np.isfinite(rows["solve_time"])]  # `execution: schedule` rows have no solve to amortise
    if cores is None:
        cores = _default_cores(rows)
    serial = rows[rows["algorithm"] == SERIAL]
    parallel = rows[(rows["algorithm"] != SERIAL) & (rows["cores"] == cores)]
    if serial.empty or parallel.empty:
        return pd.DataFrame(columns=columns)
    lowest = serial.groupby(["execution", "dataset"])["cores"].transform("min")
    first = serial[serial["cores"] == lowest]
    baseline = {key: _mean_times(part)
                for key, part in first.groupby(["execution", "dataset"])}
    records = []
    for (execution, dataset, label), part in parallel.groupby(["execution", "dataset", "label"]):
        t_serial = baseline.get((execution, dataset), np.nan)
        t_parallel = _mean_times(part)
        sched = part["schedule_time"][np.isfinite(part["schedule_time"])
                                      & (part["schedule_time"] >= 0)]
        if not (np.isfinite(t_serial) and np.isfinite(t_parallel)) or sched.empty:
            continue
        t_schedule = float(sched.mean())
        n = t_schedule / (t_serial - t_parallel) if t_serial > t_parallel else math.inf
        records.append({"execution": execution, "group": part["group"].iloc[0],
                        "dataset": dataset, "algorithm": label,
                        "kernel": "+".join(sorted(set(part["kernel"]) - {""})),
                        "cores": int(cores),
                        "schedule_time": t_schedule, "serial_time": t_serial,
                        "parallel_time": t_parallel, "amortisation": n})
    if not records:
        return pd.DataFrame(columns=columns)
    return _sort_groups(pd.DataFrame(records), "algorithm", "dataset", "execution")[columns]


def _mean_times(rows: pd.DataFrame) -> float:
    times: list[float] = []
    for row_times, median in zip(rows["solve_times"], rows["solve_time"]):
        times += _times_of(row_times, float(median))
    times = [t for t in times if t > 0]
    return float(np.mean(times)) if times else float("nan")


def amortisation_table(per_matrix: pd.DataFrame) -> pd.DataFrame:
    """Table 6.3: median over matrices of :func:`amortisation` per (execution, algorithm, group).

    +∞ counts as larger than every number: the median is +∞ when the middle value (of an even
    count, the upper of the two middle values) is +∞. Columns: ``execution, group, algorithm, kernel,
    cores, matrices, never (matrices with +∞), amortisation_median``.
    """
    columns = ["execution", "group", "algorithm", "kernel", "cores", "matrices", "never",
               "amortisation_median"]
    if per_matrix.empty:
        return pd.DataFrame(columns=columns)
    out = (per_matrix.groupby(["execution", "group", "algorithm", "kernel", "cores"])
           ["amortisation"]
           .agg(matrices="size", never=lambda v: int(np.isinf(v).sum()),
                amortisation_median=lambda v: float(np.median(v.to_numpy(dtype=float))))
           .reset_index())
    return _sort_groups(out, "algorithm", "execution")[columns]


def format_amortisation(value: float) -> str:
    """An amortisation count for a table: ``+inf`` (never pays off) or four significant digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return "+inf" if math.isinf(value) and value > 0 else f"{value:.4g}"


def amortisation_display(table: pd.DataFrame) -> pd.DataFrame:
    """Table 6.3 with the paper's median per architecture (one socket) beside this run's.

    A row gets the paper's value only when it ran the kernel the paper ran that scheduler with
    (:data:`~spbench.profile.paper_values.PAPER_KERNELS`), "—" otherwise.
    """
    records = []
    for rec in table.to_dict("records"):
        base = str(rec["algorithm"]).partition("/")[0]
        kernel = rec.get("kernel") or ""
        same_run = not kernel or paper.PAPER_KERNELS.get(base) in (None, kernel)
        out = {"execution": rec["execution"], "group": rec["group"],
               "algorithm": rec["algorithm"], "kernel": rec.get("kernel", ""),
               "matrices": int(rec["matrices"]),
               "never (+inf)": int(rec["never"]),
               f"this run ({int(rec['cores'])} cores)": format_amortisation(
                   rec["amortisation_median"])}
        for arch in paper.ARCHITECTURES:
            value = paper.TABLE_6_3.get((arch, rec["group"]), {}).get(base) if same_run else None
            out[f"paper ({arch}, {paper.SINGLE_SOCKET[arch]})"] = (
                "—" if value is None else f"{value:.2f}")
        records.append(out)
    return pd.DataFrame(records)


# ---------------------------------------------------------------------------------- Figure 1.1

def speedup_band_figure(df: pd.DataFrame, out_dir: str | os.PathLike,
                        band: Sequence[float] = (10, 90), stem: str | None = None
                        ) -> list[Path]:
    """Figure 1.1: :func:`~spbench.profile.figures.speedup_vs_cores` with another ``band``.

    Written as ``<stem>.*`` (default ``speedup_p<lo>_p<hi>``; ``<stem>_<execution>.*`` when the
    rows hold both executions) so that the 25–75 figure's ``speedup.*`` files stay as they are.
    Warnings of :func:`speedup_vs_cores` pass through.
    """
    lo, hi = (float(b) for b in band)
    stem = stem or f"speedup_p{lo:g}_p{hi:g}"
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=out_dir, prefix=f".{stem}."))
    written = []
    try:
        for path in speedup_vs_cores(df, scratch, band=band):
            target = out_dir / (stem + path.name[len("speedup"):])
            os.replace(path, target)
            written.append(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return written


# ---------------------------------------------------------------------------------- report

def provenance_lines(df: pd.DataFrame) -> list[str]:
    """Where the rows come from: measured on this machine or simulated; synthetic stand-ins."""
    kinds = executions(df.reset_index(drop=True)).value_counts().sort_index()
    lines = []
    for kind, count in kinds.items():
        what = ("measured on this machine" if kind == "measured"
                else "simulated by the cost model, not measured" if kind == "simulated"
                else kind)
        lines.append(f"- {count} row{'s' if count != 1 else ''} {what} (execution: {kind}).")
    if "dataset_source" in df.columns:
        source = (df[["dataset", "dataset_source"]].astype(str)
                  .drop_duplicates().groupby("dataset_source")["dataset"]
                  .agg(lambda v: ", ".join(sorted(set(v)))))
        synthetic = source.get("synthetic")
        real = source.get("real")
        if synthetic:
            lines.append(f"- Synthetic stand-ins for the paper's matrices (dataset_source "
                         f"synthetic): {synthetic}. Their numbers are not the paper's matrices'.")
        if real:
            lines.append(f"- Real matrices (dataset_source real): {real}.")
        if not synthetic and not real:
            lines.append("- dataset_source is not recorded as real or synthetic.")
    else:
        lines.append("- The rows do not record dataset_source (real or synthetic).")
    lines.append("- Data set groups follow the name: `+ichol` iChol, `+metis` METIS, "
                 "otherwise SuiteSparse; a generator's matrix (lap2d-5pt, ...) is \"generated\", "
                 "never beside the paper's groups. Stand-ins are marked \"(stand-in)\" wherever "
                 "a matrix is named. The paper's numbers come from other machines "
                 "(ARM Kunpeng 920, x86 EPYC 7763, x86 Xeon 6238T) and other core counts: "
                 "compare trends, not digits.")
    return lines


def _staleness(df: pd.DataFrame) -> set[int]:
    """The staleness values recorded by the ok elastic_divide rows (empty when not recorded)."""
    if "staleness" not in df.columns:
        return set()
    mine = df[(df["algorithm"].astype(str) == "elastic_divide") & (df["status"] == "ok")]
    values = pd.to_numeric(mine["staleness"], errors="coerce").dropna()
    return {int(v) for v in values}


def _section(title: str, intro: str, table_md: str, links: str, extra: list[str] = ()) -> list[str]:
    return [f"## {title}", "", intro, "", table_md, links, "", *extra]


def _paper_6_1_md() -> str:
    wide = paper.table_6_1().pivot_table(index=["group", "cores"], columns="algorithm",
                                         values="reduction").reset_index()
    wide = _sort_groups(wide, "cores")
    wide["ElasticDivide ×2"] = wide["elastic_divide"] * paper.STALENESS
    wide = wide.rename(columns={a: paper.ALGORITHM_NAMES[a]
                                for a in ("hdagg", "growlocal", "elastic_divide")})
    return format_markdown(wide[["group", "cores", "HDagg", "GrowLocal", "ElasticDivide",
                                 "ElasticDivide ×2"]])


def _paper_6_2_md() -> str:
    wide = paper.table_6_2().pivot_table(index=["architecture", "cores"], columns="group",
                                         values="ssp_over_bsp").reset_index()
    return format_markdown(wide[["architecture", "cores", *paper.GROUPS]])


def _paper_6_3_md() -> str:
    records = [{"architecture": f"{arch} ({paper.SINGLE_SOCKET[arch]} cores)", "group": g,
                **{paper.ALGORITHM_NAMES[a]: ("—" if v is None else f"{v:.2f}")
                   for a, v in cells.items()}}
               for (arch, g), cells in paper.TABLE_6_3.items()]
    return format_markdown(pd.DataFrame(records))


def _details(summary: str, body: str) -> list[str]:
    return ["<details><summary>" + summary + "</summary>", "", body, "</details>", ""]


def _figure_lines(png: Path, alt: str) -> list[str]:
    return [f"![{alt}]({png.name})", "",
            f"[PDF]({png.with_suffix('.pdf').name}) · "
            f"[plotted points (CSV)]({png.with_suffix('.csv').name})", ""]


def write_paper_sections(df: pd.DataFrame, out_dir: str | os.PathLike, *,
                         cores: int | None = None, amortisation_cores: int | None = None
                         ) -> tuple[list[Path], list[str], list[str]]:
    """Write Figure 1.1, Tables 6.1–6.3 and Figure 6.2 for one SpTrSV sweep into ``out_dir``.

    Returns (written paths, REPORT.md lines, notes). A table or figure whose inputs are missing
    (no barrier schedulers, no bsp/ssp pair, no schedule times, no serial baseline) is not
    written; a one-line note says why instead. ``cores`` picks Figure 6.2's core count,
    ``amortisation_cores`` Table 6.3's (both default to the largest parallel core count).
    Files: ``speedup_p10_p90.*``, ``table_6_1.md/.csv``, ``table_6_2.md/.csv``,
    ``scheduling_time.*`` with ``scheduling_time_slopes.md/.csv``, ``table_6_3.md/.csv`` and
    ``amortisation_per_matrix.csv``. The ``.md`` tables show the paper's printed values beside
    ours; the ``.csv`` files hold this run's numbers only.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    notes: list[str] = []
    lines = ["## Provenance of these numbers", "", *provenance_lines(df), ""]
    matrices = matrix_comparison(df)  # the matrices solved beside Tables A.1-A.3
    if not matrices.empty:
        written.append(write_csv(matrices, out_dir / "matrices_vs_paper.csv"))
        lines += _details("The matrices beside the paper's Tables A.1-A.3 (n, nnz of the lower triangle, "
                          "average wavefront = n / wavefronts)", format_markdown(matrices))

    # Figure 1.1: the 10-90 band.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the same warnings as the 25-75 figure's, said there
        paths = speedup_band_figure(df, out_dir, band=(10, 90))
    written += paths
    pngs = [p for p in paths if p.suffix == ".png"]
    if not pngs:
        notes.append("Figure 1.1 (speed-up, 10–90 band): no serial baseline or no parallel "
                     "rows, not drawn.")
    for png in pngs:
        suffix = png.stem[len("speedup_p10_p90"):].lstrip("_")
        lines += [f"## Speed-up over serial, 10–90 percentile band (paper Figure 1.1)"
                  + (f", {suffix}" if suffix else ""), "",
                  "Geometric mean over matrices; the shaded band spans the 10th to 90th "
                  "percentile (Figure 6.1 above uses the 25th to 75th).", "",
                  *_figure_lines(png, "Speed-up, 10-90 band")]
    quotes = paper.quoted_figures()
    quotes["algorithm"] = quotes["algorithm"].map(paper.ALGORITHM_NAMES)
    lines += _details("Speed-ups the paper's text quotes from Figures 6.1 and 1.1",
                      format_markdown(quotes))

    # Table 6.1
    t61 = barrier_reduction(df)
    if t61.empty:
        notes.append("Table 6.1 (barrier reduction): no ok rows of a barrier scheduler with "
                     "wavefronts and supersteps, table not written.")
    else:
        display = barrier_reduction_display(t61)
        written.append(write_text(out_dir / "table_6_1.md", format_markdown(display)))
        written.append(write_csv(t61, out_dir / "table_6_1.csv"))
        lines += _section(
            "Synchronisation barriers relative to wavefronts (paper Table 6.1)",
            "Geometric mean over matrices of wavefronts / supersteps per data set group and "
            "core count (SpMP and p2p rows have no barriers). ElasticDivide's barriers are weak "
            f"with staleness {paper.STALENESS}: as the paper suggests, its ×{paper.STALENESS} "
            "column is the comparable one. \"paper (cores)\" columns: the paper's value for "
            "the same group at the printed core count nearest to ours (in brackets; the paper "
            "names no architecture, a schedule depends on matrix and cores only).",
            format_markdown(display),
            "[CSV (this run)](table_6_1.csv)",
            _details("The paper's Table 6.1 as printed", _paper_6_1_md()))

        staleness = _staleness(df)
        if staleness and staleness != {paper.STALENESS}:
            notes.append(f"Table 6.1: elastic_divide ran with staleness "
                         f"{', '.join(map(str, sorted(staleness)))}; the ×{paper.STALENESS} "
                         f"column follows the paper's staleness {paper.STALENESS}.")

    # Table 6.2
    t62 = ssp_over_bsp(df)
    if t62.empty:
        notes.append("Table 6.2 (SSP over BSP kernel): no elastic_divide rows run with both the "
                     "bsp and the ssp kernel on the same data set and cores, table not written.")
    else:
        display = ssp_over_bsp_display(t62)
        written.append(write_text(out_dir / "table_6_2.md", format_markdown(display)))
        written.append(write_csv(t62, out_dir / "table_6_2.csv"))
        lines += _section(
            "SSP kernel over BSP kernel on ElasticDivide's schedule (paper Table 6.2)",
            "Geometric mean over matrices of t_bsp / t_ssp (median solve times), the same "
            "ElasticDivide schedule run by both kernels; > 1 means overlapping synchronisation "
            "and compute pays. \"paper (arch, cores)\" columns: the paper's value for the same "
            "group at the printed core count nearest to ours (in brackets).",
            format_markdown(display), "[CSV (this run)](table_6_2.csv)",
            _details("The paper's Table 6.2 as printed", _paper_6_2_md()))

    # Figure 6.2
    paths = scheduling_time_figure(df, out_dir, cores=cores)
    if not paths:
        notes.append("Figure 6.2 (scheduling time vs nnz): no ok parallel rows with a positive "
                     "schedule_time and nnz, not drawn.")
    else:
        written += paths
        slopes = fit_slopes(schedule_points(df, cores))
        unfit = sorted(slopes.loc[slopes["slope"].isna(), "algorithm"])
        if unfit:
            notes.append(f"Figure 6.2: no slope (n/a) for {', '.join(unfit)}: a fit needs at least "
                         f"{MIN_SIZES} matrix sizes spanning {MIN_SPAN:g}× in nnz.")
        shown = slopes.assign(
            slope=[f"{v:.3f}" if np.isfinite(v) else "n/a" for v in slopes["slope"]],
            intercept=[f"{v:.3f}" if np.isfinite(v) else "n/a" for v in slopes["intercept"]])
        lines += ["## Scheduling time against nnz (paper Figure 6.2)", "",
                  "One point per (algorithm, matrix) at the largest core count unless chosen; "
                  "the line is the ℓ2 fit of log10(ms) = m log10(nnz) + c, drawn only from "
                  f"{MIN_SIZES} or more sizes spanning {MIN_SPAN:g}× in nnz. The paper states "
                  "m = 1.38–1.56 for HDagg and m ≤ 1.0 for the others. " + paper.FIG_6_2_NOTE,
                  "", *_figure_lines(next(p for p in paths if p.suffix == ".png"),
                                     "Scheduling time vs nnz"),
                  format_markdown(shown), "[CSV](scheduling_time_slopes.csv)", ""]

    # Table 6.3
    per_matrix = amortisation(df, amortisation_cores)
    t63 = amortisation_table(per_matrix)
    if t63.empty:
        notes.append("Table 6.3 (amortisation): no parallel rows with a schedule time and a "
                     "serial baseline at the chosen core count, table not written.")
    else:
        display = amortisation_display(t63)
        written.append(write_text(out_dir / "table_6_3.md", format_markdown(display)))
        written.append(write_csv(t63, out_dir / "table_6_3.csv"))
        written.append(write_csv(per_matrix.assign(dataset=per_matrix["dataset"].map(labels.display_map(df))),
                                 out_dir / "amortisation_per_matrix.csv"))
        chosen = int(t63["cores"].iloc[0])
        lines += _section(
            "Amortisation (paper Table 6.3, Eq. 6.1)",
            "Per matrix, n = mean(t_schedule) / (mean(t_serial) − mean(t_parallel)) solves, "
            "+inf where the parallel solve is not faster than serial (arithmetic means over "
            f"the timed repetitions); median over matrices at {chosen} cores. The paper uses one "
            "full socket per machine (its core count in the column heading).",
            format_markdown(display),
            "[CSV (this run)](table_6_3.csv) · [per matrix (CSV)](amortisation_per_matrix.csv)",
            _details("The paper's Table 6.3 as printed", _paper_6_3_md()))
    return written, lines, notes
