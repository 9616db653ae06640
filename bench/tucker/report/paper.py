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

from spbench.report.figures import panel_grid, plain_log_ticks, save_figure  # noqa: E402
from spbench.report.tables import write_table  # noqa: E402
from spbench.tucker.schemes import SCHEMES as REGISTRY  # noqa: E402

#: the order of the paper's figures (§5–§6); the names are the registry's figure labels
SCHEMES = ("coarse", "medium", "hyper", "lite")
LABEL = {name: scheme.label for name, scheme in REGISTRY.items()}
#: the scheme the paper proposes, the one its statements, Fig. 10's divisor and Fig. 16's HOOI column are about
HEADLINE = "lite"

#: the rank count and K of the paper's printed numbers (tucker-lite §7.1)
PAPER_RANKS, PAPER_K = 512, 10
#: Fig. 10's three configurations (P, K) → its panel; §7.2: "Lite offers the best performance on
#: all the datasets and configurations" (the medium tensors)
FIG10_CONFIGS = {(32, 10): "a", (512, 10): "b", (512, 20): "c"}
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


def side_by_side(ours: pd.DataFrame, paper: dict | None, value_name: str, *, ours_at: str = "",
                 paper_at: str = "", shown: dict | None = None) -> pd.DataFrame:
    """One row per data set: per scheme 'this run' and 'paper' columns (paper values only for its
    tensors; no paper columns when ``paper`` is None: this run is not at the paper's P and K).
    ``ours_at``/``paper_at`` name the rank counts in the headings (", P=512"); ``shown`` maps a
    data set to its shown name (stand-ins marked)."""
    schemes = [s for s in SCHEMES if s in ours.columns]
    rows = []
    for ds in ours.index:
        row = {"dataset": (shown or {}).get(ds, ds)}
        for s in schemes:
            row[f"{LABEL[s]} (this run{ours_at})"] = _fmt(ours.loc[ds, s])
            if paper is not None:
                row[f"{LABEL[s]} (paper{paper_at})"] = _fmt(paper.get(ds, {}).get(s)) if ds in paper else "-"
        rows.append(row)
    return pd.DataFrame(rows)


def _pivot(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    table = rows.pivot_table(index="dataset", columns="algorithm", values=column, aggfunc="median")
    return table[[s for s in SCHEMES if s in table.columns]]


def _at(ranks: int, K: int) -> tuple[str, str]:
    """Headings' suffixes for this run's and the paper's values (512 ranks, K = 10)."""
    return f", P={ranks}" + (f", K={K}" if K != PAPER_K else ""), f", P={PAPER_RANKS}"


def _bars(ax, values: pd.DataFrame, low: pd.DataFrame, high: pd.DataFrame) -> None:
    """Grouped bars per data set and scheme, error bars (95% bootstrap interval of the median over
    runs) where a point has several runs; a log axis when the values span more than a decade."""
    x = np.arange(len(values.index))
    width = 0.8 / max(1, len(values.columns))
    for i, s in enumerate(values.columns):
        v = values[s].to_numpy(dtype=float)
        err = np.vstack([v - low[s].to_numpy(dtype=float), high[s].to_numpy(dtype=float) - v])
        has = np.isfinite(err).all(axis=0)
        ax.bar(x + (i - (len(values.columns) - 1) / 2) * width, v, width, label=LABEL[s],
               yerr=np.where(has, err, 0.0), capsize=2 if has.any() else 0,
               error_kw={"elinewidth": 0.8})
    ax.set_xticks(x, values.index, rotation=20, ha="right")
    finite = values.to_numpy(dtype=float)
    finite = finite[np.isfinite(finite) & (finite > 0)]
    if finite.size and finite.max() / finite.min() > 10:
        ax.set_yscale("log")
        ax.figure.canvas.draw()
        plain_log_ticks(ax.yaxis)


def _reference(times: pd.DataFrame) -> tuple[pd.Series, str]:
    """Fig. 10's divisor per data set: Lite's time (the paper's Fig. 10 gives times relative per
    tensor; §7.2 quotes them as factors over Lite), else the fastest scheme's."""
    if HEADLINE in times.columns and times[HEADLINE].notna().all():
        return times[HEADLINE], LABEL[HEADLINE]
    return times.min(axis=1), "the fastest scheme"


def at_point(points: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """A per-(ranks, K) figure's plotted points with its rank count and K as columns (its file name
    gives them, ``_P4_K10``; the CSV holds them too)."""
    return points.assign(**{c: int(rows[c].iloc[0]) for c in ("ranks", "K") if c in rows and rows[c].nunique() == 1})


def fig10(rows: pd.DataFrame, out_dir: Path, suffix: str, tag: str, shown: dict) -> list[Path]:
    """Fig. 10: HOOI time per tensor and scheme, normalised per tensor by Lite's (each tensor's
    seconds over Lite's on it; Lite's seconds printed above its bar and in the CSV)."""
    times = _pivot(rows, "hooi_time")
    low, high = (_pivot(rows, c).reindex_like(times) if c in rows else times * np.nan
                 for c in ("hooi_time_ci_low", "hooi_time_ci_high"))
    ref, ref_name = _reference(times)
    norm = times.div(ref, axis=0)
    fig, ax = plt.subplots(figsize=(8.5, 4.6), layout="constrained")
    _bars(ax, norm.rename(index=shown), low.div(ref, axis=0).rename(index=shown),
          high.div(ref, axis=0).rename(index=shown))
    ax.axhline(1.0, color="0.3", lw=0.8, ls="--")
    if HEADLINE in norm.columns:
        at = list(norm.columns).index(HEADLINE)
        width = 0.8 / len(norm.columns)
        for x, (ds, seconds) in enumerate(times[HEADLINE].items()):
            if np.isfinite(seconds):
                ax.annotate(f"{seconds:.3g} s", (x + (at - (len(norm.columns) - 1) / 2) * width, norm.loc[ds, HEADLINE]),
                            xytext=(0, 3), textcoords="offset points", ha="center", va="bottom", fontsize=7)
    ax.set_ylabel(f"HOOI time / {ref_name}'s on the tensor")
    ax.grid(axis="y", which="both", alpha=0.3)
    ci = "; bars: 95% bootstrap interval of the median over runs" if np.isfinite(low.to_numpy(float)).any() else ""
    ax.set_title(f"Fig. 10 HOOI time, one invocation, normalised per tensor to {ref_name}'s "
                 f"(its seconds above its bar), {suffix.replace('_', ' ')}\n{tag}{ci}", fontsize=9)
    fig.legend(fontsize=8, loc="outside right upper")
    points = norm.rename(columns=lambda s: f"{LABEL[s]} / {ref_name}").join(
        times.rename(columns=lambda s: f"{LABEL[s]} seconds"))
    points = points.join(low.rename(columns=lambda s: f"{LABEL[s]} ci_low seconds")).join(
        high.rename(columns=lambda s: f"{LABEL[s]} ci_high seconds"))
    for bound, seconds in (("ci_low", low), ("ci_high", high)):  # the error bars as drawn
        points = points.join(seconds.div(ref, axis=0).rename(columns=lambda s: f"{LABEL[s]} {bound} / {ref_name}"))
    return save_figure(fig, out_dir, f"fig10_hooi_{suffix}", at_point(points.rename(index=shown).reset_index(), rows))


#: Fig. 11's stack: the components that partition the HOOI time (spbench.tucker.hooi.loop.PARTITION)
BREAKUP = (("ttm_time", "TTM"), ("svd_time", "SVD (local)"), ("comm_time", "communication"), ("other_time", "other"))


def fig11(rows: pd.DataFrame, out_dir: Path, suffix: str, tag: str, shown: dict, schemes: list) -> list[Path]:
    """Fig. 11: the HOOI time of each tensor and scheme stacked by its partition (TTM, the SVD's
    local work, every message, the rest), so each bar's top is the HOOI time (the marker);
    each segment's share of it is written inside when it is wide enough to read, a thin TTM
    segment's under its scheme's name."""
    parts = [(c, name) for c, name in BREAKUP if c in rows.columns]
    datasets = list(_pivot(rows, "hooi_time").index)
    fig, axes = panel_grid(len(datasets), 1.6)
    points = []
    for ax, ds in zip(axes, datasets):
        part = rows[rows["dataset"] == ds].groupby("algorithm")[[c for c, _ in parts] + ["hooi_time"]].median()
        part = part.reindex(schemes)
        x = np.arange(len(part))
        bottom = np.zeros(len(part))
        total = part["hooi_time"].to_numpy(dtype=float)
        for colour, (c, name) in enumerate(parts):
            vals = np.nan_to_num(part[c].to_numpy(dtype=float))
            bars = ax.bar(x, vals, bottom=bottom, label=name, color=f"C{colour}")
            for bar, v, t in zip(bars, vals, total):
                if t > 0 and v / t >= 0.08:
                    ax.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + v / 2, f"{v / t:.0%}",
                            ha="center", va="center", fontsize=6, color="white")

            bottom += vals
            points += [{"dataset": shown.get(ds, ds), "scheme": LABEL[s], "component": c, "seconds": v,
                        "share_of_hooi_time": v / t if t > 0 else np.nan, "hooi_time": t}
                       for s, v, t in zip(part.index, vals, total)]
        ax.scatter(x, total, marker="_", s=300, color="black", zorder=3, label="HOOI time")
        ttm = np.nan_to_num(part["ttm_time"].to_numpy(dtype=float)) / np.where(total > 0, total, np.nan)
        ax.set_xticks(x, [LABEL[s] + (f"\nTTM {f:.1%}" if f < 0.08 else "") for s, f in zip(part.index, ttm)],
                      rotation=30, ha="right")
        ax.set_title(shown.get(ds, ds), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("seconds (the slowest rank's)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="outside right center")
    fig.suptitle(f"Fig. 11 HOOI time breakup (the parts add up to the HOOI time), {suffix.replace('_', ' ')}\n{tag}",
                 fontsize=10)
    return save_figure(fig, out_dir, f"fig11_breakup_{suffix}", at_point(pd.DataFrame(points), rows))


def at_paper_point(ranks: int, K: int) -> bool:
    """Whether this run's (ranks, K) is the paper's printed one (512 ranks, K = 10): the only
    point where its values are put beside the paper's."""
    return int(ranks) == PAPER_RANKS and int(K) == PAPER_K


def hooi_figures(rows: pd.DataFrame, out_dir: Path, suffix: str, tag: str, *, ranks: int, K: int,
                 shown: dict | None = None) -> tuple[list[Path], list[str]]:
    """Fig. 10 (HOOI time normalised per tensor), Fig. 11 (its partition), Fig. 14 and Fig. 16's
    tables (beside the paper's values only at its 512 ranks, K = 10)."""
    shown = shown or {}
    times = _pivot(rows, "hooi_time")
    written = fig10(rows, out_dir, suffix, tag, shown)
    written += fig11(rows, out_dir, suffix, tag, shown, list(times.columns))
    lines = [f"Fig. 10 is normalised per tensor: each tensor's HOOI times divided by {_reference(times)[1]}'s on "
             f"it (the paper's Fig. 10 plots times relative per tensor; §7.2 quotes them as factors over Lite)."]
    paper = at_paper_point(ranks, K)
    if not paper:
        lines.append(f"Figs. 14 and 16 show this run's values alone: the paper prints them at {PAPER_RANKS} ranks, "
                     f"K = {PAPER_K}, not at P = {ranks}, K = {K}.")
    ours_at, paper_at = _at(ranks, K)
    big = times.loc[[d for d in times.index if d in FIG14_HOOI_S]]
    if len(big):
        written += write_table(side_by_side(big, FIG14_HOOI_S if paper else None, "hooi_time", ours_at=ours_at,
                                            paper_at=paper_at, shown=shown), out_dir / f"fig14_big_{suffix}")
        lines.append(f"Fig. 14 (big tensors): see `fig14_big_{suffix}.md`.")
    dist = _pivot(rows, "dist_time")
    table = side_by_side(dist, FIG16_DIST_S if paper else None, "dist_time", ours_at=ours_at, paper_at=paper_at,
                         shown=shown)
    if HEADLINE in times.columns:
        table[f"HOOI Lite (this run{ours_at})"] = [_fmt(times.loc[d, HEADLINE]) if d in times.index else "x"
                                                   for d in dist.index]
        if paper:
            table[f"HOOI Lite (paper{paper_at})"] = [_fmt(FIG16_DIST_S.get(d, {}).get("hooi_lite"))
                                                     if d in FIG16_DIST_S else "-" for d in dist.index]
    written += write_table(table, out_dir / f"fig16_dist_{suffix}")
    return written, lines


def memory_table(rows: pd.DataFrame, out_dir: Path, suffix: str, *, ranks: int, K: int,
                 shown: dict | None = None) -> list[Path]:
    """Fig. 17(a): average memory per rank, beside the paper's only at its 512 ranks, K = 10."""
    ours_at, paper_at = _at(ranks, K)
    paper = FIG17A_MEMORY_MB if at_paper_point(ranks, K) else None
    return write_table(side_by_side(_pivot(rows, "mem_total_mb"), paper, "mem_total_mb",
                                    ours_at=ours_at, paper_at=paper_at, shown=shown),
                       out_dir / f"fig17a_paper_{suffix}")


def _speedups(ok: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    """Data set × scheme: the median HOOI time at ``lo`` ranks over that at ``hi``."""
    t = ok.groupby(["dataset", "algorithm", "ranks"])["hooi_time"].median()
    speed = {}
    for (ds, alg), part in t.groupby(level=[0, 1]):
        series = part.droplevel([0, 1])
        if lo in series.index and hi in series.index:
            speed.setdefault(ds, {})[alg] = series[lo] / series[hi]
    return pd.DataFrame(speed).T


def _lite_scaling(lite: pd.DataFrame, ranks: list, out_dir: Path, K: int, tag: str, shown: dict) -> list[Path]:
    """Fig. 15(b): Lite's speed-up over the smallest rank count at every count, log-log with the
    ideal line; powers of two labelled plainly on both axes, each tensor's last value written."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    lo = ranks[0]
    fig, ax = plt.subplots(figsize=(7.5, 4.4), layout="constrained")
    points, values = [], [1.0, ranks[-1] / lo]
    for ds, part in lite.groupby("dataset"):
        s = part.groupby("ranks")["hooi_time"].median().sort_index()
        sp = s.iloc[0] / s
        line, = ax.plot(s.index, sp.to_numpy(), marker="o", label=shown.get(ds, ds))
        ax.annotate(f"{sp.iloc[-1]:.1f}×", (s.index[-1], sp.iloc[-1]), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=7, color=line.get_color())
        values += list(sp.to_numpy())
        points += [{"dataset": shown.get(ds, ds), "K": int(K), "ranks": int(r), "hooi_time": float(s[r]),
                    "speedup": float(v)} for r, v in sp.items()]
    ax.plot(ranks, [r / lo for r in ranks], color="0.4", ls="--", label="ideal")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(ranks, [str(int(r)) for r in ranks])
    finite = [v for v in values if np.isfinite(v) and v > 0]
    # from the power of two below the lowest point, every power of two ticked (LogLocator thins them
    # out), so each point lies between two labelled ticks
    low, high = 2.0 ** np.floor(np.log2(min(finite) / 1.1)), max(finite) * 1.25
    ax.set_ylim(low, high)
    ax.yaxis.set_major_locator(FixedLocator([2.0 ** k for k in range(int(np.floor(np.log2(low))),
                                                                      int(np.ceil(np.log2(high))) + 1)]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(which="major", alpha=0.3)
    ax.set_xlabel("ranks")
    ax.set_ylabel(f"speed-up over {lo} rank{'s' if lo != 1 else ''}")
    ax.set_title(f"Fig. 15(b) Lite strong scaling, K = {K}\n{tag}", fontsize=9)
    fig.legend(fontsize=8, loc="outside right upper")
    return save_figure(fig, out_dir, f"fig15b_lite_scaling_K{K}", pd.DataFrame(points))


def scaling(df: pd.DataFrame, out_dir: Path, shown: dict | None = None,
            tag: str = "") -> tuple[list[Path], list[str]]:
    """Fig. 15 per K: (a) speed-up from the smallest to the largest rank count per tensor and
    scheme, beside the paper's 32 → 512 only when those are this run's counts and K = 10; (b)
    Lite's strong scaling over every rank count present."""
    ok = df[(df["status"] == "ok") & df["hooi_time"].notna()]
    shown = shown or {}
    written, lines = [], []
    for K, part in ok.groupby("K", sort=True):
        K = int(K)
        ranks = sorted(int(r) for r in part["ranks"].unique())
        if len(ranks) < 2:
            lines.append(f"Fig. 15 (K = {K}) needs HOOI times (measured or modelled) at two or more rank counts.")
            continue
        lo, hi = ranks[0], ranks[-1]
        paper = (lo, hi, K) == (32, PAPER_RANKS, PAPER_K)
        written += write_table(side_by_side(_speedups(part, lo, hi), FIG15A_SPEEDUP if paper else None, "speedup",
                                            ours_at=f", P={lo}→{hi}", paper_at=", P=32→512", shown=shown),
                               out_dir / f"fig15a_speedup_K{K}")
        lines.append(f"Fig. 15(a), K = {K}: speed-up from {lo} to {hi} ranks, {tag}"
                     + ("; the paper's are from 32 to 512 ranks, K = 10." if paper else
                        f"; the paper's (32 to 512 ranks, K = 10) are not beside it: another range or K."))
        lite = part[part["algorithm"] == HEADLINE]
        if len(lite):
            written += _lite_scaling(lite, ranks, out_dir, K, tag, shown)
    return written, lines
