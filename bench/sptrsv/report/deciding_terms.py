"""The simulated SpTrSV report's "what decides each ordering" section (sptrsv-elasticity §6.2, §6.4):
Fig. 6.1's order of the schedulers and Table 6.2's SSP-over-BSP ratio, each split into the cost
model's terms (:data:`spbench.sptrsv.model.TERMS`: work, imbalance, synchronisation, stored in every
simulated row's ``model.terms``), with the paper's printed values beside them.

For two runs A (faster) and B of the same matrices the gap is the mean over matrices of
(t_B − t_A) / t_A, and each term's share is the mean of (term_B − term_A) / t_A: the shares add up
to the gap.  The deciding term is the one with the largest share; "alone enough" when that share
covers the whole gap.  Core counts the calibration did not measure are marked (extrapolated).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from spbench.sptrsv.report import paper_values as paper
from spbench.sptrsv.report.labels import algorithm_label
from spbench.sptrsv.report.rows import geomean, nearest_cores, sort_groups
from spbench.sptrsv.report.summary import SERIAL
from spbench.report.tables import format_markdown, write_csv
from spbench.sptrsv.model import TERMS

TITLE = "Simulated: the term that decides each ordering (paper Fig. 6.1, Table 6.2)"


def _terms(model) -> dict | None:
    if isinstance(model, str):
        try:
            model = json.loads(model)
        except json.JSONDecodeError:
            return None
    terms = model.get("terms") if isinstance(model, Mapping) else None
    if not isinstance(terms, Mapping) or any(k not in terms for k in TERMS):
        return None
    return {k: float(terms[k]) for k in TERMS}


def term_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The simulated ok rows that carry ``model.terms``: dataset, group, algorithm, kernel, cores,
    solve_time, extrapolated and one column per term (seconds)."""
    from spbench.sptrsv.report.rows import ok_rows

    rows = ok_rows(df)
    src = df.reset_index(drop=True)
    keep = (rows["execution"] == "simulated").to_numpy().copy()
    empty = pd.DataFrame(columns=["dataset", "group", "algorithm", "kernel", "cores", "solve_time", "extrapolated",
                                  *TERMS])
    if "model" not in src.columns or not keep.any():
        return empty
    terms = src.loc[rows.index, "model"].map(_terms)
    keep &= terms.notna().to_numpy()
    if not keep.any():  # simulated before the model split its time into terms
        return empty
    out = rows.loc[keep, ["dataset", "group", "algorithm", "kernel", "cores", "solve_time"]].copy()
    out[list(TERMS)] = pd.DataFrame(terms[keep].tolist(), index=out.index)
    extra = src.loc[out.index, "model_extrapolated"] if "model_extrapolated" in src.columns else False
    out["extrapolated"] = pd.Series(extra, index=out.index).fillna(False).astype(bool)
    return out.reset_index(drop=True)


def _medians(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, algorithm, kernel, cores): median time and terms."""
    keys = ["dataset", "group", "algorithm", "kernel", "cores"]
    return rows.groupby(keys).agg(solve_time=("solve_time", "median"), extrapolated=("extrapolated", "any"),
                                  **{t: (t, "median") for t in TERMS}).reset_index()


def decide(fast: pd.DataFrame, slow: pd.DataFrame) -> dict:
    """Gap and term shares between two runs of the same matrices (indexed by dataset): the module
    docstring's definition.  Keys: matrices, gap, shares {term: share}, term, alone."""
    both = fast.index.intersection(slow.index)
    a, b = fast.loc[both], slow.loc[both]
    base = a["solve_time"].to_numpy()
    shares = {t: float(np.mean((b[t].to_numpy() - a[t].to_numpy()) / base)) for t in TERMS}
    gap = float(np.mean((b["solve_time"].to_numpy() - base) / base))
    top = max(shares, key=shares.get)
    return {"matrices": len(both), "gap": gap, "shares": shares, "term": top, "alone": shares[top] >= gap}


def _decision_text(d: dict, slower: str) -> str:
    share = d["shares"][d["term"]]
    parts = ", ".join(f"{t} {d['shares'][t]:+.1%}" for t in TERMS)
    if d["gap"] <= 0:
        return f"no gap on average over the matrices ({parts})"
    return (f"**{d['term']}** decides it ({slower} spends {share:.1%} of the faster one's time more there, "
            f"{share / d['gap']:.0%} of the {d['gap']:.1%} gap"
            + (", alone enough" if d["alone"] else ", the other terms add the rest") + f"; {parts})")


def _label(algorithm: str, kernel: str) -> str:
    return algorithm_label(algorithm, kernel or None)


def _paper_fig61(group: str, cores: int) -> str:
    """The speed-ups the paper's text quotes from Fig. 6.1 / Fig. 1.1 at this group and core count."""
    quoted = [q for q in paper.QUOTED_FIGURES if q["group"] == group and q["cores"] == cores]
    if not quoted:
        return "the paper quotes no Fig. 6.1 value at this group and core count (a plot only)"
    where = {q["figure"]: q["figure"] if str(q["figure"]).startswith("§") else f"Fig. {q['figure']}" for q in quoted}
    return "; ".join(f"{q['quantity']}, {algorithm_label(str(q['algorithm']))}: {q['value']:.2f} "
                     f"({q['architecture']}, {where[q['figure']]})" for q in quoted)


def ordering_lines(med: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Fig. 6.1: per (group, cores ≥ 2) the schedulers on their own kernels ordered by geometric-mean
    speed-up over serial, and the term deciding each neighbouring pair."""
    serial = med[med["algorithm"] == SERIAL].set_index("dataset")["solve_time"]
    own = med[(med["algorithm"] != SERIAL) & (med["cores"] >= 2)]
    own = own[~((own["algorithm"] == "elastic_divide") & (own["kernel"] == "bsp"))]
    table, lines = [], []
    for (group, cores), part in sort_groups(own, "cores").groupby(["group", "cores"], sort=False):
        runs = {}
        for (alg, kernel), r in part.groupby(["algorithm", "kernel"]):
            r = r.set_index("dataset")
            common = r.index.intersection(serial.index)
            speedup = geomean(serial[common] / r.loc[common, "solve_time"]) if len(common) else np.nan
            runs[(alg, kernel)] = (speedup, r)
            rec = {"group": group, "cores": int(cores), "scheduler": _label(alg, kernel), "matrices": len(r),
                   "speed-up over serial (geomean)": speedup,
                   "extrapolated": bool(r["extrapolated"].any())}
            for t in TERMS:
                rec[f"{t} / time"] = float((r[t] / r["solve_time"]).mean())
            table.append(rec)
        order = sorted(runs, key=lambda k: -runs[k][0] if np.isfinite(runs[k][0]) else np.inf)
        extra = " (extrapolated)" if part["extrapolated"].any() else ""
        ranking = " > ".join(f"{_label(*k)} {runs[k][0]:.2f}×" for k in order)
        lines.append(f"- {group}, {int(cores)} cores{extra}: {ranking}.")
        for fast, slow in zip(order, order[1:]):
            d = decide(runs[fast][1], runs[slow][1])
            lines.append(f"  - {_label(*fast)} over {_label(*slow)}: {_decision_text(d, _label(*slow))}.")
        lines.append(f"  - Paper: {_paper_fig61(group, int(cores))}.")
    return pd.DataFrame(table), lines


def _paper_t62(group: str, cores: int) -> str:
    cells = []
    for arch in paper.ARCHITECTURES:
        near = nearest_cores([c for a, c in paper.TABLE_6_2 if a == arch], cores)
        value = paper.TABLE_6_2.get((arch, near), {}).get(group)
        if value is not None:
            cells.append(f"{arch} {value:.2f} at {near}")
    return ", ".join(cells) if cells else "no paper value for this group"


def ssp_bsp_lines(med: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Table 6.2: ElasticDivide's schedule on the SSP and on the BSP kernel, per (group, cores ≥ 2):
    geometric mean of t_bsp / t_ssp and the term deciding it (the work is the same)."""
    ed = med[(med["algorithm"] == "elastic_divide") & (med["cores"] >= 2)]
    table, lines = [], []
    for (group, cores), part in sort_groups(ed, "cores").groupby(["group", "cores"], sort=False):
        ssp = part[part["kernel"] == "ssp"].set_index("dataset")
        bsp = part[part["kernel"] == "bsp"].set_index("dataset")
        both = ssp.index.intersection(bsp.index)
        if not len(both):
            continue
        ratio = geomean(bsp.loc[both, "solve_time"] / ssp.loc[both, "solve_time"])
        fast, slow, names = (ssp, bsp, ("SSP", "BSP")) if ratio >= 1 else (bsp, ssp, ("BSP", "SSP"))
        d = decide(fast.loc[both], slow.loc[both])
        extra = bool(part["extrapolated"].any())
        rec = {"group": group, "cores": int(cores), "matrices": len(both), "t_bsp / t_ssp": ratio,
               "deciding term": d["term"], "extrapolated": extra, "paper": _paper_t62(group, int(cores))}
        table.append(rec)
        lines.append(f"- {group}, {int(cores)} cores{' (extrapolated)' if extra else ''}: t_bsp / t_ssp "
                     f"{ratio:.2f} ({names[0]} kernel faster); {_decision_text(d, names[1] + ' kernel')}. "
                     f"Paper: {rec['paper']}.")
    return pd.DataFrame(table), lines


def write_section(df: pd.DataFrame, out_dir: Path) -> tuple[list[Path], list[str], list[str]]:
    """(written paths, REPORT.md lines, notes): the section for the simulated rows of one sweep;
    nothing when the sweep has no simulated rows, a note when they carry no ``model.terms``."""
    rows = term_rows(df)
    if rows.empty:
        simulated = "execution" in df.columns and (df["execution"] == "simulated").any()
        return [], [], (["Simulated rows without model.terms (written before the cost model split its time "
                         "into terms): rerun the sweep to see which term decides each ordering."]
                        if simulated else [])
    med = _medians(rows)
    order_table, order = ordering_lines(med)
    ratio_table, ratios = ssp_bsp_lines(med)
    written = []
    lines = [f"## {TITLE}", "",
             "Each modelled solve time splits into work (all blocks' compute over the cores), imbalance (what "
             "dependencies and uneven blocks add with free synchronisation) and synchronisation (what the "
             "barrier, weak-barrier and flag latencies add after overlap). For two runs of the same matrices the "
             "gap is the mean of (t_slower − t_faster) / t_faster; a term's share is the mean of its difference "
             "over t_faster, and the shares add up to the gap. The paper's values come from its machines "
             "(§5.3), ours from this calibration's profile: compare the orderings and the deciding terms, not "
             "the digits. The paper's order (§6.2): on x86 GrowLocal and ElasticDivide compete closely for the "
             "best, SpMP catches up with them at higher core counts on SuiteSparse, HDagg scales on METIS only; "
             "on ARM ElasticDivide is best on every data set.", ""]
    if len(order_table):
        written.append(write_csv(order_table, Path(out_dir) / "deciding_terms_fig61.csv"))
        lines += ["### Fig. 6.1: order of the schedulers", "", *order, "", format_markdown(order_table),
                  "[CSV](deciding_terms_fig61.csv)", ""]
    if len(ratio_table):
        written.append(write_csv(ratio_table, Path(out_dir) / "deciding_terms_table62.csv"))
        lines += ["### Table 6.2: SSP kernel over BSP kernel on ElasticDivide's schedule", "", *ratios, "",
                  format_markdown(ratio_table), "[CSV](deciding_terms_table62.csv)", ""]
    return written, lines, []
