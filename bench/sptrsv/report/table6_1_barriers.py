"""Paper 2's Table 6.1 (§6.3): synchronisation barriers relative to wavefronts, the geometric
mean of ``wavefronts / supersteps`` per data set group and core count, beside the paper's."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from spbench.sptrsv.report import paper_values as paper
from spbench.report.markdown_sections import details, paper_cell, section
from spbench.sptrsv.report.rows import geomean, nearest_cores, ok_rows, sort_groups
from spbench.sptrsv.report.summary import SERIAL
from spbench.sptrsv.report.table_section import write_table_section
from spbench.report import labels
from spbench.report.tables import format_markdown, write_csv
from spbench.sptrsv.schedulers import REGISTRY

P2P = tuple(name for name, declared in REGISTRY.items() if declared.kernel == "p2p")
"""Algorithms that synchronise point to point (their declared kernel is ``p2p``): no barriers, so
not in Table 6.1."""


def barrier_reduction(df: pd.DataFrame) -> pd.DataFrame:
    """Table 6.1: geometric mean over matrices of ``wavefronts / supersteps``.

    Per (group, cores, algorithm) over the ok rows of schedulers that synchronise by barriers:
    serial, the point-to-point SpMP and rows run with the ``p2p`` kernel are left out. A
    schedule's superstep count does not depend on the kernel or the execution, so one value per
    (dataset, algorithm, cores) is taken (the median of its rows). Columns: ``group, cores,
    algorithm, matrices, reduction`` and, for ElasticDivide, ``reduction_x2`` (its barriers are
    weak with staleness 2: the paper counts them twice, §6.3), NaN for the others.
    """
    rows = ok_rows(df)
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
    return sort_groups(out, "cores", "algorithm")[columns]


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
        near = nearest_cores([c for g, c in paper.TABLE_6_1 if g == group], int(cores))
        cells = paper.TABLE_6_1.get((group, near), {})
        for a in ("hdagg", "growlocal", "elastic_divide"):
            rec[f"paper (cores): {paper.ALGORITHM_NAMES[a]}"] = paper_cell(cells.get(a), near)
        doubled = cells.get("elastic_divide")
        rec["paper (cores): ElasticDivide ×2"] = paper_cell(
            None if doubled is None else doubled * paper.STALENESS, near)
        for a in ("hdagg", "growlocal", "elastic_divide"):
            mine = rec.get(f"this run: {a}", np.nan)
            rec[f"ratio: {paper.ALGORITHM_NAMES[a]}"] = (round(float(mine) / cells[a], 2)
                                                        if a in cells and np.isfinite(mine) else np.nan)
        records.append(rec)
    return pd.DataFrame(records)


#: a stand-in "meets the wavefront bound" when its average wavefront is within this factor of the
#: paper's (Tables A.1-A.3); Table 6.1's check compares GrowLocal / ElasticDivide on those matrices
WAVEFRONT_BOUND = 1.5
#: how close GrowLocal's (and ElasticDivide's) reduction should come to the paper's on them
REDUCTION_BOUND = 1.25


def paper_avg_wavefront(dataset: str) -> float | None:
    """The paper's average wavefront of a data set (Table A.1, A.2 or A.3 by its suffix), None if unlisted."""
    from spbench.datasets.paper_matrices import ICHOL_TABLE, METIS_TABLE, SUITESPARSE

    if dataset.endswith("+ichol"):
        row = ICHOL_TABLE.get(dataset)
    elif dataset.endswith("+metis"):
        row = METIS_TABLE.get(dataset)
    else:
        row = SUITESPARSE.get(dataset)
    return float(row.avg_wavefront) if row is not None else None


def wavefront_bound(df: pd.DataFrame) -> pd.DataFrame:
    """Per paper matrix of the rows: its average wavefront here (n / wavefronts) beside the paper's,
    the ratio, and whether it is within ``WAVEFRONT_BOUND`` (a real matrix is its own stand-in)."""
    rows = df[df["dataset"].astype(str).map(lambda d: paper_avg_wavefront(d) is not None)]
    rows = rows[pd.to_numeric(rows.get("wavefronts"), errors="coerce") > 0]
    columns = ["group", "dataset", "n", "nnz", "avg_wavefront", "paper_avg_wavefront", "ratio", "meets_bound"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    first = rows.groupby("dataset", as_index=False)[["n", "nnz", "wavefronts"]].first()
    first["group"] = first["dataset"].map(labels.dataset_group)
    first["avg_wavefront"] = (first["n"].astype(float) / first["wavefronts"].astype(float)).round(1)
    first["paper_avg_wavefront"] = first["dataset"].map(paper_avg_wavefront)
    ratio = first["n"].astype(float) / first["wavefronts"].astype(float) / first["paper_avg_wavefront"]
    first["meets_bound"] = (ratio <= WAVEFRONT_BOUND) & (ratio >= 1 / WAVEFRONT_BOUND)
    first["ratio"] = ratio.round(2)
    return sort_groups(first, "dataset")[columns]


def bound_check(df: pd.DataFrame, bound: pd.DataFrame) -> pd.DataFrame:
    """Table 6.1 over the matrices meeting the wavefront bound: per (group, cores, algorithm) this
    run's geometric mean beside the paper's printed value (at the nearest printed core count), the
    ratio and whether it is within ``REDUCTION_BOUND`` (GrowLocal and ElasticDivide)."""
    met = set(bound.loc[bound["meets_bound"].astype(bool), "dataset"])
    table = barrier_reduction(df[df["dataset"].astype(str).isin(met)]) if met else pd.DataFrame()
    records = []
    for rec in table.to_dict("records") if len(table) else []:
        if rec["algorithm"] not in ("growlocal", "elastic_divide", "hdagg"):
            continue
        near = nearest_cores([c for g, c in paper.TABLE_6_1 if g == rec["group"]], int(rec["cores"]))
        value = paper.TABLE_6_1.get((rec["group"], near), {}).get(rec["algorithm"])
        ratio = rec["reduction"] / value if value else np.nan
        records.append({"group": rec["group"], "cores": int(rec["cores"]),
                        "algorithm": paper.ALGORITHM_NAMES[rec["algorithm"]], "matrices": int(rec["matrices"]),
                        "this run": round(rec["reduction"], 2), "paper (cores)": paper_cell(value, near),
                        "ratio": round(ratio, 2) if np.isfinite(ratio) else np.nan,
                        "within": (bool(1 / REDUCTION_BOUND <= ratio <= REDUCTION_BOUND)
                                   if rec["algorithm"] != "hdagg" and np.isfinite(ratio) else None)})
    return pd.DataFrame(records)


def bound_summary(check: pd.DataFrame) -> list[str]:
    """The check's verdict in words: GrowLocal / ElasticDivide cells within the bound, counted."""
    lines = []
    for name in ("GrowLocal", "ElasticDivide"):
        part = check[check["algorithm"] == name] if len(check) else check
        if not len(part):
            continue
        within = int(part["within"].astype(bool).sum())
        lines.append(f"{name} within {REDUCTION_BOUND}× of the paper on the matrices meeting the wavefront "
                     f"bound: {within} of {len(part)} cells.")
    return lines


def paper_table_markdown() -> str:
    """The paper's Table 6.1 as printed, with the ElasticDivide ×2 column."""
    wide = paper.table_6_1().pivot_table(index=["group", "cores"], columns="algorithm",
                                         values="reduction").reset_index()
    wide = sort_groups(wide, "cores")
    wide["ElasticDivide ×2"] = wide["elastic_divide"] * paper.STALENESS
    wide = wide.rename(columns={a: paper.ALGORITHM_NAMES[a]
                                for a in ("hdagg", "growlocal", "elastic_divide")})
    return format_markdown(wide[["group", "cores", "HDagg", "GrowLocal", "ElasticDivide",
                                 "ElasticDivide ×2"]])


def _staleness(df: pd.DataFrame) -> set[int]:
    """The staleness values recorded by the ok elastic_divide rows (empty when not recorded)."""
    if "staleness" not in df.columns:
        return set()
    mine = df[(df["algorithm"].astype(str) == "elastic_divide") & (df["status"] == "ok")]
    values = pd.to_numeric(mine["staleness"], errors="coerce").dropna()
    return {int(v) for v in values}


def write_section(df: pd.DataFrame, out_dir: str | os.PathLike
                  ) -> tuple[list[Path], list[str], list[str]]:
    """``table_6_1.md/.csv`` in ``out_dir``; returns (written paths, REPORT.md lines, notes)."""
    out_dir = Path(out_dir)
    t61 = barrier_reduction(df)
    if t61.empty:
        return [], [], ["Table 6.1 (barrier reduction): no ok rows of a barrier scheduler with "
                        "wavefronts and supersteps, table not written."]
    written, lines = write_table_section(
        out_dir, "table_6_1", t61, barrier_reduction_display(t61),
        title="Synchronisation barriers relative to wavefronts (paper Table 6.1)",
        intro="Geometric mean over matrices of wavefronts / supersteps per data set group and "
        "core count (SpMP and p2p rows have no barriers). ElasticDivide's barriers are weak "
        f"with staleness {paper.STALENESS}: as the paper suggests, its ×{paper.STALENESS} "
        "column is the comparable one. \"paper (cores)\" columns: the paper's value for "
        "the same group at the printed core count nearest to ours (in brackets; the paper "
        "names no architecture, a schedule depends on matrix and cores only).",
        paper_table="Table 6.1", paper_markdown=paper_table_markdown())
    status = df["status"].astype(str) if "status" in df.columns else pd.Series(dtype=str)
    timeouts = df[status == "timeout"]
    if len(timeouts):
        listed = sorted({f"{d} at {int(c)} cores" for d, c in zip(timeouts["dataset"], timeouts["cores"])})
        lines += [f"**Timeouts** ({len(timeouts)} points past their time budget, key `timeout`; no schedule, "
                  f"so not in the means above): {', '.join(listed)}.", ""]
    bound = wavefront_bound(df)
    if len(bound):
        check = bound_check(df, bound)
        met = int(bound["meets_bound"].sum())
        lines += section(
            "Table 6.1 on the matrices whose stand-ins meet the wavefront bound",
            f"{met} of {len(bound)} matrices have an average wavefront within {WAVEFRONT_BOUND}× of the "
            f"paper's (Tables A.1-A.3); the geometric means over those, beside the paper's, with the ratio "
            f"(this run / paper) and whether it is within {REDUCTION_BOUND}× (GrowLocal, ElasticDivide).",
            format_markdown(check) if len(check) else "(no ok rows on those matrices)",
            "[CSV (matrices)](table_6_1_wavefront_bound.csv)" + (" · [CSV (check)](table_6_1_bound_check.csv)"
                                                                   if len(check) else ""),
            ["", *(part for line in bound_summary(check) for part in (f"**{line}**", "")),
             *details("Average wavefront of each matrix here and in the paper", format_markdown(bound))])
        written += [write_csv(bound, out_dir / "table_6_1_wavefront_bound.csv")]
        if len(check):
            written += [write_csv(check, out_dir / "table_6_1_bound_check.csv")]
    notes = []
    staleness = _staleness(df)
    if staleness and staleness != {paper.STALENESS}:
        notes.append(f"Table 6.1: elastic_divide ran with staleness "
                     f"{', '.join(map(str, sorted(staleness)))}; the ×{paper.STALENESS} "
                     f"column follows the paper's staleness {paper.STALENESS}.")
    return written, lines, notes
