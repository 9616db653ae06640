"""A cost model against measurement in a report: predicted against measured wherever a sweep holds
both, and the section calling out errors above ERROR_LIMIT (both experiments' reports use it)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from spbench.report.tables import format_markdown, write_table

#: a model whose error exceeds this is called out in the report rather than hidden
ERROR_LIMIT = 0.30
KEYS = ["dataset", "algorithm", "kernel", "cores"]


def model_error(df: pd.DataFrame, keys=KEYS, column: str = "solve_time") -> pd.DataFrame:
    """Per point (`keys`) with both a measured and a simulated ok row: the median measured and
    predicted `column` and the relative error (predicted − measured) / measured."""
    keys = list(keys)
    ok = df[(df["status"] == "ok") & df[column].notna()] if column in df.columns else df.iloc[:0]
    if ok.empty:
        return pd.DataFrame(columns=keys + ["measured_ms", "predicted_ms", "rel_error"])
    med = ok.groupby(keys + ["execution"])[column].median().unstack("execution")
    if not {"measured", "simulated"} <= set(med.columns):
        return pd.DataFrame(columns=keys + ["measured_ms", "predicted_ms", "rel_error"])
    both = med.dropna(subset=["measured", "simulated"])
    out = pd.DataFrame({"measured_ms": both["measured"] * 1e3, "predicted_ms": both["simulated"] * 1e3})
    out["rel_error"] = (out["predicted_ms"] - out["measured_ms"]) / out["measured_ms"]
    return out.reset_index()


def error_section(err: pd.DataFrame, out_dir: Path, what: str) -> tuple[list[Path], list[str]]:
    """The model-error table and its call-out when an error exceeds ERROR_LIMIT."""
    written = write_table(err, out_dir / "model_error")
    worst = err["rel_error"].abs().max()
    over = int((err["rel_error"].abs() > ERROR_LIMIT).sum())
    lines = ["## Cost model against measurement", "",
             f"Points with both a measured and a simulated {what}: {len(err)}; largest error {worst:.0%}."
             + (f" **The model's error exceeds {ERROR_LIMIT:.0%} on {over} points: treat its predictions as "
                f"indicative there.**" if worst > ERROR_LIMIT else ""), "",
             format_markdown(err), "[CSV](model_error.csv)", ""]
    return written, lines
