"""Figures and tables of the tucker-lite paper from result rows (Figs. 12, 13, 17).

One figure set per (ranks, K): the paper shows 512 ranks and K = 10, a sweep may hold more.
Each figure is PNG + PDF with the CSV of exactly its plotted values beside it; every title says
whether the rows were measured or simulated, whether the tensors are the paper's or stand-ins and
their size against the paper's (:mod:`.provenance`; the metrics are exact either way).
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.report.failed_rows import failed_rows_section  # noqa: E402
from spbench.report.figures import panel_grid, plain_log_ticks, save_figure  # noqa: E402
from spbench.report.intervals import median_interval, point_samples  # noqa: E402
from spbench.report.labels import display_map  # noqa: E402
from spbench.tucker.report import paper as tucker_paper  # noqa: E402
from spbench.tucker.report.provenance import rows_tag  # noqa: E402
from spbench.report.tables import write_table  # noqa: E402

#: the paper's order of the schemes (§5–§6) and their figure labels (from the scheme registry)
SCHEME_ORDER = tucker_paper.SCHEMES
SCHEME_LABEL = tucker_paper.LABEL
#: Fig. 12's three normalized metrics (tucker-lite §7.2): column, panel title, y label
FIG12 = (
    ("a", "ttm_imbalance", "TTM load imbalance", "E_max / (|E|/P)  (optimal 1)"),
    ("b", "svd_redundancy", "SVD computational load", "R_sum / L  (optimal 1)"),
    ("c", "svd_imbalance", "SVD load imbalance", "R_max / (R_sum/P)  (optimal 1)"),
)
MEMORY_PARTS = (("mem_tensor_mb", "tensor"), ("mem_penultimate_mb", "penultimate"),
                ("mem_factor_mb", "factor matrices"))
#: a stacked part below this share of its bar is too thin to see: its share is written under the bar
THIN_PART = 0.08


def _schemes(df: pd.DataFrame) -> list[str]:
    present = set(df["algorithm"].astype(str))
    return [s for s in SCHEME_ORDER if s in present] + sorted(present - set(SCHEME_ORDER))


def _label(scheme: str) -> str:
    return SCHEME_LABEL.get(scheme, scheme)


def configurations(df: pd.DataFrame) -> list[tuple[int, int, pd.DataFrame]]:
    """(ranks, K, the ok rows of that pair; one row per (dataset, scheme): median over repeats, its
    ranks and K, and the 95% bootstrap interval of the median HOOI time where there are several runs)."""
    ok = df[df["status"] == "ok"]
    out = []
    for (ranks, K), part in ok.groupby(["ranks", "K"], sort=True):
        numeric = part.select_dtypes(include="number").columns.difference(["ranks", "K", "repeat"])
        agg = part.groupby(["dataset", "algorithm"], sort=False)[list(numeric)].median().reset_index()
        agg = agg.assign(ranks=int(ranks), K=int(K))  # the figures' CSVs name their point
        out.append((int(ranks), int(K), _with_intervals(agg, part, ["dataset", "algorithm"])))
    return out


def _with_intervals(table: pd.DataFrame, rows: pd.DataFrame, keys: list[str],
                    column: str = "hooi_time") -> pd.DataFrame:
    """``table`` with ``<column>_ci_low/high``: bootstrap 95% interval of the median over the runs of
    each ``keys`` group of ``rows`` (NaN with one run)."""
    if column not in rows.columns:
        return table
    bounds = {}
    for key, part in rows.groupby(keys, sort=False):
        bounds[key] = median_interval(point_samples(part, column))
    pairs = [bounds.get(tuple(k), (np.nan, np.nan)) for k in table[keys].itertuples(index=False)]
    return table.assign(**{f"{column}_ci_low": [p[0] for p in pairs], f"{column}_ci_high": [p[1] for p in pairs]})


def _outside_legend(fig, ax) -> None:
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="outside right center")  # clear of a suptitle


def _grouped_bars(ax, table: pd.DataFrame, schemes: list[str]) -> None:
    """Bars per data set (groups) and scheme (colours) of a dataset × scheme table; a log axis with
    plain ticks when the values span more than a decade."""
    datasets = list(table.index)
    width = 0.8 / max(1, len(schemes))
    x = np.arange(len(datasets))
    for i, s in enumerate(schemes):
        ax.bar(x + (i - (len(schemes) - 1) / 2) * width, table[s].to_numpy(dtype=float), width, label=_label(s))
    ax.set_xticks(x, datasets, rotation=20, ha="right")
    values = table[schemes].to_numpy(dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if values.size and values.max() / values.min() > 10:
        ax.set_yscale("log")
        ax.figure.canvas.draw()
        plain_log_ticks(ax.yaxis)
    ax.grid(axis="y", which="both", alpha=0.3)


def fig12(rows: pd.DataFrame, out_dir: Path, suffix: str, tag: str,
          shown: dict | None = None) -> list[Path]:
    """Fig. 12 a/b/c: TTM imbalance, SVD redundancy, SVD imbalance per tensor and scheme."""
    schemes, written = _schemes(rows), []
    for letter, column, title, ylabel in FIG12:
        table = rows.pivot(index="dataset", columns="algorithm", values=column)[schemes].rename(index=shown or {})
        fig, ax = plt.subplots(figsize=(8.8, 4.2), layout="constrained")
        _grouped_bars(ax, table, schemes)
        ax.axhline(1.0, color="0.3", lw=0.8, ls="--")
        ax.set_ylabel(ylabel)
        ax.set_title(f"Fig. 12({letter}) {title}, {suffix.replace('_', ' ')}\n{tag}", fontsize=9)
        _outside_legend(fig, ax)
        points = table.rename(columns=_label).reset_index()
        written += save_figure(fig, out_dir, f"fig12{letter}_{column}_{suffix}", tucker_paper.at_point(points, rows))
    return written


def fig13(rows: pd.DataFrame, out_dir: Path, suffix: str, tag: str,
          shown: dict | None = None) -> list[Path]:
    """Fig. 13: communication volume per tensor, SVD oracle part and factor-matrix part stacked."""
    schemes = _schemes(rows)
    shown = shown or {}
    datasets = sorted(rows["dataset"].unique())
    fig, axes = panel_grid(len(datasets), 1.2)
    points = []
    for ax, ds in zip(axes, datasets):
        part = rows[rows["dataset"] == ds].set_index("algorithm").reindex(schemes)
        svd = part["svd_volume"].to_numpy(dtype=float) / 1e6
        fm = part["fm_volume"].to_numpy(dtype=float) / 1e6
        x = np.arange(len(schemes))
        ax.bar(x, svd, label="SVD")
        ax.bar(x, fm, bottom=svd, label="FM")
        ax.set_xticks(x, [_label(s) for s in schemes], rotation=30, ha="right")
        ax.set_title(shown.get(ds, ds), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        points += [{"dataset": shown.get(ds, ds), "scheme": _label(s), "svd_mwords": a, "fm_mwords": b}
                   for s, a, b in zip(schemes, svd, fm)]
    axes[0].set_ylabel("words communicated per HOOI (millions)")
    _outside_legend(fig, axes[0])
    fig.suptitle(f"Fig. 13 communication volume, {suffix.replace('_', ' ')}\n{tag}", fontsize=10)
    return save_figure(fig, out_dir, f"fig13_volume_{suffix}", tucker_paper.at_point(pd.DataFrame(points), rows))


def fig17(rows: pd.DataFrame, out_dir: Path, suffix: str, tag: str,
          shown: dict | None = None) -> list[Path]:
    """Fig. 17: (a) average memory per rank table, (b–) its breakup per tensor as stacked bars."""
    schemes = _schemes(rows)
    shown = shown or {}
    total = rows.pivot(index="dataset", columns="algorithm", values="mem_total_mb")[schemes].rename(index=shown)
    written = write_table(total.rename(columns=_label).reset_index(), out_dir / f"fig17a_memory_{suffix}")
    datasets = sorted(rows["dataset"].unique())
    fig, axes = panel_grid(len(datasets), 1.6)
    points = []
    for ax, ds in zip(axes, datasets):
        part = rows[rows["dataset"] == ds].set_index("algorithm").reindex(schemes)
        bottom = np.zeros(len(schemes))
        x = np.arange(len(schemes))
        for column, name in MEMORY_PARTS:
            vals = part[column].to_numpy(dtype=float)
            ax.bar(x, vals, bottom=bottom, label=name)
            bottom += vals
            points += [{"dataset": shown.get(ds, ds), "scheme": _label(s), "component": name, "mb_per_rank": v}
                       for s, v in zip(schemes, vals)]
        # a part too thin to see at this scale (the tensor's share on tiny stand-ins) is named under its bar
        share = part["mem_tensor_mb"].to_numpy(dtype=float) / np.where(bottom > 0, bottom, np.nan)
        ax.set_xticks(x, [_label(s) + (f"\ntensor {f:.1%}" if f < THIN_PART else "") for s, f in zip(schemes, share)],
                      rotation=30, ha="right")
        ax.set_title(shown.get(ds, ds), fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("average memory per rank (MB)")
    _outside_legend(fig, axes[0])
    fig.suptitle(f"Fig. 17 memory breakup, {suffix.replace('_', ' ')}\n{tag}", fontsize=10)
    return written + save_figure(fig, out_dir, f"fig17_memory_{suffix}",
                                 tucker_paper.at_point(pd.DataFrame(points), rows))


def tucker_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, scheme, ranks, K): the exact metrics, volumes, memory and distribution time, the
    median HOOI time's 95% bootstrap interval over runs (``hooi_time_ci_low/high``, NaN with one run);
    stand-ins marked in ``dataset``."""
    ok = df[df["status"] == "ok"]
    cols = ["nnz", "ttm_imbalance", "svd_redundancy", "svd_imbalance", "svd_volume", "fm_volume",
            "mem_total_mb", "mem_total_mb_max", "hooi_time", "ttm_time", "svd_time", "comm_time", "other_time",
            "fit", "peak_rss_mb_max", "dist_time"]
    cols = [c for c in cols if c in ok.columns and ok[c].notna().any()]
    keys = ["dataset", "algorithm", "ranks", "K", "execution"]
    table = ok.groupby(keys, sort=True)[cols].median().reset_index()
    if "hooi_time" in cols:
        table = _with_intervals(table, ok, keys)
        at = cols.index("hooi_time") + 1
        cols[at:at] = ["hooi_time_ci_low", "hooi_time_ci_high"]
    table["scheme"] = table["algorithm"].map(_label)
    table["dist_ms"] = table.pop("dist_time") * 1e3 if "dist_time" in table else np.nan
    table["dataset"] = table["dataset"].map(display_map(df))
    return table[["dataset", "scheme", "ranks", "K", "execution"] + [c for c in cols if c != "dist_time"] + ["dist_ms"]]


def write_tucker_profile(df: pd.DataFrame, out_dir) -> list[Path]:
    """Profile ONE Tucker sweep: summary table, Figs. 12 a/b/c, 13, 17 per (ranks, K), REPORT.md."""
    if df is None or len(df) == 0:
        raise ValueError("no result rows to profile (empty frame)")
    configs = sorted(set(df["config"].dropna().astype(str)))
    if len(configs) > 1:
        raise ValueError(f"rows of several sweeps {configs}; profile one sweep at a time")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = write_table(tucker_summary(df), out_dir / "summary")
    execs = sorted(set(df["execution"].astype(str)))
    ok = df["status"] == "ok"
    lines = [f"# Tucker profile: {configs[0] if configs else 'sweep'}", "", "## Rows", "",
             f"- {len(df)} result rows ({', '.join(execs)}), {int(ok.sum())} with status ok."]
    if (~ok).any():
        bad = df.loc[~ok, "status"].value_counts().sort_index()
        lines.append("- Left out (status not ok): " + ", ".join(f"{k} {v}" for k, v in bad.items()) + ".")
    sources = df.groupby("dataset")["dataset_source"].first() if "dataset_source" in df else pd.Series(dtype=str)
    synthetic = sorted(sources[sources == "synthetic"].index)
    if synthetic:
        labels = (df.groupby("dataset")["dataset_label"].first() if "dataset_label" in df
                  else pd.Series(dtype=str))
        named = [f"{d} = {labels[d]}" if d in labels.index and pd.notna(labels[d]) and labels[d] != d else d
                 for d in synthetic]
        lines.append(f"- Synthetic stand-ins (not the FROSTT tensors), marked \"(stand-in)\" in every figure and "
                     f"table: {'; '.join(named)}. Shapes of the paper's figures, not its values, are what they "
                     f"can reproduce.")
    if "simulated" in execs:
        lines.append("- Simulated rows: exact policies and metrics for the given rank count, computed in one "
                     "process; `dist_time` is the serial scheme computation on this machine.")
    lines += ["", *failed_rows_section(df)]
    from spbench.report.measurement_conditions import conditions_section
    lines += conditions_section(df, "ranks")  # busy machine, oversubscribed ranks
    from spbench.tucker.report.representativeness import representativeness_section
    lines += representativeness_section(df)
    shown = display_map(df)
    for ranks, K, rows in configurations(df):
        suffix = f"P{ranks}_K{K}"
        tag = rows_tag(df[(df["ranks"] == ranks) & (df["K"] == K) & ok])
        lines += [f"## {ranks} ranks, K = {K}", ""]
        sections = []
        if "hooi_time" in rows.columns and rows["hooi_time"].notna().any():
            files, notes = tucker_paper.hooi_figures(rows, out_dir, suffix, tag, ranks=ranks, K=K,
                                                     shown=shown)
            sections.append(("Figs. 10, 11, 14, 16: HOOI time, breakup, distribution time", files))
            lines += [f"- {n}" for n in notes]
        else:
            lines += ["**Figs. 10, 11, 14 and 16 are not drawn: these rows have no HOOI times** (simulated "
                      "without a Tucker cost model). Measure this machine once with `spbench calibrate "
                      "--experiment tucker` and rerun the sweep for modelled times, or run it with "
                      "`--execution measured` (MPI) for measured ones.", ""]
        if ranks > 1:  # at one rank every normalized metric of Fig. 12 is trivially 1
            sections.append(("Fig. 12: computation metrics", fig12(rows, out_dir, suffix, tag, shown)))
        else:
            lines += ["Fig. 12 is not drawn at P = 1: every normalized load metric is 1 there.", ""]
        sections += [("Fig. 13: communication volume", fig13(rows, out_dir, suffix, tag, shown)),
                     ("Fig. 17: memory per rank", fig17(rows, out_dir, suffix, tag, shown)
                      + tucker_paper.memory_table(rows, out_dir, suffix, ranks=ranks, K=K, shown=shown))]
        for title, files in sections:
            written += files
            lines += [f"### {title}", ""]
            for path in files:
                if path.suffix == ".png":
                    lines += [f"![{path.stem}]({path.name})", "",
                              f"[PDF]({path.with_suffix('.pdf').name}) · [points (CSV)]({path.with_suffix('.csv').name})", ""]
                elif path.suffix == ".md":
                    lines += [path.read_text(), ""]
    if "hooi_time" in df.columns and df["hooi_time"].notna().any():
        files, notes = tucker_paper.scaling(df, out_dir, shown, rows_tag(df[ok]))
        written += files
        lines += ["## Fig. 15: scaling", "", *[f"- {n}" for n in notes], ""]
        for path in files:
            if path.suffix == ".png":
                lines += [f"![{path.stem}]({path.name})", ""]
            elif path.suffix == ".md":
                lines += [path.read_text(), ""]
    from spbench.tucker.report.components import components_section
    files, component_lines = components_section(df, out_dir)
    written += files
    lines += component_lines
    lines += ["The paper's columns are its 512-rank, K = 10 numbers on the real FROSTT tensors (Power-8 "
              "cluster, §7.1), shown only beside this run's values at the same P and K (Fig. 15(a): 32 to 512 "
              "ranks, K = 10); this run's come from this machine and, for stand-ins, from synthetic tensors of "
              "the size each title states.", ""]
    from spbench.report.model_report import error_section, model_error
    err = model_error(df, keys=["dataset", "algorithm", "ranks", "K"], column="hooi_time")
    if len(err):
        files, err_lines = error_section(err, out_dir, "HOOI time")
        written += files
        lines += err_lines
    lines += ["## Summary", "", (out_dir / "summary.md").read_text(), "[CSV](summary.csv)", ""]
    from spbench.report.tables import write_text
    written.append(write_text(out_dir / "REPORT.md", "\n".join(lines)))
    return written
