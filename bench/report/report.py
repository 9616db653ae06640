"""``spbench profile`` for one results folder: the rows' kind writes its tables, figures and REPORT.md
(:meth:`spbench.experiment.RowKind.write_profile`: an experiment's sweep, or the rows of
`spbench bench …`)."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from spbench.experiment_registry import ROW_KINDS, get_row_kind


def write_profile(df: pd.DataFrame, out_dir: str | os.PathLike) -> list[Path]:
    """Write the profile of ONE sweep's rows into ``out_dir`` and return the paths written.
    ValueError for an empty frame, rows without an experiment, or rows of several experiments
    (each experiment's profile raises its own for several sweeps or missing columns)."""
    if df is None or len(df) == 0:
        raise ValueError("no result rows to profile (empty frame)")
    if "experiment" not in df.columns:
        raise ValueError("result rows without an 'experiment' column; expected rows as `spbench run` writes them")
    experiments = sorted(set(df["experiment"].dropna().astype(str)))
    if len(experiments) != 1 or experiments[0] not in ROW_KINDS:
        raise ValueError(f"rows of experiment(s) {experiments}; expected the rows of one sweep of one of "
                         f"{', '.join(ROW_KINDS)}")
    return get_row_kind(experiments[0]).write_profile(df, out_dir)
