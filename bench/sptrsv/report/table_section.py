"""A paper table's files and REPORT.md section, the same for Tables 6.1-6.3: this run's numbers
beside the paper's in ``<stem>.md``, this run's alone in ``<stem>.csv``, the section showing the
first with the paper's table as printed folded below it."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from spbench.report.markdown_sections import details, section, write_beside_paper
from spbench.report.tables import format_markdown


def write_table_section(out_dir: Path, stem: str, table: pd.DataFrame, display: pd.DataFrame, *, title: str,
                        intro: str, paper_table: str, paper_markdown: str, more_links: str = ""
                        ) -> tuple[list[Path], list[str]]:
    """Write ``<stem>.md`` (``display``) and ``<stem>.csv`` (``table``) into ``out_dir``; returns
    (written paths, the section's REPORT.md lines). ``paper_table`` names the paper's table
    (``Table 6.1``), ``paper_markdown`` is it as printed; ``more_links`` follows the CSV link."""
    written = write_beside_paper(out_dir, stem, display, table)
    lines = section(title, intro, format_markdown(display), f"[CSV (this run)]({stem}.csv){more_links}",
                    details(f"The paper's {paper_table} as printed", paper_markdown))
    return written, lines
