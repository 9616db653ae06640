"""The Tucker report's "ours vs paper, by component" section (tucker-lite §7.2–7.3, Figs. 10–16):
per (P, K) and scheme the HOOI time's partition (TTM, SVD's local work, communication, other), the
exact metrics that drive each part (Fig. 12's E_max/(|E|/P), R_sum/L, R_max/(R_sum/P); Fig. 13's
volumes and the words per rank they make), the paper's number only where it prints one at the same
P and K, and which component decides the ranking; over rank counts, which component limits Fig. 15's
speed-up.

Deciding component of a tensor at (P, K): the pair compared is Lite and the fastest other scheme
when Lite is fastest, Lite and the fastest scheme when Lite loses, else the fastest scheme and the
runner-up. The components partition the HOOI time, so the gap between the two HOOI times is the
sum of the per-component differences d_c = c_slower − c_faster; the deciding component is the one
with the largest d_c, given with its share d_c / gap (≥ 100%: equalising that component alone would
tie or flip the ranking; below: the other components' differences are needed too).
Limiting component of a speed-up from P_lo to P_hi: the one with the largest excess over ideal
scaling, c(P_hi) − c(P_lo)·P_lo/P_hi, given with its share of the HOOI time's excess.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from spbench.report.labels import base_name, display_map
from spbench.report.tables import write_table
from spbench.tucker.report.paper import (BREAKUP, FIG10_CONFIGS, FIG14_HOOI_S, FIG15A_SPEEDUP, FIG16_DIST_S, HEADLINE,
    LABEL, PAPER_K, PAPER_RANKS, SCHEMES)
from spbench.tucker.report.provenance import rows_tag

__all__ = ["components_section", "component_table", "deciding_component", "limiting_component",
           "paper_hooi", "paper_fastest"]

COMPONENTS = tuple(c for c, _ in BREAKUP)
COMPONENT_NAME = dict(BREAKUP)
#: Fig. 12's normalised metrics and Fig. 13's volumes, with their names in the tables
METRICS = (("ttm_imbalance", "E_max/(|E|/P)"), ("svd_redundancy", "R_sum/L"), ("svd_imbalance", "R_max/(R_sum/P)"),
           ("words_per_rank", "words/rank"), ("fm_volume", "FM words"), ("svd_volume", "SVD words"))
METRIC_NAME = dict(METRICS)
#: the metrics that drive each component (tucker-lite §4.3, §7.2): the TTM by the busiest rank's
#: elements, the SVD by the shared rows and their balance, communication by the words sent
DRIVERS = {"ttm_time": ("ttm_imbalance",), "svd_time": ("svd_redundancy", "svd_imbalance"),
           "comm_time": ("words_per_rank", "fm_volume", "svd_volume"), "other_time": ()}


def paper_hooi(dataset: str, scheme: str, ranks: int, K: int) -> tuple[float, str] | None:
    """The paper's HOOI seconds for this tensor and scheme at exactly this P and K, with the figure
    it is printed in: Fig. 14 (big tensors) and Fig. 16's HOOI column (Lite, medium tensors), both
    at 512 ranks, K = 10; None elsewhere (the paper prints Figs. 10 and 11 as bars only)."""
    if (int(ranks), int(K)) != (PAPER_RANKS, PAPER_K):
        return None
    name = base_name(dataset)
    if FIG14_HOOI_S.get(name, {}).get(scheme) is not None:
        return float(FIG14_HOOI_S[name][scheme]), "Fig. 14"
    if scheme == HEADLINE and name in FIG16_DIST_S and name not in FIG14_HOOI_S:
        return float(FIG16_DIST_S[name]["hooi_lite"]), "Fig. 16"
    return None


def paper_fastest(dataset: str, ranks: int, K: int) -> str | None:
    """Where the paper states the fastest scheme at this P and K, that statement: Lite on every
    medium tensor in Fig. 10's three configurations (§7.2) and on the big ones at 512 ranks, K = 10
    (Fig. 14, §7.2); None where it states nothing."""
    name, at = base_name(dataset), (int(ranks), int(K))
    if name in FIG14_HOOI_S:
        return "Lite fastest (Fig. 14, §7.2)" if at == (PAPER_RANKS, PAPER_K) else None
    if name in FIG15A_SPEEDUP and at in FIG10_CONFIGS:
        return f"Lite fastest (Fig. 10({FIG10_CONFIGS[at]}), §7.2)"
    return None


def _median_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, scheme): the median over repeats of every number, words per rank
    ((SVD + FM words) / P, per HOOI) added."""
    numeric = [c for c in rows.select_dtypes(include="number").columns if c not in ("ranks", "K", "repeat")]
    table = rows.groupby(["dataset", "algorithm"], sort=True)[numeric].median()
    if {"svd_volume", "fm_volume"} <= set(table.columns):
        table["words_per_rank"] = (table["svd_volume"] + table["fm_volume"]) / int(rows["ranks"].iloc[0])
    return table


def _order(schemes) -> list[str]:
    present = list(dict.fromkeys(schemes))
    return [s for s in SCHEMES if s in present] + sorted(set(present) - set(SCHEMES))


def _label(scheme: str) -> str:
    return LABEL.get(scheme, scheme)


def _seconds(v) -> str:
    return "–" if v is None or not np.isfinite(v) else f"{v:.3g} s"


def _number(v) -> str:
    if v is None or not np.isfinite(v):
        return "–"
    if abs(v) >= 1e6:
        return f"{v / 1e6:.3g}M"
    if abs(v) >= 1e4:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"


def component_table(rows: pd.DataFrame, shown: dict, ranks: int, K: int) -> pd.DataFrame:
    """Per tensor and scheme: HOOI seconds and its partition, the driving metrics, and the paper's
    HOOI seconds at the same P and K where it prints them (:func:`paper_hooi`)."""
    med = _median_rows(rows)
    out = []
    for ds in sorted(med.index.get_level_values(0).unique()):
        for s in _order(med.loc[ds].index):
            r = med.loc[(ds, s)]
            rec = {"dataset": shown.get(ds, ds), "scheme": _label(s),
                   "HOOI (s)": r.get("hooi_time", np.nan)}
            rec.update({f"{COMPONENT_NAME[c]} (s)": r.get(c, np.nan) for c in COMPONENTS})
            rec.update({name: r.get(m, np.nan) for m, name in METRICS})
            words = rec[METRIC_NAME["words_per_rank"]]
            rec[METRIC_NAME["words_per_rank"]] = round(words) if np.isfinite(words) else np.nan
            paper = paper_hooi(ds, s, ranks, K)
            rec["paper HOOI (s, same P and K)"] = f"{paper[0]:g} ({paper[1]})" if paper else "–"
            out.append(rec)
    return pd.DataFrame(out)


def deciding_component(faster: pd.Series, slower: pd.Series) -> dict:
    """The component with the largest difference d_c = slower − faster, the gap between the HOOI
    times and whether d_c alone covers it (the module docstring's definition)."""
    diffs = {c: float(slower.get(c, np.nan) - faster.get(c, np.nan)) for c in COMPONENTS}
    diffs = {c: d for c, d in diffs.items() if np.isfinite(d)}
    gap = float(slower["hooi_time"] - faster["hooi_time"])
    top = max(diffs, key=diffs.get)
    return {"component": top, "difference": diffs[top], "gap": gap, "alone": diffs[top] >= gap}


def _drivers(component: str, a: pd.Series, b: pd.Series, name_a: str, name_b: str) -> str:
    """The metrics that drive ``component``, both schemes' values: "E_max/(|E|/P) 1.02 (Lite) vs 1.3 (MediumG)"."""
    parts = [f"{METRIC_NAME[m]} {_number(a.get(m, np.nan))} ({name_a}) vs {_number(b.get(m, np.nan))} ({name_b})"
             for m in DRIVERS[component] if m in a.index]
    if component == "comm_time" and _close(a.get("words_per_rank", np.nan), b.get("words_per_rank", np.nan)):
        parts.append("words per rank equal within 5%, so the difference is the number of messages, not the words "
                     "(each exchange costs a latency per peer rank: the SVD oracle's exchanges in every Lanczos "
                     "step, the factor transfer)")
    return "; ".join(parts) if parts else "the core's product (R_max of the last mode × K̂·K)"


def _close(a: float, b: float, within: float = 0.05) -> bool:
    return bool(np.isfinite(a) and np.isfinite(b) and abs(a - b) <= within * max(abs(a), abs(b)))


def _ranking_line(ds: str, med: pd.DataFrame, shown: dict, ranks: int, K: int) -> str:
    """One sentence per tensor: who is fastest, the pair compared, the deciding component with
    the metrics behind it, and the paper's statement at the same P and K."""
    times = med["hooi_time"].dropna().sort_values()
    name = shown.get(ds, ds)
    if len(times) < 2:
        return f"- {name}: one scheme with a HOOI time, no ranking."
    fastest = times.index[0]
    if HEADLINE in times.index and fastest == HEADLINE:
        faster, slower, how = HEADLINE, times.index[1], f"{_label(HEADLINE)} fastest"
    elif HEADLINE in times.index:
        faster, slower, how = fastest, HEADLINE, f"**{_label(HEADLINE)} loses**: {_label(fastest)} fastest"
    else:
        faster, slower, how = fastest, times.index[1], f"{_label(fastest)} fastest"
    a, b = med.loc[faster], med.loc[slower]
    d = deciding_component(a, b)
    comp = COMPONENT_NAME[d["component"]]
    ratio = b["hooi_time"] / a["hooi_time"] if a["hooi_time"] > 0 else np.nan
    head = (f"- {name}: {how} ({_seconds(a['hooi_time'])}); {_label(slower)} {_seconds(b['hooi_time'])} "
            f"({ratio:.2f}× {_label(faster)}).")
    share = d["difference"] / d["gap"] if d["gap"] > 0 else np.nan
    decide = (f" {comp[0].upper() + comp[1:]} decides it: {_label(slower)} spends {_seconds(d['difference'])} "
              f"more there, {share:.0%} of the {_seconds(d['gap'])} gap"
              + (", alone enough to flip it" if d["alone"] else ", the other components add the rest"))
    drivers = _drivers(d["component"], a, b, _label(faster), _label(slower))
    paper = paper_fastest(ds, ranks, K)
    if paper is None:
        verdict = " The paper states no ranking at this P and K."
    elif HEADLINE not in times.index:
        verdict = f" Paper: {paper}; no {_label(HEADLINE)} time in these rows to compare."
    else:
        agrees = faster == HEADLINE and slower != HEADLINE
        verdict = f" Paper: {paper}; {'agrees' if agrees else 'disagrees'}."
    return f"{head}{decide}; {drivers}.{verdict}"


def limiting_component(lo_row: pd.Series, hi_row: pd.Series, lo: int, hi: int) -> tuple[str, float]:
    """The component with the largest excess over ideal scaling from ``lo`` to ``hi`` ranks,
    c(hi) − c(lo)·lo/hi, and its share of the HOOI time's excess (NaN when it has none)."""
    excess = {c: float(hi_row.get(c, np.nan) - lo_row.get(c, np.nan) * lo / hi) for c in COMPONENTS}
    excess = {c: e for c, e in excess.items() if np.isfinite(e)}
    top = max(excess, key=excess.get)
    total = float(hi_row["hooi_time"] - lo_row["hooi_time"] * lo / hi)
    return top, excess[top] / total if total > 0 else np.nan


def _scaling_table(part: pd.DataFrame, shown: dict, lo: int, hi: int, K: int) -> pd.DataFrame:
    """Per tensor and scheme: the speed-up of the HOOI time and of each component from ``lo`` to
    ``hi`` ranks, the limiting component, the paper's Fig. 15(a) value at 32 → 512, K = 10 only."""
    at_lo = _median_rows(part[part["ranks"] == lo])
    at_hi = _median_rows(part[part["ranks"] == hi])
    paper = (lo, hi, K) == (32, PAPER_RANKS, PAPER_K)
    out = []
    for key in at_lo.index.intersection(at_hi.index):
        a, b = at_lo.loc[key], at_hi.loc[key]
        if not (np.isfinite(a.get("hooi_time", np.nan)) and np.isfinite(b.get("hooi_time", np.nan))):
            continue
        ds, s = key
        top, share = limiting_component(a, b, lo, hi)
        rec = {"dataset": shown.get(ds, ds), "scheme": _label(s), "HOOI speed-up": a["hooi_time"] / b["hooi_time"]}
        rec.update({f"{COMPONENT_NAME[c]} speed-up": (a[c] / b[c] if b.get(c, 0) > 0 else np.nan)
                    for c in COMPONENTS if c in a.index})
        rec["limited by"] = (f"{COMPONENT_NAME[top]} ({share:.0%} of the excess)" if np.isfinite(share)
                             else "nothing (ideal or better)")
        stated = FIG15A_SPEEDUP.get(base_name(ds), {}).get(s) if paper else None
        rec["paper (Fig. 15(a), 32→512, K=10)"] = f"{stated:g}" if stated is not None else "–"
        out.append(rec)
    order = {_label(s): i for i, s in enumerate(SCHEMES)}
    table = pd.DataFrame(out)
    return table.sort_values(["dataset", "scheme"], key=lambda c: c.map(order) if c.name == "scheme" else c) \
        if len(table) else table


def _what(rows: pd.DataFrame) -> str:
    """What the rows are: measured or simulated, stand-in or real and the scale, the time model,
    oversubscribed measured rows."""
    text = rows_tag(rows)
    kinds = rows["hooi_time_kind"].dropna().astype(str) if "hooi_time_kind" in rows else pd.Series(dtype=str)
    kinds = sorted(set(kinds.str.replace(r", \d+ queries\)", ")", regex=True)))
    if kinds:
        text += "; HOOI times " + "; ".join(kinds)
    if "oversubscribed" in rows and rows["oversubscribed"].fillna(False).astype(bool).any():
        text += f"; {int(rows['oversubscribed'].fillna(False).astype(bool).sum())} rows measured oversubscribed " \
                f"(more ranks than cores: time slices, not costs)"
    return text


def components_section(df: pd.DataFrame, out_dir: Path) -> tuple[list[Path], list[str]]:
    """The report section and its files: ``components_P<P>_K<K>`` per (P, K) (and execution, when
    measured and simulated rows are mixed), ``components_scaling_K<K>`` per K with two or more P."""
    ok = df[df["status"] == "ok"]
    shown = display_map(df)
    execs = sorted(set(ok["execution"].astype(str))) if "execution" in ok else ["rows"]
    lines = ["## Ours vs paper, by component (Figs. 10, 15)", "",
             "Per tensor, rank count P and core length K: each scheme's HOOI time and its partition (TTM, the "
             "SVD's local work, every message, the rest; they add up to the HOOI time), the metrics that drive "
             "each part (Fig. 12: E_max/(|E|/P) the TTM, R_sum/L and R_max/(R_sum/P) the SVD; Fig. 13: the SVD "
             "and factor-matrix (FM) words per HOOI and (SVD + FM)/P words per rank, the communication), and the "
             "paper's number only where it prints one at the same P and K (Fig. 14; Fig. 16's HOOI column; Fig. "
             "15(a) for 32 → 512 ranks). Deciding component: of Lite and the fastest other scheme (Lite "
             "fastest), of Lite and the fastest (Lite loses), or of the fastest and the runner-up (no Lite), "
             "the component with the largest difference, with its share of the gap between the two HOOI "
             "times (the components partition them, so the differences add up to the gap; ≥ 100%: "
             "equalising that component alone would flip the ranking).", ""]
    written = []
    for execution in execs:
        rows_e = ok[ok["execution"].astype(str) == execution] if "execution" in ok else ok
        tag = "" if len(execs) == 1 else f"_{execution}"
        for (ranks, K), rows in rows_e.groupby(["ranks", "K"], sort=True):
            ranks, K = int(ranks), int(K)
            stem = f"components_P{ranks}_K{K}{tag}"
            written += write_table(component_table(rows, shown, ranks, K), out_dir / stem)
            lines += [f"### P = {ranks}, K = {K}: {_what(rows)}", "", (out_dir / f"{stem}.md").read_text(),
                      f"[CSV]({stem}.csv)", ""]
            med = _median_rows(rows)
            if "hooi_time" not in med or med["hooi_time"].isna().all():
                lines += ["No HOOI times in these rows (simulated without a Tucker calibration): the metrics "
                          "alone; `spbench calibrate --experiment tucker` and a rerun give the components.", ""]
                continue
            lines += [_ranking_line(ds, med.loc[ds], shown, ranks, K)
                      for ds in sorted(med.index.get_level_values(0).unique())] + [""]
        lines += _scaling_lines(rows_e, shown, out_dir, tag, written)
    return written, lines


def _scaling_lines(rows: pd.DataFrame, shown: dict, out_dir: Path, tag: str, written: list) -> list[str]:
    """Fig. 15 by component: per K with two or more rank counts, the table of :func:`_scaling_table`
    from the smallest to the largest P and, per tensor, Lite's speed-up beside the paper's."""
    lines = []
    if "hooi_time" not in rows:
        return lines
    timed = rows[rows["hooi_time"].notna()]
    for K, part in timed.groupby("K", sort=True):
        ranks = sorted(int(r) for r in part["ranks"].unique())
        if len(ranks) < 2:
            continue
        lo, hi, K = ranks[0], ranks[-1], int(K)
        table = _scaling_table(part, shown, lo, hi, K)
        if table.empty:
            continue
        stem = f"components_scaling_K{K}{tag}"
        written += write_table(table, out_dir / stem)
        lines += [f"### Fig. 15 by component: speed-up from P = {lo} to {hi}, K = {K}: {_what(part)}", "",
                  f"Speed-up = time at P = {lo} / time at P = {hi} (ideal {hi / lo:g}); \"limited by\": the "
                  f"component with the largest excess over ideal scaling at P = {hi}.", "",
                  (out_dir / f"{stem}.md").read_text(), f"[CSV]({stem}.csv)", ""]
        lite = table[table["scheme"] == _label(HEADLINE)]
        for _, r in lite.iterrows():
            paper = r["paper (Fig. 15(a), 32→512, K=10)"]
            beside = f", paper {paper}×" if paper != "–" else ""
            lines.append(f"- {r['dataset']}: Lite {r['HOOI speed-up']:.3g}×{beside}; limited by {r['limited by']}.")
        lines.append("")
    return lines
