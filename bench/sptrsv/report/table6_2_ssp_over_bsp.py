"""Paper 2's Table 6.2 (§6.4): the SSP kernel over the BSP kernel on ElasticDivide's schedule,
the geometric mean of ``t_bsp / t_ssp`` per data set group and core count, beside the paper's."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from spbench.sptrsv.report import paper_values as paper
from spbench.report.markdown_sections import paper_cell
from spbench.sptrsv.report.rows import geomean, nearest_cores, ok_rows, sort_groups
from spbench.sptrsv.report.table_section import write_table_section
from spbench.report.tables import format_markdown


def ssp_over_bsp(df: pd.DataFrame, algorithm: str = "elastic_divide") -> pd.DataFrame:
    """Table 6.2: geometric mean over matrices of ``t_bsp / t_ssp`` for one scheduler.

    Per (execution, dataset, cores) where ``algorithm`` ran ok with both the ``bsp`` and the
    ``ssp`` kernel, the median solve time of each kernel gives one ratio (> 1: the SSP kernel
    is faster); the ratios are pooled per (execution, group, cores). Columns: ``execution,
    group, cores, matrices, ssp_over_bsp``; empty without such a pair.
    """
    rows = ok_rows(df)
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
    return sort_groups(out, "cores", "execution")[columns]


def ssp_over_bsp_display(table: pd.DataFrame) -> pd.DataFrame:
    """Table 6.2 with the paper's value for the same group on each architecture at the printed
    core count nearest to ours (in brackets)."""
    records = []
    for rec in table.to_dict("records"):
        out = {"execution": rec["execution"], "group": rec["group"], "cores": int(rec["cores"]),
               "matrices": int(rec["matrices"]), "this run: t_bsp / t_ssp": rec["ssp_over_bsp"]}
        for arch in paper.ARCHITECTURES:
            near = nearest_cores([c for a, c in paper.TABLE_6_2 if a == arch], int(rec["cores"]))
            value = paper.TABLE_6_2.get((arch, near), {}).get(rec["group"])
            out[f"paper ({arch}, cores)"] = paper_cell(value, near)
        records.append(out)
    return pd.DataFrame(records)


def paper_table_markdown() -> str:
    """The paper's Table 6.2 as printed: one row per (architecture, cores), one column per group."""
    wide = paper.table_6_2().pivot_table(index=["architecture", "cores"], columns="group",
                                         values="ssp_over_bsp").reset_index()
    return format_markdown(wide[["architecture", "cores", *paper.GROUPS]])


def write_section(df: pd.DataFrame, out_dir: str | os.PathLike
                  ) -> tuple[list[Path], list[str], list[str]]:
    """``table_6_2.md/.csv`` in ``out_dir``; returns (written paths, REPORT.md lines, notes)."""
    out_dir = Path(out_dir)
    t62 = ssp_over_bsp(df)
    if t62.empty:
        return [], [], ["Table 6.2 (SSP over BSP kernel): no elastic_divide rows run with both "
                        "the bsp and the ssp kernel on the same data set and cores, table not "
                        "written."]
    written, lines = write_table_section(
        out_dir, "table_6_2", t62, ssp_over_bsp_display(t62),
        title="SSP kernel over BSP kernel on ElasticDivide's schedule (paper Table 6.2)",
        intro="Geometric mean over matrices of t_bsp / t_ssp (median solve times), the same "
        "ElasticDivide schedule run by both kernels; > 1 means overlapping synchronisation "
        "and compute pays. \"paper (arch, cores)\" columns: the paper's value for the same "
        "group at the printed core count nearest to ours (in brackets).",
        paper_table="Table 6.2", paper_markdown=paper_table_markdown())
    return written, lines, []
