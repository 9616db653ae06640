"""The SpTrSV paper sections of REPORT.md (paper 2, §6.2-6.5): where the numbers come from, the
matrices solved beside Tables A.1-A.3, then Figure 1.1, Tables 6.1 and 6.2, Figure 6.2 and
Table 6.3, each written by its own module, with the paper's printed values beside ours
(:mod:`spbench.sptrsv.report.paper_values`)."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from spbench.sptrsv.report import (fig1_1_speedup_band as fig11_speedup_band,
    fig6_2_scheduling_time as fig62_scheduling_time, table6_1_barriers as table61_barriers,
    table6_2_ssp_over_bsp as table62_ssp_over_bsp, table6_3_amortisation as table63_amortisation)
from spbench.report.markdown_sections import details
from spbench.report.rows import executions
from spbench.sptrsv.report.standins import matrix_comparison
from spbench.report.tables import format_markdown, write_csv


def provenance_lines(df: pd.DataFrame) -> list[str]:
    """Where the rows come from: measured on this machine or simulated; synthetic stand-ins."""
    kinds = executions(df.reset_index(drop=True)).value_counts().sort_index()
    lines = []
    for kind, count in kinds.items():
        what = ("measured on this machine" if kind == "measured"
                else "simulated by the cost model, not measured" if kind == "simulated"
                else kind)
        lines.append(f"- {count} row{'s' if count != 1 else ''} {what} (execution: {kind}).")
    if "dataset_source" in df.columns:
        source = (df[["dataset", "dataset_source"]].astype(str)
                  .drop_duplicates().groupby("dataset_source")["dataset"]
                  .agg(lambda v: ", ".join(sorted(set(v)))))
        synthetic = source.get("synthetic")
        real = source.get("real")
        if synthetic:
            lines.append(f"- Synthetic stand-ins for the paper's matrices (dataset_source "
                         f"synthetic): {synthetic}. Their numbers are not the paper's matrices'.")
        if real:
            lines.append(f"- Real matrices (dataset_source real): {real}.")
        if not synthetic and not real:
            lines.append("- dataset_source is not recorded as real or synthetic.")
    else:
        lines.append("- The rows do not record dataset_source (real or synthetic).")
    lines.append("- Data set groups follow the name: `+ichol` iChol, `+metis` METIS, "
                 "otherwise SuiteSparse; a generator's matrix (lap2d-5pt, ...) is \"generated\", "
                 "never beside the paper's groups. Stand-ins are marked \"(stand-in)\" wherever "
                 "a matrix is named. The paper's numbers come from other machines "
                 "(ARM Kunpeng 920, x86 EPYC 7763, x86 Xeon 6238T) and other core counts: "
                 "compare trends, not digits.")
    return lines


def write_paper_sections(df: pd.DataFrame, out_dir: str | os.PathLike, *,
                         cores: int | None = None, amortisation_cores: int | None = None
                         ) -> tuple[list[Path], list[str], list[str]]:
    """Write Figure 1.1, Tables 6.1–6.3 and Figure 6.2 for one SpTrSV sweep into ``out_dir``.

    Returns (written paths, REPORT.md lines, notes). A table or figure whose inputs are missing
    (no barrier schedulers, no bsp/ssp pair, no schedule times, no serial baseline) is not
    written; a one-line note says why instead. ``cores`` picks Figure 6.2's core count,
    ``amortisation_cores`` Table 6.3's (both default to the largest parallel core count).
    Files: ``speedup_p10_p90.*``, ``table_6_1.md/.csv``, ``table_6_2.md/.csv``,
    ``scheduling_time.*`` with ``scheduling_time_slopes.md/.csv``, ``table_6_3.md/.csv`` and
    ``amortisation_per_matrix.csv``. The ``.md`` tables show the paper's printed values beside
    ours; the ``.csv`` files hold this run's numbers only.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    notes: list[str] = []
    lines = ["## Provenance of these numbers", "", *provenance_lines(df), ""]
    matrices = matrix_comparison(df)  # the matrices solved beside Tables A.1-A.3
    if not matrices.empty:
        written.append(write_csv(matrices, out_dir / "matrices_vs_paper.csv"))
        lines += details("The matrices beside the paper's Tables A.1-A.3 (n, nnz of the lower "
                         "triangle, average wavefront = n / wavefronts)", format_markdown(matrices))
    for section in (fig11_speedup_band.write_section(df, out_dir),
                    table61_barriers.write_section(df, out_dir),
                    table62_ssp_over_bsp.write_section(df, out_dir),
                    fig62_scheduling_time.write_section(df, out_dir, cores),
                    table63_amortisation.write_section(df, out_dir, amortisation_cores)):
        written += section[0]
        lines += section[1]
        notes += section[2]
    return written, lines, notes
