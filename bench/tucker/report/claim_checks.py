"""The functions computing ours for tucker-lite's claims (:mod:`.claims`) from Tucker result rows,
and the conditions and commands the claims name: one function per kind of check (the fastest
scheme, a largest factor, a per-tensor component statement, printed cells, speed-ups, distribution
times, memory), each returning an Outcome (:mod:`spbench.report.claims`)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from spbench.report.claims import Outcome, fmt, judge_cases, judge_cells, judge_range, judge_value, \
    unmeasurable
from spbench.report.labels import base_name
from spbench.tucker.report.components import COMPONENT_NAME, COMPONENTS, deciding_component
from spbench.tucker.report.paper import (FIG10_CONFIGS, FIG14_HOOI_S, FIG15A_SPEEDUP, FIG16_DIST_S,
    FIG17A_MEMORY_MB, HEADLINE, LABEL, PAPER_K, PAPER_RANKS, SCHEMES)


BIG = tuple(FIG14_HOOI_S)
MEDIUM = tuple(t for t in FIG15A_SPEEDUP if t not in FIG14_HOOI_S)
PRIOR = tuple(s for s in SCHEMES if s != HEADLINE)
#: §7.2: "the tensor has slices of size 5M elements" (enron), against its 54M nonzeros over 512 ranks
ENRON_SLICE = 5e6
CLUSTER = "Power-8 cluster, 16 ranks/node"
RUN_FIG10 = "`make fig10` (rows at 32 and 512 ranks, K = 10 and 20; real tensors with `spbench datasets fetch`; " \
            "measured on a cluster: `LAUNCHER='srun -n {ranks}' EXECUTION=measured`)"
RUN_512 = "`make fig11` (512 ranks, K = 10; the real tensors; a cluster run with LAUNCHER='srun -n {ranks}')"
RUN_BIG = "`make fig14` on the real amazon, patents, reddit (billions of nonzeros: a cluster run at 512 ranks)"
RUN_SCALING = "`make fig15` (32 to 512 ranks; or `make fig10`'s 32- and 512-rank folders together)"


def _ok(df: pd.DataFrame, column: str = "hooi_time") -> pd.DataFrame:
    """The ok rows with a value of ``column``, with ``base`` (the paper's tensor) and ``tensor`` (the
    case: :func:`_cases`) added; an empty frame with the columns the claims read when there are none."""
    if df.empty or column not in df or "status" not in df:
        return pd.DataFrame(columns=["tensor", "base", "dataset", "algorithm", "ranks", "K", column])
    rows = df[(df["status"] == "ok") & pd.to_numeric(df[column], errors="coerce").notna()]
    base = rows["dataset"].map(base_name)
    return rows.assign(base=base, tensor=_cases(base, rows["nnz"] if "nnz" in rows else None))


def _cases(base: pd.Series, nnz: pd.Series | None) -> pd.Series:
    """Each tensor's largest instance keeps the paper's name; a smaller one (``tucker_hyper``'s
    600k-nonzero stand-ins beside the full-size ones of ``tucker_32``) is a case of its own, named
    with its nonzeros, so that no median, ordering or ratio mixes two sizes of one tensor."""
    if nnz is None or base.empty:
        return base
    size = pd.to_numeric(nnz, errors="coerce")
    smaller = size < size.groupby(base).transform("max")
    named = base + size.map(lambda v: f" ({int(v):,} nonzeros)" if np.isfinite(v) else "")
    return base.where(~smaller, named)


def _at(df: pd.DataFrame, ranks: int, K: int, tensors, column: str = "hooi_time") -> pd.DataFrame:
    rows = _ok(df, column)
    return rows[(rows["ranks"] == ranks) & (rows["K"] == K) & rows["base"].isin(tensors)] if len(rows) else rows


def _pivot(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """Tensor × scheme: the median of ``column`` over repeats."""
    if rows.empty:
        return pd.DataFrame()
    table = rows.pivot_table(index="tensor", columns="algorithm", values=column, aggfunc="median")
    return table[[s for s in SCHEMES if s in table.columns]]


def _missing(column: str, ranks: int, K: int, tensors) -> str:
    kind = "medium" if tuple(tensors) == MEDIUM else "big" if tuple(tensors) == BIG else "paper's"
    return f"no {column} rows of the {kind} tensors at P = {ranks}, K = {K}"


def _deciding(rows: pd.DataFrame, tensor: str, faster: str, slower: str) -> dict | None:
    """:func:`.components.deciding_component` of ``faster`` against ``slower`` on ``tensor`` (None
    without the component columns or either scheme's times)."""
    if not set(COMPONENTS) <= set(rows.columns):
        return None
    med = rows[rows["tensor"] == tensor].groupby("algorithm")[["hooi_time", *COMPONENTS]].median()
    if faster not in med.index or slower not in med.index or med[list(COMPONENTS)].isna().all().all():
        return None
    return deciding_component(med.loc[faster], med.loc[slower])


def _why(d: dict | None) -> str:
    """The deciding component as the reason says it ("" for None)."""
    if d is None:
        return ""
    return (f"; {COMPONENT_NAME[d['component']]} decides it ({d['difference']:.3g} s of the {d['gap']:.3g} s gap"
            + (", alone enough" if d["alone"] else "") + ")")


# -- Fig. 10 and §7.2's factors --------------------------------------------------------------------------
def lite_fastest(ranks: int, K: int, tensors=MEDIUM):
    def compute(df):
        rows = _at(df, ranks, K, tensors)
        t = _pivot(rows, "hooi_time")
        if t.empty or HEADLINE not in t or t.shape[1] < 2:
            return unmeasurable(_missing("HOOI time", ranks, K, tensors) + " with Lite and another scheme", rows)
        cases, deciding = {}, []
        for tensor, times in t.iterrows():
            times = times.dropna()
            if HEADLINE not in times or len(times) < 2:
                continue
            other = times.drop(HEADLINE).idxmin()
            ok = times[HEADLINE] < times[other]
            detail = f"Lite {times[HEADLINE]:.3g} s vs {LABEL[other]} {times[other]:.3g} s"
            d = None if ok else _deciding(rows, tensor, other, HEADLINE)
            deciding += [d["component"]] if d else []
            cases[tensor] = (ok, detail + _why(d))
        return replace(judge_cases(cases, rows, noun="tensors"), components=tuple(dict.fromkeys(deciding)))
    return compute


def _factors(df, schemes) -> tuple[list, pd.DataFrame, list]:
    """(slowest-of-``schemes`` time / Lite's, tensor, P, K) over Fig. 10's configurations, the rows, the configs covered."""
    out, used, covered = [], [], []
    for (ranks, K) in FIG10_CONFIGS:
        rows = _at(df, ranks, K, MEDIUM)
        t = _pivot(rows, "hooi_time")
        if t.empty or HEADLINE not in t or not set(schemes) & set(t.columns):
            continue
        covered.append((ranks, K))
        used.append(rows)
        best = t[[s for s in schemes if s in t]].min(axis=1)
        out += [(float(b / lite), tensor, ranks, K) for tensor, b, lite in zip(t.index, best, t[HEADLINE])
                if np.isfinite(b) and np.isfinite(lite) and lite > 0]
    return out, (pd.concat(used) if used else pd.DataFrame()), covered


def up_to(schemes, paper: float):
    def compute(df):
        factors, rows, covered = _factors(df, schemes)
        if not factors:
            return unmeasurable("no HOOI times of Lite and " + "/".join(LABEL[s] for s in schemes) +
                                " on the medium tensors at Fig. 10's (P, K) = (32, 10), (512, 10), (512, 20)", rows)
        best = max(factors)
        out = judge_value(best[0], paper, 0.25, rows, where=f"{best[1]}, P = {best[2]}, K = {best[3]}")
        if len(covered) < len(FIG10_CONFIGS) and out.verdict == "reproduced":
            missing = [c for c in FIG10_CONFIGS if c not in covered]
            out = Outcome("partly", out.ours, out.reason + f"; but no rows at (P, K) = {missing}, so the maximum "
                                                           "over Fig. 10 is not established", rows)
        return out
    return compute


def _gain(df, ranks, K) -> pd.Series:
    t = _pivot(_at(df, ranks, K, MEDIUM), "hooi_time")
    if t.empty or HEADLINE not in t or not set(PRIOR) & set(t.columns):
        return pd.Series(dtype=float)
    return (t[[s for s in PRIOR if s in t]].min(axis=1) / t[HEADLINE]).dropna()


def gain_grows(a: tuple, b: tuple):
    def compute(df):
        ga, gb = _gain(df, *a), _gain(df, *b)
        both = ga.index.intersection(gb.index)
        rows = pd.concat([_at(df, *a, MEDIUM), _at(df, *b, MEDIUM)])
        if both.empty:
            return unmeasurable(f"needs Lite's gain over the best prior scheme at both (P, K) = {a} and {b} on a "
                                "medium tensor", rows)
        return judge_cases({t: (gb[t] > ga[t], f"{ga[t]:.2f}× → {gb[t]:.2f}×") for t in both}, rows, noun="tensors")
    return compute


def hyper_best_prior(df):
    cases, used = {}, []
    for (ranks, K) in FIG10_CONFIGS:
        rows = _at(df, ranks, K, MEDIUM)
        t = _pivot(rows, "hooi_time")
        prior = [s for s in PRIOR if s in t]
        if t.empty or "hyper" not in prior or len(prior) < 2:
            continue
        used.append(rows)
        for tensor, times in t[prior].iterrows():
            cases[f"{tensor} P={ranks} K={K}"] = times.idxmin()
    rows = pd.concat(used) if used else pd.DataFrame()
    if not cases:
        return unmeasurable("needs HyperG and another prior scheme's HOOI times on the medium tensors", rows)
    tally = pd.Series(list(cases.values())).value_counts()
    text = ", ".join(f"{LABEL[s]} {n}" for s, n in tally.items())
    top = tally.index[0]
    if top == "hyper" and (len(tally) == 1 or tally.iloc[1] < tally.iloc[0]):
        return Outcome("reproduced", f"best prior: {text}", f"HyperG is the best prior scheme most often "
                                                            f"({tally['hyper']} of {len(cases)} cases)", rows)
    verdict = "partly" if "hyper" in tally else "not reproduced"
    return Outcome(verdict, f"best prior: {text}", f"{LABEL[top]} is the best prior scheme most often", rows)


# -- Figs. 11–13 at 512 ranks, K = 10 ------------------------------------------------------------------
def per_tensor(column_check, columns, tensors=MEDIUM, ranks=PAPER_RANKS, K=PAPER_K, noun="tensors"):
    """A claim checked per tensor on the medians of ``columns``: ``column_check(table) -> (holds, detail)``
    where ``table`` is scheme × column for one tensor; the components among ``columns`` are those its
    verdict rests on (:attr:`spbench.report.claims.Outcome.components`)."""
    def compute(df):
        rows = _at(df, ranks, K, tensors, columns[0])
        have = [c for c in columns if c in rows]
        if rows.empty or len(have) < len(columns):
            return unmeasurable(_missing(" + ".join(columns), ranks, K, tensors), rows)
        med = rows.groupby(["tensor", "algorithm"])[list(columns)].median()
        cases = {}
        for tensor in sorted(set(med.index.get_level_values(0))):
            got = column_check(med.loc[tensor].dropna(how="all"))
            if got is not None:
                cases[tensor] = got
        if not cases:
            return unmeasurable("the rows lack the schemes the claim compares", rows)
        return replace(judge_cases(cases, rows, noun=noun), components=tuple(c for c in columns if c in COMPONENTS))
    return compute


def _has(t, *schemes):
    return all(s in t.index for s in schemes)


def compute_dominates(t):
    share = (t["ttm_time"] + t["svd_time"]) / t["hooi_time"]
    worst = share.idxmin()
    return bool((share > 0.5).all()), f"smallest computation share {share[worst]:.0%} ({LABEL.get(worst, worst)})"


def coarse_svd_others_ttm(t):
    if not _has(t, "coarse") or len(t) < 2:
        return None
    others = [s for s in ("medium", "hyper") if s in t.index]
    ok = all(t.loc["coarse", "svd_time"] < t.loc[s, "svd_time"] and t.loc[s, "ttm_time"] < t.loc["coarse", "ttm_time"]
             for s in others)
    return ok, "; ".join(f"{LABEL[s]} TTM {t.loc[s, 'ttm_time']:.3g} s SVD {t.loc[s, 'svd_time']:.3g} s"
                         for s in ["coarse", *others])


def lite_both(t):
    if not _has(t, HEADLINE) or len(t) < 2:
        return None
    ttm, svd = t["ttm_time"] / t["ttm_time"].min(), t["svd_time"] / t["svd_time"].min()
    return bool(ttm[HEADLINE] <= 1.25 and svd[HEADLINE] <= 1.25), \
        f"Lite at {ttm[HEADLINE]:.2f}× the best TTM, {svd[HEADLINE]:.2f}× the best SVD"


def ttm_balance(t):
    good = [s for s in ("medium", "hyper", HEADLINE) if s in t.index]
    if not good or "coarse" not in t.index:
        return None
    v = t["ttm_imbalance"]
    ok = bool((v[good] <= 1.10).all() and v["coarse"] > v[good].max())
    return ok, ", ".join(f"{LABEL[s]} {v[s]:.3g}" for s in ["coarse", *good])


def redundancy(t):
    if not _has(t, "coarse", HEADLINE):
        return None
    v = t["svd_redundancy"]
    high = [s for s in ("medium", "hyper") if s in t.index]
    ok = bool(abs(v["coarse"] - 1) <= 0.01 and v[HEADLINE] <= 1.10 and all(v[s] > v[HEADLINE] for s in high))
    return ok, ", ".join(f"{LABEL[s]} {v[s]:.3g}" for s in t.index)


def svd_balance(t):
    if not _has(t, HEADLINE, "medium"):
        return None
    v = t["svd_imbalance"] / t["svd_imbalance"].min()
    return bool(v[HEADLINE] <= 1.25 and v["medium"] <= 1.25), \
        f"Lite {t.loc[HEADLINE, 'svd_imbalance']:.3g}, MediumG {t.loc['medium', 'svd_imbalance']:.3g}, " \
        f"best {t['svd_imbalance'].min():.3g}"


def volumes(t):
    multi = [s for s in ("coarse", HEADLINE) if s in t.index]
    uni = [s for s in ("medium", "hyper") if s in t.index]
    if not multi or not uni:
        return None
    ok = all(t.loc[m, "svd_volume"] < t.loc[u, "svd_volume"] and t.loc[m, "fm_volume"] > t.loc[u, "fm_volume"]
             for m in multi for u in uni)
    return ok, "; ".join(f"{LABEL[s]} SVD {t.loc[s, 'svd_volume']:.3g} FM {t.loc[s, 'fm_volume']:.3g}" for s in t.index)


def hyper_least_volume(t):
    if not _has(t, "hyper", HEADLINE):
        return None
    total = t["svd_volume"] + t["fm_volume"]
    ok = bool(total.idxmin() == "hyper" and t.loc[HEADLINE, "hooi_time"] < t.loc["hyper", "hooi_time"])
    return ok, f"least words: {LABEL[total.idxmin()]}; HOOI Lite {t.loc[HEADLINE, 'hooi_time']:.3g} s vs HyperG " \
               f"{t.loc['hyper', 'hooi_time']:.3g} s"


def enron_imbalance(df):
    from spbench.datasets.paper_tensors import TENSORS

    rows = _at(df, PAPER_RANKS, PAPER_K, ("enron",), "ttm_imbalance")
    rows = rows[(rows["algorithm"] == "coarse") & (rows["tensor"] == "enron")] if len(rows) else rows
    if rows.empty:
        return unmeasurable("no CoarseG row of enron at 512 ranks, K = 10", rows)
    bound = ENRON_SLICE / (TENSORS["enron"].nnz / PAPER_RANKS)
    ours = float(rows["ttm_imbalance"].median())
    return judge_value(ours, bound, 0.25, rows, side=1.0) if ours < bound else \
        Outcome("reproduced", fmt(ours), f"at least the {fmt(bound)} a 5M-element slice forces", rows)


# -- Fig. 14 (big tensors), Fig. 15 (scaling), Fig. 16 (distribution), Fig. 17 (memory) -----------------
def cells(table: dict, column: str, tol: float, tensors=None):
    def compute(df):
        rows = _at(df, PAPER_RANKS, PAPER_K, tensors or tuple(table), column)
        t = _pivot(rows, column)
        if t.empty:
            return unmeasurable(_missing(column, PAPER_RANKS, PAPER_K, tensors or tuple(table)), rows)
        return judge_cells([(f"{d} {LABEL[s]}", float(t.loc[d, s]), table[d].get(s))
                            for d in t.index for s in t.columns if d in table], tol, rows)
    return compute


def big_over_medium(df):
    paper = max(FIG14_HOOI_S[d]["medium"] / FIG14_HOOI_S[d][HEADLINE] for d in BIG)
    rows = _at(df, PAPER_RANKS, PAPER_K, BIG)
    t = _pivot(rows, "hooi_time")
    if t.empty or not {"medium", HEADLINE} <= set(t.columns):
        return unmeasurable(_missing("HOOI time (MediumG and Lite)", PAPER_RANKS, PAPER_K, BIG), rows)
    ratio = (t["medium"] / t[HEADLINE]).dropna()
    return judge_value(float(ratio.max()), paper, 0.25, rows, where=str(ratio.idxmax()))


def _speedups(df, lo=32, hi=PAPER_RANKS, K=PAPER_K) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = _ok(df)
    rows = rows[(rows["K"] == K) & rows["ranks"].isin([lo, hi])] if len(rows) else rows
    t = rows.pivot_table(index=["tensor", "algorithm"], columns="ranks", values="hooi_time", aggfunc="median") \
        if len(rows) else pd.DataFrame()
    if t.empty or not {lo, hi} <= set(t.columns):
        return pd.DataFrame(), rows
    return (t[lo] / t[hi]).dropna().unstack("algorithm"), rows


def speedup_cells(df):
    s, rows = _speedups(df)
    if s.empty:
        return unmeasurable("needs HOOI times of the same tensors at both 32 and 512 ranks, K = 10 "
                            "(several results folders are combined)", rows)
    return judge_cells([(f"{d} {LABEL[a]}", float(s.loc[d, a]), FIG15A_SPEEDUP[d].get(a))
                        for d in s.index if d in FIG15A_SPEEDUP for a in s.columns], 0.25, rows)


def lite_speedup_range(df):
    paper = [v[HEADLINE] for v in FIG15A_SPEEDUP.values()]
    s, rows = _speedups(df)
    if s.empty or HEADLINE not in s:
        return unmeasurable("needs Lite's HOOI times at both 32 and 512 ranks, K = 10", rows)
    lite = s[HEADLINE][s.index.isin(list(FIG15A_SPEEDUP))].dropna()     # the paper's tensors, largest instances
    if lite.empty:
        return unmeasurable("needs Lite's HOOI times at both 32 and 512 ranks, K = 10, on the paper's tensors", rows)
    return judge_range(float(lite.min()), float(lite.max()), min(paper), max(paper), 0.25, rows)


def scaling_order(which: str):
    """Per tensor: Lite's speed-up the highest (``best``), or whether CoarseG's is the lowest as in
    the paper's Fig. 15(a) (``coarse``)."""
    def compute(df):
        s, rows = _speedups(df)
        if s.empty or s.shape[1] < 2:
            return unmeasurable("needs two schemes' HOOI times at both 32 and 512 ranks, K = 10", rows)
        cases = {}
        for tensor, sp in s.iterrows():
            sp = sp.dropna()
            if which == "best" and HEADLINE in sp and len(sp) > 1:
                cases[tensor] = (sp.idxmax() == HEADLINE, f"Lite {sp[HEADLINE]:.3g}×, best {LABEL[sp.idxmax()]}")
            elif which == "coarse" and "coarse" in sp and len(sp) > 1 and tensor in FIG15A_SPEEDUP:
                paper = pd.Series(FIG15A_SPEEDUP[tensor]).dropna()[list(sp.index)].astype(float)
                ours_low, paper_low = sp.idxmin() == "coarse", paper.idxmin() == "coarse"
                cases[tensor] = (ours_low == paper_low, f"CoarseG lowest: ours {ours_low}, paper {paper_low}")
        return judge_cases(cases, rows, noun="tensors")
    return compute


def _dist_hooi(df, tensors):
    rows = _at(df, PAPER_RANKS, PAPER_K, tensors, "dist_time")
    timed = rows[rows["hooi_time"].notna()] if "hooi_time" in rows else rows.iloc[0:0]
    return _pivot(rows, "dist_time"), _pivot(timed, "hooi_time"), rows


def dist_check(which: str, tensors=tuple(FIG16_DIST_S)):
    """Fig. 16 per tensor: Lite's distribution against its HOOI time (``lite_hooi``), HyperG's against
    the HOOI time (``hyper``), Lite's against the faster prior lightweight scheme's (``light``)."""
    lite_hooi = max(v[HEADLINE] / v["hooi_lite"] for v in FIG16_DIST_S.values())
    light = max(v[HEADLINE] / min(v["coarse"], v["medium"]) for v in FIG16_DIST_S.values())

    def compute(df):
        dist, hooi, rows = _dist_hooi(df, tensors)
        cases = {}
        for tensor in dist.index:
            d, h = dist.loc[tensor], hooi.loc[tensor] if tensor in hooi.index else pd.Series(dtype=float)
            if which == "lite_hooi" and HEADLINE in d and np.isfinite(h.get(HEADLINE, np.nan)):
                r = d[HEADLINE] / h[HEADLINE]
                cases[tensor] = (r <= lite_hooi * 1.25, f"{r:.2f}× Lite's HOOI")
            elif which == "hyper" and np.isfinite(d.get("hyper", np.nan)) and np.isfinite(h.get("hyper", np.nan)):
                r = d["hyper"] / h["hyper"]
                cases[tensor] = (r >= 10, f"{r:.3g}× its HOOI time")
            elif which == "light" and HEADLINE in d and {"coarse", "medium"} & set(d.dropna().index):
                r = d[HEADLINE] / d[[s for s in ("coarse", "medium") if s in d]].min()
                cases[tensor] = (r <= light * 1.25, f"{r:.2f}× the faster of CoarseG/MediumG")
        if not cases:
            return unmeasurable("no distribution " + ("and HOOI " if which != "light" else "") +
                                "times of the schemes compared at 512 ranks, K = 10", rows)
        return judge_cases(cases, rows, noun="tensors")
    return compute


def memory_check(which: str):
    """Fig. 17(a) per tensor: Lite ≈ CoarseG (``equal``), Lite below MediumG and HyperG on the 4-D
    tensors (``4d``), MediumG below Lite on the 3-D tensors where the paper's table has it (``3d``)."""
    def compute(df):
        rows = _at(df, PAPER_RANKS, PAPER_K, tuple(FIG17A_MEMORY_MB), "mem_total_mb")
        t = _pivot(rows, "mem_total_mb")
        if t.empty or HEADLINE not in t:
            return unmeasurable("no memory (mem_total_mb) of Lite at 512 ranks, K = 10", rows)
        modes = rows.groupby("tensor")["modes"].first() if "modes" in rows else pd.Series(dtype=float)
        cases = {}
        for tensor, m in t.iterrows():
            m = m.dropna()
            if which == "equal" and "coarse" in m:
                r = m[HEADLINE] / m["coarse"]
                cases[tensor] = (abs(r - 1) <= 0.05, f"Lite/CoarseG {r:.3f}")
            elif which == "4d" and modes.get(tensor) == 4 and {"medium", "hyper"} & set(m.index):
                others = [s for s in ("medium", "hyper") if s in m]
                cases[tensor] = (all(m[HEADLINE] < m[s] for s in others),
                                 ", ".join(f"{LABEL[s]} {m[s]:.3g} MB" for s in [HEADLINE, *others]))
            elif which == "3d" and modes.get(tensor) == 3 and "medium" in m and tensor in FIG17A_MEMORY_MB:
                paper = FIG17A_MEMORY_MB[tensor]["medium"] < FIG17A_MEMORY_MB[tensor][HEADLINE]
                ours = m["medium"] < m[HEADLINE]
                cases[tensor] = (ours == paper, f"MediumG below Lite: ours {ours}, paper {paper}")
        if not cases:
            return unmeasurable("no tensor with the schemes and mode count (column modes) the claim compares", rows)
        return judge_cases(cases, rows, noun="tensors")
    return compute


def _printed(table: dict, schemes=SCHEMES) -> int:
    """How many values a printed table holds ("x", HyperG on the big tensors, is none)."""
    return sum(v.get(s) is not None for v in table.values() for s in schemes)


_F14 = max(FIG14_HOOI_S[d]["medium"] / FIG14_HOOI_S[d][HEADLINE] for d in BIG)
_F15_COARSE = sum(min((s for s in v if v[s] is not None), key=v.get) == "coarse" for v in FIG15A_SPEEDUP.values())
_F16_LITE = max(FIG16_DIST_S, key=lambda d: FIG16_DIST_S[d][HEADLINE] / FIG16_DIST_S[d]["hooi_lite"])
_F16_LIGHT = max(FIG16_DIST_S, key=lambda d: FIG16_DIST_S[d][HEADLINE] / min(FIG16_DIST_S[d]["coarse"],
                                                                              FIG16_DIST_S[d]["medium"]))
_F17_3D = ", ".join(d for d, v in FIG17A_MEMORY_MB.items() if d not in ("delicious", "enron", "flickr")
                    and v["medium"] < v[HEADLINE])


def coarse_big(t):
    if "coarse" not in t.index or len(t) < 2:
        return None
    c = t.loc["coarse"]
    ok = t["hooi_time"].idxmax() == "coarse" and t["ttm_imbalance"].idxmax() == "coarse" and c.ttm_time > c.hooi_time / 2
    return bool(ok), f"slowest {LABEL[t['hooi_time'].idxmax()]}; CoarseG imbalance {c.ttm_imbalance:.3g}, TTM " \
                     f"{c.ttm_time / c.hooi_time:.0%} of its HOOI"
