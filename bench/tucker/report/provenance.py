"""What a Tucker figure's rows are, for its title (tucker-lite §7, Figs. 10-17): measured or
simulated, the paper's FROSTT tensors or synthetic stand-ins, and their size against the paper's
Fig. 9 (``--scale small``: 1/100 of the nonzeros), so that no figure passes a small stand-in's
modelled time off as the paper's measurement."""
from __future__ import annotations

import pandas as pd

from spbench.report.labels import base_name, is_standin

__all__ = ["rows_tag", "size_phrase"]

#: how a row's execution is named in titles
EXECUTION = {"simulated": "simulated (cost model)", "measured": "measured"}


def _paper_nnz(name: str) -> int | None:
    from spbench.datasets.paper_tensors import TENSORS

    entry = TENSORS.get(base_name(name))
    return int(entry.nnz) if entry is not None else None


def _denominator(fraction: float) -> int:
    """1/fraction rounded to two significant digits (54,202 → 54,000)."""
    d = 1 / fraction
    return int(round(d, 2 - len(str(int(d))))) if d >= 100 else int(round(d))


def size_phrase(fractions: list[float]) -> str:
    """"the paper's size", "1/100 of the paper's nonzeros", "1/100 to 1/1700 of the paper's
    nonzeros" or "the paper's size to 1/46 of its nonzeros" for the data sets' nonzeros over the
    paper's (Fig. 9)."""
    if not fractions:
        return ""
    lo, hi = min(fractions), max(fractions)
    if lo >= 0.99:
        return "the paper's size"
    small, large = _denominator(hi), _denominator(lo)
    if hi <= lo * 1.05 or small == large:
        return f"1/{large} of the paper's nonzeros"
    if hi >= 0.99:
        return f"the paper's size to 1/{large} of its nonzeros"
    return f"1/{small} to 1/{large} of the paper's nonzeros"


def rows_tag(rows: pd.DataFrame) -> str:
    """One phrase for a title: "simulated (cost model), 5 stand-ins at 1/100 of the paper's
    nonzeros", "measured, --scale small, 2 FROSTT tensors", ... from the rows' ``execution``,
    ``config`` (its scale), ``dataset_source`` and ``nnz``."""
    from spbench.report.figures import scale_phrase

    execs = sorted(set(rows["execution"].dropna().astype(str))) if "execution" in rows else []
    what = "+".join(EXECUTION.get(e, e) for e in execs) or "execution not recorded"
    what += f", {scale_phrase(rows)}" if scale_phrase(rows) else ""   # a --scale small run says so
    first = rows.drop_duplicates("dataset")
    sources = first["dataset_source"] if "dataset_source" in first else pd.Series(None, index=first.index)
    nnz = first["nnz"] if "nnz" in first else pd.Series(None, index=first.index)
    standins, real, fractions = 0, 0, []
    for name, source, n in zip(first["dataset"], sources, nnz):
        if is_standin(name, source):
            standins += 1
            paper = _paper_nnz(name)
            if paper and pd.notna(n):
                fractions.append(float(n) / paper)
        else:
            real += 1
    parts = []
    if real:
        parts.append(f"{real} real tensor{'s' if real != 1 else ''}")
    if standins:
        size = size_phrase(fractions)
        parts.append(f"{standins} stand-in{'s' if standins != 1 else ''}" + (f" at {size}" if size else ""))
    return ", ".join([what, " + ".join(parts)]) if parts else what
