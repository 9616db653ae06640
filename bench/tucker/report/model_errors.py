"""The Tucker cost model's validation error per component, for the claims page
(:data:`spbench.tucker.report.claims.MODEL_VALIDATION`): a verdict given on simulated rows rests on the
modelled TTM, SVD or communication time of tucker-lite's breakup (§7.2, Fig. 11), so the page prints,
beside it, how far the model was from the measured MPI worker on that component on this machine.

The errors come from the newest `spbench bench tucker-model` rows under the results read (stored by
`spbench calibrate --experiment tucker --validate SIZE` or by the benchmark itself): per stand-in,
rank count and scheme the row of the latest invocation. A component is judged where it is at least
:data:`.benchmarks.tables.JUDGED_SHARE` of the measured HOOI time (a smaller one's error decides
nothing), against :data:`.benchmarks.tables.JUDGED_ERROR`, as the benchmark's own table judges it.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from spbench.tucker.benchmarks.tables import JUDGED_ERROR, JUDGED_SHARE
from spbench.tucker.report.components import COMPONENT_NAME, COMPONENTS

__all__ = ["validation_rows", "validation_lines", "VALIDATE_COMMAND"]

#: what produces the rows when there are none
VALIDATE_COMMAND = "spbench calibrate --experiment tucker --validate 2000000"
BENCHMARK = "tucker-model"


def validation_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The ok tucker-model rows of ``df``, one per (stand-in, ranks, scheme): the newest invocation's."""
    need = {"experiment", "benchmark", "dataset", "ranks", "scheme"}
    if df.empty or not need <= set(df.columns):
        return pd.DataFrame()
    rows = df[(df["experiment"] == "bench") & (df["benchmark"] == BENCHMARK)]
    if "status" in rows:
        rows = rows[rows["status"] == "ok"]
    if rows.empty:
        return rows
    order = [c for c in ("started_at", "repeat") if c in rows]
    rows = rows.sort_values(order) if order else rows
    return rows.drop_duplicates(["dataset", "ranks", "scheme"], keep="last").reset_index(drop=True)


def _standin(name: str) -> str:
    """``nell2~standin[nnz=200000,...]`` as "nell2 stand-in, 200,000 nonzeros"."""
    base = str(name).split("~", 1)[0].split("[", 1)[0]
    nnz = re.search(r"nnz=(\d+)", str(name))
    return f"{base} stand-in" + (f", {int(nnz.group(1)):,} nonzeros" if nnz else "")


def _worst(rows: pd.DataFrame, column: str) -> str:
    r = rows.loc[rows[column].abs().idxmax()]
    return f"{r[column]:+.0%}".replace("-", "−") + f" ({_standin(r['dataset'])}, {r['scheme']})"


def _line(rows: pd.DataFrame, component: str) -> str:
    """One component's line: judged rows within the error, the worst judged error at each rank count."""
    name = COMPONENT_NAME[component]
    err, meas = f"rel_error_{component}", f"measured_{component}"
    if rows.empty or err not in rows or meas not in rows:
        return f"model's {name} not validated here: run `{VALIDATE_COMMAND}`"
    rows = rows[np.isfinite(pd.to_numeric(rows[err], errors="coerce")) & (rows[meas] > 0)]
    if rows.empty:
        return f"model's {name}: no validation row measures it (run `{VALIDATE_COMMAND}`)"
    judged = rows[rows[meas] >= JUDGED_SHARE * rows["measured_hooi_time"]]
    within = int((judged[err].abs() <= JUDGED_ERROR).sum())
    parts = []
    for ranks, at in rows.groupby("ranks", sort=True):
        some = judged[judged["ranks"] == ranks]
        unit = "rank" if int(ranks) == 1 else "ranks"
        parts.append(f"{int(ranks)} {unit} worst {_worst(some, err)}" if len(some) else
                     f"{int(ranks)} {unit} under {JUDGED_SHARE:.0%} of HOOI (worst {_worst(at, err)}, not judged)")
    return (f"model's {name} error in validation ({within} of {len(judged)} rows within ±{JUDGED_ERROR:.0%} "
            f"where ≥ {JUDGED_SHARE:.0%} of HOOI): " + "; ".join(parts))


def validation_lines(df: pd.DataFrame) -> dict:
    """Component → its validation line (:func:`_line`) from the newest tucker-model rows of ``df``,
    or the command that validates the model when there are none."""
    rows = validation_rows(df)
    return {c: _line(rows, c) for c in COMPONENTS}
