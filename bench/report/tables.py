"""Tables from result rows as Markdown + CSV. Every file is written atomically
(:mod:`spbench.store.atomic_files`); the SpTrSV summary is :mod:`spbench.sptrsv.report.summary`.
"""
from __future__ import annotations

import math
import numbers
import os
from pathlib import Path

import pandas as pd

from spbench.store.atomic_files import atomic_output  # noqa: F401  (figures write through it)
from spbench.store.atomic_files import atomic_write_text as write_text


def write_csv(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``df`` without its index as CSV to ``path`` atomically, full precision."""
    return write_text(path, df.to_csv(index=False, lineterminator="\n"))


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        v = float(value)
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.1f}" if abs(v) >= 1000 else f"{v:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def format_markdown(df: pd.DataFrame) -> str:
    """``df`` as a GitHub Markdown table (numbers right-aligned, about 4 significant digits)."""
    header = [str(c).replace("|", "\\|") for c in df.columns]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
               for c in df.columns]
    align = ["---:" if right else ":---" for right in numeric]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    for row in df.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def write_table(df: pd.DataFrame, path_stem: str | os.PathLike) -> list[Path]:
    """Write ``df`` as ``<path_stem>.md`` (Markdown) and ``<path_stem>.csv``; return both paths."""
    stem = Path(path_stem)
    md = write_text(stem.with_name(stem.name + ".md"), format_markdown(df))
    csv = write_csv(df, stem.with_name(stem.name + ".csv"))
    return [md, csv]


