"""The figure of `spbench compare`: NEW/BASE ratio per point with its t-interval over the runs,
coloured by verdict (:mod:`spbench.compare_statistics`)."""
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


def ratio_figure(table: pd.DataFrame, keys: list[str], threshold: float, title: str,
                 stem: Path) -> list[Path]:
    """One row per point: its ratio (marker) and t-interval (bar) on a log axis, the line at 1 and
    the threshold band shaded; colour and marker by verdict. Writes <stem>.png/.pdf/.csv."""
    shown = [k for k in keys if k in table.columns and table[k].astype(str).nunique() > 1]
    same = [f"{k}={table[k].iloc[0]}" for k in keys if k in table.columns and k not in shown]
    labels = [" ".join(str(r[k]) if k == "dataset" else f"{k}={r[k]}" for k in shown
                       if str(r[k]) not in ("", "nan"))
              for _, r in table.iterrows()]
    y = np.arange(len(table))[::-1]
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
        low = np.where(np.isfinite(part["ci_low"]), ratio - part["ci_low"], 0.0)
        high = np.where(np.isfinite(part["ci_high"]), part["ci_high"] - ratio, 0.0)
        ax.errorbar(ratio, y[mine], xerr=[low, high], fmt=marker, ms=4, color=color, capsize=2,
                    mfc="none" if name == "inconclusive" else color, label=f"{label} ({int(mine.sum())})")
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_xscale("log")
    lo = float(np.nanmin([table["ratio"].min(), table["ci_low"].min(), 1 / (1 + threshold)]))
    hi = float(np.nanmax([table["ratio"].max(), table["ci_high"].max(), 1 + threshold]))
    ax.set_xlim(lo / 1.05, hi * 1.05)
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("NEW / BASE of the runs' medians (95% t-interval over runs)")
    heading = textwrap.wrap(title, 75) + ([f"(all points: {', '.join(same)})"] if same else [])
    ax.set_title("\n".join(heading), fontsize=9)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.legend(fontsize=7, loc="outside lower center", ncols=2)  # below the axes: never over a point
    return save_figure(fig, stem.parent, stem.name, table)
