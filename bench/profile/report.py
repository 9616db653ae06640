"""``spbench profile`` for one sweep: the rows' experiment writes its tables, figures and REPORT.md
(:meth:`spbench.experiment.Experiment.write_profile`); rows of `spbench bench …` get
:mod:`spbench.profile.bench_report`."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from spbench.experiment_registry import EXPERIMENTS, get_experiment


def write_profile(df: pd.DataFrame, out_dir: str | os.PathLike) -> list[Path]:
    """Write the profile of ONE sweep's rows into ``out_dir`` and return the paths written.
    ValueError for an empty frame, rows without an experiment, or rows of several experiments
    (each experiment's profile raises its own for several sweeps or missing columns)."""
    if df is None or len(df) == 0:
        raise ValueError("no result rows to profile (empty frame)")
    if "experiment" not in df.columns:
        raise ValueError("result rows without an 'experiment' column; expected rows as `spbench run` writes them")
    experiments = sorted(set(df["experiment"].dropna().astype(str)))
    if experiments == ["bench"]:
        from spbench.profile.bench_report import write_bench_profile
        return write_bench_profile(df, out_dir)
    if len(experiments) != 1 or experiments[0] not in EXPERIMENTS:
        raise ValueError(f"rows of experiment(s) {experiments}; expected the rows of one sweep of one of "
                         f"{', '.join(EXPERIMENTS)}")
    return get_experiment(experiments[0]).write_profile(df, out_dir)
