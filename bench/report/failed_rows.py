"""The rows a profile leaves out (status not ok), listed with their error messages in REPORT.md,
so a sweep whose runs failed says why instead of showing an empty table."""
from __future__ import annotations

import pandas as pd

#: the point columns shown beside a failed row, when the sweep has them
POINT_COLUMNS = ("dataset", "algorithm", "cores", "kernel", "ranks", "K", "repeat")
#: failed rows listed one by one; beyond this, the rest are counted
SHOWN_ROWS = 50


def failed_rows_section(df: pd.DataFrame) -> list[str]:
    """Markdown lines: a table of the rows whose status is not ok (point, status, error), or
    nothing when every row is ok."""
    if "status" not in df.columns:
        return []
    bad = df[df["status"].astype(str) != "ok"]
    if bad.empty:
        return []
    columns = [c for c in POINT_COLUMNS if c in bad.columns]
    bad = bad.sort_values(columns, key=lambda col: col.astype(str), kind="stable")
    header = columns + ["status", "error"]
    lines = ["## Rows left out", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    errors = bad["error"] if "error" in bad.columns else pd.Series([None] * len(bad), index=bad.index)
    for (_, row), error in zip(bad.head(SHOWN_ROWS).iterrows(), errors.head(SHOWN_ROWS)):
        cells = [str(row[c]) for c in columns] + [str(row["status"]), _cell(error)]
        lines.append("| " + " | ".join(cells) + " |")
    if len(bad) > SHOWN_ROWS:
        lines.append(f"| … {len(bad) - SHOWN_ROWS} more rows (the `error` field of each row in runs/) |"
                     + " |" * (len(header) - 1))
    return lines + [""]


def _cell(error) -> str:
    text = "" if error is None or (isinstance(error, float) and pd.isna(error)) else str(error).strip()
    return text.splitlines()[0].replace("|", "\\|") if text else "(no message)"
