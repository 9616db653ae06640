"""The numbers tucker-lite prints (Figs. 14, 15a, 16, 17a; 512 ranks, K = 10, Power-8 cluster, §7.1),
typed from the paper text, and the tables/figures that put this run's values beside them
(Figs. 10, 11, 14, 15, 16, 17a). "x" in the paper (HyperG could not partition the big tensors) is None.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.profile.figures import panel_grid, plain_log_ticks, save_figure  # noqa: E402
from spbench.profile.tables import write_table  # noqa: E402
from spbench.tucker.schemes import SCHEMES as REGISTRY  # noqa: E402

#: the order of the paper's figures (§5–§6); the names are the registry's figure labels
SCHEMES = ("coarse", "medium", "hyper", "lite")
LABEL = {name: scheme.label for name, scheme in REGISTRY.items()}

#: the rank count and K of the paper's printed numbers (tucker-lite §7.1)
PAPER_RANKS, PAPER_K = 512, 10
#: Fig. 14: HOOI time (s) on the big tensors, 512 ranks, K = 10
FIG14_HOOI_S = {
    "amazon": {"coarse": 89.0, "medium": 13.1, "lite": 8.6},
    "patents": {"coarse": 96.4, "medium": 15.5, "lite": 14.2},
    "reddit": {"coarse": 232.1, "medium": 23.6, "lite": 21.6},
}
#: Fig. 15(a): HOOI speed-up from 32 to 512 ranks
FIG15A_SPEEDUP = {
    "delicious": {"coarse": 7.4, "medium": 6.8, "hyper": 8.8, "lite": 13.4},
    "enron": {"coarse": 1.7, "medium": 9.0, "hyper": 7.4, "lite": 11.1},
    "flickr": {"coarse": 6.7, "medium": 6.4, "hyper": 9.8, "lite": 12.9},
    "nell1": {"coarse": 6.4, "medium": 7.6, "hyper": 7.9, "lite": 8.6},
    "nell2": {"coarse": 2.4, "medium": 8.4, "hyper": 7.5, "lite": 12.2},
    "amazon": {"coarse": 1.8, "medium": 11.0, "hyper": None, "lite": 13.5},
    "patents": {"coarse": 2.7, "medium": 14.5, "hyper": None, "lite": 15.5},
    "reddit": {"coarse": 1.8, "medium": 14.2, "hyper": None, "lite": 14.6},
}
#: Fig. 16: distribution time (s) per scheme and the HOOI time under Lite, 512 ranks, K = 10
FIG16_DIST_S = {
    "delicious": {"coarse": 6.8, "medium": 9.3, "hyper": 345, "lite": 3.9, "hooi_lite": 5.2},
    "enron": {"coarse": 0.1, "medium": 0.08, "hyper": 125, "lite": 0.1, "hooi_lite": 1.1},
    "flickr": {"coarse": 10.9, "medium": 14.0, "hyper": 203, "lite": 5.5, "hooi_lite": 6.0},
    "nell1": {"coarse": 10.5, "medium": 13.9, "hyper": 356, "lite": 6.2, "hooi_lite": 2.7},
    "nell2": {"coarse": 0.07, "medium": 0.05, "hyper": 91, "lite": 0.07, "hooi_lite": 0.3},
    "amazon": {"coarse": 2.9, "medium": 5.5, "hyper": None, "lite": 2.5, "hooi_lite": 8.7},
    "patents": {"coarse": 3.2, "medium": 0.9, "hyper": None, "lite": 2.0, "hooi_lite": 14.2},
    "reddit": {"coarse": 7.8, "medium": 11.6, "hyper": None, "lite": 5.7, "hooi_lite": 21.6},
}
#: Fig. 17(a): average memory per rank (MB), 512 ranks, K = 10
FIG17A_MEMORY_MB = {
    "delicious": {"coarse": 383, "medium": 1748, "hyper": 881, "lite": 385},
    "enron": {"coarse": 17, "medium": 53, "hyper": 61, "lite": 17},
    "flickr": {"coarse": 533, "medium": 1813, "hyper": 625, "lite": 533},
    "nell1": {"coarse": 112, "medium": 197, "hyper": 151, "lite": 113},
    "nell2": {"coarse": 12, "medium": 6, "hyper": 19, "lite": 12},
    "amazon": {"coarse": 348, "medium": 371, "hyper": None, "lite": 350},
    "patents": {"coarse": 445, "medium": 158, "hyper": None, "lite": 447},
    "reddit": {"coarse": 814, "medium": 543, "hyper": None, "lite": 812},
}


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "x"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def side_by_side(ours: pd.DataFrame, paper: dict, value_name: str, *, ours_at: str = "",
                 paper_at: str = "", shown: dict | None = None) -> pd.DataFrame:
    """One row per data set: per scheme 'this run' and 'paper' columns (paper values only for its
    tensors). ``ours_at``/``paper_at`` name the rank counts in the headings (", P=8", ", P=512") so
    that values at different counts are never read as one comparison; ``shown`` maps a data set to
    its shown name (stand-ins marked)."""
    schemes = [s for s in SCHEMES if s in ours.columns]
    rows = []
    for ds in ours.index:
        row = {"dataset": (shown or {}).get(ds, ds)}
        for s in schemes:
            row[f"{LABEL[s]} (this run{ours_at})"] = _fmt(ours.loc[ds, s])
            row[f"{LABEL[s]} (paper{paper_at})"] = _fmt(paper.get(ds, {}).get(s)) if ds in paper else "-"
        rows.append(row)
    return pd.DataFrame(rows)


def _pivot(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    table = rows.pivot_table(index="dataset", columns="algorithm", values=column, aggfunc="median")
    return table[[s for s in SCHEMES if s in table.columns]]


def _at(ranks: int, K: int) -> tuple[str, str]:
    """Headings' suffixes for this run's and the paper's values (512 ranks, K = 10)."""
    return f", P={ranks}" + (f", K={K}" if K != PAPER_K else ""), f", P={PAPER_RANKS}"


def _hooi_bars(ax, times: pd.DataFrame, low: pd.DataFrame, high: pd.DataFrame) -> None:
    """Grouped bars of HOOI time, error bars (95% bootstrap interval of the median over runs) where
    a point has several runs; a log axis when the values span more than a decade."""
    x = np.arange(len(times.index))
    width = 0.8 / max(1, len(times.columns))
    for i, s in enumerate(times.columns):
        values = times[s].to_numpy(dtype=float)
        err = np.vstack([values - low[s].to_numpy(dtype=float), high[s].to_numpy(dtype=float) - values])
        has = np.isfinite(err).all(axis=0)
        ax.bar(x + (i - (len(times.columns) - 1) / 2) * width, values, width, label=LABEL[s],
               yerr=np.where(has, err, 0.0), capsize=2 if has.any() else 0,
               error_kw={"elinewidth": 0.8})
    ax.set_xticks(x, times.index, rotation=20, ha="right")
    finite = times.to_numpy(dtype=float)
    finite = finite[np.isfinite(finite) & (finite > 0)]
    if finite.size and finite.max() / finite.min() > 10:
        ax.set_yscale("log")
        ax.figure.canvas.draw()
        plain_log_ticks(ax.yaxis)


def hooi_figures(rows: pd.DataFrame, out_dir: Path, suffix: str, execution: str, *, ranks: int, K: int,
                 shown: dict | None = None) -> tuple[list[Path], list[str]]:
    """Fig. 10 (HOOI time per tensor and scheme) and Fig. 11 (TTM / SVD / comm breakup)."""
    written, lines = [], []
    shown = shown or {}
    times = _pivot(rows, "hooi_time")
    low, high = (_pivot(rows, c).reindex_like(times) if c in rows else times * np.nan
                 for c in ("hooi_time_ci_low", "hooi_time_ci_high"))
    fig, ax = plt.subplots(figsize=(8.5, 4.2), layout="constrained")
    _hooi_bars(ax, times.rename(index=shown), low.rename(index=shown), high.rename(index=shown))
    ax.set_ylabel("HOOI time, one invocation (s)")
    ax.set_title(f"Fig. 10 HOOI time, {suffix.replace('_', ' ')}, {execution}"
                 + ("\n(bars: 95% bootstrap interval of the median over runs)" if np.isfinite(low.to_numpy(float)).any() else ""))
    fig.legend(fontsize=8, loc="outside right upper")
    ax.grid(axis="y", which="both", alpha=0.3)
    points = times.rename(columns=LABEL)
    points = points.join(low.rename(columns=lambda s: f"{LABEL[s]} ci_low")).join(
        high.rename(columns=lambda s: f"{LABEL[s]} ci_high"))
    written += save_figure(fig, out_dir, f"fig10_hooi_{suffix}", points.rename(index=shown).reset_index())
    parts = [c for c in ("ttm_time", "svd_time", "comm_time") if c in rows.columns]
    datasets = list(times.index)
    fig, axes = panel_grid(len(datasets), 1.2)
    points = []
    for ax, ds in zip(axes, datasets):
        part = rows[rows["dataset"] == ds].groupby("algorithm")[parts].median().reindex(list(times.columns))
        bottom = np.zeros(len(part))
        for c in parts:
            vals = part[c].to_numpy(dtype=float)
            ax.bar(np.arange(len(part)), vals, bottom=bottom, label=c.replace("_time", "").upper())
            bottom += np.nan_to_num(vals)
            points += [{"dataset": shown.get(ds, ds), "scheme": LABEL[s], "component": c, "seconds": v}
                       for s, v in zip(part.index, vals)]
        ax.set_xticks(np.arange(len(part)), [LABEL[s] for s in part.index], rotation=30, ha="right")
        ax.set_title(shown.get(ds, ds), fontsize=9)
    axes[0].set_ylabel("seconds (max over ranks)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="outside right upper")
    fig.suptitle(f"Fig. 11 HOOI time breakup, {suffix.replace('_', ' ')}, {execution}")
    written += save_figure(fig, out_dir, f"fig11_breakup_{suffix}", pd.DataFrame(points))
    ours_at, paper_at = _at(ranks, K)
    big = times.loc[[d for d in times.index if d in FIG14_HOOI_S]]
    if len(big):
        written += write_table(side_by_side(big, FIG14_HOOI_S, "hooi_time", ours_at=ours_at, paper_at=paper_at,
                                            shown=shown), out_dir / f"fig14_big_{suffix}")
        lines.append(f"Fig. 14 (big tensors): see `fig14_big_{suffix}.md`.")
    dist = _pivot(rows, "dist_time")
    table = side_by_side(dist, FIG16_DIST_S, "dist_time", ours_at=ours_at, paper_at=paper_at, shown=shown)
    if "lite" in times.columns:
        table[f"HOOI Lite (this run{ours_at})"] = [_fmt(times.loc[d, "lite"]) if d in times.index else "x"
                                                   for d in dist.index]
        table[f"HOOI Lite (paper{paper_at})"] = [_fmt(FIG16_DIST_S.get(d, {}).get("hooi_lite"))
                                                 if d in FIG16_DIST_S else "-" for d in dist.index]
    written += write_table(table, out_dir / f"fig16_dist_{suffix}")
    return written, lines


def memory_table(rows: pd.DataFrame, out_dir: Path, suffix: str, *, ranks: int, K: int,
                 shown: dict | None = None) -> list[Path]:
    """Fig. 17(a): average memory per rank, this run beside the paper's (512 ranks, K = 10), each
    heading naming its rank count."""
    ours_at, paper_at = _at(ranks, K)
    return write_table(side_by_side(_pivot(rows, "mem_total_mb"), FIG17A_MEMORY_MB, "mem_total_mb",
                                    ours_at=ours_at, paper_at=paper_at, shown=shown),
                       out_dir / f"fig17a_paper_{suffix}")


def scaling(df: pd.DataFrame, out_dir: Path, shown: dict | None = None) -> tuple[list[Path], list[str]]:
    """Fig. 15: (a) speed-up from the smallest to the largest rank count per tensor and scheme, beside
    the paper's 32 → 512; (b) Lite's strong scaling over every rank count present."""
    ok = df[(df["status"] == "ok") & df["hooi_time"].notna()]
    ranks = sorted(ok["ranks"].unique())
    if len(ranks) < 2:
        return [], ["Fig. 15 needs measured HOOI times at two or more rank counts."]
    lo, hi = ranks[0], ranks[-1]
    t = ok.groupby(["dataset", "algorithm", "ranks"])["hooi_time"].median()
    speed = {}
    for (ds, alg), part in t.groupby(level=[0, 1]):
        series = part.droplevel([0, 1])
        if lo in series.index and hi in series.index:
            speed.setdefault(ds, {})[alg] = series[lo] / series[hi]
    table = pd.DataFrame(speed).T
    written = write_table(side_by_side(table, FIG15A_SPEEDUP, "speedup", ours_at=f", P={lo}→{hi}",
                                       paper_at=", P=32→512", shown=shown), out_dir / "fig15a_speedup")
    lite = ok[ok["algorithm"] == "lite"]
    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    points = []
    shown = shown or {}
    for ds, part in lite.groupby("dataset"):
        s = part.groupby("ranks")["hooi_time"].median().sort_index()
        sp = s.iloc[0] / s
        ax.plot(s.index, sp.to_numpy(), marker="o", label=shown.get(ds, ds))
        points += [{"dataset": shown.get(ds, ds), "ranks": int(r), "speedup": float(v)} for r, v in sp.items()]
    ax.plot(ranks, [r / lo for r in ranks], color="0.4", ls="--", label="ideal")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks")
    ax.set_yscale("log", base=2)
    ax.set_ylabel(f"speed-up over {lo} rank{'s' if lo != 1 else ''}")
    ax.set_xticks(ranks, [str(int(r)) for r in ranks])
    ax.set_yticks([r / lo for r in ranks], [f"{r / lo:g}" for r in ranks])
    ax.set_title("Fig. 15(b) Lite strong scaling")
    fig.legend(fontsize=8, loc="outside right upper")
    written += save_figure(fig, out_dir, "fig15b_lite_scaling", pd.DataFrame(points))
    return written, [f"Fig. 15(a): speed-up from {lo} to {hi} ranks (the paper: 32 to 512)."]
