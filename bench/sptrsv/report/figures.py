"""Figures of paper 2 (SpTrSV) from result rows, one function per figure: Figure 6.1 (speed-up over
serial against cores, also Figure 1.1's band) and Figure 5.1 (performance profile).

Each function writes ``<name>.png``, ``<name>.pdf`` and ``<name>.csv`` (exactly the plotted
points) into ``out_dir`` and returns the written paths. Measured and simulated rows are never
pooled: a frame holding both gets one set of files per execution, ``<name>_<execution>.*``;
the title always names the execution.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.report.figures import cores_phrase, figure_title, plain_log_ticks, save_figure  # noqa: E402
from spbench.report.intervals import geomean_interval, point_samples, ratio_of_medians  # noqa: E402
from spbench.report.measurement_conditions import shade_extrapolated  # noqa: E402
from spbench.report.perfprofile import DEFAULT_TAUS, performance_profile  # noqa: E402
from spbench.report.rows import check_columns, executions, series_labels  # noqa: E402
from spbench.sptrsv.report.labels import curve_labels  # noqa: E402
from spbench.sptrsv.report.summary import SERIAL, serial_times, speedups  # noqa: E402


def _split_by_execution(df: pd.DataFrame, name: str) -> list[tuple[str, pd.DataFrame, str]]:
    """(execution, its rows, file stem) per execution value present in ``df``.

    ``algorithm`` of the rows is replaced by its curve label over all of ``df``, so that every
    execution's figure names and colours a series alike.
    """
    kinds = executions(df)
    df = df.assign(algorithm=series_labels(df).to_numpy()).drop(columns="kernel", errors="ignore")
    values = sorted(set(kinds))
    return [(kind, df[(kinds == kind).to_numpy()], name if len(values) == 1 else f"{name}_{kind}")
            for kind in values]


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")


DASHES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 2)))


def curve_styles(df: pd.DataFrame) -> dict[str, dict]:
    """One fixed style per curve key of ``df`` (:func:`series_labels`): colour, marker, dash and the
    paper's label (:func:`~spbench.sptrsv.report.labels.curve_labels`), so every figure of a sweep names
    and draws a series alike and curves on top of each other stay apart by marker and dash."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    names = curve_labels(df, series_labels(df))
    return {key: {"color": cycle[i % len(cycle)], "marker": MARKERS[i % len(MARKERS)],
                  "linestyle": DASHES[i % len(DASHES)], "label": names[key]}
            for i, key in enumerate(sorted(names))}


def speedup_points(df: pd.DataFrame, band: Sequence[float] = (25, 75)) -> pd.DataFrame:
    """Points of Figure 6.1 for rows of one execution.

    Per (algorithm, cores): the geometric mean over datasets of the speed-up over serial
    (:func:`~spbench.sptrsv.report.summary.speedups`) and the ``band`` percentiles of those speed-ups
    (numpy's linear interpolation), and the geometric mean's bootstrap 95% interval
    (:func:`speedup_intervals`). Columns: ``algorithm, cores, datasets, speedup_geomean,
    speedup_p<lo>, speedup_p<hi>, speedup_ci_low, speedup_ci_high``.
    """
    lo, hi = _check_band(band)
    s = speedups(df)
    groups = s.groupby(["algorithm", "cores"], sort=True)["speedup"]
    out = pd.DataFrame({
        "datasets": groups.size(),
        "speedup_geomean": groups.agg(lambda v: float(np.exp(np.log(v).mean()))),
        f"speedup_p{lo:g}": groups.agg(lambda v: float(np.percentile(v, lo))),
        f"speedup_p{hi:g}": groups.agg(lambda v: float(np.percentile(v, hi))),
    }).reset_index()
    intervals = speedup_intervals(df)
    return out.merge(intervals, on=["algorithm", "cores"], how="left")


def speedup_intervals(df: pd.DataFrame) -> pd.DataFrame:
    """Bootstrap 95% interval of the geometric-mean speed-up per (algorithm, cores), over the
    matrices and the repetitions inside each (two-stage, :mod:`spbench.report.intervals`); each
    matrix's speed-up is the ratio of medians serial / algorithm over its raw samples. Columns:
    ``algorithm, cores, speedup_ci_low, speedup_ci_high``."""
    samples = raw_point_samples(df)
    serial = {d: s for (d, c, a), s in samples.items() if a == SERIAL}
    records = []
    for (algorithm, cores), keys in _group_keys(samples).items():
        ratios = [ratio_of_medians(samples[k], serial[k[0]]) for k in keys if k[0] in serial]
        if ratios:
            _, low, high = geomean_interval(ratios)
            records.append({"algorithm": algorithm, "cores": cores, "speedup_ci_low": low,
                            "speedup_ci_high": high})
    return pd.DataFrame(records, columns=["algorithm", "cores", "speedup_ci_low", "speedup_ci_high"])


def _group_keys(samples: dict) -> dict:
    groups: dict = {}
    for key in sorted(samples):
        if key[2] != SERIAL:
            groups.setdefault((key[2], key[1]), []).append(key)
    return groups


def raw_point_samples(df: pd.DataFrame) -> dict[tuple, np.ndarray]:
    """(dataset, cores, curve label) → the raw samples of its ok rows (repetitions of one run, or one
    value per run); serial under its lowest core count. Rows must share one execution."""
    ok = (df["status"] == "ok").to_numpy()
    rows = df[ok].assign(algorithm=series_labels(df)[ok].to_numpy())
    out = {}
    for (dataset, cores, algorithm), part in rows.groupby(["dataset", "cores", "algorithm"], sort=True):
        values = point_samples(part, "solve_time", "solve_times")
        if values.size:
            out[(str(dataset), int(cores), str(algorithm))] = values
    serial = sorted(k for k in out if k[2] == SERIAL)
    first = {}
    for k in serial:
        first.setdefault(k[0], k)
    return {k: v for k, v in out.items() if k[2] != SERIAL or first[k[0]] == k}


def _check_band(band: Sequence[float]) -> tuple[float, float]:
    lo, hi = (float(b) for b in band)
    if not 0 <= lo <= hi <= 100:
        raise ValueError(f"band must be two percentiles 0 <= lo <= hi <= 100, got {tuple(band)}")
    return lo, hi


def _side_by_side(cores: Sequence[float], n: int, log_x: bool):
    """``place(x, i)``: curve i's x positions shifted so that n curves' markers at one core count sit
    side by side, within a third of the gap to the next count (multiplicative on a log axis)."""
    c = np.asarray(sorted(cores), dtype=float)
    if log_x:
        gap = float(np.min(np.diff(np.log2(c)))) if c.size > 1 else 1.0
        return lambda x, i: x * 2 ** ((i - (n - 1) / 2) * gap / 3 / max(n, 1))
    gap = float(np.min(np.diff(c))) if c.size > 1 else 1.0
    return lambda x, i: x + (i - (n - 1) / 2) * gap / 3 / max(n, 1)


def speedup_vs_cores(df: pd.DataFrame, out_dir: str | os.PathLike,
                     band: Sequence[float] = (25, 75)) -> list[Path]:
    """Figure 6.1 (and 1.1): geometric-mean speed-up over serial against the core count.

    Per algorithm (the paper's label) a marker at each measured core count, no line joining the
    counts: a capped bar for the 95% interval and a wide pale bar between the ``band`` percentiles
    over datasets (paper: 25–75 in Figure 6.1, 10–90 in Figure 1.1); the algorithms' markers side by
    side at one count; a dashed line at 1. Writes ``speedup.png/.pdf/.csv``; the CSV holds
    :func:`speedup_points` plus ``execution`` and the legend's ``label``.
    Without an ok ``serial`` run there is no baseline: the figure is skipped with a warning
    (likewise datasets lacking one are dropped with a warning).
    """
    check_columns(df)
    lo, hi = _check_band(band)
    out_dir = Path(out_dir)
    styles = curve_styles(df)
    written: list[Path] = []
    for execution, rows, stem in _split_by_execution(df, "speedup"):
        baseline = serial_times(rows)
        if baseline.empty:
            warnings.warn(f"no ok '{SERIAL}' rows ({execution}): no serial baseline, "
                          f"speed-up figure {stem} skipped", stacklevel=2)
            continue
        ok = rows[rows["status"] == "ok"]
        lacking = sorted(set(ok["dataset"].astype(str)) - set(baseline.index))
        if lacking:
            warnings.warn(f"datasets without a serial baseline ({execution}) left out of "
                          f"{stem}: {', '.join(lacking)}", stacklevel=2)
        points = speedup_points(rows, band)
        if points.empty:
            warnings.warn(f"no ok non-serial rows ({execution}): speed-up figure {stem} skipped",
                          stacklevel=2)
            continue
        lo_col, hi_col = f"speedup_p{lo:g}", f"speedup_p{hi:g}"
        fig, ax = plt.subplots(figsize=(7.6, 4.2), layout="constrained")
        cores = sorted(points["cores"].unique())
        log_x = len(cores) > 2 and max(cores) / min(cores) >= 8
        curves = list(points.groupby("algorithm", sort=True))
        offsets = _side_by_side(cores, len(curves), log_x)
        for i, (algorithm, curve) in enumerate(curves):
            style = styles[algorithm]
            x = offsets(curve["cores"].to_numpy(float), i)
            g = curve["speedup_geomean"].to_numpy(float)
            # drawn from low to high, not as ± errors: a geometric mean may lie outside a percentile band
            ax.vlines(x, curve[lo_col], curve[hi_col], color=style["color"], linewidth=7, alpha=0.25)
            ax.vlines(x, curve["speedup_ci_low"], curve["speedup_ci_high"], color=style["color"], linewidth=1.3)
            for end in ("speedup_ci_low", "speedup_ci_high"):
                ax.plot(x, curve[end], linestyle="none", marker="_", markersize=7, color=style["color"])
            ax.plot(x, g, linestyle="none", marker=style["marker"], color=style["color"], markersize=6,
                    label=style["label"], clip_on=False, zorder=3)
        ax.axhline(1.0, color="0.4", linestyle="--", linewidth=0.8)
        if log_x:
            ax.set_xscale("log", base=2)
        ax.set_xticks(cores, [str(int(c)) for c in cores])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.margins(x=0.08, y=0.06)
        shade_extrapolated(ax, rows)
        shown = points[[lo_col, hi_col, "speedup_geomean", "speedup_ci_low", "speedup_ci_high"]]
        shown = shown.to_numpy(float)[np.isfinite(shown.to_numpy(float)) & (shown.to_numpy(float) > 0)]
        if shown.size and shown.max() / shown.min() > 10:  # more than a decade: a log axis
            ax.set_yscale("log")
            fig.canvas.draw()
            plain_log_ticks(ax.yaxis)
        ax.set_xlabel("cores")
        ax.set_ylabel("speed-up over serial (geometric mean)")
        ax.set_title(figure_title(rows, "SpTrSV speed-up over serial, geometric mean over matrices",
                                  execution, cores_phrase(cores)), fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.plot([], [], color="0.5", linewidth=7, alpha=0.25, label=f"p{lo:g}–p{hi:g} over matrices")
        ax.plot([], [], color="0.2", marker="|", markersize=8, linestyle="none",
                label="95% bootstrap interval")
        fig.legend(fontsize=8, loc="outside right upper")
        points.insert(1, "label", points["algorithm"].map(lambda k: styles[k]["label"]))
        points.insert(0, "execution", execution)
        written += save_figure(fig, out_dir, stem, points)
    return written


def performance_profile_figure(df: pd.DataFrame, out_dir: str | os.PathLike,
                               taus: Sequence[float] | np.ndarray = DEFAULT_TAUS, *,
                               exclude: Iterable[str] = ("serial",),
                               min_cores: int = 2) -> list[Path]:
    """Figure 5.1: performance profiles, fraction of runs within τ × best against τ.

    Step curves per algorithm of :func:`~spbench.report.perfprofile.performance_profile`
    (``exclude`` and ``min_cores`` are passed on), x from the first to the last τ (1 to 3 by
    default), y from 0 to 1 with a margin so that a curve on 0 or 1 shows; each curve its own dash,
    width and markers. The title counts the instances (cores ≥ ``min_cores``). Writes
    ``perfprofile.png/.pdf/.csv``; the CSV holds the profile plus ``execution`` and the legend's
    ``label``. Skipped with a warning when there is no parallel instance.
    """
    check_columns(df)
    taus = np.asarray(taus, dtype=float)
    out_dir = Path(out_dir)
    styles = curve_styles(df)
    written: list[Path] = []
    for execution, rows, stem in _split_by_execution(df, "perfprofile"):
        profile = performance_profile(rows, taus, exclude=exclude, min_cores=min_cores)
        if profile.empty:
            warnings.warn(f"no instance to profile ({execution}, cores >= {min_cores}, "
                          f"without {sorted(set(exclude))}): {stem} skipped", stacklevel=2)
            continue
        counted = rows[(rows["cores"].astype(int) >= min_cores) & ~rows["algorithm"].isin(set(exclude))]
        instances = counted[["dataset", "cores"]].drop_duplicates()
        fig, ax = plt.subplots(figsize=(7.6, 4.2), layout="constrained")
        curves = list(profile.groupby("algorithm", sort=True))
        every = max(1, len(taus) // 8)
        for i, (algorithm, curve) in enumerate(curves):
            style = styles[algorithm]
            # drawn above the frame (a curve at 0 or 1 would lie under it), later curves thinner so
            # that one lying on another still shows; a marker every few τ tells equal curves apart
            ax.step(curve["tau"], curve["fraction"], where="post", color=style["color"],
                    linestyle=style["linestyle"], linewidth=2.6 - 1.4 * i / max(len(curves) - 1, 1),
                    marker=style["marker"], markevery=(i * every // len(curves), every), markersize=5,
                    label=style["label"], clip_on=False, zorder=3 + i)
        if taus[-1] > taus[0]:
            ax.set_xlim(taus[0], taus[-1])
        ax.set_ylim(-0.03, 1.03)  # curves at 0 and 1 stay visible inside the frame
        ax.set_xlabel("threshold τ (× best time on the same matrix and core count)")
        ax.set_ylabel("fraction of runs within τ × best")
        ax.set_title(figure_title(rows, "SpTrSV performance profile", execution,
                                  f"cores ≥ {min_cores} ({len(instances)} matrix × core-count instances)"),
                     fontsize=9)
        ax.grid(True, alpha=0.3)
        fig.legend(fontsize=8, loc="outside right upper")
        profile.insert(2, "label", profile["algorithm"].map(lambda k: styles[k]["label"]))
        profile.insert(0, "execution", execution)
        written += save_figure(fig, out_dir, stem, profile)
    return written
