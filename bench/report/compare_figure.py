"""The figure of `spbench compare`: NEW/BASE ratio per point with its t-interval over the runs,
coloured by verdict (:mod:`spbench.comparison.statistics`). The axis spans the ratios and the
threshold band with a margin: a t-interval over 2 runs a side can span decades, and its end beyond
the axis is drawn as an arrow at the edge (the CSV keeps the whole interval)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.report.figures import plain_log_ticks, save_figure  # noqa: E402

#: verdict -> (colour, marker, legend label); inconclusive points have no interval to draw
VERDICT_STYLES = {"regression": ("tab:red", "o", "regression"),
                  "improvement": ("tab:green", "o", "improvement"),
                  "unchanged": ("0.35", "o", "unchanged (no change beyond the threshold shown)"),
                  "inconclusive": ("tab:orange", "D", "inconclusive (one run on a side, no interval)")}
#: how far (a factor) the axis reaches beyond the outermost ratio or threshold for an interval's end
AXIS_MARGIN = 1.6


def axis_limits(ratio: np.ndarray, low: np.ndarray, high: np.ndarray, threshold: float) -> tuple[float, float]:
    """The ratio axis: the interval ends where they lie within AXIS_MARGIN of the outermost ratio
    or threshold, else that margin (the ends beyond it become arrows at the edge)."""
    inner_lo = float(np.nanmin([*ratio, 1 / (1 + threshold)]))
    inner_hi = float(np.nanmax([*ratio, 1 + threshold]))
    lo = max(float(np.nanmin([*low, inner_lo])), inner_lo / AXIS_MARGIN)
    hi = min(float(np.nanmax([*high, inner_hi])), inner_hi * AXIS_MARGIN)
    return lo / 1.05, hi * 1.05


def point_label(row: pd.Series, shown: list[str]) -> str:
    """A compared point's row label: the data set, the algorithm under the paper's label
    (``ElasticDivide (SSP)``, ``Lite``), "2 cores" / "512 ranks", other axes as key=value."""
    parts = []
    for k in shown:
        value = str(row[k])
        if value in ("", "nan") or (k == "kernel" and "algorithm" in shown):  # the label names the kernel
            continue
        if k == "dataset":
            parts.append(value)
        elif k == "algorithm":
            parts.append(_algorithm_label(str(row.get("experiment", "")), value, row.get("kernel")))
        elif k in ("cores", "ranks"):
            parts.append(f"{value} {k[:-1] if value == '1' else k}")
        else:
            parts.append(f"{k}={value}")
    return " ".join(parts)


def _algorithm_label(experiment: str, algorithm: str, kernel) -> str:
    """The paper's label of a compared row's algorithm, as its experiment gives it
    (:meth:`spbench.experiment.Experiment.algorithm_label`); the name itself for rows of no experiment."""
    from spbench.experiment_registry import get_experiment

    try:
        owner = get_experiment(experiment)
    except KeyError:
        return algorithm
    return owner.algorithm_label({"algorithm": algorithm, "kernel": kernel})


def ratio_figure(table: pd.DataFrame, keys: list[str], threshold: float, title: str,
                 stem: Path) -> list[Path]:
    """One row per point: its ratio (marker) and t-interval (bar) on a log axis, the line at 1 and
    the threshold band shaded; colour and marker by verdict. Writes <stem>.png/.pdf/.csv."""
    shown = [k for k in keys if k in table.columns and table[k].astype(str).nunique() > 1]
    same = [f"{k}={table[k].iloc[0]}" for k in keys if k in table.columns and k not in shown]
    labels = [point_label(r, shown) for _, r in table.iterrows()]
    y = np.arange(len(table))[::-1]
    lo, hi = axis_limits(table["ratio"].to_numpy(float), table["ci_low"].to_numpy(float),
                         table["ci_high"].to_numpy(float), threshold)
    fig, ax = plt.subplots(figsize=(8.5, 2.1 + 0.28 * len(table)), layout="constrained")
    ax.axvspan(1 / (1 + threshold), 1 + threshold, color="0.9", zorder=0,
               label=f"threshold band ±{threshold:.0%}")
    ax.axvline(1.0, color="0.3", lw=0.8)
    for name, (color, marker, label) in VERDICT_STYLES.items():
        mine = (table["flag"] == name).to_numpy()
        if not mine.any():
            continue
        part = table[mine]
        ratio = part["ratio"].to_numpy(float)
        ci_low = np.clip(part["ci_low"].to_numpy(float), lo, None)
        ci_high = np.clip(part["ci_high"].to_numpy(float), None, hi)
        low = np.where(np.isfinite(ci_low), ratio - ci_low, 0.0)
        high = np.where(np.isfinite(ci_high), ci_high - ratio, 0.0)
        ax.errorbar(ratio, y[mine], xerr=[low, high], fmt=marker, ms=4, color=color, capsize=2,
                    mfc="none" if name == "inconclusive" else color, label=f"{label} ({int(mine.sum())})")
        for end, edge, arrow in ((part["ci_low"].to_numpy(float), lo, "<"), (part["ci_high"].to_numpy(float), hi, ">")):
            beyond = (end < edge) if arrow == "<" else (end > edge)
            ax.plot(np.full(int(beyond.sum()), edge), y[mine][beyond], arrow, ms=6, color=color,
                    clip_on=False, zorder=3)
    clipped = int(((table["ci_low"] < lo) | (table["ci_high"] > hi)).sum())
    if clipped:
        ax.plot([], [], ">", ms=6, color="0.35", label=f"interval runs beyond the axis ({clipped}; whole in the CSV)")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("NEW / BASE of the runs' medians (95% t-interval over runs)")
    heading = textwrap.wrap(title, 75) + ([f"(all points: {', '.join(same)})"] if same else [])
    ax.set_title("\n".join(heading), fontsize=9)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.legend(fontsize=7, loc="outside lower center", ncols=2)  # below the axes: never over a point
    return save_figure(fig, stem.parent, stem.name, table)
