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

from spbench.profile.figures import save_figure  # noqa: E402
from spbench.profile.tables import write_table  # noqa: E402
from spbench.tucker.schemes import SCHEMES as REGISTRY  # noqa: E402

#: the order of the paper's figures (§5–§6); the names are the registry's figure labels
SCHEMES = ("coarse", "medium", "hyper", "lite")
LABEL = {name: scheme.label for name, scheme in REGISTRY.items()}

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


def side_by_side(ours: pd.DataFrame, paper: dict, value_name: str) -> pd.DataFrame:
    """One row per data set: per scheme 'this run' and 'paper' columns (paper values only for its tensors)."""
    schemes = [s for s in SCHEMES if s in ours.columns]
    rows = []
    for ds in ours.index:
        row = {"dataset": ds}
        for s in schemes:
            row[f"{LABEL[s]} (this run)"] = _fmt(ours.loc[ds, s])
            row[f"{LABEL[s]} (paper)"] = _fmt(paper.get(ds, {}).get(s)) if ds in paper else "-"
        rows.append(row)
    return pd.DataFrame(rows)


def _pivot(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    table = rows.pivot_table(index="dataset", columns="algorithm", values=column, aggfunc="median")
    return table[[s for s in SCHEMES if s in table.columns]]


def hooi_figures(rows: pd.DataFrame, out_dir: Path, suffix: str, execution: str) -> tuple[list[Path], list[str]]:
    """Fig. 10 (HOOI time per tensor and scheme) and Fig. 11 (TTM / SVD / comm breakup)."""
    written, lines = [], []
    times = _pivot(rows, "hooi_time")
    fig, ax = plt.subplots(figsize=(8, 4.2))
    x = np.arange(len(times.index))
    width = 0.8 / max(1, len(times.columns))
    for i, s in enumerate(times.columns):
        ax.bar(x + (i - (len(times.columns) - 1) / 2) * width, times[s].to_numpy(dtype=float), width, label=LABEL[s])
    ax.set_xticks(x, times.index, rotation=20, ha="right")
    ax.set_ylabel("HOOI time, one invocation (s)")
    ax.set_title(f"Fig. 10 HOOI time, {suffix.replace('_', ' ')}, {execution}")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    written += save_figure(fig, out_dir, f"fig10_hooi_{suffix}", times.rename(columns=LABEL).reset_index())
    parts = [c for c in ("ttm_time", "svd_time", "comm_time") if c in rows.columns]
    datasets = list(times.index)
    fig, axes = plt.subplots(1, len(datasets), figsize=(3.2 * len(datasets), 3.8), squeeze=False)
    points = []
    for ax, ds in zip(axes[0], datasets):
        part = rows[rows["dataset"] == ds].groupby("algorithm")[parts].median().reindex(list(times.columns))
        bottom = np.zeros(len(part))
        for c in parts:
            vals = part[c].to_numpy(dtype=float)
            ax.bar(np.arange(len(part)), vals, bottom=bottom, label=c.replace("_time", "").upper())
            bottom += np.nan_to_num(vals)
            points += [{"dataset": ds, "scheme": LABEL[s], "component": c, "seconds": v} for s, v in zip(part.index, vals)]
        ax.set_xticks(np.arange(len(part)), [LABEL[s] for s in part.index], rotation=30, ha="right")
        ax.set_title(ds)
    axes[0][0].set_ylabel("seconds (max over ranks)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"Fig. 11 HOOI time breakup, {suffix.replace('_', ' ')}, {execution}")
    fig.tight_layout()
    written += save_figure(fig, out_dir, f"fig11_breakup_{suffix}", pd.DataFrame(points))
    big = times.loc[[d for d in times.index if d in FIG14_HOOI_S]]
    if len(big):
        written += write_table(side_by_side(big, FIG14_HOOI_S, "hooi_time"), out_dir / f"fig14_big_{suffix}")
        lines.append(f"Fig. 14 (big tensors): see `fig14_big_{suffix}.md`.")
    dist = _pivot(rows, "dist_time")
    table = side_by_side(dist, FIG16_DIST_S, "dist_time")
    if "lite" in times.columns:
        table["HOOI Lite (this run)"] = [_fmt(times.loc[d, "lite"]) if d in times.index else "x" for d in dist.index]
        table["HOOI Lite (paper)"] = [_fmt(FIG16_DIST_S.get(d, {}).get("hooi_lite")) if d in FIG16_DIST_S else "-"
                                      for d in dist.index]
    written += write_table(table, out_dir / f"fig16_dist_{suffix}")
    return written, lines


def memory_table(rows: pd.DataFrame, out_dir: Path, suffix: str) -> list[Path]:
    """Fig. 17(a): average memory per rank, this run beside the paper's (512 ranks, K = 10)."""
    return write_table(side_by_side(_pivot(rows, "mem_total_mb"), FIG17A_MEMORY_MB, "mem_total_mb"),
                       out_dir / f"fig17a_paper_{suffix}")


def scaling(df: pd.DataFrame, out_dir: Path) -> tuple[list[Path], list[str]]:
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
    written = write_table(side_by_side(table, FIG15A_SPEEDUP, "speedup"), out_dir / "fig15a_speedup")
    lite = ok[ok["algorithm"] == "lite"]
    fig, ax = plt.subplots(figsize=(6, 4))
    points = []
    for ds, part in lite.groupby("dataset"):
        s = part.groupby("ranks")["hooi_time"].median().sort_index()
        sp = s.iloc[0] / s
        ax.plot(s.index, sp.to_numpy(), marker="o", label=ds)
        points += [{"dataset": ds, "ranks": int(r), "speedup": float(v)} for r, v in sp.items()]
    ax.plot(ranks, [r / lo for r in ranks], color="0.4", ls="--", label="ideal")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks")
    ax.set_ylabel(f"speed-up over {lo} ranks")
    ax.set_title("Fig. 15(b) Lite strong scaling")
    ax.legend(fontsize=8)
    fig.tight_layout()
    written += save_figure(fig, out_dir, "fig15b_lite_scaling", pd.DataFrame(points))
    return written, [f"Fig. 15(a): speed-up from {lo} to {hi} ranks (the paper: 32 to 512)."]
