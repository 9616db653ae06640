"""The Markdown pieces REPORT.md's paper sections are made of: a table section, a folded block,
a figure with its links, a cell holding the paper's value at its core count, a table's files."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from spbench.report.tables import format_markdown, write_csv, write_text


def section(title: str, intro: str, table_md: str, links: str, extra: list[str] = ()) -> list[str]:
    """A ``## title`` section: the intro, the table, the links to its files, then ``extra``."""
    return [f"## {title}", "", intro, "", table_md, links, "", *extra]


def details(summary: str, body: str) -> list[str]:
    """``body`` folded under ``summary`` (an HTML ``<details>`` block)."""
    return ["<details><summary>" + summary + "</summary>", "", body, "</details>", ""]


def figure_lines(png: Path, alt: str) -> list[str]:
    """A figure's PNG with links to its PDF and to the CSV of its plotted points."""
    return [f"![{alt}]({png.name})", "",
            f"[PDF]({png.with_suffix('.pdf').name}) · "
            f"[plotted points (CSV)]({png.with_suffix('.csv').name})", ""]


def paper_cell(value: float | None, cores: int | None) -> str:
    """The paper's value with its core count in brackets, ``—`` where it prints none."""
    if value is None or cores is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.2f} ({cores})"


def write_beside_paper(out_dir: Path, stem: str, display: pd.DataFrame, table: pd.DataFrame
                       ) -> list[Path]:
    """``<stem>.md``: ``display`` (this run beside the paper's values); ``<stem>.csv``: ``table``
    (this run's numbers only)."""
    return [write_text(out_dir / f"{stem}.md", format_markdown(display)),
            write_csv(table, out_dir / f"{stem}.csv")]
