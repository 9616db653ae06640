"""Paper 2's Figure 6.2 (§6.5): scheduling time against nnz on log-log axes, one point per
(algorithm, matrix), with each algorithm's ℓ2-fitted slope, its 95% interval and the decades of
nonzeros it spans, beside the slope the paper states."""
from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from spbench.report import labels
from spbench.sptrsv.report.labels import algorithm_label
from spbench.sptrsv.report import paper_values as paper  # noqa: E402
from spbench.sptrsv.report.figures import curve_styles
from spbench.report.figures import plain_log_ticks, save_figure, scale_phrase, wrap_title
from spbench.report.markdown_sections import figure_lines  # noqa: E402
from spbench.sptrsv.report.rows import default_cores, noisy_schedules, ok_rows  # noqa: E402
from spbench.sptrsv.report.summary import SERIAL
from spbench.report.tables import format_markdown, write_table  # noqa: E402

MIN_SIZES, MIN_SPAN = 3, 4.0
"""A fitted slope needs this many matrix sizes spanning this factor in nnz."""
WIDE_DECADES = 2.0
"""Decades of nnz a slope should span before it is compared with the paper's (the report says when less)."""
CONFIDENCE = 0.95
"""Coverage of the slope's interval (Student t on the fit's residuals)."""


def schedule_points(df: pd.DataFrame, cores: int | None = None) -> pd.DataFrame:
    """Points of Figure 6.2: scheduling time (ms) against nnz, one per (algorithm, matrix).

    Rows of ``cores`` (default: the largest core count of a parallel row) with a positive
    ``schedule_time`` and ``nnz``; serial has no schedule. The scheduler's time does not depend
    on the kernel or on how the solve was executed, so rows of one (algorithm, dataset) are
    pooled by the median. Columns: ``algorithm, dataset, group, cores, nnz, schedule_ms``.
    """
    rows = _timed_rows(df, cores)
    columns = ["algorithm", "dataset", "group", "cores", "nnz", "schedule_ms"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    out = (rows.groupby(["algorithm", "dataset", "group", "cores"], as_index=False)
           .agg(nnz=("nnz", "median"), schedule_ms=("schedule_time", "median")))
    out["schedule_ms"] *= 1e3
    return out.sort_values(["algorithm", "nnz", "dataset"], ignore_index=True)[columns]


def _timed_rows(df: pd.DataFrame, cores: int | None) -> pd.DataFrame:
    """The ok parallel rows behind Figure 6.2: at ``cores`` (default the largest), with a positive
    ``schedule_time`` and ``nnz``."""
    rows = ok_rows(df)
    rows = rows[rows["algorithm"] != SERIAL]
    if cores is None:
        cores = default_cores(rows)
    return rows[(rows["cores"] == cores) & (rows["schedule_time"] > 0) & (rows["nnz"] > 0)]


def fit_slopes(points: pd.DataFrame) -> pd.DataFrame:
    """ℓ2 fit of ``log10(schedule_ms) = m log10(nnz) + c`` per algorithm (Figure 6.2).

    Columns: ``algorithm, points, sizes`` (distinct nnz), ``decades`` (log10 of the largest over
    the smallest nnz), ``slope``, ``slope_low, slope_high`` (its :data:`CONFIDENCE` interval from
    the residuals, Student t with points − 2 degrees of freedom; NaN with 2 points), ``intercept``
    (log10 of ms), ``paper_slope`` (what §6.5 states: HDagg 1.38–1.56, the others ≤ 1.0). A slope
    needs at least :data:`MIN_SIZES` distinct nnz spanning at least :data:`MIN_SPAN` × (a line
    through two points is no fit): otherwise slope and intercept are NaN ("n/a" in the report).
    """
    records = []
    for algorithm, part in points.groupby("algorithm", sort=True):
        x = np.log10(part["nnz"].to_numpy(dtype=float))
        y = np.log10(part["schedule_ms"].to_numpy(dtype=float))
        slope = intercept = low = high = np.nan
        if len(np.unique(x)) >= MIN_SIZES and x.max() - x.min() >= np.log10(MIN_SPAN):
            slope, intercept = np.polyfit(x, y, 1)
            low, high = _slope_interval(x, y, slope, intercept)
        records.append({"algorithm": algorithm, "points": len(part), "sizes": int(len(np.unique(x))),
                        "decades": float(x.max() - x.min()) if len(x) else np.nan,
                        "slope": float(slope), "slope_low": float(low), "slope_high": float(high),
                        "intercept": float(intercept),
                        "paper_slope": _paper_slope(str(algorithm))})
    return pd.DataFrame(records, columns=["algorithm", "points", "sizes", "decades", "slope", "slope_low",
                                          "slope_high", "intercept", "paper_slope"])


def _slope_interval(x: np.ndarray, y: np.ndarray, slope: float, intercept: float) -> tuple[float, float]:
    """The slope's two-sided :data:`CONFIDENCE` interval: slope ± t · s / sqrt(Σ (x − x̄)²)."""
    dof = len(x) - 2
    if dof < 1:
        return np.nan, np.nan
    residual = y - (slope * x + intercept)
    error = np.sqrt(residual @ residual / dof / np.sum((x - x.mean()) ** 2))
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, dof) * error
    return slope - half, slope + half


def slope_text(row) -> str:
    """``1.02 [0.97, 1.07]``: a fitted slope with its interval (``n/a`` when not fitted)."""
    if not np.isfinite(row["slope"]):
        return "n/a"
    if not np.isfinite(row["slope_low"]):
        return f"{row['slope']:.2f}"
    return f"{row['slope']:.2f} [{row['slope_low']:.2f}, {row['slope_high']:.2f}]"


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
    styles = curve_styles(df)  # the other figures' styles and paper labels, per algorithm
    fig, ax = plt.subplots(figsize=(7.6, 4.2), layout="constrained")
    for algorithm, part in points.groupby("algorithm", sort=True):
        style = styles.get(algorithm) or next(v for k, v in styles.items() if k.startswith(f"{algorithm}/"))
        name = algorithm_label(algorithm)  # the schedule does not depend on the kernel
        m, c = slopes.at[algorithm, "slope"], slopes.at[algorithm, "intercept"]
        label = f"{name} (m n/a)" if np.isnan(m) else f"{name} (m = {slope_text(slopes.loc[algorithm])})"
        ax.scatter(part["nnz"], part["schedule_ms"], color=style["color"], marker=style["marker"], s=22,
                   label=label, clip_on=False, zorder=3)
        if not np.isnan(m):  # a power law is straight on log-log axes: drawn through the fit at the points
            x = np.unique(part["nnz"].to_numpy(float))
            ax.plot(x, 10 ** (m * np.log10(x) + c), color=style["color"], linestyle=style["linestyle"],
                    linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of nonzeros")
    ax.set_ylabel("schedule compute time [ms]")
    data = labels.provenance_tag(df[df["dataset"].astype(str).isin(set(points["dataset"]))])
    sizes = points["nnz"].nunique()
    decades = np.log10(points["nnz"].max() / points["nnz"].min())
    fitted = (f"ℓ2 fit log y = m log x + c over {sizes} distinct size{'s' if sizes != 1 else ''} "
              f"({decades:.1f} decades), m with its {CONFIDENCE:.0%} interval"
              if slopes["slope"].notna().any() else
              f"no fit: {sizes} distinct size{'s' if sizes != 1 else ''}, a fit needs {MIN_SIZES} "
              f"spanning {MIN_SPAN:g}×")
    scale = scale_phrase(df)
    ax.set_title(wrap_title(f"Scheduling time vs nnz, {int(points['cores'].iloc[0])} cores, schedulers "
                            f"timed on this machine{', ' + scale if scale else ''}\n{fitted}"
                            + (f"\n{data}" if data else "")), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.margins(0.08)
    fig.canvas.draw()  # the limits autoscaling chose, for the tick labels
    plain_log_ticks(ax.xaxis)
    plain_log_ticks(ax.yaxis)
    # below the axes: the slope labels are long, and a legend at the right narrowed the axes until
    # the title ran under it
    fig.legend(fontsize=8, loc="outside lower center", ncols=2)
    fit = slopes.reindex(points["algorithm"])
    points = points.assign(label=points["algorithm"].map(algorithm_label),
                           fit_ms=10 ** (fit["slope"].to_numpy() * np.log10(points["nnz"].to_numpy(float))
                                         + fit["intercept"].to_numpy()))
    written = save_figure(fig, out_dir, stem, points)
    return written + write_table(slopes.reset_index(), out_dir / f"{stem}_slopes")


def write_section(df: pd.DataFrame, out_dir: str | os.PathLike, cores: int | None = None
                  ) -> tuple[list[Path], list[str], list[str]]:
    """``scheduling_time.*`` and its slopes in ``out_dir`` at ``cores`` (default: the largest
    parallel core count); returns (written paths, REPORT.md lines, notes)."""
    paths = scheduling_time_figure(df, out_dir, cores=cores)
    if not paths:
        return [], [], ["Figure 6.2 (scheduling time vs nnz): no ok parallel rows with a positive "
                        "schedule_time and nnz, not drawn."]
    noisy_text, noisy = noisy_schedules(_timed_rows(df, cores))
    notes = [f"Figure 6.2: {noisy_text}"] if noisy else []
    slopes = fit_slopes(schedule_points(df, cores))
    unfit = sorted(slopes.loc[slopes["slope"].isna(), "algorithm"])
    if unfit:
        notes.append(f"Figure 6.2: no slope (n/a) for {', '.join(unfit)}: a fit needs at least "
                     f"{MIN_SIZES} matrix sizes spanning {MIN_SPAN:g}× in nnz.")
    narrow = sorted(slopes.loc[slopes["slope"].notna() & (slopes["decades"] < WIDE_DECADES), "algorithm"])
    if narrow:
        notes.append(f"Figure 6.2: the slopes of {', '.join(narrow)} are fitted over less than "
                     f"{WIDE_DECADES:g} decades of nnz (the paper's span; configs/sptrsv_fig62.yaml "
                     "times generator families over 2.6).")
    shown = slopes.assign(
        slope=[slope_text(row) for _, row in slopes.iterrows()],
        decades=[f"{v:.2f}" for v in slopes["decades"]],
        intercept=[f"{v:.3f}" if np.isfinite(v) else "n/a" for v in slopes["intercept"]]
    ).drop(columns=["slope_low", "slope_high"]).rename(columns={"slope": f"slope [{CONFIDENCE:.0%} interval]"})
    lines = ["## Scheduling time against nnz (paper Figure 6.2)", "",
             "One point per (algorithm, matrix) at the largest core count unless chosen; "
             "the line is the ℓ2 fit of log10(ms) = m log10(nnz) + c, drawn only from "
             f"{MIN_SIZES} or more sizes spanning {MIN_SPAN:g}× in nnz; m's interval is the "
             f"{CONFIDENCE:.0%} Student-t interval of the fit. The paper states "
             "m = 1.38–1.56 for HDagg and m ≤ 1.0 for the others. " + paper.FIG_6_2_NOTE,
             "", noisy_text,
             "", *figure_lines(next(p for p in paths if p.suffix == ".png"),
                               "Scheduling time vs nnz"),
             format_markdown(shown), "[CSV](scheduling_time_slopes.csv)", ""]
    return paths, lines, notes
