"""``spbench profile`` of a `spbench bench …` results folder: each invocation's table, as the
benchmark printed it (:mod:`spbench.harness.tables`), in ``<benchmark>.md`` and REPORT.md,
and every row flattened in ``rows.csv``."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from spbench.harness.tables import bench_table
from spbench.report.failed_rows import failed_rows_section
from spbench.report.tables import write_csv, write_text

__all__ = ["invocations", "write_bench_profile"]


def invocations(df: pd.DataFrame) -> list[list[dict]]:
    """The rows of each invocation (oldest first), as stored: a missing figure is None and an
    integer stays an integer in a column that other rows leave empty."""
    holey = [c for c in df.columns if pd.api.types.is_float_dtype(df[c]) and df[c].isna().any()]
    records = df.astype(object).where(df.notna(), None).to_dict("records")
    for r in records:
        r.update({c: int(r[c]) for c in holey if r[c] is not None and float(r[c]).is_integer()})
    groups: dict = {}
    for r in records:
        groups.setdefault((r["benchmark"], r.get("invocation")), []).append(r)
    ordered = [sorted(rows, key=lambda r: r.get("item_index") or 0) for rows in groups.values()]
    return sorted(ordered, key=lambda rows: (str(rows[0].get("started_at")), rows[0].get("repeat") or 0))


def _flag(key: str, value) -> str:
    """An option as the command line gives it: ``--cores 2``, ``--grids 100,200``, ``--skip-pyttb``."""
    flag = f"--{key.replace('_', '-')}"
    if value is True:
        return flag
    return f"{flag} {','.join(map(str, value)) if isinstance(value, list) else value}"


def _section(rows: list[dict]) -> list[str]:
    first = rows[0]
    sha = str(first.get("git_sha") or "unknown commit")[:10] + (" (dirty tree)" if first.get("git_dirty") else "")
    options = " ".join(_flag(k, v) for k, v in (first.get("params") or {}).items() if v not in (None, False, [], ""))
    lines = [f"## {first['benchmark']}, repeat {first.get('repeat')}, {first.get('started_at')}", "",
             f"`spbench bench {first['benchmark']} {options}` on {first.get('host')}, {sha}.", ""]
    try:
        lines.append(bench_table(rows))
    except (KeyError, TypeError, ZeroDivisionError, StopIteration) as exc:
        lines.append(f"No table: the rows of this invocation are incomplete ({type(exc).__name__}: {exc}).")
    return lines + [""]


def write_bench_profile(df: pd.DataFrame, out_dir: str | os.PathLike) -> list[Path]:
    """Write ``<benchmark>.md`` (one table per invocation), ``rows.csv`` and ``REPORT.md`` into
    ``out_dir`` and return their paths."""
    out_dir = Path(out_dir)
    groups = invocations(df)
    by_benchmark: dict = {}
    for rows in groups:
        by_benchmark.setdefault(rows[0]["benchmark"], []).extend(_section(rows))
    written = [write_text(out_dir / f"{name}.md", "\n".join(lines)) for name, lines in by_benchmark.items()]
    written.append(write_csv(df, out_dir / "rows.csv"))
    counts = df["status"].astype(str).value_counts().sort_index()
    summary = ", ".join(f"{status} {n}" for status, n in counts.items())
    lines = [f"# Benchmark profile: {', '.join(sorted(by_benchmark))}", "",
             f"- {len(df)} rows ({summary}) from {len(groups)} invocation{'s' if len(groups) != 1 else ''}; "
             "every row in [rows.csv](rows.csv).", "",
             *failed_rows_section(df[df["status"].astype(str) != "skipped"])]
    for name, section in by_benchmark.items():
        lines += section
    written.append(write_text(out_dir / "REPORT.md", "\n".join(lines)))
    return written
