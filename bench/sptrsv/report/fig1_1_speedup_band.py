"""Paper 2's Figure 1.1: the speed-up over serial with the 10-90 percentile band (Figure 6.1
shows the 25-75 band), and the speed-ups the paper's text quotes from both figures."""
from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from spbench.sptrsv.report import paper_values as paper
from spbench.sptrsv.report.figures import speedup_vs_cores
from spbench.report.markdown_sections import details, figure_lines
from spbench.report.tables import format_markdown


def speedup_band_figure(df: pd.DataFrame, out_dir: str | os.PathLike,
                        band: Sequence[float] = (10, 90), stem: str | None = None
                        ) -> list[Path]:
    """Figure 1.1: :func:`~spbench.sptrsv.report.figures.speedup_vs_cores` with another ``band``.

    Written as ``<stem>.*`` (default ``speedup_p<lo>_p<hi>``; ``<stem>_<execution>.*`` when the
    rows hold both executions) so that the 25–75 figure's ``speedup.*`` files stay as they are.
    Warnings of :func:`speedup_vs_cores` pass through.
    """
    lo, hi = (float(b) for b in band)
    stem = stem or f"speedup_p{lo:g}_p{hi:g}"
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=out_dir, prefix=f".{stem}."))
    written = []
    try:
        for path in speedup_vs_cores(df, scratch, band=band):
            target = out_dir / (stem + path.name[len("speedup"):])
            os.replace(path, target)
            written.append(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return written


def write_section(df: pd.DataFrame, out_dir: str | os.PathLike
                  ) -> tuple[list[Path], list[str], list[str]]:
    """``speedup_p10_p90.*`` in ``out_dir`` and the quoted speed-ups; returns (written paths,
    REPORT.md lines, notes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the same warnings as the 25-75 figure's, said there
        paths = speedup_band_figure(df, out_dir, band=(10, 90))
    notes = []
    lines: list[str] = []
    pngs = [p for p in paths if p.suffix == ".png"]
    if not pngs:
        notes.append("Figure 1.1 (speed-up, 10–90 band): no serial baseline or no parallel "
                     "rows, not drawn.")
    for png in pngs:
        suffix = png.stem[len("speedup_p10_p90"):].lstrip("_")
        lines += [f"## Speed-up over serial, 10–90 percentile band (paper Figure 1.1)"
                  + (f", {suffix}" if suffix else ""), "",
                  "Geometric mean over matrices; the shaded band spans the 10th to 90th "
                  "percentile (Figure 6.1 above uses the 25th to 75th).", "",
                  *figure_lines(png, "Speed-up, 10-90 band")]
    quotes = paper.quoted_figures()
    quotes["algorithm"] = quotes["algorithm"].map(paper.ALGORITHM_NAMES)
    lines += details("Speed-ups the paper's text quotes from Figures 6.1 and 1.1",
                     format_markdown(quotes))
    return paths, lines, notes
