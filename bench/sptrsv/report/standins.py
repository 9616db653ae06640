"""The matrices a SpTrSV sweep ran on beside the paper's Tables A.1-A.3 (provenance section).

Rows carry n, nnz (lower triangle) and the wavefront count of the matrix actually solved, so a
stand-in's statistics, and those of its iChol / METIS variant, are shown as measured beside the
paper's values (sptrsv-elasticity §5.2; the transforms' wavefronts have no target, Tables A.2-A.3).
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def _paper_row(name: str):
    """(n, nnz, average wavefront) the paper prints for a data set name, or None."""
    from spbench.datasets.paper_matrices import ICHOL_TABLE, METIS_TABLE, SUITESPARSE

    if name in SUITESPARSE:
        m = SUITESPARSE[name]
        return m.n, m.nnz, m.avg_wavefront
    row = ICHOL_TABLE.get(name) or METIS_TABLE.get(name)
    return None if row is None else (row.n, row.nnz, row.avg_wavefront)


def matrix_comparison(df: pd.DataFrame) -> pd.DataFrame:
    """Per data set of the paper's tables: the paper's n, nnz, average wavefront beside the rows'.

    Columns: ``dataset, source, paper n, paper nnz, paper avg wavefront, n, nnz, avg wavefront,
    wavefront ratio`` (ours / paper's); empty when no row names a data set of Tables A.1-A.3.
    """
    columns = ["dataset", "source", "paper n", "paper nnz", "paper avg wavefront", "n", "nnz",
               "avg wavefront", "wavefront ratio"]
    needed = {"dataset", "n", "nnz", "wavefronts"}
    if not needed <= set(df.columns):
        return pd.DataFrame(columns=columns)
    records = []
    for name, part in df.groupby(df["dataset"].astype(str), sort=True):
        paper = _paper_row(name)
        if paper is None:
            continue
        n = pd.to_numeric(part["n"], errors="coerce").median()
        nnz = pd.to_numeric(part["nnz"], errors="coerce").median()
        waves = pd.to_numeric(part["wavefronts"], errors="coerce").median()
        if not (np.isfinite(n) and np.isfinite(waves) and waves > 0):
            continue
        avg = n / waves
        source = part["dataset_source"].astype(str).iloc[0] if "dataset_source" in part else ""
        records.append({"dataset": name, "source": source, "paper n": paper[0], "paper nnz": paper[1],
                        "paper avg wavefront": paper[2], "n": int(n), "nnz": int(nnz),
                        "avg wavefront": int(avg), "wavefront ratio": round(avg / paper[2], 2)})
    return pd.DataFrame(records, columns=columns)
