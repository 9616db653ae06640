"""The profile of one SpTrSV sweep (the SpTrSV experiment's ``write_profile``): tables, figures and a
REPORT.md linking them (sptrsv-elasticity §5–§6)."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import pandas as pd

from spbench.report.failed_rows import failed_rows_section
from spbench.sptrsv.report import deciding_terms
from spbench.sptrsv.report.figures import performance_profile_figure, speedup_points, speedup_vs_cores
from spbench.report.labels import display_map
from spbench.report.measurement_conditions import conditions_section
from spbench.report.rows import REQUIRED_COLUMNS, check_columns, executions
from spbench.sptrsv.report.model_sections import write_model_sections
from spbench.sptrsv.report.paper_sections import write_paper_sections
from spbench.sptrsv.report.summary import SERIAL, sptrsv_summary
from spbench.report.tables import format_markdown, write_table, write_text

FIGURES = (
    ("speedup", "Speed-up over serial (paper Figure 6.1)", speedup_vs_cores),
    ("perfprofile", "Performance profile (paper Figure 5.1)", performance_profile_figure),
)


def _check_one_sweep(df: pd.DataFrame) -> str:
    if df is None or len(df) == 0:
        raise ValueError("no result rows to profile (empty frame)")
    check_columns(df)
    if "experiment" in df.columns:
        others = sorted(set(df["experiment"].dropna().astype(str)) - {"sptrsv"})
        if others:
            raise ValueError(f"write_profile profiles SpTrSV rows; got experiment(s) {others}")
    configs = sorted(set(df["config"].dropna().astype(str))) if "config" in df.columns else []
    if len(configs) > 1:
        raise ValueError(f"rows of several sweeps {configs}; profile one sweep at a time")
    return configs[0] if configs else "sweep"


def _row_counts(df: pd.DataFrame) -> list[str]:
    kinds = executions(df)
    ok = (df["status"] == "ok").to_numpy()
    lines = [f"- {len(df)} result rows."]
    for kind in sorted(set(kinds)):
        mine = (kinds == kind).to_numpy()
        lines.append(f"- {kind}: {int(mine.sum())} rows, {int((mine & ok).sum())} with status ok.")
    failed = df.loc[~ok, "status"].astype(str).value_counts().sort_index()
    if failed.empty:
        lines.append("- No row was left out: every row has status ok.")
    else:
        detail = ", ".join(f"{status} {count}" for status, count in failed.items())
        total = int(failed.sum())
        lines.append(f"- {total} row{'s' if total != 1 else ''} left out of medians and figures "
                     f"because the status is not ok ({detail}).")
    if len(set(kinds)) > 1:
        lines.append("- Measured and simulated rows are plotted in separate figures.")
    return lines


#: a 1-core speed-up over serial above this is called out and explained in the report
ONE_CORE_NOTABLE = 1.1


def one_core_section(df: pd.DataFrame) -> list[str]:
    """REPORT.md lines explaining 1-core speed-ups over serial, when the sweep shows one.

    At one core a schedule is only a row order; the serial kernel runs the natural order. The
    measurement that separates order from kernel is `make bench-order`."""
    rows = df[(executions(df) == "measured").to_numpy()]
    if rows.empty or not (rows["cores"].astype(int) == 1).any():
        return []
    points = speedup_points(rows[rows["cores"].astype(int) == 1]) if (rows["algorithm"] == SERIAL).any() else None
    if points is None or points.empty or not (points["speedup_geomean"] > ONE_CORE_NOTABLE).any():
        return []
    fast = points[points["speedup_geomean"] > ONE_CORE_NOTABLE]
    table = points[["algorithm", "datasets", "speedup_geomean", "speedup_ci_low", "speedup_ci_high"]]
    return ["## Why some schedules beat serial at one core", "",
            f"At 1 core, {', '.join(fast['algorithm'])} run faster than the serial kernel (geometric mean "
            "over matrices, 95% bootstrap interval; every scheduler's 1-core speed-up below):", "",
            format_markdown(table),
            "At one core a schedule is only a row order. The serial kernel solves the rows in their natural "
            "order, where row i of a grid or banded matrix needs x[i−1], the row just solved: every row waits "
            "for the one before it, one dependency chain. The wavefront (level) order puts the rows of a level, "
            "which are independent of each other, next to each other, so the core overlaps several rows' loads "
            "and arithmetic. `make bench-order` measures this on generated grids: the same serial kernel on the "
            "wavefront-permuted matrix is as fast as the wavefront schedule itself (the permutation, not the "
            "kernel, makes the difference), and it counts the rows chained to the row before them (about 99% "
            "in natural order, almost none in level order). The gain needs short chained rows: with tens of "
            "nonzeros a row, the row's own loads hide the wait, and a METIS order has already broken the chain "
            "(`make bench-order` with `--datasets NAME,...` measures a registry matrix). Speed-ups over serial "
            "at higher core counts include this ordering gain; docs/performance.md's \"Why schedules beat serial at one "
            "core\" gives the numbers measured on this project's machine.", ""]


def write_sptrsv_profile(df: pd.DataFrame, out_dir: str | os.PathLike) -> list[Path]:
    """Write the profile of ONE SpTrSV sweep into ``out_dir`` (created) and return the paths.

    Files: ``summary.md/.csv`` (:func:`~spbench.sptrsv.report.summary.sptrsv_summary`), the figures
    ``speedup.*`` (Figure 6.1) and ``perfprofile.*`` (Figure 5.1), one set per execution when
    measured and simulated rows are both present, the rest of the paper's §6 (Figure 1.1,
    Tables 6.1–6.3, Figure 6.2, see
    :func:`~spbench.sptrsv.report.paper_sections.write_paper_sections`) with the paper's printed
    values beside ours, and ``REPORT.md`` embedding them with relative links. A sweep with no
    ok parallel rows (say serial only) gets the table and a note instead of figures. Raises
    ValueError for an empty frame, several sweeps or non-SpTrSV rows.
    """
    schedule_only = df is not None and len(df) and set(executions(df)) == {"schedule"}
    if df is not None and len(df) and "status" in df.columns and (schedule_only or not (df["status"] == "ok").any()):
        # failed rows and `execution: schedule` rows carry no solve times: profile them as rows without times
        df = df.reindex(columns=list(df.columns) + [c for c in REQUIRED_COLUMNS if c not in df.columns])
    name = _check_one_sweep(df)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = sptrsv_summary(df)
    summary["dataset"] = summary["dataset"].map(display_map(df))
    written = write_table(summary, out_dir / "summary")
    notes: list[str] = []
    sections: list[str] = []
    ok = df["status"] == "ok"
    if not (ok & (df["algorithm"].astype(str) != SERIAL)).any():
        notes.append("No ok rows of a parallel algorithm: no figures, only the summary table.")
    else:
        for stem, heading, draw in FIGURES:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                paths = draw(df, out_dir)
            for w in caught:
                notes.append(str(w.message))
                warnings.warn(w.message, stacklevel=2)
            written += paths
            for png in (p for p in paths if p.suffix == ".png"):
                title = heading if png.stem == stem else f"{heading}, {png.stem[len(stem) + 1:]}"
                sections += [f"## {title}", "",
                             f"![{heading}]({png.name})", "",
                             f"[PDF]({png.with_suffix('.pdf').name}) · "
                             f"[plotted points (CSV)]({png.with_suffix('.csv').name})", ""]
        paths, paper_lines, paper_notes = write_paper_sections(df, out_dir)
        written += paths
        sections += paper_lines
        notes += paper_notes
        sections += one_core_section(df)
        paths, model_lines, model_notes = write_model_sections(df, out_dir)
        written += paths
        sections += model_lines
        notes += model_notes
        paths, term_lines, term_notes = deciding_terms.write_section(df, out_dir)
        written += paths
        sections += term_lines
        notes += term_notes
    lines = [f"# SpTrSV profile: {name}", "", "## Rows", "", *_row_counts(df), "", *failed_rows_section(df),
             *conditions_section(df, "cores")]
    if notes:
        lines += ["## Notes", "", *(f"- {n}" for n in notes), ""]
    lines += sections
    keys = ", ".join(summary.columns[:list(summary.columns).index("execution") + 1])
    lines += ["## Summary", "",
              f"Per ({keys}): times in ms are medians over the ok rows; speed-up is over the "
              "dataset's serial run of the same execution.", "",
              format_markdown(summary), "[CSV](summary.csv)", ""]
    written.append(write_text(out_dir / "REPORT.md", "\n".join(lines)))
    return written
