"""The functions computing ours for sptrsv-elasticity's claims (:mod:`.claims`) from SpTrSV result
rows (the paper's data sets at its core counts): speed-ups over each scheduler, the orderings of
Fig. 6.1, SSP over BSP (Table 6.2), barriers (Table 6.1), amortisation (Table 6.3) and scheduling
times (Fig. 6.2), each returning an Outcome (:mod:`spbench.report.claims`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from spbench.report.claims import Outcome, judge_cases, judge_cells, judge_range, judge_value, unmeasurable
from spbench.report.labels import dataset_group
from spbench.sptrsv.report import paper_values as paper
from spbench.sptrsv.report.fig6_2_scheduling_time import WIDE_DECADES, fit_slopes, schedule_points
from spbench.sptrsv.report.rows import geomean
from spbench.sptrsv.report.summary import SERIAL, speedups
from spbench.sptrsv.report.table6_1_barriers import barrier_reduction
from spbench.sptrsv.report.table6_2_ssp_over_bsp import ssp_over_bsp
from spbench.sptrsv.report.table6_3_amortisation import amortisation, amortisation_table


NAME = paper.ALGORITHM_NAMES
RUN_SOLVES = "`make fig6.1` (SuiteSparse, iChol, METIS) with rows at {cores} cores: on the paper's {machine}"
RUN_SCHEDULES = "`make table6.1` (schedules only at 16–128 cores, minutes; `SCALE=full` at the matrices' sizes)"
RUN_FIG62 = "`make fig6.2` (schedules over 2.6 decades of nonzeros)"
#: the paper's fewest cores (Table 6.2, x86 Xeon): core counts below it are no point of its tables or figures
MIN_CORES = min(c for _, c in paper.TABLE_6_2)


def _scope(table: pd.DataFrame) -> pd.DataFrame:
    """A derived table's rows on the paper's data sets (stand-ins included, generated matrices not)
    at the paper's core counts (≥ :data:`MIN_CORES`)."""
    if table.empty:
        return table
    return table[table["group"].isin(paper.GROUPS) & (table["cores"] >= MIN_CORES)]


def _solve_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Serial and each scheduler on the kernel of the paper's figures, with a solve time."""
    if df.empty or "solve_time" not in df or "algorithm" not in df:
        return df.iloc[0:0]
    kernel = df["kernel"].astype(str) if "kernel" in df else pd.Series("", index=df.index)
    wanted = df["algorithm"].map(lambda a: paper.PAPER_KERNELS.get(a, ""))
    keep = (df["algorithm"] == SERIAL) | (wanted == "") | (kernel == wanted) | (kernel.isin(["", "None", "nan"]))
    return df[keep & pd.to_numeric(df["solve_time"], errors="coerce").notna()]


def _speedups(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Geomean speed-up over Serial per (group, cores, algorithm) (Figs. 1.1, 6.1) and the rows used."""
    rows = _solve_rows(df)
    if rows.empty or not (rows["algorithm"] == SERIAL).any() or not (rows["status"] == "ok").any():
        return pd.DataFrame(columns=["group", "cores", "algorithm", "speedup"]), rows
    s = speedups(rows)
    s["group"] = s["dataset"].map(dataset_group)
    s["algorithm"] = s["algorithm"].str.split("/").str[0]
    return _scope(s.groupby(["group", "cores", "algorithm"])["speedup"].agg(geomean).reset_index()), rows


def _cores_note(table: pd.DataFrame, cores) -> str:
    have = sorted(set(int(c) for c in table["cores"])) if len(table) else []
    return f"no rows at {cores} cores" + (f" (have {', '.join(map(str, have))})" if have else "")


def over(other: str, figure: str):
    """§1 / abstract: ElasticDivide's geomean speed-up over ``other`` per data set at 48 cores."""
    quoted = paper.quoted_figures()
    quoted = quoted[quoted["figure"] == figure]

    def compute(df):
        s, rows = _speedups(df)
        cells = []
        for q in quoted.itertuples():
            part = s[(s["cores"] == q.cores) & (s["group"] == q.group)].set_index("algorithm")["speedup"]
            if {"elastic_divide", other} <= set(part.index):
                cells.append((q.group, float(part["elastic_divide"] / part[other]), q.value))
        if not cells:
            return unmeasurable(_cores_note(s, int(quoted["cores"].iloc[0])) + f" with ElasticDivide, {NAME[other]} "
                                "and Serial on a paper data set", rows)
        out = judge_cells(cells, 0.10, rows)
        return Outcome(out.verdict, ", ".join(f"{g} {v:.2f}×" for g, v, _ in cells), out.reason, rows)
    return compute


def quoted_speedup(algorithm: str | None):
    """§6.2: ElasticDivide's 20.00 on METIS at 64 cores (``elastic_divide``), or its ratio to
    GrowLocal's 17.93 ("12% higher", ``None``)."""
    q = paper.quoted_figures()
    q = q[q["figure"] == "6.1"].set_index("algorithm")["value"]

    def compute(df):
        s, rows = _speedups(df)
        part = s[(s["cores"] == 64) & (s["group"] == "METIS")].set_index("algorithm")["speedup"]
        need = [algorithm] if algorithm else ["elastic_divide", "growlocal"]
        if not set(need) <= set(part.index):
            return unmeasurable(_cores_note(s, 64) + " of " + " and ".join(NAME[a] for a in need) + " on METIS", rows)
        if algorithm:
            return judge_value(float(part[algorithm]), float(q[algorithm]), 0.25, rows)
        return judge_value(float(part["elastic_divide"] / part["growlocal"]),
                           float(q["elastic_divide"] / q["growlocal"]), 0.10, rows)
    return compute


def best_of(winners: tuple):
    """Fig. 6.1: the algorithm with the highest geomean speed-up per (data set, cores) is one of ``winners``."""
    def compute(df):
        s, rows = _speedups(df)
        cases = {}
        for (group, cores), part in s.groupby(["group", "cores"]):
            if part["algorithm"].nunique() < 2 or not set(winners) & set(part["algorithm"]):
                continue
            top = part.loc[part["speedup"].idxmax()]
            cases[f"{group} {cores} cores"] = (top["algorithm"] in winners, f"best {NAME.get(top['algorithm'])} "
                                                                          f"{top['speedup']:.3g}×")
        return judge_cases(cases, rows, noun="(data set, cores)") if cases else \
            unmeasurable("no parallel rows of " + "/".join(NAME[w] for w in winners) + " beside another scheduler "
                         "with a Serial baseline", rows)
    return compute


def drop_at_80(df):
    s, rows = _speedups(df)
    wide = s.pivot_table(index=["group", "algorithm"], columns="cores", values="speedup")
    if not {64, 80} <= set(wide.columns):
        return unmeasurable(_cores_note(s, "both 64 and 80"), rows)
    both = wide[[64, 80]].dropna()
    return judge_cases({f"{g} {NAME.get(a, a)}": (r[80] < r[64], f"{r[64]:.3g}× → {r[80]:.3g}×")
                        for (g, a), r in both.iterrows()}, rows, noun="(data set, scheduler)")


def hdagg_metis(df):
    s, rows = _speedups(df)
    h = s[s["algorithm"] == "hdagg"].pivot_table(index="group", columns="cores", values="speedup")
    if "METIS" not in h.index or h.shape[1] < 2 or len(h) < 2:
        return unmeasurable("needs HDagg at two or more core counts on METIS and another data set", rows)
    growth = (h.iloc[:, -1] / h.iloc[:, 0]).dropna()
    return judge_cases({g: (growth[g] < growth["METIS"], f"{growth[g]:.2f}× vs METIS {growth['METIS']:.2f}× "
                                                        f"from {h.columns[0]} to {h.columns[-1]} cores")
                        for g in growth.index if g != "METIS"}, rows, noun="data sets")


# -- Table 6.2: SSP over BSP ----------------------------------------------------------------------------
def _ssp(df) -> tuple[pd.DataFrame, pd.DataFrame]:
    if df.empty or "kernel" not in df or "solve_time" not in df:
        return pd.DataFrame(columns=["group", "cores", "ssp_over_bsp"]), df.iloc[0:0]
    rows = df[(df["algorithm"] == "elastic_divide") & df["kernel"].isin(["bsp", "ssp"])]
    return _scope(ssp_over_bsp(df)), rows


def ssp_value(target: float, cores_at_least: int, tol: float = 0.25):
    """§1.1: SSP over BSP on SuiteSparse ("2×" with many threads; "up to 4.5×" on ARM at 96 cores)."""
    def compute(df):
        t, rows = _ssp(df)
        t = t[(t["group"] == "SuiteSparse") & (t["cores"] >= cores_at_least)]
        if t.empty:
            return unmeasurable(f"no ElasticDivide rows on both the BSP and SSP kernels on SuiteSparse at "
                                f"≥ {cores_at_least} cores", rows)
        top = t.loc[t["cores"].idxmax()]
        return judge_value(float(top["ssp_over_bsp"]), target, tol, rows, where=f"{int(top['cores'])} cores")
    return compute


def ssp_cases(which: str):
    """Table 6.2's orderings: beneficial in every cell (``gt1``), SuiteSparse above METIS at each core
    count (``suite``), growing from the lowest to the highest core count per data set (``cores``)."""
    def compute(df):
        t, rows = _ssp(df)
        cases = {}
        if which == "gt1":
            cases = {f"{r.group} {r.cores}": (r.ssp_over_bsp > 1, f"{r.ssp_over_bsp:.3g}×") for r in t.itertuples()}
        wide = t.pivot_table(index="cores", columns="group", values="ssp_over_bsp") if len(t) else pd.DataFrame()
        if which == "suite" and {"SuiteSparse", "METIS"} <= set(wide.columns):
            cases = {f"{c} cores": (r["SuiteSparse"] > r["METIS"], f"{r['SuiteSparse']:.3g}× vs {r['METIS']:.3g}×")
                     for c, r in wide[["SuiteSparse", "METIS"]].dropna().iterrows()}
        if which == "cores" and len(wide) >= 2:
            cases = {g: (col.dropna().iloc[-1] > col.dropna().iloc[0], f"{col.dropna().iloc[0]:.3g}× → "
                                                                         f"{col.dropna().iloc[-1]:.3g}×")
                     for g, col in wide.items() if col.notna().sum() >= 2}
        return judge_cases(cases, rows, noun="cases") if cases else \
            unmeasurable("no ElasticDivide schedule run on both the BSP and SSP kernels"
                         + {"gt1": "", "suite": " on SuiteSparse and METIS at one core count",
                            "cores": " at two or more core counts"}[which], rows)
    return compute


def architectures(df):  # noqa: ARG001 - every claim computes from rows; these rows cannot tell
    return unmeasurable("the rows record no architecture: needs Table 6.2 measured on both ARM Kunpeng 920 "
                        "and an x86 machine (this machine is one host)")


# -- Table 6.1: barriers ------------------------------------------------------------------------------
def _barriers(df) -> tuple[pd.DataFrame, pd.DataFrame]:
    if df.empty or not {"supersteps", "wavefronts", "kernel"} <= set(df.columns):
        return pd.DataFrame(columns=["group", "cores", "algorithm", "reduction", "reduction_x2"]), df.iloc[0:0]
    t = _scope(barrier_reduction(df))
    rows = df[pd.to_numeric(df["supersteps"], errors="coerce") > 0]
    return t, rows


def table61_cells(df):
    t, rows = _barriers(df)
    cells = [(f"{r.group} {r.cores} {NAME.get(r.algorithm)}", float(r.reduction),
              paper.TABLE_6_1.get((r.group, int(r.cores)), {}).get(r.algorithm)) for r in t.itertuples()]
    out = judge_cells(cells, 0.25, rows)
    if out.verdict == "not measurable":
        return unmeasurable("no schedule rows (supersteps, wavefronts) of a paper data set at 16, 32, 64 or 128 "
                            "cores", rows)
    return out


def _gl_over_ed2(t: pd.DataFrame) -> pd.Series:
    wide = t.pivot_table(index=["group", "cores"], columns="algorithm", values="reduction")
    if not {"growlocal", "elastic_divide"} <= set(wide.columns):
        return pd.Series(dtype=float)
    return (wide["growlocal"] / (paper.STALENESS * wide["elastic_divide"])).dropna()


def barrier_range(df):
    t, rows = _barriers(df)
    ours = _gl_over_ed2(t) if len(t) else pd.Series(dtype=float)
    printed = _gl_over_ed2(paper.table_6_1())
    if ours.empty:
        return unmeasurable("no schedule rows of both GrowLocal and ElasticDivide at one core count", rows)
    return judge_range(float(ours.min()), float(ours.max()), float(printed.min()), float(printed.max()), 0.10, rows)


def barrier_groups(df):
    t, rows = _barriers(df)
    ours = _gl_over_ed2(t) if len(t) else pd.Series(dtype=float)
    cases = {f"{g} {c}": ((r > 1) if g == "SuiteSparse" else (r < 1), f"GrowLocal/(2·ElasticDivide) {r:.2f}")
             for (g, c), r in ours.items() if g in ("SuiteSparse", "METIS")}
    return judge_cases(cases, rows, noun="(data set, cores)") if cases else \
        unmeasurable("no schedule rows of GrowLocal and ElasticDivide on SuiteSparse or METIS", rows)


def hdagg_barriers(df):
    t, rows = _barriers(df)
    wide = t[t["algorithm"] == "hdagg"].pivot_table(index="cores", columns="group", values="reduction") \
        if len(t) else pd.DataFrame()
    cases = {}
    if {"SuiteSparse", "METIS"} <= set(wide.columns):
        cases = {f"{c} cores": (r["METIS"] > r["SuiteSparse"], f"METIS {r['METIS']:.3g}, SuiteSparse "
                                                               f"{r['SuiteSparse']:.3g}")
                 for c, r in wide[["SuiteSparse", "METIS"]].dropna().iterrows()}
    for g, col in wide.items():
        col = col.dropna()
        if len(col) >= 2:
            cases[f"{g} over cores"] = (col.iloc[-1] < col.iloc[0], f"{col.iloc[0]:.3g} → {col.iloc[-1]:.3g}")
    return judge_cases(cases, rows) if cases else unmeasurable("no HDagg schedule rows at two core counts or on both "
                                                               "SuiteSparse and METIS", rows)


def depth_first(df):
    t, rows = _barriers(df)
    wide = t.pivot_table(index=["group", "cores"], columns="algorithm", values="reduction") if len(t) else None
    if wide is None or "hdagg" not in wide or not {"growlocal", "elastic_divide"} & set(wide.columns):
        return unmeasurable("no schedule rows of HDagg beside GrowLocal or ElasticDivide", rows)
    cases = {}
    for (g, c), r in wide.iterrows():
        ed = r.get("elastic_divide", np.nan) * paper.STALENESS
        others = [v for v in (r.get("growlocal", np.nan), ed) if np.isfinite(v)]
        if np.isfinite(r["hdagg"]) and others:
            cases[f"{g} {c}"] = (min(others) > r["hdagg"], f"HDagg {r['hdagg']:.3g}, GrowLocal/2·ElasticDivide "
                                                           + "/".join(f"{v:.3g}" for v in others))
    return judge_cases(cases, rows, noun="(data set, cores)")


# -- Table 6.3 and Fig. 6.2: scheduling time and amortisation -----------------------------------------------
def _amortisation(df) -> tuple[pd.DataFrame, pd.DataFrame, int | None]:
    """Table 6.3 at the largest full-socket core count of the paper's machines present (22, 48, 64)."""
    rows = _solve_rows(df)
    if rows.empty or "schedule_time" not in rows:
        return pd.DataFrame(), rows, None
    present = set(pd.to_numeric(rows["cores"], errors="coerce").dropna().astype(int))
    sockets = [c for c in sorted(set(paper.SINGLE_SOCKET.values())) if c in present]
    if not sockets:
        return pd.DataFrame(), rows, None
    table = amortisation_table(amortisation(rows, sockets[-1]))
    table["algorithm"] = table["algorithm"].str.split("/").str[0]
    return table[table["group"].isin(paper.GROUPS)], rows, sockets[-1]


def _no_socket(rows):
    return unmeasurable("no solve rows with scheduling times at a full socket of the paper's machines (22, 48 or "
                        "64 cores) beside a Serial baseline", rows)


def table63_cells(df):
    t, rows, cores = _amortisation(df)
    if t.empty:
        return _no_socket(rows)
    arch = {c: a for a, c in paper.SINGLE_SOCKET.items()}[cores]
    return judge_cells([(f"{r.group} {NAME.get(r.algorithm)}", float(r.amortisation_median),
                         paper.TABLE_6_3.get((arch, r.group), {}).get(r.algorithm)) for r in t.itertuples()], 0.5, rows)


def amortisation_range(algorithm: str):
    printed = paper.table_6_3()
    printed = printed[printed["algorithm"] == algorithm]["amortisation"].dropna()

    def compute(df):
        t, rows, _ = _amortisation(df)
        part = t[t["algorithm"] == algorithm]["amortisation_median"] if len(t) else pd.Series(dtype=float)
        part = part[np.isfinite(part)]
        if part.empty:
            return _no_socket(rows) if t.empty else unmeasurable(f"no finite amortisation of {NAME[algorithm]}", rows)
        return judge_range(float(part.min()), float(part.max()), float(printed.min()), float(printed.max()), 0.5, rows)
    return compute


def amortisation_order(df):
    t, rows, _ = _amortisation(df)
    if t.empty:
        return _no_socket(rows)
    order = ("spmp", "elastic_divide", "growlocal", "hdagg")
    cases = {}
    for group, part in t.groupby("group"):
        v = part.set_index("algorithm")["amortisation_median"]
        seq = [v[a] for a in order if a in v.index]
        if len(seq) >= 2:
            cases[group] = (all(a < b for a, b in zip(seq, seq[1:])),
                            ", ".join(f"{NAME[a]} {v[a]:.3g}" for a in order if a in v.index))
    return judge_cases(cases, rows, noun="data sets")


def _schedules(df) -> tuple[pd.DataFrame, pd.DataFrame]:
    if df.empty or not {"schedule_time", "nnz"} <= set(df.columns):
        return pd.DataFrame(columns=["algorithm", "dataset", "schedule_ms", "nnz"]), df.iloc[0:0]
    points = schedule_points(df)
    return points, df[df["algorithm"] != SERIAL]


def spmp_fastest(df):
    points, rows = _schedules(df)
    wide = points.pivot_table(index="dataset", columns="algorithm", values="schedule_ms") if len(points) else None
    if wide is None or "spmp" not in wide or wide.shape[1] < 2:
        return unmeasurable("no scheduling times of SpMP beside another scheduler", rows)
    return judge_cases({d: (r.idxmin() == "spmp", f"fastest {NAME.get(r.idxmin())} {r.min():.3g} ms")
                        for d, r in wide.iterrows() if r.notna().sum() >= 2}, rows, noun="matrices")


def slopes(df):
    points, rows = _schedules(df)
    fits = fit_slopes(points) if len(points) else pd.DataFrame()
    cases, narrow = {}, []
    for r in fits.itertuples() if len(fits) else ():
        if r.algorithm not in paper.FIG_6_2_SLOPES or not np.isfinite(r.slope):
            continue
        if r.decades < WIDE_DECADES:
            narrow.append(f"{NAME[r.algorithm]} {r.decades:.1f}")
            continue
        low, high = paper.FIG_6_2_SLOPES[r.algorithm]
        ok = (low is None or r.slope >= low - 0.1) and r.slope <= high + 0.1
        cases[NAME[r.algorithm]] = (ok, f"slope {r.slope:.2f} over {r.decades:.1f} decades")
    if not cases:
        return unmeasurable(f"no scheduler's times span {WIDE_DECADES:g} decades of nonzeros"
                            + (f" (decades: {', '.join(narrow)})" if narrow else ""), rows)
    return judge_cases(cases, rows, noun="schedulers")


def ed_twice(df):
    points, rows = _schedules(df)
    wide = points.pivot_table(index="dataset", columns="algorithm", values="schedule_ms") if len(points) else None
    if wide is None or not {"growlocal", "elastic_divide"} <= set(wide.columns):
        return unmeasurable("no scheduling times of both GrowLocal and ElasticDivide", rows)
    ratio = (wide["growlocal"] / wide["elastic_divide"]).dropna()
    return judge_value(float(ratio.median()), 2.0, 0.33, rows, where=f"median over {len(ratio)} matrices")


