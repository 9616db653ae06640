"""Paper 2's Table 6.3 (§6.5, Eq. 6.1): after how many solves scheduling plus parallel solves
beat serial solves, per matrix and as the median per data set group, beside the paper's."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from spbench.report import labels
from spbench.sptrsv.report import paper_values as paper
from spbench.sptrsv.report.rows import default_cores, noisy_schedules, ok_rows, sort_groups, timed_repetitions
from spbench.sptrsv.report.summary import SERIAL
from spbench.sptrsv.report.table_section import write_table_section
from spbench.report.tables import format_markdown, write_csv


def amortisation(df: pd.DataFrame, cores: int | None = None) -> pd.DataFrame:
    """Eq. 6.1 per matrix: solves after which scheduling + parallel solves beat serial solves.

    ``n = mean(t_schedule) / (mean(t_serial) - mean(t_parallel))`` when ``mean(t_serial) >
    mean(t_parallel)``, else +∞. The means are arithmetic (the paper's bars) over all timed
    repetitions (``solve_times``; a row without them contributes its ``solve_time``) of the ok
    rows of one (execution, dataset, curve label, cores); the serial baseline is the dataset's
    ok ``serial`` run at its lowest core count in the same execution. ``cores``: default the
    largest core count of a parallel row. Columns: ``execution, group, dataset, algorithm``
    (curve label), ``kernel, cores, schedule_time, serial_time, parallel_time, amortisation``
    (times in s); rows without a serial baseline or a schedule time are left out.
    """
    rows = ok_rows(df)
    columns = ["execution", "group", "dataset", "algorithm", "kernel", "cores", "schedule_time",
               "serial_time", "parallel_time", "amortisation"]
    rows = rows[np.isfinite(rows["solve_time"])]  # `execution: schedule` rows have no solve to amortise
    if cores is None:
        cores = default_cores(rows)
    serial = rows[rows["algorithm"] == SERIAL]
    parallel = rows[(rows["algorithm"] != SERIAL) & (rows["cores"] == cores)]
    if serial.empty or parallel.empty:
        return pd.DataFrame(columns=columns)
    lowest = serial.groupby(["execution", "dataset"])["cores"].transform("min")
    first = serial[serial["cores"] == lowest]
    baseline = {key: _mean_times(part)
                for key, part in first.groupby(["execution", "dataset"])}
    records = []
    for (execution, dataset, label), part in parallel.groupby(["execution", "dataset", "label"]):
        t_serial = baseline.get((execution, dataset), np.nan)
        t_parallel = _mean_times(part)
        sched = part["schedule_time"][np.isfinite(part["schedule_time"])
                                      & (part["schedule_time"] >= 0)]
        if not (np.isfinite(t_serial) and np.isfinite(t_parallel)) or sched.empty:
            continue
        t_schedule = float(sched.mean())
        n = t_schedule / (t_serial - t_parallel) if t_serial > t_parallel else math.inf
        records.append({"execution": execution, "group": part["group"].iloc[0],
                        "dataset": dataset, "algorithm": label,
                        "kernel": "+".join(sorted(set(part["kernel"]) - {""})),
                        "cores": int(cores),
                        "schedule_time": t_schedule, "serial_time": t_serial,
                        "parallel_time": t_parallel, "amortisation": n})
    if not records:
        return pd.DataFrame(columns=columns)
    return sort_groups(pd.DataFrame(records), "algorithm", "dataset", "execution")[columns]


def _mean_times(rows: pd.DataFrame) -> float:
    times: list[float] = []
    for row_times, median in zip(rows["solve_times"], rows["solve_time"]):
        times += timed_repetitions(row_times, float(median))
    times = [t for t in times if t > 0]
    return float(np.mean(times)) if times else float("nan")


def amortisation_table(per_matrix: pd.DataFrame) -> pd.DataFrame:
    """Table 6.3: median over matrices of :func:`amortisation` per (execution, algorithm, group).

    +∞ counts as larger than every number: the median is +∞ when the middle value (of an even
    count, the upper of the two middle values) is +∞. Columns: ``execution, group, algorithm, kernel,
    cores, matrices, never (matrices with +∞), amortisation_median``.
    """
    columns = ["execution", "group", "algorithm", "kernel", "cores", "matrices", "never",
               "amortisation_median"]
    if per_matrix.empty:
        return pd.DataFrame(columns=columns)
    out = (per_matrix.groupby(["execution", "group", "algorithm", "kernel", "cores"])
           ["amortisation"]
           .agg(matrices="size", never=lambda v: int(np.isinf(v).sum()),
                amortisation_median=lambda v: float(np.median(v.to_numpy(dtype=float))))
           .reset_index())
    return sort_groups(out, "algorithm", "execution")[columns]


def format_amortisation(value: float) -> str:
    """An amortisation count for a table: ``+inf`` (never pays off) or four significant digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return "+inf" if math.isinf(value) and value > 0 else f"{value:.4g}"


def amortisation_display(table: pd.DataFrame) -> pd.DataFrame:
    """Table 6.3 with the paper's median per architecture (one socket) beside this run's.

    A row gets the paper's value only when it ran the kernel the paper ran that scheduler with
    (:data:`~spbench.sptrsv.report.paper_values.PAPER_KERNELS`), "—" otherwise.
    """
    records = []
    for rec in table.to_dict("records"):
        base = str(rec["algorithm"]).partition("/")[0]
        kernel = rec.get("kernel") or ""
        same_run = not kernel or paper.PAPER_KERNELS.get(base) in (None, kernel)
        out = {"execution": rec["execution"], "group": rec["group"],
               "algorithm": rec["algorithm"], "kernel": rec.get("kernel", ""),
               "matrices": int(rec["matrices"]),
               "never (+inf)": int(rec["never"]),
               f"this run ({int(rec['cores'])} cores)": format_amortisation(
                   rec["amortisation_median"])}
        for arch in paper.ARCHITECTURES:
            value = paper.TABLE_6_3.get((arch, rec["group"]), {}).get(base) if same_run else None
            out[f"paper ({arch}, {paper.SINGLE_SOCKET[arch]})"] = (
                "—" if value is None else f"{value:.2f}")
        records.append(out)
    return pd.DataFrame(records)


def paper_table_markdown() -> str:
    """The paper's Table 6.3 as printed: one row per (architecture, group)."""
    records = [{"architecture": f"{arch} ({paper.SINGLE_SOCKET[arch]} cores)", "group": g,
                **{paper.ALGORITHM_NAMES[a]: ("—" if v is None else f"{v:.2f}")
                   for a, v in cells.items()}}
               for (arch, g), cells in paper.TABLE_6_3.items()]
    return format_markdown(pd.DataFrame(records))


def write_section(df: pd.DataFrame, out_dir: str | os.PathLike, cores: int | None = None
                  ) -> tuple[list[Path], list[str], list[str]]:
    """``table_6_3.md/.csv`` and ``amortisation_per_matrix.csv`` in ``out_dir`` at ``cores``
    (default: the largest parallel core count); returns (written paths, REPORT.md lines, notes)."""
    out_dir = Path(out_dir)
    per_matrix = amortisation(df, cores)
    t63 = amortisation_table(per_matrix)
    if t63.empty:
        return [], [], ["Table 6.3 (amortisation): no parallel rows with a schedule time and a "
                        "serial baseline at the chosen core count, table not written."]
    chosen = int(t63["cores"].iloc[0])
    rows = ok_rows(df)
    amortised = set(zip(per_matrix["execution"], per_matrix["dataset"], per_matrix["algorithm"]))
    used = rows[np.array([key in amortised for key in zip(rows["execution"], rows["dataset"], rows["label"])])
                & (rows["cores"] == chosen) & np.isfinite(rows["solve_time"]) & (rows["schedule_time"] >= 0)]
    noisy_text, noisy = noisy_schedules(used)
    written, lines = write_table_section(
        out_dir, "table_6_3", t63, amortisation_display(t63),
        title="Amortisation (paper Table 6.3, Eq. 6.1)",
        intro="Per matrix, n = mean(t_schedule) / (mean(t_serial) − mean(t_parallel)) solves, "
        "+inf where the parallel solve is not faster than serial (arithmetic means over "
        f"the timed repetitions); median over matrices at {chosen} cores. The paper uses one "
        "full socket per machine (its core count in the column heading). " + noisy_text,
        paper_table="Table 6.3", paper_markdown=paper_table_markdown(),
        more_links=" · [per matrix (CSV)](amortisation_per_matrix.csv)")
    written.append(write_csv(per_matrix.assign(dataset=per_matrix["dataset"].map(labels.display_map(df))),
                             out_dir / "amortisation_per_matrix.csv"))
    return written, lines, [f"Table 6.3: {noisy_text}"] if noisy else []
