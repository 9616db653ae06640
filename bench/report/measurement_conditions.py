"""What a report must say about how its rows were obtained: measured rows taken on a busy machine
(the row's ``load``, :mod:`spbench.machine.load`) or with more threads/ranks than cores
(``oversubscribed``), simulated rows whose costs a calibration did not measure but its
extrapolation law supplied (``model_extrapolated``, ``model_law``), and simulated rows modelled
with a calibration kept only with --force (their ``settings``).  One section for every
experiment's REPORT.md, and the shading that marks extrapolated core counts in a figure."""
from __future__ import annotations

import pandas as pd

__all__ = ["conditions_section", "extrapolated_from", "shade_extrapolated"]


def _flag(df: pd.DataFrame, column: str) -> pd.Series:
    if column not in df.columns:
        return pd.Series(False, index=df.index)
    return df[column].map(lambda v: v is True or v == 1).astype(bool)


def _busy(df: pd.DataFrame) -> pd.Series:
    if "load" not in df.columns:
        return pd.Series(False, index=df.index)
    return df["load"].map(lambda v: isinstance(v, dict) and bool(v.get("busy"))).astype(bool)


def _points(rows: pd.DataFrame, size_column: str) -> str:
    keys = [c for c in ("dataset", "algorithm", size_column) if c in rows.columns]
    listed = sorted({" ".join(str(r[c]) for c in keys) for _, r in rows.iterrows()})
    return ", ".join(listed[:12]) + (f" and {len(listed) - 12} more" if len(listed) > 12 else "")


def conditions_section(df: pd.DataFrame, size_column: str = "cores") -> list[str]:
    """``## Measurement conditions`` lines for REPORT.md, or none when every row is clean.

    ``size_column``: the parallelism axis (``cores`` for SpTrSV, ``ranks`` for Tucker)."""
    lines: list[str] = []
    busy = _busy(df)
    if busy.any():
        reasons = sorted({str(v.get("reason")) for v in df.loc[busy, "load"]})
        lines.append(f"- **Taken on a busy machine** ({int(busy.sum())} measured rows; their times include "
                     f"time slices of other processes): {_points(df[busy], size_column)}. "
                     f"Why: {'; '.join(reasons[:3])}.")
    over = _flag(df, "oversubscribed")
    if over.any():
        lines.append(f"- **Oversubscribed** ({int(over.sum())} measured rows with more {size_column} than "
                     f"this machine's cores: the times are time slices, not costs): "
                     f"{_points(df[over], size_column)}.")
    extra = _flag(df, "model_extrapolated")
    if extra.any():
        laws = sorted({str(v) for v in df.loc[extra, "model_law"].dropna()}) if "model_law" in df.columns else []
        sizes = sorted({int(v) for v in df.loc[extra, size_column].dropna()}) if size_column in df.columns else []
        lines.append(f"- **Extrapolated model costs** ({int(extra.sum())} simulated rows at {size_column} "
                     f"{', '.join(map(str, sizes))}): the calibration did not measure these counts; "
                     f"the synchronisation costs come from the law {' / '.join(laws) or 'held constant'} "
                     "(shaded in the figures).")
    forced = _forced_calibrations(df)
    if forced:
        lines.append(f"- **Modelled with a calibration kept with `spbench calibrate --force`** "
                     f"({sum(forced.values())} simulated rows): {'; '.join(sorted(forced))}. Its costs may "
                     f"include time slices of other processes; calibrate again on a quiet machine.")
    if not lines:
        return []
    return ["## Measurement conditions", "", *lines, ""]


def _forced_calibrations(df: pd.DataFrame) -> dict:
    """Why the calibrations of simulated rows were kept only with --force (the rows' settings) -> rows."""
    found: dict = {}
    for settings in df["settings"] if "settings" in df.columns else ():
        reason = settings.get("calibration_forced") if isinstance(settings, dict) else None
        if reason:
            found[reason] = found.get(reason, 0) + 1
    return found


def extrapolated_from(rows: pd.DataFrame, size_column: str = "cores") -> tuple[float, str] | None:
    """(smallest extrapolated count, law) of simulated ``rows``, None when none is extrapolated."""
    extra = _flag(rows, "model_extrapolated")
    if not extra.any() or size_column not in rows.columns:
        return None
    laws = rows.loc[extra, "model_law"].dropna().astype(str) if "model_law" in rows.columns else pd.Series([], dtype=str)
    return float(rows.loc[extra, size_column].min()), (laws.iloc[0] if len(laws) else "held constant")


def shade_extrapolated(ax, rows: pd.DataFrame, size_column: str = "cores") -> None:
    """Shade the part of a figure's x axis whose simulated costs an extrapolation law supplied; the
    shade is named in the legend (a note inside the axes ran over points and out into the legend)."""
    found = extrapolated_from(rows, size_column)
    if found is None:
        return
    start, law = found
    right = ax.get_xlim()[1]
    ax.axvspan(start - 0.5, right, color="0.85", alpha=0.5, linewidth=0, zorder=0,
               label=f"costs extrapolated\n({law})")  # two lines: a wide legend pushed the title under it
    ax.set_xlim(right=right)
